//! ROS-typed topics through `horus record`, `bag info` and `play`: this test process publishes
//! standard ROS 2 messages (LaserScan, Imu, Odometry, Twist, PointCloud2, TFMessage, Image,
//! Marker; tests/ros2_readers/messages.json of horus-record) on ROS-typed topics, the `horus`
//! binary records them; the file is checked field by field by three independent ROS 2
//! readers (`mcap-ros2-support`, `rosbags`, rclpy's `deserialize_message`: check_recording.py
//! in the ROS 2 venv), `bag info` lists the ROS types and hashes, `play` publishes the same
//! wire bytes on topics of the same type; a recording written as rosbag2 writes it (with and
//! without `topic_type_hash`) plays into horus topics.

#[path = "../../horus-record/tests/support/ros2_values.rs"]
mod ros2_values;

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use horus::inspect::{self, QosInfo, RawRosReader, TopicView};
use horus::msgs::Ros2Type;
use horus_record::{RawSchema, RecordingWriter, WriterOptions};
use serde_json::Value;

const PATIENCE: Duration = Duration::from_secs(60);

fn unique_ns(tag: &str) -> String {
    format!("cli-rec-ros2-{}-{tag}", std::process::id())
}

fn dir() -> PathBuf {
    // Scratch in cargo's CARGO_TARGET_TMPDIR (the build directory), not /tmp.
    let d = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("horus-cli-record-ros2-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn horus(ns: &str) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_horus"));
    c.env("HORUS_NAMESPACE", ns);
    c
}

/// Deep enough that nothing is overwritten before the recorder reads it.
fn qos() -> QosInfo {
    QosInfo {
        depth: 64,
        chunks_per_publisher: 2 * 64 + 4,
        ..inspect::ros_qos(1 << 16)
    }
}

fn leftover(ns: &str) -> Vec<String> {
    std::fs::read_dir("/dev/shm")
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|n| n.contains(ns))
        .collect()
}

/// A subscriber on `topic` of `ns` carrying `ty`, created before anything is played.
fn subscriber(ns: &str, topic: &str, ty: &Ros2Type) -> (TopicView, RawRosReader) {
    let view = inspect::open_or_create_ros_topic(ns, topic, ty, &qos()).unwrap();
    let sub = view.ros_subscriber(true).unwrap();
    (view, sub)
}

/// The next `n` messages' wire bytes.
fn receive(sub: &mut RawRosReader, n: usize) -> Vec<Vec<u8>> {
    let t0 = Instant::now();
    let mut got = Vec::new();
    while got.len() < n {
        assert!(
            t0.elapsed() < PATIENCE,
            "only {} of {n} messages",
            got.len()
        );
        if let Some(s) = sub.recv_timeout(Duration::from_millis(50)) {
            got.push(s.cdr().to_vec());
        }
    }
    got
}

fn play(ns: &str, file: &Path) -> Value {
    let out = horus(ns)
        .args(["--json", "play", "--no-keys"])
        .arg(file)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "play: {stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_str(stdout.trim()).unwrap()
}

/// `horus record` into `file`, once it records every topic of `expect`.
fn start_recorder(ns: &str, file: &Path, expect: &[&str]) -> Child {
    let _ = std::fs::remove_file(file);
    let mut rec = horus(ns)
        .args(["--json", "record", "--no-logs", "-o"])
        .arg(file)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(rec.stderr.take().unwrap()).lines();
    let mut missing: Vec<&str> = expect.to_vec();
    while !missing.is_empty() {
        let l = lines.next().expect("recorder never started").unwrap();
        missing.retain(|t| !l.starts_with(&format!("horus record: recording {t} ")));
    }
    // The rest of its stderr, drained so that it never blocks on a full pipe.
    std::thread::spawn(move || lines.for_each(drop));
    rec
}

