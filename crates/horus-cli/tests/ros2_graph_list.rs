//! `horus topic list` and `horus service list` show the ROS 2 side: the ROS 2 topics and
//! services the namespace's running ROS 2 bridge discovers (from its status file), marked
//! as ROS 2 with their ROS 2 types and whether they cross into horus now, with and without
//! `--json`. Against a real rclpy node (PyPI wheels, Fast DDS) and the bridge, each a
//! process of its own in a network namespace with only `lo`.
//!
//! Skipped (the reason printed) without the ROS 2 venv or root, as the bridge's own tests
//! (`HORUS_ROS2_REQUIRED=1` makes that a failure).
#![cfg(feature = "ros2")]

#[path = "../../horus-ros2/tests/common/mod.rs"]
mod common;

use std::process::Command;
use std::time::{Duration, Instant};

use common::{World, PATIENCE};
use horus::inspect::{open_or_create_ros_topic, ros_qos};
use horus::msgs::Ros2Type;
use serde_json::Value;

bridge_process_test!();

/// `horus ARGS… --namespace NS`: its stdout (it must succeed).
fn horus(ns: &str, args: &[&str]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_horus"))
        .args(args)
        .args(["--namespace", ns])
        .output()
        .unwrap();
    assert!(out.status.success(), "horus {args:?}: {out:?}");
    String::from_utf8(out.stdout).unwrap()
}

fn json(ns: &str, args: &[&str]) -> Value {
    let mut a = vec!["--json"];
    a.extend_from_slice(args);
    serde_json::from_str(&horus(ns, &a)).unwrap()
}

/// Runs `horus ARGS --json` until `pick` finds what it looks for in the output.
fn wait_json(ns: &str, args: &[&str], what: &str, pick: impl Fn(&Value) -> bool) -> Value {
    let deadline = Instant::now() + PATIENCE;
    loop {
        let v = json(ns, args);
        if pick(&v) {
            return v;
        }
        assert!(Instant::now() < deadline, "never saw {what}; last: {v}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn named<'a>(list: &'a Value, name: &str) -> Option<&'a Value> {
    list.as_array()?.iter().find(|e| e["name"] == name)
}

#[test]
fn topic_list_and_service_list_show_the_ros2_sides_topics_and_services() {
    if let Some(why) = common::skip_reason() {
        eprintln!("SKIPPED: {why}");
        return;
    }
    let w = World::new("cli_list");
    let ns = w.namespace.clone();
    let ty = string_type();
    let v = open_or_create_ros_topic(&ns, "chatter", &ty, &ros_qos(4096)).unwrap();
    let sub = v.ros_subscriber(true).unwrap();
    // No bridge yet: no ROS 2 side, and the listing says so in JSON.
    let before = json(&ns, &["topic", "list", "--window", "0"]);
    assert_eq!(before["ros2"], Value::Null, "{before}");

    let bridge = w.bridge();
    let talker = w.rclpy("talk", &["/chatter"]);

    let topics = wait_json(
        &ns,
        &["topic", "list", "--window", "0"],
        "/chatter crossing into horus",
        |v| {
            named(&v["ros2"]["topics"], "/chatter")
                .is_some_and(|t| t["crossing"] == serde_json::json!(["from_ros"]))
        },
    );
    let t = named(&topics["ros2"]["topics"], "/chatter").unwrap();
    assert_eq!(
        t["types"],
        serde_json::json!(["std_msgs/msg/String"]),
        "{t}"
    );
    assert_eq!(t["horus_name"], "chatter", "{t}");
    assert!(t["publishers"].as_u64() >= Some(1), "{t}");
    // The horus side is listed as before.
    assert!(named(&topics["topics"], "chatter").is_some(), "{topics}");

    let text = horus(&ns, &["topic", "list", "--window", "0"]);
    println!("{text}");
    assert!(text.contains("ROS 2 side (bridge pid"), "{text}");
    assert!(text.contains("ros2 topic"), "{text}");
    let line = text
        .lines()
        .find(|l| l.starts_with("/chatter"))
        .unwrap_or_else(|| panic!("no /chatter row: {text}"));
    assert!(
        line.contains("std_msgs/msg/String") && line.contains("into horus"),
        "{line}"
    );

    // Every rclpy node serves its parameter services: the ROS 2 side's services.
    let params = "/horus_ros2_test_talk/get_parameters";
    let services = wait_json(&ns, &["service", "list"], params, |v| {
        named(&v["ros2"]["services"], params).is_some()
    });
    let s = named(&services["ros2"]["services"], params).unwrap();
    assert_eq!(
        s["types"],
        serde_json::json!(["rcl_interfaces/srv/GetParameters"]),
        "{s}"
    );
    assert!(s["servers"].as_u64() >= Some(1), "{s}");
    let text = horus(&ns, &["service", "list"]);
    println!("{text}");
    assert!(text.contains("ros2 service"), "{text}");
    assert!(
        text.lines()
            .any(|l| l.starts_with(params) && l.contains("rcl_interfaces/srv/GetParameters")),
        "{text}"
    );

    talker.stop();
    bridge.stop();
    // The bridge gone: no ROS 2 side any more.
    let after = json(&ns, &["topic", "list", "--window", "0"]);
    assert_eq!(after["ros2"], Value::Null, "{after}");
    drop(sub);
    v.unlink_if_unused();
    drop(v);
    assert_eq!(w.leftovers(), Vec::<String>::new(), "left in /dev/shm");
}

/// `std_msgs/msg/String` from the standard set compiled into horus-idl.
fn string_type() -> Ros2Type {
    let name = "std_msgs/msg/String";
    let resolved = horus_idl::InterfaceSet::standard()
        .unwrap()
        .resolve()
        .unwrap();
    let hash = resolved.type_hash(name).unwrap().to_string();
    let definition = resolved.ros2msg_definition(name).unwrap();
    Ros2Type::new(name, &hash, &definition)
}
