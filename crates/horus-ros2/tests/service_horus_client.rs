//! horus clients call ROS 2 servers (rclpy, separate processes) through the bridge.

mod service_common;

use std::time::{Duration, Instant};

use horus::{CallError, RawClient};
use horus_ros2::Direction;
use horus_ros_msgs::horus_cdr::{decode_message, encode_message};
use horus_ros_msgs::std_srvs::srv::{SetBool_Request, SetBool_Response};
use service_common::roles::record;
use service_common::Rig;

/// The entry child processes of this binary run (see service_common/roles.rs).
#[test]
fn child_entry() {
    service_common::child_main();
}

/// A horus client of `name`, once the bridge serves it in horus (at most 60 s).
fn client(rig: &Rig, name: &str) -> RawClient {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        match RawClient::open(&rig.namespace, name) {
            Ok(c) => return c,
            Err(e) if Instant::now() > deadline => panic!("{name} never served in horus: {e}"),
            Err(_) => std::thread::sleep(Duration::from_millis(50)),
        }
    }
}

/// Calls SetBool with `data`.
fn call(c: &mut RawClient, data: bool, t: Duration) -> Result<SetBool_Response, CallError> {
    let wire = encode_message(&SetBool_Request { data }).unwrap();
    let resp = c.call(&record(&wire), t)?;
    Ok(decode_message(&resp[4..]).expect("a SetBool response"))
}

#[test]
fn a_horus_client_calls_an_rclpy_server_through_the_bridge() {
    let Some(rig) = Rig::new("rr-call", 0) else {
        return;
    };
    let server = rig.rclpy_server("/demo/relay", "answer");
    let bridge = rig.bridge();
    let mut c = client(&rig, "demo/relay");
    let d = c.description();
    let ty = |m: &horus::msgs::MessageDescription| m.ros2.as_ref().unwrap().type_name.clone();
    assert_eq!(ty(&d.request), "std_srvs/srv/SetBool_Request");
    assert_eq!(ty(&d.response), "std_srvs/srv/SetBool_Response");
    let r = call(&mut c, true, Duration::from_secs(15)).expect("answered");
    assert_eq!((r.success, r.message.as_str()), (false, "rclpy"));
    // Byte for byte what rclpy serialized, without the RTPS padding after it (the 14-byte
    // body reached horus as 16 bytes before replies were trimmed to their message).
    let wire = encode_message(&SetBool_Request { data: false }).unwrap();
    let raw = c
        .call(&record(&wire), Duration::from_secs(15))
        .expect("answered");
    let want = SetBool_Response {
        success: true,
        message: "rclpy".into(),
    };
    assert_eq!(raw[4..], encode_message(&want).unwrap()[..]);
    let st = rig.wait_service("demo/relay", Direction::FromRos, "counted 2 calls", |s| {
        s.counters.calls >= 2
    });
    assert_eq!(st.ros_service, "/demo/relay");
    assert!(st.active && st.refused.is_none(), "{st:#?}");
    drop(c);
    drop(server);
    drop(bridge);
    rig.assert_clean();
}

#[test]
fn an_rclpy_server_killed_mid_call_gives_the_horus_caller_a_typed_error_and_is_counted() {
    let Some(rig) = Rig::new("rr-kill", 1) else {
        return;
    };
    let mut server = rig.rclpy_server("/demo/hang", "hang");
    let bridge = rig.bridge();
    let mut c = client(&rig, "demo/hang");
    // The call waits in another thread while the server is killed holding it.
    let caller = std::thread::spawn(move || {
        let r = call(&mut c, true, Duration::from_secs(20));
        (c, r)
    });
    server.line_starting("got");
    server.kill();
    let (c, r) = caller.join().unwrap();
    match r {
        // The bridge gave the call up (its timeout) or saw the server leave holding it.
        Err(CallError::Unanswered | CallError::ServerDied { .. } | CallError::Timeout(_)) => {}
        other => panic!("call to a killed server: {other:?}"),
    }
    let st = rig.wait_service(
        "demo/hang",
        Direction::FromRos,
        "counted the lost call",
        |s| s.counters.timed_out + s.counters.server_died >= 1,
    );
    assert_eq!(st.counters.calls, 0, "{st:#?}");
    drop(c);
    // The bridge keeps serving: a new rclpy server on the same name answers.
    let server = rig.rclpy_server("/demo/hang", "answer");
    let mut c = client(&rig, "demo/hang");
    let mut answered = None;
    for _ in 0..5 {
        if let Ok(r) = call(&mut c, true, Duration::from_secs(10)) {
            answered = Some(r);
            break;
        }
    }
    let r = answered.expect("the new rclpy server answers through the same bridge");
    assert_eq!(r.message, "rclpy");
    drop(c);
    drop(server);
    drop(bridge);
    rig.assert_clean();
}

/// A horus server of its own coming up next to a bridged ROS 2 server: the bridge's horus
/// server leaves (before, the route was marked refused but kept serving, so horus clients
/// were answered by two servers).
#[test]
fn a_horus_server_next_to_a_bridged_rclpy_server_makes_the_bridge_leave_horus() {
    let Some(rig) = Rig::new("rr-both", 2) else {
        return;
    };
    let server = rig.rclpy_server("/demo/both", "answer");
    let bridge = rig.bridge();
    let bridge_pid = bridge.child.id();
    drop(client(&rig, "demo/both"));
    rig.wait_service("demo/both", Direction::FromRos, "served", |s| s.active);
    let horus_server = rig.horus_server("demo/both", "answer");
    let st = rig.wait_service(
        "demo/both",
        Direction::FromRos,
        "refused and not served",
        |s| s.refused.is_some() && !s.active,
    );
    assert!(st.refusals >= 1, "{st:#?}");
    // Only the horus server of its own serves the name in horus now.
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let bridge_serves = horus::list_services(&rig.namespace)
            .unwrap_or_default()
            .into_iter()
            .filter(|l| l.name == "demo/both")
            .filter_map(|l| l.snapshot.ok())
            .any(|s| s.servers.iter().any(|e| e.alive && e.pid == bridge_pid));
        if !bridge_serves {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the bridge still serves demo/both"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    drop(horus_server);
    drop(server);
    drop(bridge);
    rig.assert_clean();
}
