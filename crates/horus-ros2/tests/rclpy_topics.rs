//! Topics between horus and real rclpy nodes (ROS 2 kilted on Fast DDS, PyPI wheels),
//! through the bridge running as its own process. Every test runs its processes in a
//! network namespace of its own with only `lo` (DDS never leaves it) and uses a horus
//! namespace of its own; it leaves nothing in /dev/shm.
//!
//! Skipped (with the reason printed) when the ROS 2 venv is absent (`make setup-ros2`)
//! or network namespaces cannot be made (not root).

mod common;

use std::collections::BTreeMap;

use common::{line_bytes, World, PATIENCE};
use horus::inspect::{open_or_create_ros_topic, open_or_create_ros_topic_durable, ros_qos};
use horus::Durability;
use horus_msgs::Ros2Type;
use horus_ros2::Direction;
use horus_ros_msgs::horus_cdr::RosMessage;
use horus_ros_msgs::sensor_msgs::msg::{Image, Imu, LaserScan, PointCloud2};
use horus_ros_msgs::std_msgs::msg::{Int32, String as RosString};

bridge_process_test!();

fn ty<M: RosMessage>() -> Ros2Type {
    common::ros2_type::<M>()
}

/// Room for the 1 MiB point cloud and its header fields.
const BIG: usize = 2 << 20;

macro_rules! skip_unless_ready {
    () => {
        if let Some(why) = common::skip_reason() {
            eprintln!("SKIPPED: {why}");
            return;
        }
    };
}

/// The four sensor topics: horus name, ROS 2 type, `node.py` spec.
fn sensor_topics() -> Vec<(&'static str, Ros2Type, String)> {
    [
        ("demo/scan", ty::<LaserScan>()),
        ("demo/imu", ty::<Imu>()),
        ("demo/image", ty::<Image>()),
        ("demo/points", ty::<PointCloud2>()),
    ]
    .into_iter()
    .map(|(n, t)| {
        let spec = format!("/{n}:{}", t.type_name);
        (n, t, spec)
    })
    .collect()
}

/// The `msg TOPIC HEX` lines of `node.py make`: the bytes rclpy serializes.
fn rclpy_bytes(w: &World, specs: &[&str]) -> BTreeMap<String, Vec<u8>> {
    let p = w.rclpy("make", specs);
    let out = specs
        .iter()
        .map(|_| line_bytes(&p.next_line("msg ")))
        .collect();
    p.stop();
    out
}

/// What an rclpy subscriber received is the message horus published, byte for byte, then
/// (unfragmented messages) zero bytes up to a multiple of 4: RustDDS pads a DATA payload
/// and cannot say so in the encapsulation options as Fast DDS does; CDR readers ignore
/// them (docs/ros2-bridge.md, "What is not done").
fn assert_same_message(got: &[u8], want: &[u8], what: &str) {
    assert!(
        got.len() == want.len() || got.len() == want.len().next_multiple_of(4),
        "{what}: {} bytes for a message of {}",
        got.len(),
        want.len()
    );
    assert!(got[..want.len()] == *want, "{what}: bytes differ");
    assert!(got[want.len()..].iter().all(|b| *b == 0), "{what}: padding");
}

#[test]
fn rclpy_publishers_reach_horus_subscribers_byte_for_byte() {
    skip_unless_ready!();
    let w = World::new("in");
    let topics = sensor_topics();
    let mut views = Vec::new();
    let mut readers = Vec::new();
    for (name, t, _) in &topics {
        let v = open_or_create_ros_topic(&w.namespace, name, t, &ros_qos(BIG)).unwrap();
        readers.push((name.to_string(), v.ros_subscriber(true).unwrap()));
        views.push(v);
    }
    let bridge = w.bridge();
    let specs: Vec<&str> = topics.iter().map(|(_, _, s)| s.as_str()).collect();
    let rclpy = w.rclpy("pub", &specs);
    let sent: BTreeMap<String, Vec<u8>> = specs
        .iter()
        .map(|_| line_bytes(&rclpy.next_line("sent ")))
        .collect();
    for (name, r) in &mut readers {
        let s = r
            .recv_timeout(PATIENCE)
            .unwrap_or_else(|| panic!("{name}: nothing from rclpy"));
        let want = &sent[&format!("/{name}")];
        assert_eq!(s.cdr().len(), want.len(), "{name}: length");
        assert!(s.cdr() == &want[..], "{name}: bytes differ");
    }
    let st = horus_ros2::read_status_file(&w.namespace).unwrap().unwrap();
    for t in st
        .topics
        .iter()
        .filter(|t| t.direction == Direction::FromRos)
    {
        assert_eq!(t.counters.malformed, 0, "{t:?}");
    }
    rclpy.stop();
    bridge.stop();
    drop(readers);
    w.clean(views);
}

