//! A DDS peer that sends what no ROS 2 node would: a string whose length claims 4 GiB, a
//! truncated message, big-endian CDR, a message larger than the topic takes. The bridge
//! drops each one, counts it (`malformed`, `oversize`), keeps running, and carries the valid
//! message that follows. The peer is RustDDS in its own process (this test binary
//! re-executed), in a network namespace with only `lo`.

mod common;
#[path = "common/raw_dds_peer.rs"]
mod raw_dds_peer;

use bytes::Bytes;
use common::{World, PATIENCE};
use horus::inspect::{open_or_create_ros_topic, ros_qos};
use horus_msgs::Ros2Type;
use horus_ros2::raw::{PassThrough, WireCdr};
use horus_ros2::Direction;
use horus_ros_msgs::horus_cdr::RosMessage;
use horus_ros_msgs::std_msgs::msg::String as RosString;
use raw_dds_peer::{Delivery, RawDdsPeer, INT32_TYPE, STRING_TYPE, VALID_STRING};
use rustdds::no_key::SerializerAdapter;
use rustdds::RepresentationIdentifier;

bridge_process_test!();

/// Set in the hostile peer child: the DDS topic it writes.
const HOSTILE_ENV: &str = "HORUS_ROS2_TEST_HOSTILE";

/// Set in the other-type peer child: the DDS topic it writes as `Int32_`.
const OTHER_TYPE_ENV: &str = "HORUS_ROS2_TEST_OTHER_TYPE";

/// Writes whatever bytes it is given, declared big-endian CDR.
struct BigEndian;

impl SerializerAdapter<WireCdr> for BigEndian {
    type Error = std::convert::Infallible;
    fn output_encoding() -> RepresentationIdentifier {
        RepresentationIdentifier::CDR_BE
    }
    fn to_bytes(value: &WireCdr) -> Result<Bytes, Self::Error> {
        Ok(value.0.slice(4..))
    }
}

/// The hostile peer: writes the bad payloads, then the valid one, on transient-local
/// writers (so the bridge's reader gets them whenever it matches: RustDDS 0.15 cannot say
/// when a writer matched); runs until stdin closes.
#[test]
fn hostile_peer_process() {
    let Ok(topic_name) = std::env::var(HOSTILE_ENV) else {
        return;
    };
    let peer = RawDdsPeer::new(&topic_name, STRING_TYPE, Delivery::ReliableLatched);
    let le = peer.writer::<PassThrough>();
    let be = peer.writer::<BigEndian>();
    println!("hostile: ready");
    let huge_len = [0, 1, 0, 0, 0xf0, 0xff, 0xff, 0xff, b'x', 0];
    let truncated = [0, 1, 0, 0, 9, 0, 0, 0, b'a', b'b'];
    let mut oversize = vec![0, 1, 0, 0];
    let n: u32 = 64 * 1024;
    oversize.extend_from_slice(&n.to_le_bytes());
    oversize.resize(8 + n as usize, b'z');
    *oversize.last_mut().unwrap() = 0;
    for bad in [&huge_len[..], &truncated[..], &oversize[..]] {
        le.write(WireCdr(Bytes::copy_from_slice(bad)), None)
            .unwrap();
    }
    be.write(WireCdr(Bytes::from_static(&VALID_STRING)), None)
        .unwrap();
    le.write(WireCdr(Bytes::from_static(&VALID_STRING)), None)
        .unwrap();
    println!("hostile: sent");
    let _ = std::io::stdin().lines().count();
}

