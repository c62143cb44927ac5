//! Latched (transient-local) topics in recordings: a channel keeps its topic's durability
//! (`horus.durability`; for ROS-typed channels also the offered QoS profile's
//! `durability: transient_local`, as rosbag2 writes it), and the replay API re-creates such a
//! topic latched: a subscriber that joins after the replay published its messages still
//! receives the last N of them. A rosbag2 file's transient-local channel replays latched too.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use horus::inspect::{QosInfo, TopicView};
use horus::msgs::{CmdVel, Ros2Type};
use horus::sched::prelude::*;
use horus::{Durability, Overflow, Topic};
use horus_record::replay::RecordedInputs;
use horus_record::ros2;
use horus_record::{RawSchema, RecordingReader, RecordingWriter, WriterOptions};

/// The RIHS01 of `test_msgs/msg/Point2` ([`DEFINITION`]).
const HASH: &str = "RIHS01_000fb246ea682e050b4a5c8ff1d683fdf877e3902e9f5e700972d4d0216d7d5f";
const DEFINITION: &str = "float64 x\nfloat64 y\nstring frame\n";

fn path(tag: &str) -> PathBuf {
    // Scratch in cargo's CARGO_TARGET_TMPDIR (the build directory), not /tmp.
    let d = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("horus-record-latched-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    let p = d.join(format!("{tag}.mcap"));
    let _ = std::fs::remove_file(&p);
    p
}

fn qos(inline_bytes: u32, chunk_bytes: u64) -> QosInfo {
    QosInfo {
        depth: 8,
        overflow: Some(Overflow::DropOldest),
        max_publishers: 4,
        max_subscribers: 8,
        inline_bytes,
        chunk_bytes,
        chunks_per_publisher: if chunk_bytes == 0 { 0 } else { 20 },
    }
}

fn point_type() -> Ros2Type {
    Ros2Type::new("test_msgs/msg/Point2", HASH, DEFINITION)
}

fn point(x: f64) -> Vec<u8> {
    let mut w = ros2::CDR_LE.to_vec();
    w.extend_from_slice(&x.to_le_bytes());
    w.extend_from_slice(&0.5f64.to_le_bytes());
    w.extend_from_slice(&4u32.to_le_bytes());
    w.extend_from_slice(b"map\0");
    w
}

fn leftover(ns: &str) -> Vec<String> {
    std::fs::read_dir("/dev/shm")
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|n| n.contains(ns))
        .collect()
}

