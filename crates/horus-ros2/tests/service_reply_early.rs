//! A reply to a ROS 2 client whose reply reader the bridge's reply writer has not matched
//! yet (DDS discovery is not symmetric: the client can call before the bridge knows its
//! reader). The reply used to be written at once, to nobody (the writer is volatile), and
//! counted as a call answered; now it waits for the reader (`held_for_reader`) or, if none
//! matches within the call timeout, is dropped and counted (`no_reply_reader`).
//!
//! The client is a bare RustDDS participant (service_common/roles.rs,
//! `late_reader_client`) that creates its reply reader only when told; every process
//! keeps DDS on localhost.

mod service_common;

use horus_ros2::Direction;
use horus_ros_msgs::horus_cdr::decode_message;
use horus_ros_msgs::std_srvs::srv::SetBool_Response;
use service_common::{Proc, Rig};

/// The entry child processes of this binary run (see service_common/roles.rs).
#[test]
fn child_entry() {
    service_common::child_main();
}

fn unhex(s: &str) -> Vec<u8> {
    (0..s.len() / 2)
        .map(|i| u8::from_str_radix(&s[2 * i..2 * i + 2], 16).unwrap())
        .collect()
}

/// A horus SetBool server on `name` answering, the bridge, and a late-reader client that
/// has sent one request (no reply reader yet).
fn called(rig: &Rig, name: &str) -> (Proc, Proc, Proc) {
    let server = rig.horus_server(name, "answer");
    let bridge = rig.bridge();
    let mut client = rig.spawn("late_reader_client", &[name]);
    client.say("call");
    client.line_starting("sent");
    (server, bridge, client)
}

/// What broke: the reply was written before the client's reply reader matched and reached
/// nobody; the bridge counted it in `calls`. Checked 28 Nov with the hold disabled: fails,
/// the client gets no reply.
#[test]
fn a_reply_ready_before_the_clients_reply_reader_matched_reaches_it_later() {
    let Some(rig) = Rig::new("rq-early", 0) else {
        return;
    };
    let (server, bridge, mut client) = called(&rig, "demo/early");
    // The horus server answered; the bridge holds the reply for the reader.
    let st = rig.wait_service("demo/early", Direction::ToRos, "held the reply", |s| {
        s.counters.held_for_reader + s.counters.calls >= 1
    });
    client.say("listen");
    let line = client.line_starting("reply");
    let hex = line.split_whitespace().nth(1).unwrap_or_default();
    assert_ne!(hex, "none", "the client got no reply (bridge: {st:#?})");
    assert_eq!(
        st.counters.calls, 0,
        "written before the reader matched: {st:#?}"
    );
    let wire = unhex(hex);
    let resp: SetBool_Response = decode_message(&wire).expect("a SetBool response");
    assert!(!resp.success, "{resp:?}");
    assert_eq!(resp.message, "horus");
    let st = rig.wait_service("demo/early", Direction::ToRos, "counted the call", |s| {
        s.counters.calls >= 1
    });
    assert_eq!(st.counters.held_for_reader, 1, "{st:#?}");
    assert_eq!(st.counters.no_reply_reader, 0, "{st:#?}");
    drop(client);
    drop(server);
    drop(bridge);
    rig.assert_clean();
}

/// What broke: a reply whose caller's reader never matched was lost with nothing counting
/// it. Now it is dropped after the bridge's call timeout (10 s) and counted.
#[test]
fn a_reply_whose_clients_reader_never_matched_is_counted_no_reply_reader() {
    let Some(rig) = Rig::new("rq-never", 1) else {
        return;
    };
    let (server, bridge, client) = called(&rig, "demo/never");
    let st = rig.wait_service("demo/never", Direction::ToRos, "counted the reply", |s| {
        s.counters.no_reply_reader >= 1
    });
    assert_eq!(st.counters.calls, 0, "{st:#?}");
    assert_eq!(st.counters.held_for_reader, 1, "{st:#?}");
    drop(client);
    drop(server);
    drop(bridge);
    rig.assert_clean();
}