#[test]
fn malformed_and_oversize_payloads_are_dropped_counted_and_the_bridge_keeps_running() {
    if let Some(why) = common::skip_reason() {
        eprintln!("SKIPPED: {why}");
        return;
    }
    let w = World::new("hostile");
    let ty = Ros2Type::new(
        RosString::TYPE_NAME,
        RosString::TYPE_HASH,
        RosString::DEFINITION,
    );
    // Room for 16 KiB messages: the 64 KiB one is oversize.
    let v = open_or_create_ros_topic(&w.namespace, "demo/h", &ty, &ros_qos(16 * 1024)).unwrap();
    let mut r = v.ros_subscriber(true).unwrap();
    let bridge = w.bridge();
    let peer = w.spawn_self("hostile_peer_process", HOSTILE_ENV, "rt/demo/h");
    peer.expect_line("hostile: sent");
    let s = r
        .recv_timeout(PATIENCE)
        .expect("the valid message after the bad ones");
    assert_eq!(s.cdr(), &VALID_STRING[..]);
    drop(s);
    let st = common::wait_status(&w.namespace, "the bad payloads counted", |s| {
        s.topics.iter().any(|t| {
            let c = &t.counters;
            t.direction == Direction::FromRos
                && c.malformed >= 3
                && c.oversize >= 1
                && c.messages >= 1
        })
    });
    let t = st
        .topics
        .iter()
        .find(|t| t.direction == Direction::FromRos)
        .unwrap();
    assert_eq!(t.counters.malformed, 3, "{t:?}"); // huge length, truncated, big-endian
    assert_eq!(t.counters.oversize, 1, "{t:?}");
    assert_eq!(t.counters.messages, 1, "{t:?}");
    assert!(r.try_recv().is_none(), "only the valid message crossed");
    peer.stop();
    bridge.stop();
    drop(r);
    v.unlink_if_unused();
    assert_eq!(w.leftovers(), Vec::<String>::new());
}

/// The other-type peer: writes a valid `std_msgs/String` "ok" declared as
/// `std_msgs::msg::dds_::Int32_` every 20 ms (a volatile reader gets only what follows its
/// match) until stdin closes.
#[test]
fn other_type_peer_process() {
    let Ok(topic_name) = std::env::var(OTHER_TYPE_ENV) else {
        return;
    };
    let peer = RawDdsPeer::new(&topic_name, INT32_TYPE, Delivery::Reliable);
    let w = peer.writer::<PassThrough>();
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let s2 = stop.clone();
    std::thread::spawn(move || {
        let _ = std::io::stdin().lines().count();
        s2.store(true, std::sync::atomic::Ordering::Relaxed);
    });
    println!("other: ready");
    while !stop.load(std::sync::atomic::Ordering::Relaxed) {
        let _ = w.write(WireCdr(Bytes::from_static(&VALID_STRING)), None);
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

/// DDS matches a reader with every writer of the topic's name, whatever its type: beside a
/// good writer (rclpy, String), a writer declaring Int32 on the same topic had its samples
/// (valid String bytes) carried into the String topic although the status said refused.
#[test]
fn other_type_writer_beside_a_good_one_is_dropped_and_counted_refused() {
    if let Some(why) = common::skip_reason() {
        eprintln!("SKIPPED: {why}");
        return;
    }
    let w = World::new("othertype");
    let ty = Ros2Type::new(
        RosString::TYPE_NAME,
        RosString::TYPE_HASH,
        RosString::DEFINITION,
    );
    let v = open_or_create_ros_topic(&w.namespace, "demo/o", &ty, &ros_qos(4096)).unwrap();
    let mut r = v.ros_subscriber(true).unwrap();
    let bridge = w.bridge();
    let peer = w.spawn_self("other_type_peer_process", OTHER_TYPE_ENV, "rt/demo/o");
    let good = w.rclpy("pub", &["/demo/o:std_msgs/msg/String"]);
    let (_, sent) = common::line_bytes(&good.next_line("sent "));
    let s = r
        .recv_timeout(PATIENCE)
        .expect("nothing from the String writer");
    assert!(
        s.cdr() == &sent[..],
        "the first message is not the String writer's"
    );
    drop(s);
    // The Int32 writer's samples reached the bridge's reader: dropped, counted refused.
    let st = common::wait_status(&w.namespace, "the other type's samples refused", |s| {
        s.topics
            .iter()
            .any(|t| t.direction == Direction::FromRos && t.counters.refused >= 3)
    });
    let t = st
        .topics
        .iter()
        .find(|t| t.direction == Direction::FromRos)
        .unwrap();
    assert_eq!(t.counters.messages, 1, "{t:?}");
    assert!(r.try_recv().is_none(), "the other type's sample crossed");
    good.stop();
    peer.stop();
    bridge.stop();
    drop(r);
    v.unlink_if_unused();
    assert_eq!(w.leftovers(), Vec::<String>::new());
}
