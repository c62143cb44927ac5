//! Loom models of a tensor pool's reference counts: the slot state word
//! (`src/refs.rs`: `try_alloc`, `share`, `drop_holder`) and the holder
//! places (`horus_shm::place`), driven in the order the pool
//! (`src/pool.rs`, `src/holders.rs`) runs them.
//!
//! 1. alloc, share, concurrent release: holder A allocates a slot and
//!    writes the tensor, hands its descriptor to B over a topic (a Release
//!    store / Acquire load), B takes a reference and reads the tensor while
//!    A releases, and C allocates whatever is free and writes into it.
//!    Exactly one drop frees the slot, B reads A's data whole (or is
//!    refused as stale), and C never writes a slot someone still reads
//!    (loom's `UnsafeCell` flags such a race);
//! 2. a dead holder's references are reclaimed while the other holder
//!    releases, by two reclaimers racing: exactly one of them cleans the
//!    place up, the slot is freed exactly once, the place ends free;
//! 3. as 2, with a first reclaimer that died after its CAS (before or
//!    after clearing the dead holder's bit): the next one takes over, and
//!    the slot is still freed exactly once.
//!
//! Liveness is a flag per process token. Each model checks that the
//! interesting outcomes were reached, so none passes vacuously.
//!
//! Run: `RUSTFLAGS="--cfg loom" cargo test -p horus-tensor --release --test loom_refcounts`.
#![cfg(loom)]

use std::sync::Arc;

use horus_shm::place;
use horus_tensor::refs::{self, Dropped, ShareError};
use loom::cell::UnsafeCell;
use loom::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, AtomicUsize, Ordering};

/// Process tokens (as `ProcessId::token`, bit 63 clear).
const A: u64 = 1;
const B: u64 = 2;
const R1: u64 = 3;
const R2: u64 = 4;

