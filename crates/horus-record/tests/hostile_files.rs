//! Crafted and damaged MCAP files: each is a typed error naming the file and the record's
//! offset, never an abort, a panic, a hang or an allocation of a size the file declares.

#[path = "support/hostile_mcap.rs"]
mod hostile_mcap;

use std::path::{Path, PathBuf};

use horus::inspect::QosInfo;
use horus::msgs::{CmdVel, Message, MessageDescription};
use horus::Overflow;
use horus_record::chunk::{ChunkError, MAX_CHUNK_UNCOMPRESSED};
use horus_record::replay::{RecordedInputs, ReplayError};
use horus_record::{ReadError, RecordingInfo, RecordingReader, RecordingWriter, WriterOptions};

fn write(tag: &str, bytes: &[u8]) -> PathBuf {
    // Scratch in cargo's CARGO_TARGET_TMPDIR (the build directory), not /tmp.
    let d = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("horus-record-hostile-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    let p = d.join(format!("{tag}.mcap"));
    std::fs::write(&p, bytes).unwrap();
    p
}

/// Reads every message; the first error.
fn read_to_error(path: &Path) -> Option<ReadError> {
    let mut r = RecordingReader::open(path).unwrap();
    loop {
        match r.next_message() {
            Ok(Some(_)) => {}
            Ok(None) => return None,
            Err(e) => return Some(e),
        }
    }
}

#[test]
fn chunk_record_claiming_2_pow_40_bytes_is_an_error_not_an_abort() {
    // The `mcap` crate's chunk reader reserved the 2^40 bytes and the process died (SIGABRT).
    let path = write(
        "claims-2-40",
        &hostile_mcap::chunk_with_message_claiming(1 << 40),
    );
    assert!(std::fs::metadata(&path).unwrap().len() < 200);
    let err = read_to_error(&path).expect("an error");
    assert!(
        matches!(
            err,
            ReadError::Chunk {
                offset: 8,
                reason: ChunkError::RecordTooLarge {
                    len: 1_099_511_627_776,
                    ..
                },
                ..
            }
        ),
        "{err:?}"
    );
    let text = err.to_string();
    assert!(
        text.contains("claims-2-40.mcap") && text.contains("offset 8"),
        "{text}"
    );
    // `bag info` scans a file without a summary: the same error.
    let err = RecordingInfo::read(&path).expect_err("an error");
    assert!(matches!(err, ReadError::Chunk { offset: 8, .. }), "{err:?}");
}

#[test]
fn chunk_declaring_a_huge_uncompressed_size_is_refused_before_decompressing() {
    // Over the absolute limit.
    let path = write(
        "bomb-2-40",
        &hostile_mcap::chunk_declaring_uncompressed(1 << 40),
    );
    let err = read_to_error(&path).expect("an error");
    assert!(
        matches!(
            err,
            ReadError::Chunk {
                reason: ChunkError::TooLarge { declared, .. },
                ..
            } if declared == 1 << 40
        ),
        "{err:?}"
    );
    // Under the limit, but more than a few compressed bytes could ever expand to.
    let declared = MAX_CHUNK_UNCOMPRESSED / 2;
    let path = write(
        "bomb-ratio",
        &hostile_mcap::chunk_declaring_uncompressed(declared),
    );
    let err = read_to_error(&path).expect("an error");
    assert!(
        matches!(
            &err,
            ReadError::Chunk {
                reason: ChunkError::ImpossibleRatio { declared: d, .. },
                ..
            } if *d == declared
        ),
        "{err:?}"
    );
    assert!(err.to_string().contains("decompression bomb"), "{err}");
    assert!(RecordingInfo::read(&path).is_err());
}

#[test]
fn chunk_claiming_more_than_it_holds_within_the_limits_is_an_error() {
    // Declares 8 KiB (a ratio zstd can reach) but holds 64 zeros: decompression runs out.
    let path = write(
        "short-chunk",
        &hostile_mcap::chunk_declaring_uncompressed(8192),
    );
    let err = read_to_error(&path).expect("an error");
    assert!(matches!(err, ReadError::Chunk { offset: 8, .. }), "{err:?}");
}

/// The 106-byte file the `mcap_read` fuzz target found: an uncompressed chunk whose inner
/// record runs past the chunk's 8 record bytes into 13 bytes after them. The `mcap` reader
/// underflowed its count of the chunk's remaining bytes (a panic in debug builds, an
/// unchecked wrap in release).
#[test]
fn uncompressed_chunk_record_running_past_its_records_is_an_error_not_a_panic() {
    const FILE: &[u8] = &[
        0x89, 0x4d, 0x43, 0x41, 0x50, 0x30, 0x0d, 0x0a, 0x06, 0x3d, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
        0, 0, 0x3d, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xf9, 0, 0, 0,
        0, 0x08, 0, 0, 0, 0, 0, 0, 0, 0, 0x04, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
        0, 0, 0x73, 0x74, 0x64, 0x11, 0, 0, 0, 0, 0, 0, 0, 0x28, 0xb5, 0x2f, 0xfd, 0x20, 0x40,
        0x45, 0, 0, 0x10, 0, 0, 0x01, 0, 0x93, 0, 0x16,
    ];
    let path = write("chunk-overrun", FILE);
    let err = read_to_error(&path).expect("an error");
    assert!(matches!(err, ReadError::Chunk { .. }), "{err:?}");
    RecordingInfo::read(&path).expect_err("an error, not a panic");
}

#[test]
fn truncated_file_is_a_truncated_error() {
    let path = write("whole", &[]);
    std::fs::remove_file(&path).unwrap();
    let mut w = RecordingWriter::create(&path, WriterOptions::default()).unwrap();
    let qos = QosInfo {
        depth: 16,
        overflow: Some(Overflow::DropOldest),
        max_publishers: 8,
        max_subscribers: 16,
        inline_bytes: 64,
        chunk_bytes: 0,
        chunks_per_publisher: 0,
    };
    let id = w
        .add_channel("t/cmd", &MessageDescription::of::<CmdVel>(), &qos)
        .unwrap();
    let msg = vec![7u8; CmdVel::SCHEMA.size() as usize];
    for i in 0..500 {
        w.write(id, 1_000 + i, &msg).unwrap();
    }
    w.finish().unwrap();
    let whole = std::fs::read(&path).unwrap();
    // Cut in the middle of the data (inside the first chunk).
    let cut = write("truncated", &whole[..whole.len() / 2]);
    let err = read_to_error(&cut).expect("an error");
    assert!(matches!(err, ReadError::Truncated { .. }), "{err:?}");
    assert!(err.to_string().contains("truncated.mcap"), "{err}");
    let err = RecordingInfo::read(&cut).expect_err("an error");
    assert!(matches!(err, ReadError::Truncated { .. }), "{err:?}");

    // Loading into memory for re-execution is bounded too (a compressed file can hold far
    // more than its size): 500 messages do not fit in 10 000 bytes.
    let err = RecordedInputs::load_bounded(&path, &["t/cmd"], 10_000)
        .err()
        .expect("an error");
    assert!(
        matches!(err, ReplayError::TooLarge { limit: 10_000, .. }),
        "{err}"
    );
    assert!(RecordedInputs::load(&path, &["t/cmd"]).is_ok());
}
