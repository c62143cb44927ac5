//! A pool segment written by a corrupt or hostile peer: every header field
//! is validated on open (typed errors, nothing mapped out of bounds), and
//! hostile state words or places only deny service, never break bounds or
//! hang.

mod common;

use std::os::unix::fs::FileExt;

use common::{pool_path, small, unique_ns};
use horus_tensor::testing::{MEMBERS_OFFSET, PLACES_OFFSET, STATES_OFFSET};
use horus_tensor::{AllocError, AttachError, HeaderError, OpenError, PoolConfig, TensorPool};

/// Opens a pool whose header field at `offset` a peer overwrote with
/// `bytes`; the first opener keeps its own validated copy.
fn open_with(tag: &str, offset: u64, bytes: &[u8]) -> OpenError {
    let ns = unique_ns(tag);
    let first = TensorPool::open(&ns, 1, small(2)).unwrap();
    let file = std::fs::OpenOptions::new()
        .write(true)
        .open(pool_path(&ns, 1))
        .unwrap();
    file.write_all_at(bytes, offset).unwrap();
    let err = TensorPool::open(&ns, 1, PoolConfig::default()).unwrap_err();
    // The first opener still works on its own copy of the geometry.
    assert!(first.alloc(10).is_ok());
    drop(first);
    assert!(!pool_path(&ns, 1).exists(), "the last holder unlinked it");
    err
}

fn corrupt(err: OpenError) -> HeaderError {
    match err {
        OpenError::Corrupt { source, .. } => source,
        other => panic!("expected Corrupt, got {other}"),
    }
}

#[test]
fn each_corrupt_header_field_is_a_typed_error() {
    // Field offsets: header.rs (magic 0, version 8, slots 12, slot_bytes 16,
    // pool_id 24, data_offset 32, total_len 40).
    assert!(matches!(
        corrupt(open_with("magic", 0, b"NOTAPOOL")),
        HeaderError::Magic(_)
    ));
    assert!(matches!(
        corrupt(open_with("version", 8, &1u32.to_ne_bytes())),
        HeaderError::Version { found: 1 }
    ));
    assert!(matches!(
        corrupt(open_with("slots0", 12, &0u32.to_ne_bytes())),
        HeaderError::Slots(0)
    ));
    // More slots than the file holds: the total no longer matches.
    assert!(matches!(
        corrupt(open_with("slots", 12, &1000u32.to_ne_bytes())),
        HeaderError::DataOffset { .. } | HeaderError::TotalLen { .. }
    ));
    assert!(matches!(
        corrupt(open_with("slotbytes", 16, &7u64.to_ne_bytes())),
        HeaderError::SlotBytes(7)
    ));
    assert!(matches!(
        corrupt(open_with("slotbytes-big", 16, &(1u64 << 40).to_ne_bytes())),
        HeaderError::TotalLen { .. }
    ));
    assert!(matches!(
        corrupt(open_with("poolid", 24, &2u64.to_ne_bytes())),
        HeaderError::PoolId { found: 2 }
    ));
    assert!(matches!(
        corrupt(open_with("dataoff", 32, &u64::MAX.to_ne_bytes())),
        HeaderError::DataOffset { .. }
    ));
    assert!(matches!(
        corrupt(open_with("total", 40, &(1u64 << 40).to_ne_bytes())),
        HeaderError::TotalLen { .. }
    ));
}

/// A header claiming more than the file has (a consistent but truncated
/// pool): refused before any offset is used.
#[test]
fn a_truncated_pool_is_refused() {
    let ns = unique_ns("trunc");
    let first = TensorPool::open(&ns, 1, small(2)).unwrap();
    let file = std::fs::OpenOptions::new()
        .write(true)
        .open(pool_path(&ns, 1))
        .unwrap();
    // Shorter than its header says, longer than the fixed part.
    let keep = 2 * 4096;
    file.set_len(keep).unwrap();
    assert!(matches!(
        corrupt(TensorPool::open(&ns, 1, PoolConfig::default()).unwrap_err()),
        HeaderError::Mapping { .. }
    ));
    file.set_len(64).unwrap();
    assert!(matches!(
        TensorPool::open(&ns, 1, PoolConfig::default()).unwrap_err(),
        OpenError::Segment { .. }
    ));
    drop((first, file));
    let _ = std::fs::remove_file(pool_path(&ns, 1));
}

/// A file whose creator never published the header: NotInitialised after
/// the bounded wait.
#[test]
fn an_uninitialised_pool_is_a_typed_error() {
    let ns = unique_ns("uninit");
    let name = horus_shm::name::segment_name(&ns, "tp", "1").unwrap();
    let seg = horus_shm::Segment::create(&name, 4096).unwrap();
    let err = TensorPool::open(&ns, 1, PoolConfig::default()).unwrap_err();
    horus_shm::Segment::unlink(&name);
    drop(seg);
    assert!(matches!(err, OpenError::NotInitialised { pool_id: 1 }));
}

/// Hostile state words (every holder bit set, any generation) and owner
/// words naming live processes deny service with typed errors; nothing
/// hangs or goes out of bounds.
#[test]
fn hostile_state_and_place_words_only_deny_service() {
    let ns = unique_ns("hostile");
    let pool = TensorPool::open(&ns, 1, small(2)).unwrap();
    let file = std::fs::OpenOptions::new()
        .write(true)
        .open(pool_path(&ns, 1))
        .unwrap();
    let full = u64::MAX.to_ne_bytes();
    for s in 0..2 {
        file.write_all_at(&full, (STATES_OFFSET + 8 * s) as u64)
            .unwrap();
    }
    assert!(matches!(pool.alloc(1), Err(AllocError::Exhausted { .. })));
    // A descriptor at the forged generation references the slot: the
    // forger made it look held; bounds still hold.
    let t = pool.acquire(0, u32::MAX, pool.offset_of(0), 4096).unwrap();
    assert_eq!(t.bytes().len(), 4096);
    drop(t);
    assert!(matches!(
        pool.acquire(1, 3, pool.offset_of(1), 1),
        Err(AttachError::Stale { .. })
    ));
    // Every place owned by this (live) process: a new opener is refused.
    let me = horus_shm::ProcessId::current().token().to_ne_bytes();
    for j in 0..horus_tensor::HOLDERS {
        file.write_all_at(&me, (PLACES_OFFSET + 8 * j) as u64)
            .unwrap();
    }
    assert!(matches!(
        TensorPool::open(&ns, 1, PoolConfig::default()),
        Err(OpenError::TooManyHolders(1))
    ));
    // A membership word that never clears (a forged member): the pool is
    // never unlinked by us; removed by hand below.
    file.write_all_at(&0xffffu64.to_ne_bytes(), MEMBERS_OFFSET as u64)
        .unwrap();
    drop(pool);
    let _ = std::fs::remove_file(pool_path(&ns, 1));
}