/// Outcomes seen across executions of one model.
#[derive(Default)]
struct Seen(std::sync::Mutex<std::collections::BTreeSet<&'static str>>);

impl Seen {
    fn add(&self, what: &'static str) {
        self.0.lock().unwrap().insert(what);
    }
    fn assert_reached(&self, all: &[&'static str]) {
        let seen = self.0.lock().unwrap();
        for what in all {
            assert!(
                seen.contains(what),
                "no execution reached {what:?}: {seen:?}"
            );
        }
    }
}

/// Counts the drops that freed the slot.
fn count(freed: &AtomicUsize, d: Dropped) {
    if d == Dropped::Freed {
        freed.fetch_add(1, Ordering::Relaxed);
    }
}

#[test]
fn alloc_share_and_concurrent_release_free_the_slot_exactly_once() {
    let seen = Arc::new(Seen::default());
    let s = Arc::clone(&seen);
    loom::model(move || {
        let state = Arc::new(AtomicU64::new(0));
        let data = Arc::new(UnsafeCell::new(0u64));
        let topic = Arc::new(AtomicU32::new(0));
        let freed = Arc::new(AtomicUsize::new(0));
        let (bit_a, bit_b, bit_c) = (refs::bit(0), refs::bit(1), refs::bit(2));

        // A: allocates, writes the tensor, publishes the descriptor.
        let gen = refs::try_alloc(&state, bit_a).expect("a free slot");
        assert_eq!(gen, 1);
        // SAFETY (model): A owns the slot exclusively until it shares it.
        data.with_mut(|p| unsafe { *p = 42 });

        let b = {
            let (state, data, topic, freed, s) = (
                Arc::clone(&state),
                Arc::clone(&data),
                Arc::clone(&topic),
                Arc::clone(&freed),
                Arc::clone(&s),
            );
            loom::thread::spawn(move || {
                // The topic carries the descriptor (Release/Acquire, as a ring slot).
                let gen = topic.load(Ordering::Acquire);
                if gen == 0 {
                    s.add("B: no descriptor yet");
                    return;
                }
                match refs::share(&state, gen, bit_b) {
                    Ok(()) => {
                        // SAFETY (model): B holds a reference, so nobody reuses the slot.
                        let v = data.with(|p| unsafe { *p });
                        assert_eq!(v, 42, "B reads A's tensor whole");
                        s.add("B shared and read");
                        count(&freed, refs::drop_holder(&state, bit_b));
                    }
                    Err(ShareError::Stale) => s.add("B refused as stale"),
                    Err(ShareError::Contended) => panic!("two writers cannot exhaust the tries"),
                }
            })
        };
        let c = {
            let (state, data, freed, s) = (
                Arc::clone(&state),
                Arc::clone(&data),
                Arc::clone(&freed),
                Arc::clone(&s),
            );
            loom::thread::spawn(move || {
                if let Some(gen) = refs::try_alloc(&state, bit_c) {
                    assert_eq!(gen, 2, "a reused slot gets the next generation");
                    // SAFETY (model): the slot was free: no holder reads it.
                    data.with_mut(|p| unsafe { *p = 7 });
                    s.add("C reused the slot");
                    count(&freed, refs::drop_holder(&state, bit_c));
                }
            })
        };
        // A: hands the descriptor over, then drops its handle.
        topic.store(gen, Ordering::Release);
        count(&freed, refs::drop_holder(&state, bit_a));
        b.join().unwrap();
        c.join().unwrap();

        let v = state.load(Ordering::Relaxed);
        assert_eq!(refs::holders(v), 0, "every holder dropped");
        let reused = refs::generation(v) == 2;
        assert_eq!(
            freed.load(Ordering::Relaxed),
            if reused { 2 } else { 1 },
            "each allocation freed exactly once"
        );
    });
    seen.assert_reached(&[
        "B shared and read",
        "B refused as stale",
        "C reused the slot",
    ]);
}

/// A slot held by A and B, with B dead: A releases while `reclaimers` race
/// to reclaim B's place (`holders.rs::reclaim_dead`'s cleanup).
fn dead_holder_model(seen: &Arc<Seen>, first_reclaimer_died: Option<bool>) {
    let s = Arc::clone(seen);
    loom::model(move || {
        let state = Arc::new(AtomicU64::new(0));
        let freed = Arc::new(AtomicUsize::new(0));
        let cleaned = Arc::new(AtomicUsize::new(0));
        let (bit_a, bit_b) = (refs::bit(0), refs::bit(1));
        let gen = refs::try_alloc(&state, bit_a).unwrap();
        refs::share(&state, gen, bit_b).unwrap();
        // B's place: its owner word (B died holding it), or a first
        // reclaimer's that died after its CAS, before or after its cleanup.
        let owner_b = Arc::new(AtomicU64::new(match first_reclaimer_died {
            None => B,
            Some(cleared_bit) => {
                if cleared_bit {
                    refs::drop_holder(&state, bit_b);
                }
                place::reclaiming(R1)
            }
        }));
        let alive = Arc::new([
            AtomicBool::new(false),
            AtomicBool::new(true),  // A
            AtomicBool::new(false), // B: dead
            AtomicBool::new(false), // R1: died mid-reclaim
            AtomicBool::new(true),  // R2
        ]);
        let reclaimer = |me: u64| {
            let (state, freed, cleaned, owner_b, alive) = (
                Arc::clone(&state),
                Arc::clone(&freed),
                Arc::clone(&cleaned),
                Arc::clone(&owner_b),
                Arc::clone(&alive),
            );
            loom::thread::spawn(move || {
                let is_alive = |t: u64| alive[t as usize].load(Ordering::Relaxed);
                let mine = place::reclaim_if_dead_with(&owner_b, me, is_alive, || {
                    count(&freed, refs::drop_holder(&state, bit_b));
                });
                if mine {
                    cleaned.fetch_add(1, Ordering::Relaxed);
                }
            })
        };
        // Two live processes race to reclaim B: A itself and R2.
        let r = reclaimer(R2);
        count(&freed, refs::drop_holder(&state, bit_a));
        let is_alive = |t: u64| alive[t as usize].load(Ordering::Relaxed);
        if place::reclaim_if_dead_with(&owner_b, A, is_alive, || {
            count(&freed, refs::drop_holder(&state, bit_b));
        }) {
            cleaned.fetch_add(1, Ordering::Relaxed);
            s.add("A reclaimed B");
        } else {
            s.add("R2 reclaimed B (or was reclaiming)");
        }
        r.join().unwrap();

        assert_eq!(cleaned.load(Ordering::Relaxed), 1, "exactly one reclaimer");
        assert_eq!(owner_b.load(Ordering::Relaxed), 0, "B's place ends free");
        let v = state.load(Ordering::Relaxed);
        assert_eq!(refs::holders(v), 0, "B's reference is gone");
        assert_eq!(
            freed.load(Ordering::Relaxed),
            1,
            "the slot is freed exactly once"
        );
        assert_eq!(refs::try_alloc(&state, bit_a), Some(gen + 1));
    });
}

#[test]
fn a_dead_holders_references_are_reclaimed_and_the_slot_freed_exactly_once() {
    let seen = Arc::new(Seen::default());
    dead_holder_model(&seen, None);
    seen.assert_reached(&["A reclaimed B", "R2 reclaimed B (or was reclaiming)"]);
}

#[test]
fn a_reclaimer_that_died_mid_reclaim_is_taken_over() {
    for cleared_bit in [false, true] {
        let seen = Arc::new(Seen::default());
        dead_holder_model(&seen, Some(cleared_bit));
        seen.assert_reached(&["A reclaimed B", "R2 reclaimed B (or was reclaiming)"]);
    }
}