#[test]
fn replayed_latched_topics_are_latched_again_for_late_subscribers() {
    let file = path("replay");
    let horus_latched = Durability::TransientLocal { depth: 2 };
    let ros_latched = Durability::TransientLocal { depth: 1 };
    let mut w = RecordingWriter::create(&file, WriterOptions::default()).unwrap();
    let desc = horus::msgs::MessageDescription::of::<CmdVel>();
    let statics = w
        .add_channel_durable("l/static", &desc, &qos(16, 0), horus_latched)
        .unwrap();
    let plain = w.add_channel("l/plain", &desc, &qos(16, 0)).unwrap();
    let tf = w
        .add_ros2_channel_durable("/tf_static", &point_type(), &qos(64, 1 << 12), ros_latched)
        .unwrap();
    // What rosbag2 writes for a transient-local publisher: only the offered profile.
    let mut rosbag_meta = BTreeMap::new();
    rosbag_meta.insert(
        ros2::OFFERED_QOS.to_owned(),
        "- history: keep_last\n  depth: 1\n  reliability: reliable\n  \
         durability: transient_local\n"
            .to_owned(),
    );
    rosbag_meta.insert(ros2::TYPE_HASH.to_owned(), HASH.to_owned());
    let map = w
        .add_raw_channel(
            "/map",
            RawSchema {
                name: "test_msgs/msg/Point2",
                schema_encoding: "ros2msg",
                text: DEFINITION,
                message_encoding: "cdr",
            },
            rosbag_meta,
        )
        .unwrap();
    for i in 0..3u64 {
        let t = 1_000_000 * (i + 1);
        w.write(statics, t, bytemuck::bytes_of(&CmdVel::new(i, 1.0, 0.0)))
            .unwrap();
        w.write(plain, t, bytemuck::bytes_of(&CmdVel::new(i, 2.0, 0.0)))
            .unwrap();
        w.write(tf, t, &point(i as f64)).unwrap();
        w.write(map, t, &point(10.0 + i as f64)).unwrap();
    }
    w.finish().unwrap();

    // The durability reads back from the file.
    let mut r = RecordingReader::open(&file).unwrap();
    while r.next_message().unwrap().is_some() {}
    let by_topic = |t: &str| {
        (0..16u16)
            .filter_map(|id| r.channel(id))
            .find(|c| c.topic == t)
            .unwrap()
    };
    let statics_ch = by_topic("l/static");
    assert_eq!(statics_ch.meta.as_ref().unwrap().durability, horus_latched);
    assert_eq!(
        by_topic("l/plain").meta.as_ref().unwrap().durability,
        Durability::Volatile
    );
    let tf_ch = by_topic("/tf_static").ros2.clone().unwrap().unwrap();
    assert_eq!(tf_ch.durability, ros_latched);
    assert!(tf_ch
        .offered_qos_profiles
        .unwrap()
        .contains("durability: transient_local"));
    let map_ch = by_topic("/map").ros2.clone().unwrap().unwrap();
    assert_eq!(map_ch.durability, Durability::TransientLocal { depth: 1 });

    // Replayed into a fresh namespace: every message published, the topics created as
    // recorded.
    let ns = format!("record-latched-{}", std::process::id());
    let inputs =
        RecordedInputs::load(&file, &["l/static", "l/plain", "/tf_static", "/map"]).unwrap();
    let mut s = Scheduler::new()
        .deterministic(true)
        .publish_stats(false)
        .handle_signals(false)
        .namespace(&ns)
        .tick_rate(1000_u64.hz());
    s.add(
        inputs.into_node(&ns).unwrap(),
        NodeConfig::new().rate(1000_u64.hz()).order(0),
    )
    .unwrap();
    s.run_for(Duration::from_millis(20)).unwrap();
    for (topic, durability, sent) in [
        ("l/static", horus_latched, 3),
        ("l/plain", Durability::Volatile, 3),
        ("tf_static", ros_latched, 3),
        ("map", Durability::TransientLocal { depth: 1 }, 3),
    ] {
        let v = TopicView::open(&ns, topic).unwrap();
        assert_eq!(v.durability(), durability, "{topic}");
        let published: u64 = v.snapshot().publishers.iter().map(|p| p.sent).sum();
        assert_eq!(published, sent, "{topic}");
    }

    // Subscribers that join now (the replay's publishers still live, as in `horus play`
    // while it runs) get the latched history, and nothing of the volatile topic.
    let t = Topic::<CmdVel>::builder("l/static")
        .namespace(&ns)
        .open()
        .unwrap();
    let mut sub = t.subscriber().unwrap();
    let mut got = Vec::new();
    while let Some(m) = sub.try_recv() {
        got.push(m.stamp_ns);
    }
    assert_eq!(got, vec![1, 2], "the last 2 of l/static");
    let plain_t = Topic::<CmdVel>::builder("l/plain")
        .namespace(&ns)
        .open()
        .unwrap();
    assert!(plain_t.subscriber().unwrap().try_recv().is_none());
    for (topic, last) in [("tf_static", point(2.0)), ("map", point(12.0))] {
        let v = TopicView::open(&ns, topic).unwrap();
        let mut sub = v.ros_subscriber(false).unwrap();
        let mut got = Vec::new();
        while let Some(m) = sub.try_recv() {
            got.push(m.cdr().to_vec());
        }
        assert_eq!(got, vec![last], "{topic}: its latched message");
    }
    drop((sub, t, plain_t, s));
    assert!(leftover(&ns).is_empty(), "{:?}", leftover(&ns));
    let _ = std::fs::remove_file(&file);
}
