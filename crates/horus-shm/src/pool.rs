//! Reference counting of pool chunks with generations.
//!
//! Each publisher owns a pool of fixed-size chunks for payloads too large for
//! a ring slot. A chunk's whole life is one 64-bit state word:
//!
//! ```text
//!  63 ............ 33 | 32   | 31 .......... 0
//!  generation (31 b)  | RING | one bit per subscriber place
//! ```
//!
//! * `RING` — the publisher holds it: loaned, or referenced by a ring slot.
//! * subscriber bit `j` — subscriber place `j` holds a read guard on it.
//! * free ⇔ `RING` and all subscriber bits are clear. A free chunk keeps its
//!   generation until the publisher claims it again, so a reader holding a
//!   descriptor of that generation can still pin it (see [`acquire`]).
//!
//! The ring slot carries a descriptor `(chunk index, generation, length)`.
//! A subscriber takes a reference by setting its bit with a CAS that also
//! checks the generation, so it can never pin a chunk that has been freed and
//! reused for a newer message (which would show it torn data): the
//! generation only changes when the publisher claims a *free* chunk, and it
//! changes in the same CAS that claims it. Because each holder has its own
//! bit rather than a shared count, the references of a subscriber that died
//! are exactly its bit, and reclaiming them is an idempotent `fetch_and` — a
//! count could not tell which increments were the dead process's.
//!
//! The scheme is a bitmap variant of the generation-tagged reference counts
//! of iceoryx's chunk management; it trades the number of subscribers
//! (at most 32) for exact crash recovery.

use crate::sync::{AtomicU64, Ordering};

/// Set while the publisher holds the chunk (loan or ring reference).
pub(crate) const RING: u64 = 1 << 32;
const SUBS: u64 = 0xffff_ffff;
const GEN_SHIFT: u32 = 33;
/// Generations are 31 bits wide and wrap.
pub(crate) const GEN_MASK: u64 = (1 << 31) - 1;

/// Generation stored in a state word.
pub(crate) fn generation(state: u64) -> u32 {
    ((state >> GEN_SHIFT) & GEN_MASK) as u32
}

/// The subscriber bit of place `j`.
pub(crate) fn sub_bit(j: usize) -> u64 {
    debug_assert!(j < 32);
    1 << j
}

/// Publisher: claims the chunk if it is free, bumping its generation.
/// Returns the new generation.
pub(crate) fn try_claim(state: &AtomicU64) -> Option<u32> {
    let v = state.load(Ordering::Relaxed);
    if v & (RING | SUBS) != 0 {
        return None;
    }
    let gen = ((u64::from(generation(v)) + 1) & GEN_MASK) as u32;
    let new = (u64::from(gen) << GEN_SHIFT) | RING;
    // Acquire: pairs with the Release of the last reader's `release` (and of
    // the ring release), so every read of the old contents happens before
    // the writes we are about to make into the chunk.
    state
        .compare_exchange(v, new, Ordering::Acquire, Ordering::Relaxed)
        .ok()
        .map(|_| gen)
}

/// Publisher: drops its own hold on generation `gen` of the chunk (the ring
/// slot that referenced it was overwritten, or a loan was abandoned). A stale
/// generation is ignored.
pub(crate) fn release_ring(state: &AtomicU64, gen: u32) {
    let mut v = state.load(Ordering::Relaxed);
    loop {
        if generation(v) != gen || v & RING == 0 {
            return;
        }
        // Release: our writes to the chunk are ordered before a later claim
        // (by a publisher taking over our place) that Acquires this word.
        match state.compare_exchange_weak(v, v & !RING, Ordering::Release, Ordering::Relaxed) {
            Ok(_) => return,
            Err(now) => v = now,
        }
    }
}

/// Subscriber place `j`: takes a read reference on generation `gen`.
/// Fails if the chunk was reused since the descriptor was written (the
/// message is gone: the caller counts it as lost).
///
/// A chunk that is free but still of generation `gen` still holds the
/// message: its last reliable reader released it (`release_last_reader`
/// frees it at once, whatever observers there are) and the publisher has
/// not claimed it again (claiming bumps the generation in the same CAS).
/// Pinning it then is what lets an observer — `topic echo`, the recorder,
/// the bridge — read large messages that the robot's own subscriber
/// consumed first; the publisher's `try_claim` skips a chunk with any
/// reader bit, so it never writes the chunk while it is pinned.
pub(crate) fn acquire(state: &AtomicU64, gen: u32, j: usize) -> bool {
    let bit = sub_bit(j);
    let mut v = state.load(Ordering::Relaxed);
    loop {
        if generation(v) != gen {
            return false;
        }
        if v & bit != 0 {
            // Already held by this place (cannot happen through the public
            // API, which delivers each message once); treat as success
            // without a second reference.
            return true;
        }
        // Acquire: pairs with the publisher's Release in `release_ring`/the
        // slot publish, so the chunk contents are visible to our reads (for
        // a freed chunk, with the last reader's Release, which itself
        // acquired the publisher's writes).
        match state.compare_exchange_weak(v, v | bit, Ordering::Acquire, Ordering::Relaxed) {
            Ok(_) => return true,
            Err(now) => v = now,
        }
    }
}