/// SIGINT, then the recorder's JSON report.
fn stop_recorder(rec: Child) -> Value {
    // SAFETY: kill(2) on our own child's pid with a valid signal number.
    unsafe { libc::kill(rec.id() as i32, libc::SIGINT) };
    let out = rec.wait_with_output().unwrap();
    assert!(out.status.success(), "recorder failed: {:?}", out.status);
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn ros_typed_topics_record_as_ros2_read_in_three_readers_and_play_back_as_they_were() {
    let ns = unique_ns("live");
    let topics = ros2_values::topics();
    let mut pubs: Vec<_> = topics
        .iter()
        .map(|t| {
            let view = inspect::open_or_create_ros_topic(&ns, &t.topic, &t.ty, &qos()).unwrap();
            let p = view.ros_publisher().unwrap();
            (view, p)
        })
        .collect();
    let file = dir().join("live.mcap");
    let rec = start_recorder(
        &ns,
        &file,
        &topics.iter().map(|t| t.topic.as_str()).collect::<Vec<_>>(),
    );
    for (t, (_, p)) in topics.iter().zip(pubs.iter_mut()) {
        for w in &t.wire {
            p.send_cdr(w).unwrap();
        }
    }
    let report = stop_recorder(rec);
    for t in report["topics"].as_array().unwrap() {
        assert_eq!(t["missed"], 0, "{t}");
        assert_eq!(t["messages"], 3, "{t}");
    }
    drop(pubs);

    // The file: ROS types, definitions, hashes and wire bytes as published.
    let mut r = horus_record::RecordingReader::open(&file).unwrap();
    let mut got: BTreeMap<String, Vec<Vec<u8>>> = BTreeMap::new();
    while let Some(m) = r.next_message().unwrap() {
        let topic = r.channel(m.channel).unwrap().topic.clone();
        got.entry(topic).or_default().push(m.cdr);
    }
    for t in &topics {
        assert_eq!(got[&t.topic], t.wire, "{} recorded as published", t.topic);
        let ch = r.channels().find(|c| c.topic == t.topic).unwrap();
        let ros = ch.ros2.clone().unwrap().unwrap();
        assert_eq!(ros.ros2_type().unwrap(), t.ty, "{}", t.topic);
    }

    // bag info: the ROS type and hash of every topic.
    let out = horus(&ns)
        .args(["--json", "bag", "info"])
        .arg(&file)
        .output()
        .unwrap();
    let info: Value = serde_json::from_slice(&out.stdout).unwrap();
    for t in &topics {
        let c = info["channels"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["topic"] == *t.topic)
            .unwrap();
        assert_eq!(c["schema"], *t.ty.type_name);
        assert_eq!(c["type_hash"], *t.ty.type_hash);
        assert_eq!(
            (
                c["schema_encoding"].as_str(),
                c["message_encoding"].as_str()
            ),
            (Some("ros2msg"), Some("cdr"))
        );
        assert_eq!(c["messages"], 3);
    }
    let out = horus(&ns)
        .args(["bag", "info"])
        .arg(&file)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("sensor_msgs/msg/LaserScan (ros2msg)"),
        "{text}"
    );

    // Three ROS 2 readers, field by field.
    let expected = dir().join("live.expected.json");
    ros2_values::expected_file(&topics, &expected);
    if let Some(out) = ros2_values::check_with_ros2_readers(&file, &expected) {
        assert!(
            out.contains("OK: 8 topics, 24 messages, 3 readers"),
            "{out}"
        );
    }

    if let Some(out) = ros2_values::check_readers_agree(&file) {
        assert!(
            out.contains("OK: 8 topics, 24 messages, 3 readers"),
            "{out}"
        );
    }

    // bag repair copies ROS-typed channels as they are (type, definition, metadata, bytes).
    let repaired = dir().join("live.repaired.mcap");
    let _ = std::fs::remove_file(&repaired);
    let out = horus(&ns)
        .args(["bag", "repair"])
        .arg(&file)
        .arg("-o")
        .arg(&repaired)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut rr = horus_record::RecordingReader::open(&repaired).unwrap();
    let mut again: BTreeMap<String, Vec<Vec<u8>>> = BTreeMap::new();
    while let Some(m) = rr.next_message().unwrap() {
        let topic = rr.channel(m.channel).unwrap().topic.clone();
        again.entry(topic).or_default().push(m.cdr);
    }
    assert_eq!(again, got, "repair copies the wire bytes");
    for c in r.channels() {
        let copy = rr.channels().find(|x| x.topic == c.topic).unwrap();
        assert_eq!(copy.ros2, c.ros2, "{}: same ROS 2 channel", c.topic);
    }

    // play: into another namespace, on topics of the same type, the same bytes.
    let ns2 = unique_ns("played");
    let mut subs: Vec<_> = topics
        .iter()
        .map(|t| subscriber(&ns2, &t.topic, &t.ty))
        .collect();
    let report = play(&ns2, &file);
    for t in report["topics"].as_array().unwrap() {
        assert_eq!(
            (t["published"].as_u64(), t["failed"].as_u64()),
            (Some(3), Some(0)),
            "{t}"
        );
    }
    for (t, (view, sub)) in topics.iter().zip(subs.iter_mut()) {
        assert_eq!(view.ros2().unwrap(), t.ty);
        assert_eq!(receive(sub, 3), t.wire, "{} played as recorded", t.topic);
    }
    drop(subs);
    assert!(leftover(&ns).is_empty() && leftover(&ns2).is_empty());
}

const STRING_DEF: &str = "string data\n";

/// `offered_qos_profiles` as rosbag2 in Humble writes it (enums as numbers, durations at
/// their maximum).
const HUMBLE_QOS: &str = "- history: 3\n  depth: 0\n  reliability: 1\n  durability: 2\n  \
    deadline:\n    sec: 2147483647\n    nsec: 4294967295\n  lifespan:\n    sec: 2147483647\n    \
    nsec: 4294967295\n  liveliness: 1\n  liveliness_lease_duration:\n    sec: 2147483647\n    \
    nsec: 4294967295\n  avoid_ros_namespace_conventions: false\n";

