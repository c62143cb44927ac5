//! A hostile or broken peer's bytes in the segment: random header bytes, parent
//! indices out of range, absurd ring positions, garbage kinds and names, a loop
//! written straight into the samples, NaN samples, and a writer killed
//! mid-write (odd sequence, lease held by a dead process). Every case is a
//! typed error or a documented outcome; nothing panics or hangs.
//!
//! Offsets follow the layout in `src/layout.rs` (and docs/tf.md): frame record
//! `f` at 4096 + 256 f; with 8 frames the samples start at 8192 and slot `i`
//! of frame `f` is at 8192 + (f · history + i) · 80: sequence, stamp,
//! parent, translation, rotation.

mod common;

use std::fs::OpenOptions;
use std::os::unix::fs::FileExt;

use common::*;
use horus_tf::{segment_name, Capacities, LookupError, OpenError, SetError, TfBuffer, LATEST};

const HISTORY: u64 = 4;

fn caps() -> Capacities {
    Capacities {
        max_frames: 8,
        history: HISTORY as u32,
        ..Capacities::default()
    }
}

struct Raw(std::fs::File);

impl Raw {
    fn open(ns: &str) -> Raw {
        let path = format!("/dev/shm{}", segment_name(ns).unwrap());
        Raw(OpenOptions::new()
            .read(true)
            .write(true)
            .open(path)
            .unwrap())
    }
    fn get(&self, off: u64) -> u64 {
        let mut b = [0u8; 8];
        self.0.read_exact_at(&mut b, off).unwrap();
        u64::from_ne_bytes(b)
    }
    fn put(&self, off: u64, v: u64) {
        self.0.write_all_at(&v.to_ne_bytes(), off).unwrap();
    }
}

fn frame(f: u64) -> u64 {
    4096 + 256 * f
}
const HEAD: u64 = 8;
const TAIL: u64 = 16;
const KIND: u64 = 32;
fn slot(f: u64, i: u64) -> u64 {
    8192 + (f * HISTORY + i) * 80
}
const LEASE: u64 = 256;
const FRAME_COUNT: u64 = 320;

/// a → b → c → d, dynamic, samples at 1 s and 2 s (frames a=0, b=1, c=2, d=3).
fn chain(ns: &str) -> TfBuffer {
    let b = TfBuffer::builder().capacities(caps()).open(ns).unwrap();
    for t in [S, 2 * S] {
        b.set("a", "b", t, &at([1.0, 0.0, 0.0]), false).unwrap();
        b.set("b", "c", t, &at([1.0, 0.0, 0.0]), false).unwrap();
        b.set("c", "d", t, &at([1.0, 0.0, 0.0]), false).unwrap();
    }
    b
}

/// Every way of reading must return (typed), never panic.
fn read_everything(b: &TfBuffer) {
    for (t, s) in [("a", "d"), ("d", "a"), ("b", "c"), ("a", "a"), ("d", "zzz")] {
        for time in [LATEST, S, S + S / 2, 2 * S, 3 * S, -5, i64::MAX, i64::MIN] {
            let _ = b.lookup_transform(t, s, time);
        }
    }
    let _ = b.frames();
    let _ = b.stats();
}

#[test]
fn random_header_bytes_are_refused_on_open() {
    let ns = unique_ns("hdr");
    let b = chain(&ns);
    let raw = Raw::open(&ns);
    let original: Vec<u64> = (0..16).map(|w| raw.get(8 * w)).collect();
    let mut rng = 0x9e37_79b9_7f4a_7c15u64;
    let mut refused = 0;
    // Words whose change must be refused: all but the window (any value in
    // 1 ms..=1 h is a valid window) and the reserved words 9..16.
    let checked = [0usize, 1, 2, 3, 5, 6, 7, 8];
    for round in 0..300 {
        // Scribble 1–4 random words of the 128-byte header (the magic never 0: an
        // opener would wait for the creator first).
        for _ in 0..(1 + round % 4) {
            rng ^= rng << 13;
            rng ^= rng >> 7;
            rng ^= rng << 17;
            let w = rng % 16;
            let v = match round % 3 {
                0 => rng.rotate_left(17),
                1 => original[w as usize] ^ (1 << (rng % 64)),
                _ => rng % 70_000,
            };
            raw.put(8 * w, if w == 0 && v == 0 { 1 } else { v });
        }
        let must_refuse = checked
            .iter()
            .any(|&w| raw.get(8 * w as u64) != original[w]);
        match TfBuffer::open(&ns) {
            Ok(other) => {
                assert!(!must_refuse, "round {round}: a changed header was accepted");
                read_everything(&other)
            }
            Err(
                OpenError::BadMagic { .. } | OpenError::Version { .. } | OpenError::Corrupt { .. },
            ) => refused += 1,
            Err(e) => panic!("unexpected error {e}"),
        }
        for (w, v) in original.iter().enumerate() {
            raw.put(8 * w as u64, *v);
        }
    }
    assert!(
        refused > 150,
        "only {refused} of 300 scribbled headers refused"
    );
    assert!(TfBuffer::open(&ns).unwrap().can_transform("a", "d", S));
    read_everything(&b);
    drop(b);
    assert!(shm_leftovers(&ns).is_empty());
}

