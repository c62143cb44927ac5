//! Writes the seed corpus of the `mcap_read` fuzz target (docs/fuzzing.md): small real
//! recordings, one per chunk compression, with a nested-type topic and a tail topic.
//!
//! `cargo run -p horus-record --example mcap_fuzz_seeds -- fuzz/seeds/mcap_read`

use std::path::PathBuf;

use horus::inspect::QosInfo;
use horus::msgs::{CmdVel, Message, MessageDescription, PointCloud};
use horus::Overflow;
use horus_record::{Compression, RecordingWriter, WriterOptions};

fn main() -> anyhow::Result<()> {
    let dir = PathBuf::from(std::env::args().nth(1).expect("output directory"));
    std::fs::create_dir_all(&dir)?;
    let qos = QosInfo {
        depth: 4,
        overflow: Some(Overflow::DropOldest),
        max_publishers: 1,
        max_subscribers: 1,
        inline_bytes: 64,
        chunk_bytes: 0,
        chunks_per_publisher: 0,
    };
    for (name, compression) in [
        ("zstd", Compression::Zstd),
        ("lz4", Compression::Lz4),
        ("none", Compression::None),
    ] {
        let path = dir.join(format!("{name}.mcap"));
        let _ = std::fs::remove_file(&path);
        let opts = WriterOptions {
            compression,
            chunk_size: 256,
            ..WriterOptions::default()
        };
        let mut w = RecordingWriter::create(&path, opts)?;
        let cmd = w.add_channel("s/cmd", &MessageDescription::of::<CmdVel>(), &qos)?;
        let cloud = w.add_channel("s/cloud", &MessageDescription::of::<PointCloud>(), &qos)?;
        for i in 0..3u64 {
            let bytes = vec![i as u8; CmdVel::SCHEMA.size() as usize];
            w.write(cmd, 1_000 + i, &bytes)?;
            let mut bytes = vec![7u8; PointCloud::SCHEMA.size() as usize];
            bytes.extend([1, 2, 3, 4]);
            w.write(cloud, 1_000 + i, &bytes)?;
        }
        w.finish()?;
    }
    Ok(())
}
