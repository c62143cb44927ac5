//! ROS-typed channels: written with the ROS type name, `ros2msg` definition, `cdr` wire bytes
//! as they are and the `ros2` profile's metadata; read back byte for byte; files written by
//! other ROS 2 tools (rosbag2's metadata only) read as ROS-typed; hostile names, hashes and
//! definitions refused per channel without failing the file; a recording of standard ROS 2
//! messages decoded field by field by `mcap-ros2-support`, `rosbags` and rclpy.

#[path = "support/hostile_mcap.rs"]
mod hostile_mcap;
#[path = "support/ros2_values.rs"]
mod ros2_values;

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use horus::inspect::QosInfo;
use horus::msgs::Ros2Type;
use horus::Overflow;
use horus_record::ros2::{self, Ros2Error, MAX_DEFINITION_BYTES};
use horus_record::{RecordingInfo, RecordingReader, RecordingWriter, WriteError, WriterOptions};

/// The RIHS01 of `test_msgs/msg/Point2` ([`DEFINITION`]).
const HASH: &str = "RIHS01_000fb246ea682e050b4a5c8ff1d683fdf877e3902e9f5e700972d4d0216d7d5f";
const DEFINITION: &str = "float64 x\nfloat64 y\nstring frame\n";

fn dir() -> PathBuf {
    // Scratch in cargo's CARGO_TARGET_TMPDIR (the build directory), not /tmp.
    let d = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("horus-record-ros2-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn qos() -> QosInfo {
    QosInfo {
        depth: 16,
        overflow: Some(Overflow::Block {
            timeout: Duration::from_millis(10),
        }),
        max_publishers: 4,
        max_subscribers: 8,
        inline_bytes: 64,
        chunk_bytes: 1 << 16,
        chunks_per_publisher: 2 * 16 + 4,
    }
}

fn ty() -> Ros2Type {
    Ros2Type::new("test_msgs/msg/Point2", HASH, DEFINITION)
}

/// `test_msgs/msg/Point2 {x, y, frame}` as ROS 2 sends it, with `n` junk bytes after the
/// message (rclcpp's serialized buffers can run past it: they are kept as they are).
fn wire(x: f64, y: f64, frame: &str, junk: usize) -> Vec<u8> {
    let mut w = ros2::CDR_LE.to_vec();
    w.extend_from_slice(&x.to_le_bytes());
    w.extend_from_slice(&y.to_le_bytes());
    w.extend_from_slice(&(frame.len() as u32 + 1).to_le_bytes());
    w.extend_from_slice(frame.as_bytes());
    w.push(0);
    w.extend((0..junk).map(|i| i as u8 ^ 0x5a));
    w
}

#[test]
fn ros_typed_channel_keeps_type_definition_hash_and_exact_bytes() {
    let path = dir().join("typed.mcap");
    let _ = std::fs::remove_file(&path);
    let mut w = RecordingWriter::create(&path, WriterOptions::default()).unwrap();
    let ch = w.add_ros2_channel("robot/point", &ty(), &qos()).unwrap();
    let sent: Vec<Vec<u8>> = (0..50)
        .map(|i| wire(i as f64, -(i as f64) * 0.5, "map", i % 3))
        .collect();
    for (i, m) in sent.iter().enumerate() {
        w.write(ch, 1_000 + i as u64, m).unwrap();
    }
    let totals = w.finish().unwrap();
    assert_eq!(totals.channels[0].schema, "test_msgs/msg/Point2");
    assert_eq!(totals.channels[0].messages, 50);

    let mut r = RecordingReader::open(&path).unwrap();
    let mut got = Vec::new();
    while let Some(m) = r.next_message().unwrap() {
        let mut horus = Vec::new();
        assert!(r.horus_bytes(&m, &mut horus).is_none(), "no horus layout");
        got.push(m.cdr);
    }
    assert_eq!(got, sent, "wire bytes as they were, junk tails included");
    let c = r.channels().next().unwrap();
    assert_eq!(
        (
            c.schema_name.as_str(),
            c.schema_encoding.as_str(),
            c.message_encoding.as_str()
        ),
        ("test_msgs/msg/Point2", "ros2msg", "cdr")
    );
    let ros = c.ros2.clone().expect("a ROS-typed channel").unwrap();
    assert_eq!(ros.name, "test_msgs/msg/Point2");
    assert_eq!(ros.hash.as_deref(), Some(HASH));
    assert_eq!(ros.definition, DEFINITION);
    assert_eq!(ros.qos, Some(qos()));
    let offered = ros.offered_qos_profiles.unwrap();
    for line in [
        "- history: keep_last",
        "  depth: 16",
        "  reliability: reliable",
        "  durability: volatile",
        "  avoid_ros_namespace_conventions: false",
    ] {
        assert!(offered.contains(line), "{line:?} in {offered}");
    }

    let info = RecordingInfo::read(&path).unwrap();
    let c = &info.channels[0];
    assert_eq!(c.horus_schema, None);
    assert_eq!(c.schema, "test_msgs/msg/Point2");
    assert_eq!(c.type_hash.as_deref(), Some(HASH));
    assert_eq!(
        (c.schema_encoding.as_str(), c.message_encoding.as_str()),
        ("ros2msg", "cdr")
    );
    assert_eq!(c.messages, 50);
}

#[test]
fn a_message_without_a_little_endian_cdr_header_is_refused() {
    let path = dir().join("bad-header.mcap");
    let _ = std::fs::remove_file(&path);
    let mut w = RecordingWriter::create(&path, WriterOptions::default()).unwrap();
    let ch = w.add_ros2_channel("p", &ty(), &qos()).unwrap();
    for bad in [&[0u8, 1, 0][..], &[0, 0, 0, 0, 1, 2, 3, 4][..]] {
        assert!(matches!(
            w.write(ch, 1, bad),
            Err(WriteError::Encode { .. })
        ));
    }
    w.write(ch, 2, &wire(1.0, 2.0, "", 0)).unwrap();
    assert_eq!(w.finish().unwrap().channels[0].messages, 1);
}

/// A file as rosbag2's MCAP storage writes it: profile `ros2`, schema `pkg/msg/Type` with
/// the definition, channel metadata `offered_qos_profiles` (and `topic_type_hash` from Iron
/// on), no horus metadata.
fn rosbag2_like(name: &str, schemas: &[(&str, &[u8], Option<&str>)]) -> PathBuf {
    let path = dir().join(format!("{name}.mcap"));
    let f = std::io::BufWriter::new(std::fs::File::create(&path).unwrap());
    let mut w = mcap::WriteOptions::new()
        .profile("ros2")
        .library("rosbag2")
        .create(f)
        .unwrap();
    for (i, (ty, def, hash)) in schemas.iter().enumerate() {
        let s = w.add_schema(ty, "ros2msg", def).unwrap();
        let mut md = BTreeMap::new();
        md.insert(
            "offered_qos_profiles".to_owned(),
            "- history: 3\n  depth: 0\n  reliability: 1\n".to_owned(),
        );
        if let Some(h) = hash {
            md.insert("topic_type_hash".to_owned(), (*h).to_owned());
        }
        let c = w.add_channel(s, &format!("/t{i}"), "cdr", &md).unwrap();
        let header = mcap::records::MessageHeader {
            channel_id: c,
            sequence: 0,
            log_time: 5,
            publish_time: 5,
        };
        w.write_to_known_channel(&header, &wire(1.0, 2.0, "odom", 0))
            .unwrap();
    }
    w.finish().unwrap();
    path
}

fn channels(path: &std::path::Path) -> BTreeMap<String, Result<ros2::Ros2Channel, Ros2Error>> {
    let mut r = RecordingReader::open(path).unwrap();
    while r.next_message().unwrap().is_some() {}
    r.channels()
        .map(|c| (c.topic.clone(), c.ros2.clone().expect("ROS-typed")))
        .collect()
}

#[test]
fn rosbag2_files_read_as_ros_typed_channels() {
    let path = rosbag2_like(
        "rosbag2",
        &[
            ("test_msgs/msg/Point2", DEFINITION.as_bytes(), Some(HASH)),
            // Humble: no hash.
            ("test_msgs/msg/Point2", DEFINITION.as_bytes(), None),
        ],
    );
    let ch = channels(&path);
    let with = ch["/t0"].clone().unwrap();
    assert_eq!(with.hash.as_deref(), Some(HASH));
    assert_eq!(with.qos, None, "no horus QoS in a rosbag2 file");
    assert!(with.offered_qos_profiles.unwrap().contains("depth: 0"));
    assert_eq!(ch["/t1"].clone().unwrap().hash, None);
    let info = RecordingInfo::read(&path).unwrap();
    assert_eq!(info.channels.len(), 2);
    assert!(info
        .channels
        .iter()
        .all(|c| c.schema == "test_msgs/msg/Point2"));
}

#[test]
fn hostile_ros_channels_are_refused_one_by_one() {
    let big = vec![b'#'; MAX_DEFINITION_BYTES + 1];
    let path = rosbag2_like(
        "hostile-ros2",
        &[
            ("../../etc/passwd", b"int8 x\n", None),
            (
                "test_msgs/msg/Point2",
                DEFINITION.as_bytes(),
                Some("RIHS01_nothex"),
            ),
            ("test_msgs/msg/Big", &big, None),
            ("test_msgs/msg/Bad", &[0xff, 0xfe], None),
            ("test_msgs/msg/Point2", DEFINITION.as_bytes(), Some(HASH)),
        ],
    );
    let ch = channels(&path);
    assert!(matches!(ch["/t0"], Err(Ros2Error::TypeName(_))));
    assert!(matches!(ch["/t1"], Err(Ros2Error::Hash(_))));
    assert_eq!(
        ch["/t2"],
        Err(Ros2Error::DefinitionTooLarge(MAX_DEFINITION_BYTES + 1))
    );
    assert_eq!(ch["/t3"], Err(Ros2Error::DefinitionNotUtf8));
    assert!(ch["/t4"].is_ok(), "the good channel after them still reads");
    let _ = std::fs::remove_file(&path);
}

#[test]
fn standard_ros_messages_recorded_here_decode_field_by_field_in_three_ros2_readers() {
    let topics = ros2_values::topics();
    let path = dir().join("standard.mcap");
    let _ = std::fs::remove_file(&path);
    let mut w = RecordingWriter::create(&path, WriterOptions::default()).unwrap();
    let ids: Vec<_> = topics
        .iter()
        .map(|t| w.add_ros2_channel(&t.topic, &t.ty, &qos()).unwrap())
        .collect();
    let mut t_ns = 1_700_000_000_000_000_000u64;
    for i in 0..topics[0].wire.len() {
        for (t, id) in topics.iter().zip(&ids) {
            t_ns += 1_000_000;
            w.write(*id, t_ns, &t.wire[i]).unwrap();
        }
    }
    w.finish().unwrap();
    let mut r = RecordingReader::open(&path).unwrap();
    let mut n = 0;
    while let Some(m) = r.next_message().unwrap() {
        let ch = r.channel(m.channel).unwrap();
        let t = topics.iter().find(|t| t.topic == ch.topic).unwrap();
        assert_eq!(m.cdr, t.wire[n / topics.len()], "{} bytes as sent", t.topic);
        n += 1;
    }
    assert_eq!(n, topics.len() * topics[0].wire.len());
    let expected = dir().join("standard.expected.json");
    ros2_values::expected_file(&topics, &expected);
    if let Some(out) = ros2_values::check_with_ros2_readers(&path, &expected) {
        assert!(
            out.contains("OK: 8 topics, 24 messages, 3 readers"),
            "{out}"
        );
    }
}

#[test]
fn recorded_inputs_replay_ros_typed_channels_as_ros_typed_topics() {
    use horus::sched::prelude::*;
    use horus_record::replay::RecordedInputs;

    // A horus recording and a rosbag2 one (`/t0`, played as `t0`).
    let path = dir().join("replay-typed.mcap");
    let _ = std::fs::remove_file(&path);
    let mut w = RecordingWriter::create(&path, WriterOptions::default()).unwrap();
    let ch = w.add_ros2_channel("robot/point", &ty(), &qos()).unwrap();
    let sent: Vec<Vec<u8>> = (0..5).map(|i| wire(i as f64, 0.5, "map", i)).collect();
    for (i, m) in sent.iter().enumerate() {
        w.write(ch, 1_000_000 * (i as u64 + 1), m).unwrap();
    }
    w.finish().unwrap();
    let ns = format!("record-ros2-replay-{}", std::process::id());
    let inputs = RecordedInputs::load(&path, &["robot/point"]).unwrap();
    let loaded: Vec<Vec<u8>> = inputs.messages().map(|(_, _, b)| b.to_vec()).collect();
    assert_eq!(loaded, sent, "wire bytes as recorded");
    let view = horus::inspect::open_or_create_ros_topic(&ns, "robot/point", &ty(), &qos()).unwrap();
    let mut sub = view.ros_subscriber(false).unwrap();
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
    let mut got = Vec::new();
    while let Some(m) = sub.try_recv() {
        got.push(m.cdr().to_vec());
    }
    assert_eq!(got, sent, "published as recorded, on the ROS-typed topic");
    assert_eq!(view.ros2().unwrap(), ty());
}

#[test]
fn definitions_past_the_files_budget_are_not_kept() {
    use horus_record::ros2::MAX_DEFINITIONS_BYTES;
    // Each definition at the per-schema limit, in one compressed chunk: the reader keeps
    // MAX_DEFINITIONS_BYTES of them in all; the channels past that are unusable.
    let kept = MAX_DEFINITIONS_BYTES / MAX_DEFINITION_BYTES;
    let n = kept + 2;
    let bytes = hostile_mcap::chunk_of_ros2_schemas(n as u16, MAX_DEFINITION_BYTES);
    assert!(bytes.len() < (1 << 20), "{} bytes", bytes.len());
    let path = dir().join("over-budget.mcap");
    std::fs::write(&path, bytes).unwrap();
    let ch = channels(&path);
    for i in 0..n {
        let c = &ch[&format!("/t{i}")];
        if i < kept {
            assert!(c.is_ok(), "/t{i}: {c:?}");
        } else {
            assert_eq!(
                *c,
                Err(Ros2Error::DefinitionsOverBudget(MAX_DEFINITIONS_BYTES))
            );
        }
    }
    let _ = std::fs::remove_file(&path);
}
