//! What a slow horus `Block` subscriber does to a reliable ROS 2 publisher behind the bridge:
//! nothing. The bridge's DDS reader acknowledges what it received, not what the bridge has
//! published into horus, so back-pressure does not reach the ROS 2 side; the bridge drops
//! what does not fit and counts every message (docs/ros2-bridge.md, QoS). The bridge and the
//! rclpy publisher are processes of their own, in a network namespace with only `lo`;
//! nothing is left in /dev/shm.
//!
//! Skipped (with the reason printed) when the ROS 2 venv is absent (`make setup-ros2`) or
//! network namespaces cannot be made (not root).

mod common;

use std::time::Duration;

use common::{World, PATIENCE};
use horus::inspect::{open_or_create_ros_topic, ros_qos, QosInfo};
use horus::Overflow;
use horus_msgs::Ros2Type;
use horus_ros2::{BridgeStatus, Direction, TopicStatus};
use horus_ros_msgs::horus_cdr::RosMessage;
use horus_ros_msgs::std_msgs::msg::UInt8MultiArray;

bridge_process_test!();

/// Messages the rclpy publisher sends (reliable, KEEP_LAST 10, 100 Hz).
const COUNT: u64 = 200;

fn from_ros(st: &BridgeStatus, topic: &str) -> Option<TopicStatus> {
    st.topics
        .iter()
        .find(|t| t.direction == Direction::FromRos && t.horus_topic == topic)
        .cloned()
}

/// A horus `Block` topic (depth 4, block timeout 1 s) whose subscriber stops reading while
/// an rclpy node publishes 200 reliable messages into it: the rclpy node gets all of them
/// out (it is not held back), the bridge counts what it could not publish (`refused`, after
/// waiting the block timeout) and what its reader overwrote meanwhile (`lost`), and every
/// message is accounted for once the subscriber reads again.
#[test]
fn a_slow_block_subscriber_does_not_hold_back_a_ros2_publisher_and_every_message_is_counted() {
    if let Some(why) = common::skip_reason() {
        eprintln!("SKIPPED: {why}");
        return;
    }
    let w = World::new("backpressure");
    let ty = Ros2Type::new(
        UInt8MultiArray::TYPE_NAME,
        UInt8MultiArray::TYPE_HASH,
        UInt8MultiArray::DEFINITION,
    );
    let qos = QosInfo {
        depth: 4,
        overflow: Some(Overflow::Block {
            timeout: Duration::from_secs(1),
        }),
        ..ros_qos(4096)
    };
    let v = open_or_create_ros_topic(&w.namespace, "bp/slow", &ty, &qos).unwrap();
    // Not read until the stream is out: the ring fills after 4 messages.
    let mut slow = v.ros_subscriber(true).unwrap();
    let bridge = w.bridge();
    let count = COUNT.to_string();
    let rclpy = w.rclpy("stream", &["/bp/slow", &count, "64"]);
    // The publisher gets every message out while the horus side is stuck.
    rclpy.expect_line(&format!("streamed {COUNT}"));
    common::wait_status(
        &w.namespace,
        "a publish refused after the block timeout",
        |s| from_ros(s, "bp/slow").is_some_and(|t| t.counters.refused >= 1),
    );
    // The subscriber reads again: the bridge publishes what its reader still holds.
    let mut received = 0u64;
    let deadline = std::time::Instant::now() + PATIENCE;
    let st = loop {
        while slow.recv_timeout(Duration::from_millis(50)).is_some() {
            received += 1;
        }
        let st = horus_ros2::read_status_file(&w.namespace).unwrap().unwrap();
        let t = from_ros(&st, "bp/slow").unwrap();
        let c = &t.counters;
        if c.messages + c.refused + c.lost >= COUNT && received >= c.messages {
            break t;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "never accounted for all {COUNT}: {t:?}, received {received}"
        );
    };
    let c = &st.counters;
    assert_eq!(
        c.messages + c.refused + c.lost,
        COUNT,
        "each message carried, refused or lost, once: {st:?}"
    );
    assert_eq!(received, c.messages, "carried = received: {st:?}");
    assert!(c.refused >= 1, "{st:?}");
    assert_eq!((c.malformed, c.oversize, c.replayed), (0, 0, 0), "{st:?}");
    eprintln!(
        "back-pressure from ROS 2: carried {}, refused {}, lost {} of {COUNT}",
        c.messages, c.refused, c.lost
    );
    rclpy.stop();
    bridge.stop();
    drop(slow);
    v.unlink_if_unused();
    drop(v);
    assert_eq!(w.leftovers(), Vec::<String>::new(), "left in /dev/shm");
}
