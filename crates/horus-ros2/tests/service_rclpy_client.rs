//! ROS 2 clients (rclpy, separate processes) call horus servers through the bridge.

mod service_common;

use horus_ros2::Direction;
use service_common::Rig;

/// The entry child processes of this binary run (see service_common/roles.rs).
#[test]
fn child_entry() {
    service_common::child_main();
}

#[test]
fn an_rclpy_client_calls_a_horus_server_through_the_bridge() {
    let Some(rig) = Rig::new("rq-call", 0) else {
        return;
    };
    let server = rig.horus_server("demo/enable", "answer");
    let bridge = rig.bridge();
    let mut client = rig.rclpy_client("/demo/enable", "SetBool");
    assert_eq!(client.ask("wait 30")["available"], true);
    let r = client.ask("call true 15");
    assert_eq!(r["success"], false, "{r}");
    assert_eq!(r["message"], "horus", "{r}");
    let r = client.ask("call false 15");
    assert_eq!(r["success"], true, "{r}");
    let st = rig.wait_service("demo/enable", Direction::ToRos, "counted 2 calls", |s| {
        s.counters.calls >= 2
    });
    assert_eq!(st.ros_service, "/demo/enable");
    assert_eq!(st.type_name, "std_srvs/srv/SetBool");
    assert!(st.active && st.refused.is_none(), "{st:#?}");
    assert_eq!(st.counters.malformed + st.counters.timed_out, 0, "{st:#?}");
    drop(client);
    drop(server);
    drop(bridge);
    rig.assert_clean();
}

#[test]
fn a_horus_server_killed_mid_call_is_counted_and_the_bridge_keeps_serving() {
    let Some(rig) = Rig::new("rq-kill", 1) else {
        return;
    };
    let mut server = rig.horus_server("demo/arm", "hang");
    let bridge = rig.bridge();
    let mut client = rig.rclpy_client("/demo/arm", "SetBool");
    assert_eq!(client.ask("wait 30")["available"], true);
    client.say("call true 8");
    server.line_starting("got");
    server.kill();
    // ROS 2 has no error reply: the rclpy caller's own wait ends the call.
    assert_eq!(client.json()["timeout"], true);
    let st = rig.wait_service("demo/arm", Direction::ToRos, "counted the lost call", |s| {
        s.counters.server_died + s.counters.timed_out + s.counters.no_server >= 1
    });
    assert_eq!(st.counters.calls, 0, "{st:#?}");
    // The bridge still serves the name once a new horus server is there.
    let server = rig.horus_server("demo/arm", "answer");
    let mut answered = None;
    for _ in 0..5 {
        let r = client.ask("call false 10");
        if r.get("success").is_some() {
            answered = Some(r);
            break;
        }
    }
    let r = answered.expect("a new horus server answers through the same bridge");
    assert_eq!(r["success"], true, "{r}");
    assert_eq!(r["message"], "horus", "{r}");
    drop(client);
    drop(server);
    drop(bridge);
    rig.assert_clean();
}

#[test]
fn an_rclpy_client_of_another_type_is_refused_and_counted() {
    let Some(rig) = Rig::new("rq-type", 2) else {
        return;
    };
    let server = rig.horus_server("demo/typed", "answer");
    let bridge = rig.bridge();
    // std_srvs/Trigger on a name the horus side serves as std_srvs/SetBool.
    let mut client = rig.rclpy_client("/demo/typed", "Trigger");
    let st = rig.wait_service("demo/typed", Direction::ToRos, "refused the client", |s| {
        s.refusals >= 1
    });
    let why = st.refused.clone().unwrap_or_default();
    assert!(
        why.contains("Trigger") && why.contains("SetBool"),
        "{st:#?}"
    );
    // DDS matches by type name: the client never sees the service.
    assert_eq!(client.ask("wait 2")["available"], false);
    drop(client);
    drop(server);
    drop(bridge);
    rig.assert_clean();
}
