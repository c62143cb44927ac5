//! What the horus child processes do (chosen by `HR2_SVC_ROLE`, arguments in
//! `HR2_SVC_ARGS`). Each prints `ready` once it is set up and ends when its stdin closes.

use std::io::{Read, Write};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use horus::description::ServiceDescription;
use horus::msgs::{MessageDescription, Ros2Type};
use horus::RawServer;
use horus_ros2::{Bridge, BridgeConfig};
use horus_ros_msgs::horus_cdr::{decode_message, encode_message, RosMessage};
use horus_ros_msgs::std_srvs::srv::{SetBool_Request, SetBool_Response};

/// Runs `role`.
pub fn run(role: &str) {
    let args: Vec<String> = std::env::var("HR2_SVC_ARGS")
        .unwrap_or_default()
        .split_whitespace()
        .map(str::to_owned)
        .collect();
    match role {
        "bridge" => bridge(),
        "horus_server" => horus_server(&args[0], &args[1]),
        other => panic!("unknown role {other}"),
    }
}

/// A flag set when stdin closes (the parent's signal to finish).
fn stdin_closed() -> Arc<AtomicBool> {
    let stop = Arc::new(AtomicBool::new(false));
    let s = Arc::clone(&stop);
    std::thread::spawn(move || {
        let _ = std::io::stdin().read_to_end(&mut Vec::new());
        s.store(true, Ordering::Relaxed);
    });
    stop
}

fn ready() {
    println!("ready");
    let _ = std::io::stdout().flush();
}

fn bridge() {
    let ns = horus::namespace();
    let mut config = BridgeConfig::from_env(&ns).expect("config");
    config.localhost_only = true;
    config.scan_interval = Duration::from_millis(50);
    let mut bridge = Bridge::start(config).expect("bridge starts");
    let stop = stdin_closed();
    ready();
    bridge.run(|_| !stop.load(Ordering::Relaxed));
}

/// The description of SetBool as a ROS-typed horus service.
pub fn set_bool() -> ServiceDescription {
    let d = |name, hash, def| MessageDescription::ros2(Ros2Type::new(name, hash, def)).unwrap();
    ServiceDescription {
        request: d(
            SetBool_Request::TYPE_NAME,
            SetBool_Request::TYPE_HASH,
            SetBool_Request::DEFINITION,
        ),
        response: d(
            SetBool_Response::TYPE_NAME,
            SetBool_Response::TYPE_HASH,
            SetBool_Response::DEFINITION,
        ),
    }
}

/// `[0 0 0 0]` + wire bytes: a ROS-typed record.
pub fn record(wire: &[u8]) -> Vec<u8> {
    let mut v = vec![0; 4];
    v.extend_from_slice(wire);
    v
}

fn horus_server(name: &str, mode: &str) {
    let ns = horus::namespace();
    let mut server = RawServer::create(&ns, name, &set_bool()).expect("server");
    let stop = stdin_closed();
    ready();
    while !stop.load(Ordering::Relaxed) {
        let Some(request) = server.recv_timeout(Duration::from_millis(50)) else {
            continue;
        };
        let req: SetBool_Request = decode_message(&request.bytes()[4..]).expect("SetBool request");
        if mode == "hang" {
            println!("got");
            let _ = std::io::stdout().flush();
            loop {
                std::thread::sleep(Duration::from_secs(1));
            }
        }
        let resp = SetBool_Response {
            success: !req.data,
            message: "horus".into(),
        };
        request
            .reply(&record(&encode_message(&resp).unwrap()))
            .expect("reply");
    }
}