#[test]
fn a_parent_index_out_of_range_is_a_corrupt_error() {
    let ns = unique_ns("parent");
    let b = chain(&ns);
    let raw = Raw::open(&ns);
    // c's newest sample (position 1) names parent #999.
    raw.put(slot(2, 1) + 16, 999);
    assert!(matches!(
        b.lookup_transform("a", "d", 2 * S),
        Err(LookupError::Corrupt(_))
    ));
    assert!(matches!(
        b.lookup_transform("a", "d", LATEST),
        Err(LookupError::Corrupt(_))
    ));
    // The older sample is intact, but interpolation needs the newer one too.
    assert!(b.lookup_transform("a", "d", S + S / 2).is_err());
    // Writers refuse to build on it only where they must read it; the frames
    // listing says what is wrong.
    let frames = b.frames();
    assert!(frames[2].problem.is_some(), "{frames:?}");
    read_everything(&b);
    // A new transform of c repairs the tree from its time on.
    b.set("b", "c", 3 * S, &at([1.0, 0.0, 0.0]), false).unwrap();
    b.set("a", "b", 3 * S, &at([1.0, 0.0, 0.0]), false).unwrap();
    b.set("c", "d", 3 * S, &at([1.0, 0.0, 0.0]), false).unwrap();
    assert_close(
        &b.lookup_transform("a", "d", 3 * S).unwrap().transform,
        &at([3.0, 0.0, 0.0]),
    );
}

#[test]
fn absurd_ring_positions_and_kinds_give_typed_errors() {
    let ns = unique_ns("pos");
    let b = chain(&ns);
    let raw = Raw::open(&ns);
    let (head, tail) = (raw.get(frame(2) + HEAD), raw.get(frame(2) + TAIL));
    for (h, t) in [
        (u64::MAX, 0),
        (u64::MAX, u64::MAX),
        (1 << 63, 5),
        (2, 99),
        (1, u64::MAX),
        (7, 0),
        (HISTORY * 1000, 0),
    ] {
        raw.put(frame(2) + HEAD, h);
        raw.put(frame(2) + TAIL, t);
        read_everything(&b);
        // Writing on top must not panic either (it may refuse or repair).
        let _ = b.set("b", "c", 10 * S, &at([1.0, 0.0, 0.0]), false);
        raw.put(frame(2) + HEAD, head);
        raw.put(frame(2) + TAIL, tail);
    }
    raw.put(frame(2) + KIND, 77);
    assert!(matches!(
        b.lookup_transform("a", "d", S),
        Err(LookupError::Corrupt(_))
    ));
    assert!(matches!(
        b.set("b", "c", 20 * S, &at([1.0, 0.0, 0.0]), false),
        Err(SetError::Corrupt(_))
    ));
    read_everything(&b);
}

#[test]
fn a_loop_written_into_the_samples_is_a_loop_error() {
    let ns = unique_ns("loop");
    let b = chain(&ns);
    let raw = Raw::open(&ns);
    // a (the root, no samples) gets a sample naming d as its parent: a → … → d → a.
    raw.put(frame(0) + KIND, 1);
    let s = slot(0, 0);
    let words = [1u64, 2 * S as u64, 3, 0, 0, 0, 0, 0, 0, 1.0f64.to_bits()];
    for (i, w) in words.iter().enumerate().skip(1) {
        raw.put(s + 8 * i as u64, *w);
    }
    raw.put(s, 2); // complete, lap 0
    raw.put(frame(0) + HEAD, 1);
    // r lives in another tree: walking up from d never reaches a root.
    b.set("q", "r", S, &at([0.0; 3]), false).unwrap();
    for time in [LATEST, 2 * S] {
        assert!(matches!(
            b.lookup_transform("r", "d", time),
            Err(LookupError::Loop { .. })
        ));
        // b and d are both on the loop: the walks meet or run into the bound.
        let _ = b.lookup_transform("d", "b", time);
    }
    // A writer does not extend the loop either.
    assert!(b.set("d", "e", S, &at([0.0; 3]), false).is_ok());
    read_everything(&b);
}

