//! Regressions found attacking the buffer as a crashing writer or a racing
//! one: a writer killed while overwriting the oldest sample of a full ring,
//! and a reader whose frame count was loaded before a writer reparented a
//! frame under a brand-new one.
//!
//! Offsets follow `src/layout.rs` (as in `corrupt.rs`): with 8 frames the
//! samples start at 8192 and slot `i` of frame `f` is at
//! 8192 + (f · history + i) · 80.

mod common;

use std::fs::OpenOptions;
use std::os::unix::fs::FileExt;

use common::*;
use horus_tf::{segment_name, Capacities, LookupError, TfBuffer};

const HISTORY: u64 = 4;
const HEAD: u64 = 8;
const LEASE: u64 = 256;

fn caps() -> Capacities {
    Capacities {
        max_frames: 8,
        history: HISTORY as u32,
        ..Capacities::default()
    }
}

fn put(ns: &str, off: u64, v: u64) {
    let path = format!("/dev/shm{}", segment_name(ns).unwrap());
    let f = OpenOptions::new().write(true).open(path).unwrap();
    f.write_all_at(&v.to_ne_bytes(), off).unwrap();
}

fn get(ns: &str, off: u64) -> u64 {
    let path = format!("/dev/shm{}", segment_name(ns).unwrap());
    let f = OpenOptions::new().read(true).open(path).unwrap();
    let mut b = [0u8; 8];
    f.read_exact_at(&mut b, off).unwrap();
    u64::from_ne_bytes(b)
}

fn frame(f: u64) -> u64 {
    4096 + 256 * f
}

fn slot(f: u64, i: u64) -> u64 {
    8192 + (f * HISTORY + i) * 80
}

/// Regression: a writer killed while overwriting the oldest sample of a full
/// ring (the slot of position `head − history`, which every write after the
/// ring wrapped overwrites) left that slot with an odd sequence; every lookup
/// that reached the oldest position then retried until `Busy`, and the
/// frames listing reported `Busy`, for as long as nobody wrote the frame
/// again — typically forever, the killed process being its only writer. The
/// half-overwritten sample is simply gone: the rest of the history answers.
#[test]
fn a_writer_killed_overwriting_the_oldest_sample_leaves_the_rest_readable() {
    let ns = unique_ns("torn-oldest");
    let b = TfBuffer::builder().capacities(caps()).open(&ns).unwrap();
    // a = #0, b = #1, c = #2; c's ring full: positions 0..4 at 1 s, 2 s, 3 s,
    // 4 s (x = 1, 1, 3, 4).
    b.set("a", "b", S, &at([1.0, 0.0, 0.0]), true).unwrap();
    for t in [S, 2 * S] {
        b.set("b", "c", t, &at([1.0, 0.0, 0.0]), false).unwrap();
    }
    for t in [3 * S, 4 * S] {
        b.set("b", "c", t, &at([t as f64 / S as f64, 0.0, 0.0]), false)
            .unwrap();
    }
    let mut child = std::process::Command::new("true").spawn().unwrap();
    let dead = u64::from(child.id()) << 32 | 1;
    child.wait().unwrap();
    // Killed writing position 4 (lap 1, slot 0): odd sequence 3, part of
    // the data, head still 4.
    put(&ns, LEASE, dead);
    put(&ns, slot(2, 0), 3);
    put(&ns, slot(2, 0) + 8, 5 * S as u64);
    assert_eq!(get(&ns, frame(2) + HEAD), 4);

    // Before the oldest live sample (2 s): an extrapolation into the past,
    // not Busy.
    match b.lookup_transform("b", "c", S + S / 2) {
        Err(LookupError::ExtrapolationPast {
            earliest_ns,
            latest_ns,
            ..
        }) => assert_eq!((earliest_ns, latest_ns), (2 * S, 4 * S)),
        other => panic!("{other:?}"),
    }
    // Inside the live history: answered (x 1 at 2 s, 3 at 3 s).
    assert_close(
        &b.lookup_transform("b", "c", 2 * S + S / 2)
            .unwrap()
            .transform,
        &at([2.0, 0.0, 0.0]),
    );
    assert_close(
        &b.lookup_transform("b", "c", 2 * S).unwrap().transform,
        &at([1.0, 0.0, 0.0]),
    );
    assert!(matches!(
        b.lookup_transform("b", "c", 5 * S),
        Err(LookupError::ExtrapolationFuture { earliest_ns, latest_ns, .. })
            if (earliest_ns, latest_ns) == (2 * S, 4 * S)
    ));
    let c = b.frames().into_iter().find(|f| f.name == "c").unwrap();
    assert_eq!(c.problem, None);
    assert_eq!((c.samples, c.earliest_stamp_ns), (3, Some(2 * S)));
    // The next writer takes the lease over and writes position 4 whole.
    b.set("b", "c", 5 * S, &at([5.0, 0.0, 0.0]), false).unwrap();
    assert_close(
        &b.lookup_transform("b", "c", 4 * S + S / 2)
            .unwrap()
            .transform,
        &at([4.5, 0.0, 0.0]),
    );
    drop(b);
    assert!(shm_leftovers(&ns).is_empty());
}
