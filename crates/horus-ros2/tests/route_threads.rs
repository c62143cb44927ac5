//! Each route moves on its own: a route from ROS 2 into a horus `Block` topic whose
//! subscriber never reads waits (as a `Block` publisher must), and the other topics keep
//! crossing meanwhile. The bridge, rclpy talkers and horus subscribers are separate
//! processes in a network namespace of their own with only `lo`; nothing is left in
//! /dev/shm.
//!
//! Skipped (with the reason printed) when the ROS 2 venv is absent (`make setup-ros2`) or
//! network namespaces cannot be made (not root).

mod common;

use std::time::Duration;

use common::{World, PATIENCE};
use horus::inspect::{open_or_create_ros_topic, ros_qos, QosInfo};
use horus::Overflow;
use horus_msgs::Ros2Type;
use horus_ros2::Direction;
use horus_ros_msgs::std_msgs::msg::String as RosString;

bridge_process_test!();

fn string_type() -> Ros2Type {
    common::ros2_type::<RosString>()
}

/// The number an rclpy `talk` String message carries.
fn talk_number(cdr: &[u8]) -> u64 {
    let len = u32::from_le_bytes(cdr[4..8].try_into().unwrap()) as usize;
    std::str::from_utf8(&cdr[8..8 + len - 1])
        .unwrap()
        .parse()
        .unwrap()
}

/// Before route threads, one loop moved every route: publishing into a `Block` topic whose
/// subscriber does not read waited the topic's block timeout (1 s) per message, up to a
/// batch of 64 per turn, and every other route from ROS 2 waited with it.
#[test]
fn a_full_block_topic_from_ros_does_not_stall_other_topics() {
    if let Some(why) = common::skip_reason() {
        eprintln!("SKIPPED: {why}");
        return;
    }
    let w = World::new("block");
    let block = QosInfo {
        depth: 4,
        overflow: Some(Overflow::Block {
            timeout: Duration::from_secs(1),
        }),
        ..ros_qos(4096)
    };
    let stuck_view =
        open_or_create_ros_topic(&w.namespace, "bp/stuck", &string_type(), &block).unwrap();
    let flowing_view =
        open_or_create_ros_topic(&w.namespace, "bp/flowing", &string_type(), &ros_qos(4096))
            .unwrap();
    // Never read: its ring fills after 4 messages, then the bridge's publish waits.
    let stuck = stuck_view.ros_subscriber(true).unwrap();
    let mut flowing = flowing_view.ros_subscriber(true).unwrap();
    let bridge = w.bridge();
    let stuck_talker = w.rclpy("talk", &["/bp/stuck"]);
    let flowing_talker = w.rclpy("talk", &["/bp/flowing"]);
    // The stuck topic's ring is full: from here on each publish into it waits.
    common::wait_status(&w.namespace, "the stuck topic full", |s| {
        s.topics.iter().any(|t| {
            t.horus_topic == "bp/stuck"
                && t.direction == Direction::FromRos
                && t.counters.messages >= 4
        })
    });
    // The other topic keeps crossing: 25 messages newer than what had arrived so far
    // (half a second of the talker's 50 Hz).
    let mut first = None;
    loop {
        let s = flowing
            .recv_timeout(PATIENCE)
            .expect("the flowing topic stalled behind the stuck one");
        let n = talk_number(s.cdr());
        let start = *first.get_or_insert(n);
        if n >= start + 25 {
            break;
        }
    }
    // The bridge counted them (its status file follows at the next scan).
    common::wait_status(&w.namespace, "the flowing route's messages counted", |s| {
        s.topics.iter().any(|t| {
            t.horus_topic == "bp/flowing"
                && t.direction == Direction::FromRos
                && t.counters.messages >= 25
        })
    });
    stuck_talker.stop();
    flowing_talker.stop();
    // The stuck subscriber leaves: the bridge's waiting publish ends, the bridge stops.
    drop(stuck);
    bridge.stop();
    drop(flowing);
    for v in [&stuck_view, &flowing_view] {
        v.unlink_if_unused();
    }
    drop((stuck_view, flowing_view));
    assert_eq!(w.leftovers(), Vec::<String>::new(), "left in /dev/shm");
}

/// The bridge's subscriber on a horus topic going to ROS 2 used to be non-blocking: it was
/// not registered for the publishers' futex wake-ups and slept in 1 ms ticks, polling, so
/// each message waited up to 1 ms at the bridge. It now registers, as every sleeping
/// subscriber must.
#[test]
fn the_bridges_horus_subscriber_is_woken_by_publishers_not_polling() {
    if let Some(why) = common::skip_reason() {
        eprintln!("SKIPPED: {why}");
        return;
    }
    let w = World::new("wake");
    let v =
        open_or_create_ros_topic(&w.namespace, "bp/out", &string_type(), &ros_qos(4096)).unwrap();
    let mut publisher = v.ros_publisher().unwrap();
    assert_eq!(v.snapshot().blocking_subscribers, 0);
    let bridge = w.bridge();
    let rclpy = w.rclpy("sub", &["/bp/out:std_msgs/msg/String"]);
    common::wait_status(&w.namespace, "the route to ROS 2 open", |s| {
        s.topics
            .iter()
            .any(|t| t.horus_topic == "bp/out" && t.direction == Direction::ToRos && t.active)
    });
    assert_eq!(
        v.snapshot().blocking_subscribers,
        1,
        "the bridge's subscriber is not registered for wake-ups"
    );
    // And messages still cross (sent until rclpy prints one: the DDS match may lag the
    // route's opening, and the topic is volatile).
    let cdr = [0, 1, 0, 0, 3, 0, 0, 0, b'h', b'i', 0];
    let deadline = std::time::Instant::now() + PATIENCE;
    loop {
        publisher.send_cdr(&cdr).unwrap();
        std::thread::sleep(Duration::from_millis(100));
        if rclpy.drain().iter().any(|l| l.contains("got /bp/out")) {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "nothing reached rclpy"
        );
    }
    rclpy.stop();
    bridge.stop();
    drop(publisher);
    v.unlink_if_unused();
    drop(v);
    assert_eq!(w.leftovers(), Vec::<String>::new(), "left in /dev/shm");
}
