//! Recordings written and read back: exact bytes per topic and in order, the summary's
//! counts and losses, splitting, and damaged files reported with the file and offset.

use std::path::{Path, PathBuf};
use std::time::Duration;

use horus::inspect::QosInfo;
use horus::msgs::{CmdVel, Message, MessageDescription, Odometry, PointCloud};
use horus::Overflow;
use horus_record::{
    Compression, ReadError, RecordingInfo, RecordingReader, RecordingWriter, WriterOptions,
};

horus::message! {
    /// A user-defined message with a nested type and a 2-D array.
    pub struct Wheel: "my_robot/Wheel", version 2 {
        /// Stamp.
        pub stamp_ns: u64,
        /// Nested standard message.
        pub cmd: CmdVel,
        /// 2 × 3 gains.
        pub gains: [[f32; 3]; 2],
        /// Padding written out as a field.
        pub _pad: [u8; 8],
    }
}

fn qos() -> QosInfo {
    QosInfo {
        depth: 16,
        overflow: Some(Overflow::DropOldest),
        max_publishers: 8,
        max_subscribers: 16,
        inline_bytes: 64,
        chunk_bytes: 0,
        chunks_per_publisher: 0,
    }
}

fn dir(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("horus-record-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn pattern(seed: usize, n: usize) -> Vec<u8> {
    (0..n).map(|i| (i * 31 + seed * 7 + 1) as u8).collect()
}

/// (topic, bytes) in the order written.
type Sent = Vec<(String, Vec<u8>)>;

fn record(path: &Path, opts: WriterOptions, n: usize) -> Sent {
    let mut w = RecordingWriter::create(path, opts).unwrap();
    let topics = [
        ("a/cmd", MessageDescription::of::<CmdVel>()),
        ("a/odom", MessageDescription::of::<Odometry>()),
        ("a/cloud", MessageDescription::of::<PointCloud>()),
        ("a/wheel", MessageDescription::of::<Wheel>()),
    ];
    let ids: Vec<_> = topics
        .iter()
        .map(|(t, d)| w.add_channel(t, d, &qos()).unwrap())
        .collect();
    let mut sent = Vec::new();
    for i in 0..n {
        let k = i % topics.len();
        let (topic, d) = &topics[k];
        let mut bytes = pattern(i, d.root().size);
        if d.root().has_tail {
            bytes.extend(pattern(i + 1, (i * 13) % 300));
        }
        w.write(ids[k], 1_000_000_000 + i as u64 * 10_000_000, &bytes)
            .unwrap();
        sent.push((topic.to_string(), bytes));
    }
    w.add_missed(ids[0], 3);
    let totals = w.finish().unwrap();
    assert_eq!(totals.channels[0].missed, 3);
    sent
}

fn read_all(path: &Path) -> Sent {
    let mut r = RecordingReader::open(path).unwrap();
    let mut out = Vec::new();
    while let Some(m) = r.next_message().unwrap() {
        let mut bytes = Vec::new();
        r.horus_bytes(&m, &mut bytes).unwrap().unwrap();
        out.push((r.channel(m.channel).unwrap().topic.clone(), bytes));
    }
    out
}

#[test]
fn every_compression_gives_back_the_exact_bytes_in_order() {
    let d = dir("exact");
    for c in [Compression::None, Compression::Zstd, Compression::Lz4] {
        let path = d.join(format!("{c:?}.mcap"));
        let opts = WriterOptions {
            compression: c,
            chunk_size: 4096,
            ..WriterOptions::default()
        };
        let sent = record(&path, opts, 200);
        assert_eq!(read_all(&path), sent, "{c:?}");
    }
    std::fs::remove_dir_all(d).unwrap();
}

#[test]
fn info_comes_from_the_summary_with_counts_and_losses() {
    let d = dir("info");
    let path = d.join("x.mcap");
    record(&path, WriterOptions::default(), 100);
    let info = RecordingInfo::read(&path).unwrap();
    assert!(info.from_summary);
    assert_eq!(info.messages, 100);
    assert_eq!(info.start_ns, 1_000_000_000);
    assert_eq!(info.end_ns, 1_000_000_000 + 99 * 10_000_000);
    let cmd = info.channels.iter().find(|c| c.topic == "a/cmd").unwrap();
    assert_eq!((cmd.messages, cmd.missed), (25, 3));
    assert_eq!(cmd.horus_schema.as_deref(), Some(CmdVel::SCHEMA.name()));
    assert_eq!(cmd.schema, "horus/msg/CmdVel");
    let wheel = info.channels.iter().find(|c| c.topic == "a/wheel").unwrap();
    assert_eq!(wheel.schema, "my_robot/msg/Wheel");
    assert_eq!(info.compression.get("zstd"), Some(&info.chunks));
    std::fs::remove_dir_all(d).unwrap();
}

#[test]
fn max_duration_splits_into_numbered_files_that_read_back_whole() {
    let d = dir("split");
    let path = d.join("run.mcap");
    let opts = WriterOptions {
        max_duration: Some(Duration::from_millis(250)),
        ..WriterOptions::default()
    };
    let sent = record(&path, opts, 100); // 1 s of log time
    let mut got = Vec::new();
    let mut i = 0;
    while d.join(format!("run_{i}.mcap")).exists() {
        got.extend(read_all(&d.join(format!("run_{i}.mcap"))));
        i += 1;
    }
    assert!(i >= 4, "{i} files");
    assert_eq!(got, sent);
    std::fs::remove_dir_all(d).unwrap();
}

#[test]
fn truncated_and_corrupt_files_are_errors_naming_file_and_offset() {
    let d = dir("bad");
    let path = d.join("good.mcap");
    let opts = WriterOptions {
        chunk_size: 2048,
        ..WriterOptions::default()
    };
    record(&path, opts, 200);
    let good = std::fs::read(&path).unwrap();

    // Cut at many places: every read ends in Ok or a typed error, never a panic; a cut inside
    // the data is reported as truncated at an offset within the file.
    let cut_path = d.join("cut.mcap");
    let mut saw_truncated = false;
    for cut in (0..good.len()).step_by(97) {
        std::fs::write(&cut_path, &good[..cut]).unwrap();
        let _ = RecordingInfo::read(&cut_path);
        let Ok(mut r) = RecordingReader::open(&cut_path) else {
            continue;
        };
        loop {
            match r.next_message() {
                Ok(Some(_)) => {}
                Ok(None) => break,
                Err(e @ ReadError::Truncated { offset, .. }) => {
                    assert!(offset < cut as u64);
                    let text = e.to_string();
                    assert!(
                        text.contains("cut.mcap") && text.contains(&offset.to_string()),
                        "{text}"
                    );
                    saw_truncated = true;
                    break;
                }
                Err(e) => panic!("cut at {cut}: {e}"),
            }
        }
    }
    assert!(saw_truncated);

    // A flipped byte inside a chunk: the CRC catches it.
    let mut bad = good.clone();
    let mid = good.len() / 3;
    bad[mid] ^= 0x55;
    let bad_path = d.join("flipped.mcap");
    std::fs::write(&bad_path, &bad).unwrap();
    let mut r = RecordingReader::open(&bad_path).unwrap();
    let err = loop {
        match r.next_message() {
            Ok(Some(_)) => {}
            Ok(None) => panic!("a flipped byte went unnoticed"),
            Err(e) => break e,
        }
    };
    assert!(err.to_string().contains("flipped.mcap"), "{err}");
    assert!(err.to_string().contains("offset"), "{err}");

    // Not MCAP at all.
    let junk = d.join("junk.mcap");
    std::fs::write(&junk, b"hello world, not mcap").unwrap();
    assert!(matches!(
        RecordingInfo::read(&junk),
        Err(ReadError::NotMcap { .. })
    ));
    std::fs::remove_dir_all(d).unwrap();
}