#[test]
fn nan_samples_and_garbage_names_are_refused_on_read() {
    let ns = unique_ns("nan");
    let b = chain(&ns);
    let raw = Raw::open(&ns);
    raw.put(slot(1, 1) + 24, f64::NAN.to_bits());
    assert!(matches!(
        b.lookup_transform("a", "b", 2 * S),
        Err(LookupError::Corrupt(_))
    ));
    // Frame count past the table, names that are not names: a fresh reader sees
    // unnamed records, and the real ones by name.
    raw.put(FRAME_COUNT, u64::MAX);
    raw.put(frame(3), (1 << 63) | 999);
    let other = TfBuffer::open(&ns).unwrap();
    assert!(matches!(
        other.lookup_transform("a", "d", S),
        Err(LookupError::UnknownFrame { .. })
    ));
    // (b's newest sample is the NaN one: lookups through b stay refused.)
    assert!(other.can_transform("b", "c", S));
    assert_eq!(other.frames().len(), 8);
    read_everything(&other);
}

#[test]
fn a_writer_killed_mid_write_is_repaired_by_the_next() {
    let ns = unique_ns("torn");
    let b = chain(&ns);
    let raw = Raw::open(&ns);
    // A dead process: an exited child's pid (start time unknown to us).
    let mut child = std::process::Command::new("true").spawn().unwrap();
    let dead = u64::from(child.id()) << 32 | 1;
    child.wait().unwrap();
    // It held the lease and died while writing c's position 2 (lap 0, slot 2):
    // odd sequence, half of the data, head not advanced.
    raw.put(LEASE, dead);
    raw.put(slot(2, 2), 1);
    raw.put(slot(2, 2) + 8, 3 * S as u64);
    raw.put(slot(2, 2) + 24, 123.0f64.to_bits());
    // Readers see the stream up to the last whole sample.
    assert_eq!(
        b.lookup_transform("b", "c", LATEST).unwrap().stamp_ns,
        2 * S
    );
    assert!(matches!(
        b.lookup_transform("b", "c", 3 * S),
        Err(LookupError::ExtrapolationFuture { latest_ns, .. }) if latest_ns == 2 * S
    ));
    // The next writer takes the dead writer's lease over and writes position 2 whole.
    b.set("b", "c", 3 * S, &at([5.0, 0.0, 0.0]), false).unwrap();
    assert_eq!(raw.get(slot(2, 2)), 2);
    assert_eq!(raw.get(LEASE), 0, "lease given back");
    assert_close(
        &b.lookup_transform("b", "c", 3 * S).unwrap().transform,
        &at([5.0, 0.0, 0.0]),
    );
    // A lease held by a live process (this one, from another handle's point of view
    // is the same token — use our parent) is not taken over: WriterBusy.
    let parent = std::os::unix::process::parent_id();
    let parent_token = u64::from(parent) << 32;
    raw.put(LEASE, parent_token);
    let impatient = TfBuffer::builder()
        .lease_wait(std::time::Duration::from_millis(20))
        .open(&ns)
        .unwrap();
    assert!(matches!(
        impatient.set("b", "c", 4 * S, &at([0.0; 3]), false),
        Err(SetError::WriterBusy { pid, .. }) if pid == parent
    ));
    raw.put(LEASE, 0);
    impatient
        .set("b", "c", 4 * S, &at([0.0; 3]), false)
        .unwrap();
}

/// Regression: a frame whose head word a peer set to u64::MAX made the next
/// write panic on `p + 1` (overflow) instead of refusing it.
#[test]
fn a_frame_claiming_u64_max_samples_is_refused_not_an_overflow() {
    let ns = unique_ns("overflow");
    let b = chain(&ns);
    let raw = Raw::open(&ns);
    raw.put(frame(2) + HEAD, u64::MAX);
    assert!(matches!(
        b.set("b", "c", 10 * S, &at([1.0, 0.0, 0.0]), false),
        Err(SetError::Corrupt(_))
    ));
}

#[test]
fn a_segment_truncated_under_readers_reads_as_empty_not_a_crash() {
    let ns = unique_ns("trunc");
    let b = chain(&ns);
    assert!(b.can_transform("a", "d", S));
    Raw::open(&ns).0.set_len(0).unwrap();
    // horus-shm's SIGBUS guard maps zero pages: no samples (every frame a root,
    // so a and d are disconnected), typed errors.
    assert!(b.lookup_transform("a", "d", S).is_err());
    read_everything(&b);
    let _ = b.set("a", "b", 3 * S, &at([0.0; 3]), false);
    drop(b);
    let _ = std::fs::remove_file(format!("/dev/shm{}", segment_name(&ns).unwrap()));
    assert!(shm_leftovers(&ns).is_empty());
}