#[test]
fn horus_publishers_reach_rclpy_subscribers_byte_for_byte() {
    skip_unless_ready!();
    let w = World::new("out");
    let topics = sensor_topics();
    let specs: Vec<&str> = topics.iter().map(|(_, _, s)| s.as_str()).collect();
    let want = rclpy_bytes(&w, &specs);
    let mut views = Vec::new();
    let mut pubs = Vec::new();
    for (name, t, _) in &topics {
        let v = open_or_create_ros_topic(&w.namespace, name, t, &ros_qos(BIG)).unwrap();
        pubs.push((format!("/{name}"), v.ros_publisher().unwrap()));
        views.push(v);
    }
    let bridge = w.bridge();
    let rclpy = w.rclpy("sub", &specs);
    // A volatile topic: what is published before the DDS writer matched rclpy's reader is
    // not delivered (as between two ROS 2 nodes), so publish until each topic arrived.
    let mut got: BTreeMap<String, Vec<u8>> = BTreeMap::new();
    let deadline = std::time::Instant::now() + PATIENCE;
    while got.len() < topics.len() {
        assert!(
            std::time::Instant::now() < deadline,
            "rclpy got only {:?}",
            got.keys()
        );
        for (ros, p) in &mut pubs {
            if !got.contains_key(ros) {
                p.send_cdr(&want[ros]).unwrap();
            }
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
        for l in rclpy.drain() {
            if l.starts_with("got ") {
                let (t, b) = line_bytes(&l);
                got.entry(t).or_insert(b);
            }
        }
    }
    for (ros, bytes) in &got {
        assert_same_message(bytes, &want[ros], ros);
    }
    rclpy.stop();
    bridge.stop();
    drop(pubs);
    w.clean(views);
}

#[test]
fn late_rclpy_subscriber_gets_latched_message() {
    skip_unless_ready!();
    let w = World::new("latched");
    let spec = "/demo/map_like:std_msgs/msg/String:latched";
    let want = rclpy_bytes(&w, &[spec]);
    let bridge = w.bridge();
    let v = open_or_create_ros_topic_durable(
        &w.namespace,
        "demo/map_like",
        &ty::<RosString>(),
        &ros_qos(4096),
        Durability::TransientLocal { depth: 1 },
    )
    .unwrap();
    let mut p = v.ros_publisher().unwrap();
    p.send_cdr(&want["/demo/map_like"]).unwrap();
    // Published before any ROS 2 node exists: only the latch can deliver it.
    let rclpy = w.rclpy("sub", &[spec]);
    let (topic, bytes) = line_bytes(&rclpy.next_line("got "));
    assert_eq!(topic, "/demo/map_like");
    assert_same_message(&bytes, &want["/demo/map_like"], "/demo/map_like");
    rclpy.stop();
    bridge.stop();
    drop(p);
    w.clean(vec![v]);
}

/// The number an rclpy `talk` String message carries.
fn talk_number(cdr: &[u8]) -> u64 {
    let len = u32::from_le_bytes(cdr[4..8].try_into().unwrap()) as usize;
    std::str::from_utf8(&cdr[8..8 + len - 1])
        .unwrap()
        .parse()
        .unwrap()
}

#[test]
fn bridge_killed_and_restarted_traffic_resumes() {
    skip_unless_ready!();
    let w = World::new("restart");
    let v = open_or_create_ros_topic(
        &w.namespace,
        "demo/chatter",
        &ty::<RosString>(),
        &ros_qos(4096),
    )
    .unwrap();
    let mut r = v.ros_subscriber(true).unwrap();
    let rclpy = w.rclpy("talk", &["/demo/chatter"]);
    let bridge = w.bridge();
    let mut last = 0;
    for _ in 0..5 {
        let s = r.recv_timeout(PATIENCE).expect("nothing before the kill");
        last = talk_number(s.cdr());
    }
    bridge.kill();
    let bridge = w.bridge();
    loop {
        let s = r.recv_timeout(PATIENCE).expect("nothing after the restart");
        if talk_number(s.cdr()) > last + 1 {
            break; // a message the restarted bridge carried
        }
    }
    common::wait_status(&w.namespace, "the restarted route", |s| {
        s.topics.iter().any(|t| t.active && t.counters.messages > 0)
    });
    rclpy.stop();
    bridge.stop();
    drop(r);
    w.clean(vec![v]);
}

#[test]
fn type_mismatch_is_refused_both_ways() {
    skip_unless_ready!();
    let w = World::new("mismatch");
    let qos = ros_qos(4096);
    let vin = open_or_create_ros_topic(&w.namespace, "demo/m_in", &ty::<Int32>(), &qos).unwrap();
    let mut rin = vin.ros_subscriber(true).unwrap();
    let vout = open_or_create_ros_topic(&w.namespace, "demo/m_out", &ty::<Int32>(), &qos).unwrap();
    let mut pout = vout.ros_publisher().unwrap();
    let bridge = w.bridge();
    let rpub = w.rclpy("pub", &["/demo/m_in:std_msgs/msg/String"]);
    let rsub = w.rclpy("sub", &["/demo/m_out:std_msgs/msg/String"]);
    let st = common::wait_status(&w.namespace, "both refusals", |s| {
        s.topics.iter().filter(|t| t.refused.is_some()).count() == 2
    });
    for t in &st.topics {
        let why = t.refused.as_deref().unwrap();
        assert!(!t.active, "{t:?}");
        assert!(t.refusals >= 1, "{t:?}");
        assert!(why.contains("std_msgs::msg::dds_::String_"), "{why}");
        assert!(why.contains("std_msgs::msg::dds_::Int32_"), "{why}");
    }
    // Nothing crosses: what horus publishes does not reach rclpy, nothing reaches horus.
    pout.send_cdr(&[0, 1, 0, 0, 42, 0, 0, 0]).unwrap();
    assert!(rin.try_recv().is_none());
    rpub.stop();
    let lines = rsub.drain();
    assert!(!lines.iter().any(|l| l.starts_with("got ")), "{lines:?}");
    rsub.stop();
    bridge.stop();
    drop((rin, pout));
    w.clean(vec![vin, vout]);
}

/// What broke: a ROS 2 peer of the horus topic's type name but another RIHS01 hash was
/// accepted, as if it announced none: RustDDS kept an endpoint's USER_DATA with the CDR
/// sequence's length in front of `typehash=…;`, so the bridge read no hash from it. Now the
/// hash rclpy announces is read, and a horus topic whose type has the same name and another
/// hash refuses rclpy's writer and reader, saying so, and nothing crosses.
#[test]
fn a_ros2_peer_of_the_same_type_name_with_another_type_hash_is_refused_both_ways() {
    skip_unless_ready!();
    let w = World::new("hashmismatch");
    let qos = ros_qos(4096);
    let other_hash = format!("RIHS01_{}", "ab".repeat(32));
    assert_ne!(other_hash, RosString::TYPE_HASH);
    let t = Ros2Type::new(RosString::TYPE_NAME, &other_hash, RosString::DEFINITION);
    let vin = open_or_create_ros_topic(&w.namespace, "demo/h_in", &t, &qos).unwrap();
    let mut rin = vin.ros_subscriber(true).unwrap();
    let vout = open_or_create_ros_topic(&w.namespace, "demo/h_out", &t, &qos).unwrap();
    let mut pout = vout.ros_publisher().unwrap();
    let bridge = w.bridge();
    let rpub = w.rclpy("pub", &["/demo/h_in:std_msgs/msg/String"]);
    let rsub = w.rclpy("sub", &["/demo/h_out:std_msgs/msg/String"]);
    let st = common::wait_status(&w.namespace, "both refusals", |s| {
        s.topics.iter().filter(|t| t.refused.is_some()).count() == 2
    });
    for t in &st.topics {
        let why = t.refused.as_deref().unwrap();
        assert!(!t.active, "{t:?}");
        assert!(
            why.contains(&format!("hash {}", RosString::TYPE_HASH)),
            "{why}"
        );
        assert!(why.contains(&other_hash), "{why}");
    }
    // Nothing crosses: what horus publishes does not reach rclpy, nothing reaches horus.
    pout.send_cdr(&[0, 1, 0, 0, 2, 0, 0, 0, b'x', 0, 0, 0])
        .unwrap();
    assert!(rin.try_recv().is_none());
    rpub.stop();
    let lines = rsub.drain();
    assert!(!lines.iter().any(|l| l.starts_with("got ")), "{lines:?}");
    rsub.stop();
    bridge.stop();
    drop((rin, pout));
    w.clean(vec![vin, vout]);
}

/// What broke: an rclpy subscriber requesting a deadline does not match the bridge's writer
/// (it offers none: horus topics have no deadline), so it received nothing while the
/// bridge showed the route open. Now the bridge refuses that reader and says why.
#[test]
fn an_rclpy_subscriber_requesting_a_deadline_is_refused_and_reported() {
    skip_unless_ready!();
    let w = World::new("deadline");
    let v =
        open_or_create_ros_topic(&w.namespace, "demo/d", &ty::<Int32>(), &ros_qos(4096)).unwrap();
    let mut p = v.ros_publisher().unwrap();
    let bridge = w.bridge();
    let rsub = w.rclpy("sub", &["/demo/d:std_msgs/msg/Int32:deadline"]);
    let st = common::wait_status(&w.namespace, "the deadline refused", |s| {
        s.topics.iter().any(|t| t.refused.is_some())
    });
    let t = st.topics.iter().find(|t| t.refused.is_some()).unwrap();
    let why = t.refused.as_deref().unwrap();
    assert_eq!(t.direction, Direction::ToRos, "{t:?}");
    assert!(!t.active, "{t:?}");
    assert!(why.contains("deadline of 1s"), "{why}");
    p.send_cdr(&[0, 1, 0, 0, 42, 0, 0, 0]).unwrap();
    rsub.stop();
    bridge.stop();
    drop(p);
    w.clean(vec![v]);
}
