//! A latched ROS 2 topic (an rclpy transient-local writer, as `/tf_static` or `/map`) in a
//! latched horus topic: horus subscribers that join late get the latched message from the
//! bridge's horus publisher, also after the bridge replaced its DDS reader because the
//! writers' QoS changed. The bridge and the rclpy nodes are processes of their own, in a
//! network namespace with only `lo`; nothing is left in /dev/shm.
//!
//! Skipped (with the reason printed) when the ROS 2 venv is absent (`make setup-ros2`) or
//! network namespaces cannot be made (not root).

mod common;

use common::{World, PATIENCE};
use horus::inspect::{open_or_create_ros_topic_durable, ros_qos};
use horus::Durability;
use horus_msgs::Ros2Type;
use horus_ros2::{BridgeStatus, Direction, TopicStatus};
use horus_ros_msgs::std_msgs::msg::String as RosString;

bridge_process_test!();

fn string_type() -> Ros2Type {
    common::ros2_type::<RosString>()
}

fn from_ros(st: &BridgeStatus, topic: &str) -> Option<TopicStatus> {
    st.topics
        .iter()
        .find(|t| t.direction == Direction::FromRos && t.horus_topic == topic)
        .cloned()
}

/// What broke: when a writer with other QoS joined (or left) a latched ROS 2 topic, the
/// bridge closed its route and opened a new one, with a new horus publisher. A horus
/// publisher's latched history lives as long as the publisher, so the latched message died
/// with the old one; the new DDS reader's replay of it was (rightly) dropped as already
/// carried, and a horus subscriber joining after that never got the latched message. Now
/// only the DDS reader is replaced and the horus publisher stays.
#[test]
fn a_horus_subscriber_joining_after_the_reader_was_reopened_gets_the_latched_message() {
    if let Some(why) = common::skip_reason() {
        eprintln!("SKIPPED: {why}");
        return;
    }
    let w = World::new("relatch");
    let v = open_or_create_ros_topic_durable(
        &w.namespace,
        "demo/map",
        &string_type(),
        &ros_qos(4096),
        Durability::TransientLocal { depth: 1 },
    )
    .unwrap();
    let mut first = v.ros_subscriber(true).unwrap();
    let bridge = w.bridge();
    let latched = w.rclpy("pub", &["/demo/map:std_msgs/msg/String:latched"]);
    let (_, sent) = common::line_bytes(&latched.next_line("sent "));
    let m = first.recv_timeout(PATIENCE).expect("the latched message");
    assert!(m.cdr() == &sent[..]);
    drop(m);
    let opened = |n: u64| {
        move |s: &BridgeStatus| from_ros(s, "demo/map").is_some_and(|t| t.counters.opened >= n)
    };
    common::wait_status(&w.namespace, "the route open", opened(1));

    // A volatile writer that publishes nothing joins: the bridge's reader is reopened
    // volatile (the only QoS both writers offer).
    let volatile = w.rclpy("hold", &["/demo/map:std_msgs/msg/String"]);
    common::wait_status(&w.namespace, "the reader reopened volatile", opened(2));
    let mut second = v.ros_subscriber(true).unwrap();
    let m = second
        .recv_timeout(PATIENCE)
        .expect("a horus subscriber joining after the reopen got no latched message");
    assert!(m.cdr() == &sent[..]);
    drop(m);

    // It leaves: reopened transient-local; the writer's history replayed to the new reader
    // is dropped, and a subscriber joining now still gets the latched message, once.
    volatile.stop();
    common::wait_status(
        &w.namespace,
        "the reader reopened transient-local",
        opened(3),
    );
    let mut third = v.ros_subscriber(true).unwrap();
    let m = third
        .recv_timeout(PATIENCE)
        .expect("a horus subscriber joining after the second reopen got no latched message");
    assert!(m.cdr() == &sent[..]);
    drop(m);
    // Both reopened readers were sent the writer's history again (RustDDS's reliable
    // reader asks a writer for all it holds, volatile or not): both replays dropped, so the
    // message was published into horus once, and no subscriber has a second copy.
    let st = common::wait_status(&w.namespace, "both replays dropped", |s| {
        from_ros(s, "demo/map").is_some_and(|t| t.counters.replayed >= 2)
    });
    let t = from_ros(&st, "demo/map").unwrap();
    assert_eq!(t.counters.messages, 1, "carried once: {t:?}");
    assert_eq!(t.counters.lost, 0, "no false loss: {t:?}");
    for (r, who) in [
        (&mut first, "first"),
        (&mut second, "second"),
        (&mut third, "third"),
    ] {
        assert!(r.try_recv().is_none(), "the {who} subscriber got it twice");
    }

    latched.stop();
    bridge.stop();
    drop((first, second, third));
    v.unlink_if_unused();
    drop(v);
    assert_eq!(w.leftovers(), Vec::<String>::new(), "left in /dev/shm");
}
