//! Positions read from a segment are untrusted: a `head` at the end of the 64-bit position
//! space (a peer scribbled it) must not make a reader loop or overflow, nor a writer panic.
//! The segment is this test process's own (one test per binary: it ruins the logger).

use std::os::unix::fs::FileExt;

use horus_log::{Console, LogSegment};

/// Offsets in the segment (layout.rs): `head` in the header, then with a 4 KiB ring of
/// 32-byte cells, the stamps from 8192.
const HEAD: u64 = 192;
const RING: u64 = 4096;
const CELLS: u64 = 128;
const STAMPS: u64 = 8192;

#[test]
fn head_near_u64_max_terminates() {
    let ns = format!("logtest-positions-{}", std::process::id());
    let guard = horus_log::Builder::new()
        .namespace(&ns)
        .ring_bytes(4096)
        .console(Console::Off)
        .init()
        .unwrap();
    horus_log::info!("a record {}", 1u32);
    let name = horus_log::segment_name().unwrap();
    let file = std::fs::OpenOptions::new()
        .write(true)
        .open(format!("/dev/shm{name}"))
        .unwrap();
    // A record that claims to start one cell before the end of the position space and
    // spans two cells: stepping over it passes u64::MAX.
    let p = u64::MAX - 1;
    let cell = p % CELLS;
    let mut rec = [0u8; 64];
    rec[0..4].copy_from_slice(&1u32.to_ne_bytes()); // call site 1
    rec[4..8].copy_from_slice(&64u32.to_ne_bytes()); // 64 bytes: 2 cells
    file.write_all_at(&rec[..32], RING + cell * 32).unwrap();
    file.write_all_at(&rec[32..], RING + ((cell + 1) % CELLS) * 32)
        .unwrap();
    file.write_all_at(&(p + 1).to_ne_bytes(), STAMPS + cell * 8)
        .unwrap();
    for head in [u64::MAX, u64::MAX - 1, u64::MAX - CELLS / 2] {
        file.write_all_at(&head.to_ne_bytes(), HEAD).unwrap();
        let mut seg = LogSegment::open(&name).unwrap();
        assert_eq!(seg.counters().head, head);
        for (from, wait) in [
            (0, false),
            (0, true),
            (u64::MAX - 5, true),
            (u64::MAX - 1, false),
            (u64::MAX, true),
        ] {
            let b = seg.read_from(from, wait);
            assert!(b.next >= from.min(head - CELLS), "{b:?}");
        }
    }
    // The writers of this process refuse (and count) instead of wrapping the head.
    let dropped = horus_log::dropped();
    horus_log::info!("after the scribble");
    assert_eq!(horus_log::dropped(), dropped + 1);
    drop(guard);
}
