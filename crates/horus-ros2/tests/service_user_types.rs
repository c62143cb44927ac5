//! A ROS 2 service of a type horus was not built with (test_msgs/srv/BasicTypes, from the
//! ROS 2 venv) crosses to horus clients: the bridge takes its types from the horus
//! service's own description, not only from the built-in registry.

mod service_common;

use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use horus::description::ServiceDescription;
use horus::msgs::{MessageDescription, Ros2Type};
use horus::{RawClient, RawServer};
use horus_ros2::Direction;
use service_common::roles::record;
use service_common::{Proc, Rig};

/// The entry child processes of this binary run (see service_common/roles.rs).
#[test]
fn child_entry() {
    service_common::child_main();
}

/// An rclpy server of test_msgs/srv/BasicTypes on `sys.argv[1]`: answers each request with
/// its fields, `int64_value` doubled and `string_value` prefixed with `rclpy:`.
const BASIC_TYPES_SERVER: &str = r#"
import os, sys, threading
import rclpy
from test_msgs.srv import BasicTypes

rclpy.init()
node = rclpy.create_node("horus_test_basic_types_server")

def answer(req, resp):
    for f in req.get_fields_and_field_types():
        setattr(resp, f, getattr(req, f))
    resp.int64_value = req.int64_value * 2
    resp.string_value = "rclpy:" + req.string_value
    return resp

srv = node.create_service(BasicTypes, sys.argv[1], answer)
done = threading.Event()
threading.Thread(target=lambda: (sys.stdin.read(), done.set()), daemon=True).start()
print("ready", os.getpid(), flush=True)
while not done.is_set():
    rclpy.spin_once(node, timeout_sec=0.05)
node.destroy_node()
rclpy.shutdown()
"#;

/// The ROS 2 venv's test_msgs share directory, if test_msgs is installed there.
fn test_msgs_share() -> Option<PathBuf> {
    let venv = std::env::var("HORUS_ROS2_VENV")
        .map(PathBuf::from)
        .unwrap_or_else(|_| {
            PathBuf::from(std::env::var("HOME").unwrap_or_default()).join(".cache/horus-ros2-venv")
        });
    let share = venv.join("share/test_msgs");
    share.join("srv/BasicTypes.json").exists().then_some(share)
}

/// test_msgs/srv/BasicTypes as a ROS-typed horus service: the definitions from its `.srv`,
/// the RIHS01 hashes rosidl computed (its `.json`).
fn basic_types(share: &std::path::Path) -> ServiceDescription {
    let srv = std::fs::read_to_string(share.join("srv/BasicTypes.srv")).expect(".srv");
    let json = std::fs::read_to_string(share.join("srv/BasicTypes.json")).expect(".json");
    let json: serde_json::Value = serde_json::from_str(&json).expect("type description");
    let hash = |name: &str| {
        json["type_hashes"]
            .as_array()
            .expect("type_hashes")
            .iter()
            .find(|h| h["type_name"] == name)
            .and_then(|h| h["hash_string"].as_str())
            .expect("hash")
            .to_owned()
    };
    let (req, resp) = srv.split_once("---").expect("request --- response");
    let d = |name: &str, def: &str| {
        MessageDescription::ros2(Ros2Type::new(name, &hash(name), def.trim())).expect("valid")
    };
    ServiceDescription {
        request: d("test_msgs/srv/BasicTypes_Request", req),
        response: d("test_msgs/srv/BasicTypes_Response", resp),
    }
}

/// A BasicTypes message (request and response have the same fields) as wire bytes:
/// encapsulation header, then little-endian CDR, each field at its alignment.
fn basic_types_wire(int64_value: i64, string_value: &str) -> Vec<u8> {
    let mut v = vec![0, 1, 0, 0];
    let align = |v: &mut Vec<u8>, n: usize| {
        while !(v.len() - 4).is_multiple_of(n) {
            v.push(0);
        }
    };
    v.extend_from_slice(&[1, 0x7f, b'h']); // bool, byte, char
    align(&mut v, 4);
    v.extend_from_slice(&1.5f32.to_le_bytes());
    align(&mut v, 8);
    v.extend_from_slice(&(-2.25f64).to_le_bytes());
    v.extend_from_slice(&[(-3i8) as u8, 250]); // int8, uint8
    v.extend_from_slice(&(-4i16).to_le_bytes());
    v.extend_from_slice(&60000u16.to_le_bytes());
    align(&mut v, 4);
    v.extend_from_slice(&(-5i32).to_le_bytes());
    v.extend_from_slice(&4_000_000_000u32.to_le_bytes());
    align(&mut v, 8);
    v.extend_from_slice(&int64_value.to_le_bytes());
    v.extend_from_slice(&u64::MAX.to_le_bytes());
    v.extend_from_slice(&(string_value.len() as u32 + 1).to_le_bytes());
    v.extend_from_slice(string_value.as_bytes());
    v.push(0);
    v
}

#[test]
fn a_horus_client_of_a_user_service_type_calls_an_rclpy_server() {
    let Some(rig) = Rig::new("user-type", 0) else {
        return;
    };
    let Some(share) = test_msgs_share() else {
        assert!(
            std::env::var("HORUS_ROS2_REQUIRED").map_or(true, |v| v != "1"),
            "HORUS_ROS2_REQUIRED=1 but test_msgs is not in the ROS 2 venv (make setup-ros2)"
        );
        eprintln!("skipped: no test_msgs in the ROS 2 venv (run `make setup-ros2`)");
        return;
    };
    // The horus client's side of the service (as a typed client of generated test_msgs
    // types makes it): a table describing BasicTypes, with a client and no server.
    let description = basic_types(&share);
    let made = RawServer::create(&rig.namespace, "demo/basic", &description).expect("service");
    let mut client = RawClient::open(&rig.namespace, "demo/basic").expect("client");
    drop(made);

    let dir = std::env::temp_dir().join(format!("{}-user-py", rig.namespace));
    std::fs::create_dir_all(&dir).expect("temp dir");
    std::fs::write(dir.join("server.py"), BASIC_TYPES_SERVER).expect("server.py");
    let mut cmd =
        Command::new(PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../scripts/ros2-python"));
    cmd.arg(dir.join("server.py"))
        .arg("/demo/basic")
        .env("ROS_DOMAIN_ID", rig.domain.to_string())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped());
    let server = Proc::start(cmd.spawn().expect("spawn rclpy"), "rclpy server");
    let bridge = rig.bridge();

    // Served in horus by the bridge with the horus service's types (before: refused, "type
    // test_msgs/srv/BasicTypes is not known to horus").
    rig.wait_service("demo/basic", Direction::FromRos, "served", |s| s.active);
    let request = basic_types_wire(21, "horus");
    let deadline = Instant::now() + Duration::from_secs(60);
    let reply = loop {
        match client.call(&record(&request), Duration::from_secs(15)) {
            Ok(r) => break r,
            Err(e) if Instant::now() > deadline => panic!("never answered: {e}"),
            Err(_) => std::thread::sleep(Duration::from_millis(100)),
        }
    };
    // Byte for byte what rclpy serialized, checked against BasicTypes_Response.
    assert_eq!(reply[4..], basic_types_wire(42, "rclpy:horus")[..]);
    let st = rig.wait_service("demo/basic", Direction::FromRos, "counted", |s| {
        s.counters.calls >= 1
    });
    assert_eq!(st.refusals, 0, "{st:#?}");

    drop(client);
    drop(bridge);
    drop(server);
    let _ = std::fs::remove_dir_all(&dir);
    rig.assert_clean();
}