/// Subscriber place `j`: drops its read reference.
pub(crate) fn release(state: &AtomicU64, j: usize) {
    // Release: our reads of the chunk happen before the publisher's next
    // claim, which Acquires this word.
    state.fetch_and(!sub_bit(j), Ordering::Release);
}

/// Subscriber place `j`, the topic's only subscriber, drops its read
/// reference *and* the ring's hold: nobody else will read this message
/// (subscribers that join later start after the head), so the chunk is free
/// at once and the publisher need not scan cursors to reuse it while hot.
/// Holding our bit until this single RMW pins the generation, so the RING
/// bit cleared is this message's.
pub(crate) fn release_last_reader(state: &AtomicU64, j: usize) {
    // Release: as in `release`.
    state.fetch_and(!(sub_bit(j) | RING), Ordering::Release);
}

/// Whether subscriber place `j` holds a reference on the chunk.
pub(crate) fn held_by(state: &AtomicU64, j: usize) -> bool {
    state.load(Ordering::Relaxed) & sub_bit(j) != 0
}

/// Whether the publisher holds the chunk.
pub(crate) fn held_by_ring(state: &AtomicU64) -> Option<u32> {
    let v = state.load(Ordering::Acquire);
    (v & RING != 0).then(|| generation(v))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lifecycle() {
        let s = AtomicU64::new(0);
        let g = try_claim(&s).unwrap();
        assert_eq!(g, 1);
        assert!(try_claim(&s).is_none(), "held by ring");
        assert!(acquire(&s, g, 3));
        release_ring(&s, g);
        assert!(try_claim(&s).is_none(), "held by subscriber 3");
        assert!(!acquire(&s, g + 1, 4), "wrong generation");
        release(&s, 3);
        // Free but not reused: the message is intact and may be pinned.
        assert!(acquire(&s, g, 4), "a free chunk of the same generation");
        assert!(try_claim(&s).is_none(), "held by subscriber 4");
        release(&s, 4);
        assert_eq!(try_claim(&s), Some(2));
        assert!(!acquire(&s, g, 4), "reused: the old generation is gone");
    }

    #[test]
    fn stale_ring_release_is_ignored() {
        let s = AtomicU64::new(0);
        let g1 = try_claim(&s).unwrap();
        release_ring(&s, g1);
        let g2 = try_claim(&s).unwrap();
        release_ring(&s, g1);
        assert_eq!(held_by_ring(&s), Some(g2));
    }

    #[test]
    fn generation_wraps_within_its_bits() {
        let s = AtomicU64::new(GEN_MASK << GEN_SHIFT);
        assert_eq!(try_claim(&s), Some(0));
    }
}

/// Public wrappers for the loom model tests (`tests/loom_pool.rs`).
#[cfg(loom)]
pub(crate) mod model {
    use crate::sync::AtomicU64;

    /// See [`super::try_claim`].
    pub fn claim(state: &AtomicU64) -> Option<u32> {
        super::try_claim(state)
    }
    /// See [`super::release_ring`].
    pub fn release_ring(state: &AtomicU64, gen: u32) {
        super::release_ring(state, gen)
    }
    /// See [`super::acquire`].
    pub fn acquire(state: &AtomicU64, gen: u32, j: usize) -> bool {
        super::acquire(state, gen, j)
    }
    /// See [`super::release`].
    pub fn release(state: &AtomicU64, j: usize) {
        super::release(state, j)
    }
    /// See [`super::release_last_reader`].
    pub fn release_last_reader(state: &AtomicU64, j: usize) {
        super::release_last_reader(state, j)
    }
    /// Reclaims a dead subscriber's reference (same as `release`, run by
    /// another process).
    pub fn reclaim(state: &AtomicU64, j: usize) {
        super::release(state, j)
    }
}
