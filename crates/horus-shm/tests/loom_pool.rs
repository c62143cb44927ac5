//! Loom model of chunk reference counting (`src/pool.rs`): the publisher
//! reuses a chunk only when no subscriber holds it, so a reader never sees
//! the chunk written while it reads (loom's `UnsafeCell` flags any such race),
//! and a dead subscriber's references are reclaimed exactly.
//!
//! Run: `RUSTFLAGS="--cfg loom" cargo test -p horus-shm --test loom_pool --release`
#![cfg(loom)]

use std::sync::Arc;

use horus_shm::model::{acquire, claim, reclaim, release, release_last_reader, release_ring};
use loom::cell::UnsafeCell;
use loom::sync::atomic::{AtomicU64, Ordering};

struct Chunk {
    state: AtomicU64,
    data: UnsafeCell<u64>,
    /// The "ring slot": the descriptor (generation) of the published chunk.
    slot: AtomicU64,
}

// SAFETY: `data` is only accessed under the protocol being checked; loom's
// UnsafeCell reports any concurrent access as a failure of that protocol.
unsafe impl Sync for Chunk {}

/// A chunk the publisher has claimed, written (its data is its generation)
/// and published in the slot.
fn published_chunk() -> (Arc<Chunk>, u32) {
    let chunk = Arc::new(Chunk {
        state: AtomicU64::new(0),
        data: UnsafeCell::new(0),
        slot: AtomicU64::new(0),
    });
    let gen = claim(&chunk.state).unwrap();
    // SAFETY: no other thread exists yet.
    chunk.data.with_mut(|d| unsafe { *d = u64::from(gen) });
    chunk.slot.store(u64::from(gen), Ordering::Release);
    (chunk, gen)
}

#[test]
fn publisher_never_overwrites_a_held_chunk() {
    loom::model(|| {
        let (chunk, gen) = published_chunk();

        let c = Arc::clone(&chunk);
        let reader = loom::thread::spawn(move || {
            let gen = c.slot.load(Ordering::Acquire) as u32;
            if acquire(&c.state, gen, 3) {
                // SAFETY: our reference bit is set: the protocol under test
                // forbids any write; loom reports it if one races.
                let v = c.data.with(|d| unsafe { *d });
                assert_eq!(v, u64::from(gen), "read a chunk of another generation");
                release(&c.state, 3);
            }
        });

        // Publisher overwrites the slot: drops the ring hold, then reuses the
        // chunk as soon as it is free.
        release_ring(&chunk.state, gen);
        if let Some(gen2) = claim(&chunk.state) {
            assert_eq!(gen2, gen + 1);
            // SAFETY: we claimed the chunk free: the protocol under test
            // forbids any reader; loom reports it if one races.
            chunk.data.with_mut(|d| unsafe { *d = u64::from(gen2) });
        }
        reader.join().unwrap();
    });
}

#[test]
fn dead_subscriber_reference_is_reclaimed_exactly() {
    loom::model(|| {
        let state = Arc::new(AtomicU64::new(0));
        let gen = claim(&state).unwrap();
        // Subscribers 1 and 2 hold it; subscriber 1 "dies".
        assert!(acquire(&state, gen, 1));
        assert!(acquire(&state, gen, 2));
        let s = Arc::clone(&state);
        let reclaimer = loom::thread::spawn(move || reclaim(&s, 1));
        let s2 = Arc::clone(&state);
        let live = loom::thread::spawn(move || release(&s2, 2));
        release_ring(&state, gen);
        reclaimer.join().unwrap();
        live.join().unwrap();
        // Everyone is gone: the chunk is free, exactly once.
        assert_eq!(claim(&state), Some(gen + 1));
        assert_eq!(claim(&state), None);
    });
}

#[test]
fn sole_reader_frees_chunk_and_ring_hold_in_one_step() {
    loom::model(|| {
        let (chunk, gen) = published_chunk();

        let c = Arc::clone(&chunk);
        let reader = loom::thread::spawn(move || {
            let gen = c.slot.load(Ordering::Acquire) as u32;
            // The overwrite may win the race: then the message is gone.
            if acquire(&c.state, gen, 0) {
                // SAFETY: our reference bit is set: the protocol under test
                // forbids any write; loom reports it if one races.
                let v = c.data.with(|d| unsafe { *d });
                assert_eq!(v, u64::from(gen), "read a chunk of another generation");
                release_last_reader(&c.state, 0);
            }
        });

        // The publisher, overwriting the slot, drops the ring hold of the
        // old generation (a no-op if the reader already did) and reuses
        // the chunk once it is free: never while the reader reads.
        release_ring(&chunk.state, gen);
        if let Some(gen2) = claim(&chunk.state) {
            // SAFETY: we claimed the chunk free: the protocol under test
            // forbids any reader; loom reports it if one races.
            chunk.data.with_mut(|d| unsafe { *d = u64::from(gen2) });
        }
        reader.join().unwrap();
        // Whatever the interleaving, the chunk ends up free or reclaimed
        // by the publisher, never leaked.
        let held = chunk.state.load(Ordering::Relaxed) & ((1 << 33) - 1);
        assert!(held == 0 || held == 1 << 32, "state {held:#x}");
    });
}

/// An observer pins a chunk that the topic's only reliable subscriber frees
/// at once (`release_last_reader`), racing the publisher reusing it: it either
/// reads the message intact or finds it reused, never torn.
#[test]
fn observer_pins_a_chunk_its_last_reader_freed() {
    loom::model(|| {
        let (chunk, _) = published_chunk();

        let c = Arc::clone(&chunk);
        let reader = loom::thread::spawn(move || {
            let gen = c.slot.load(Ordering::Acquire) as u32;
            if acquire(&c.state, gen, 0) {
                release_last_reader(&c.state, 0);
            }
        });
        let c = Arc::clone(&chunk);
        let observer = loom::thread::spawn(move || {
            let gen = c.slot.load(Ordering::Acquire) as u32;
            if acquire(&c.state, gen, 5) {
                // SAFETY: our reference bit is set: the protocol under test
                // forbids any write; loom reports it if one races.
                let v = c.data.with(|d| unsafe { *d });
                assert_eq!(v, u64::from(gen), "read a chunk of another generation");
                release(&c.state, 5);
            }
        });

        // The publisher reuses the chunk as soon as it is free.
        if let Some(gen2) = claim(&chunk.state) {
            // SAFETY: we claimed the chunk free: the protocol under test
            // forbids any reader; loom reports it if one races.
            chunk.data.with_mut(|d| unsafe { *d = u64::from(gen2) });
        }
        reader.join().unwrap();
        observer.join().unwrap();
    });
}
