//! One history sample guarded by a sequence word (a seqlock whose sequence
//! also says which lap of the ring the sample belongs to).
//!
//! The algorithm is the classic seqlock (Lameter; as in Linux `seqcount_t`
//! and crossbeam's `AtomicCell` fallback), with the memory orderings from
//! Boehm, "Can seqlocks get along with programming language memory models?"
//! (MSPC 2012): the writer makes the sequence odd, issues a Release fence,
//! stores the data with Relaxed atomics and makes the sequence even with
//! Release; the reader Acquire-loads the sequence, loads the data Relaxed,
//! issues an Acquire fence and loads the sequence again. If any data load saw
//! a value stored after the writer's Release fence, that fence synchronises
//! with the reader's Acquire fence, so the second load sees the odd sequence
//! (or a later one) and the read is discarded.
//!
//! Slot `i` of a ring of `n` slots holds the positions `i, i + n, i + 2n, …`;
//! the sample at position `p` (lap `L = p / n`) is complete exactly when the
//! slot's sequence is `2L + 2`. A reader that expects position `p` therefore
//! needs no retry loop of its own: any other sequence means "not written
//! yet", "being written", "torn by a writer that died" (odd) or "already
//! overwritten by a later lap". A writer that died mid-write left the
//! sequence odd and never advanced the ring's head, so the next writer writes
//! the same position again and makes the slot whole (`repair` is simply the
//! ordinary write).
// `pub` items of a private module: the loom build re-exports them (`horus_tf::model`).
#![cfg_attr(not(loom), allow(unreachable_pub))]

use horus_shm::sync::{fence, AtomicU64, Ordering};

/// Data words of a sample: stamp, parent index, translation (3), rotation (4).
pub const DATA_WORDS: usize = 9;
/// Words of a slot: the sequence plus the data.
pub const SLOT_WORDS: usize = 1 + DATA_WORDS;

/// The sequence value of a complete sample of lap `lap`.
#[inline]
pub fn complete_seq(lap: u64) -> u64 {
    lap.wrapping_mul(2).wrapping_add(2)
}

/// What reading the slot for an expected lap found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Read {
    /// The sample of the expected lap, whole.
    Sample([u64; DATA_WORDS]),
    /// The slot does not (or no longer) hold a whole sample of that lap:
    /// not written yet, being written, torn by a dead writer, or overwritten.
    Gone {
        /// The sequence found (first load).
        seq: u64,
    },
}

/// Writes `data` as the sample of lap `lap` into `slot` (`slot[0]` is the
/// sequence). The caller is the only writer of the ring (it holds the lease).
#[inline]
pub fn write(slot: &[AtomicU64; SLOT_WORDS], lap: u64, data: &[u64; DATA_WORDS]) {
    let seq = &slot[0];
    // Relaxed: the Release fence below orders this store before the data stores.
    seq.store(complete_seq(lap).wrapping_sub(1), Ordering::Relaxed);
    // Release fence: any reader whose Relaxed data load sees one of the stores
    // below synchronises (through its Acquire fence) with this fence and so
    // sees the odd sequence on its second load.
    fence(Ordering::Release);
    for (w, v) in slot[1..].iter().zip(data) {
        w.store(*v, Ordering::Relaxed);
    }
    // Release: a reader that Acquire-loads the even sequence sees all the data.
    seq.store(complete_seq(lap), Ordering::Release);
}

/// Reads the sample of lap `lap` from `slot`, if the slot holds it whole.
#[inline]
pub fn read(slot: &[AtomicU64; SLOT_WORDS], lap: u64) -> Read {
    let want = complete_seq(lap);
    let seq = &slot[0];
    // Acquire: pairs with the writer's final Release store, so the data of
    // the sample this sequence announces is visible to the loads below.
    let s1 = seq.load(Ordering::Acquire);
    if s1 != want {
        return Read::Gone { seq: s1 };
    }
    let mut data = [0u64; DATA_WORDS];
    for (d, w) in data.iter_mut().zip(&slot[1..]) {
        *d = w.load(Ordering::Relaxed);
    }
    // Acquire fence: if a data load above saw a store made after a writer's
    // Release fence, that writer's odd sequence store is visible below.
    fence(Ordering::Acquire);
    let s2 = seq.load(Ordering::Relaxed);
    if s2 != s1 {
        return Read::Gone { seq: s2 };
    }
    Read::Sample(data)
}

/// Reads only the first data word (the stamp) of the sample of lap `lap`, by
/// the same protocol as [`read`]: what a search needs from the samples it
/// passes over.
#[inline]
pub fn read_first(slot: &[AtomicU64; SLOT_WORDS], lap: u64) -> Option<u64> {
    let want = complete_seq(lap);
    let seq = &slot[0];
    // Acquire / Relaxed / Acquire fence / Relaxed: as in `read`.
    if seq.load(Ordering::Acquire) != want {
        return None;
    }
    let first = slot[1].load(Ordering::Relaxed);
    fence(Ordering::Acquire);
    (seq.load(Ordering::Relaxed) == want).then_some(first)
}
