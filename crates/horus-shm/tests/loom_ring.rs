//! Loom model of the slot protocol (`src/ring.rs`): a writer laps a reader
//! on a one-slot ring; the reader must never accept a torn message.
//!
//! Run: `RUSTFLAGS="--cfg loom" cargo test -p horus-shm --test loom_ring --release`
#![cfg(loom)]

use std::sync::Arc;

use horus_shm::model::HeapSlotForTests;

fn pattern(seq: u64) -> [u8; 16] {
    let mut p = [0u8; 16];
    p[..8].copy_from_slice(&(seq * 0x0101_0101).to_ne_bytes());
    p[8..].copy_from_slice(&(seq * 0x1010_1010).to_ne_bytes());
    p
}

#[test]
fn reader_never_accepts_a_torn_message() {
    loom::model(|| {
        let slot = Arc::new(HeapSlotForTests::new(2));
        let w = Arc::clone(&slot);
        let writer = loom::thread::spawn(move || {
            w.write(1, &pattern(1));
            // Lap: message 2 goes into the same (only) slot.
            w.write(2, &pattern(2));
        });
        let mut out = [0u64; 2];
        match slot.read(1, &mut out) {
            Ok(len) => {
                assert_eq!(len, 16);
                let bytes: Vec<u8> = out.iter().flat_map(|w| w.to_ne_bytes()).collect();
                assert_eq!(&bytes[..], &pattern(1), "accepted a torn or wrong message");
            }
            Err(outcome) => assert!(
                matches!(outcome, "not-ready" | "lapped" | "torn"),
                "{outcome}"
            ),
        }
        writer.join().unwrap();
        // Once the writer is done, message 2 is there intact and 1 is lapped.
        assert_eq!(slot.read(2, &mut out), Ok(16));
        assert_eq!(slot.read(1, &mut out), Err("lapped"));
    });
}

#[test]
fn message_written_before_read_is_seen_in_order() {
    loom::model(|| {
        let slot = Arc::new(HeapSlotForTests::new(2));
        let w = Arc::clone(&slot);
        let writer = loom::thread::spawn(move || w.write(1, &pattern(1)));
        let mut out = [0u64; 2];
        // Spin until ready: loom explores every point at which it becomes so.
        loop {
            match slot.read(1, &mut out) {
                Ok(_) => break,
                Err("not-ready") => loom::thread::yield_now(),
                Err(other) => panic!("unexpected {other}"),
            }
        }
        let bytes: Vec<u8> = out.iter().flat_map(|w| w.to_ne_bytes()).collect();
        assert_eq!(&bytes[..], &pattern(1));
        writer.join().unwrap();
    });
}