/// A file as rosbag2's MCAP storage writes one, as far as a reader sees: a channel with a ROS
/// 2 topic name (leading `/`), schema `std_msgs/msg/String` (`ros2msg`), `cdr` messages,
/// metadata `offered_qos_profiles` and, from Iron on, `topic_type_hash` (only when `hash` is
/// given), no horus metadata; wire bytes as rclcpp serializes them (here with 3 bytes of junk
/// after the message, as its buffers can have).
fn rosbag2_file(path: &Path, hash: Option<&str>, messages: &[&str]) -> Vec<Vec<u8>> {
    let _ = std::fs::remove_file(path);
    let mut w = RecordingWriter::create(path, WriterOptions::default()).unwrap();
    let mut md = BTreeMap::new();
    md.insert("offered_qos_profiles".to_owned(), HUMBLE_QOS.to_owned());
    if let Some(h) = hash {
        md.insert("topic_type_hash".to_owned(), h.to_owned());
    }
    let schema = RawSchema {
        name: "std_msgs/msg/String",
        schema_encoding: "ros2msg",
        text: STRING_DEF,
        message_encoding: "cdr",
    };
    let c = w.add_raw_channel("/chatter", schema, md).unwrap();
    let mut sent = Vec::new();
    for (i, text) in messages.iter().enumerate() {
        let mut wire = vec![0, 1, 0, 0];
        wire.extend_from_slice(&(text.len() as u32 + 1).to_le_bytes());
        wire.extend_from_slice(text.as_bytes());
        wire.extend_from_slice(&[0, 0xaa, 0xbb, 0xcc]);
        w.write(c, 1_000_000 * (i as u64 + 1), &wire).unwrap();
        sent.push(wire);
    }
    w.finish().unwrap();
    sent
}

#[test]
fn a_recording_written_by_rosbag2_plays_into_horus_topics() {
    let resolved = horus_idl::InterfaceSet::standard()
        .unwrap()
        .resolve()
        .unwrap();
    let hash = resolved
        .type_hash("std_msgs/msg/String")
        .unwrap()
        .to_string();
    let ty = Ros2Type::new("std_msgs/msg/String", &hash, STRING_DEF);
    for (tag, stated) in [("jazzy", Some(hash.as_str())), ("humble", None)] {
        let file = dir().join(format!("{tag}.mcap"));
        let sent = rosbag2_file(&file, stated, &["hello", "from", "ros 2"]);
        let ns = unique_ns(tag);
        // ROS 2's `/chatter` is horus's `chatter`, of the type's hash (computed from the
        // definition when the file states none).
        let (view, mut sub) = subscriber(&ns, "chatter", &ty);
        let report = play(&ns, &file);
        assert_eq!(report["topics"][0]["published"], 3, "{tag}: {report}");
        assert_eq!(receive(&mut sub, 3), sent, "{tag}: the recorded bytes");
        assert_eq!(view.ros2().unwrap(), ty);
        drop((view, sub));
        assert!(leftover(&ns).is_empty());
    }
}

#[test]
fn a_rosbag2_channel_whose_hash_is_not_its_definitions_is_not_played() {
    let file = dir().join("wrong-hash.mcap");
    let wrong = format!("RIHS01_{}", "ab".repeat(32));
    rosbag2_file(&file, Some(&wrong), &["x"]);
    let ns = unique_ns("wrong-hash");
    let report = play(&ns, &file);
    let t = &report["topics"][0];
    assert_eq!(t["published"], 0, "{report}");
    let why = t["skipped"].as_str().unwrap();
    assert!(why.contains("is not the hash of the definition"), "{why}");
    assert!(leftover(&ns).is_empty());
}

#[test]
fn a_ros_message_without_a_cdr_header_is_counted_missed_and_the_recording_goes_on() {
    // Before: the writer refused the message and the whole recording stopped with an error.
    let ns = unique_ns("bad-header");
    let topics = ros2_values::topics();
    let t = topics.iter().find(|t| t.topic == "robot/cmd_vel").unwrap();
    let view = inspect::open_or_create_ros_topic(&ns, &t.topic, &t.ty, &qos()).unwrap();
    let mut good = view.ros_publisher().unwrap();
    // A publisher that breaks the protocol: a chunk whose header says big-endian CDR.
    let mut raw = view.publisher(8).unwrap();
    let file = dir().join("bad-header.mcap");
    let rec = start_recorder(&ns, &file, &[&t.topic]);
    good.send_cdr(&t.wire[0]).unwrap();
    raw.send_parts(&[&[0; 4], &[0, 0, 0, 0], &t.wire[1][4..]])
        .unwrap();
    good.send_cdr(&t.wire[2]).unwrap();
    let report = stop_recorder(rec);
    let r = &report["topics"][0];
    assert_eq!(
        (r["messages"].as_u64(), r["missed"].as_u64()),
        (Some(2), Some(1)),
        "{report}"
    );
    let mut rd = horus_record::RecordingReader::open(&file).unwrap();
    let mut got = Vec::new();
    while let Some(m) = rd.next_message().unwrap() {
        got.push(m.cdr);
    }
    assert_eq!(got, [t.wire[0].clone(), t.wire[2].clone()]);
    drop((raw, good, view));
    assert!(leftover(&ns).is_empty());
}
