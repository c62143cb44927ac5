//! The reference-count protocol of a tensor slot: one 64-bit state word per
//! slot, in shared memory.
//!
//! ```text
//!  63 ........... 32 | 31 ............ 0
//!  generation        | one bit per holder place (process)
//! ```
//!
//! The scheme is the one of `horus-shm`'s chunk pool (a bitmap variant of
//! iceoryx's generation-tagged reference counts). A slot is free when no
//! holder bit is set. Allocating claims a free slot and bumps its generation
//! in one CAS ([`try_alloc`]); sharing it with another process sets that
//! process's bit with a CAS that also checks the generation ([`share`]), so
//! a stale descriptor can never pin a slot that was freed and reused. Each
//! process holds at most one bit per slot and counts its own handles
//! locally, so a process's references — also a dead one's — are exactly its
//! bit, dropped with an idempotent `fetch_and` ([`drop_holder`]). Whoever
//! clears the last bit freed the slot: exactly one call per allocation
//! returns [`Dropped::Freed`] (the loom model `tests/loom_refcounts.rs`
//! checks it), even when a holder's release and a reclaim of that same dead
//! holder race.
//!
//! The word is shared with processes that may be buggy or hostile: nothing
//! here trusts it beyond its bit pattern, and every loop is bounded.

use horus_shm::sync::{AtomicU64, Ordering};

/// The holder bits of a state word (one per holder place).
pub const HOLDER_BITS: u64 = 0xffff_ffff;
/// Holder places a pool has (one bit each in a state word).
pub const HOLDERS: usize = 32;
/// CAS attempts [`share`] makes before giving up on a word that other
/// processes keep changing (a live sharer's CAS succeeds within a few).
pub const SHARE_TRIES: u32 = 1024;

/// The generation part of a state word.
pub fn generation(word: u64) -> u32 {
    (word >> 32) as u32
}

/// The number of processes holding the slot in a state word.
pub fn holders(word: u64) -> u32 {
    (word & HOLDER_BITS).count_ones()
}

/// The holder bit of place `place` (`place < HOLDERS`).
pub fn bit(place: usize) -> u64 {
    debug_assert!(place < HOLDERS);
    1u64 << place
}

/// Claims the slot for the holder `bit` if it is free; returns the new
/// generation of the slot (the old one plus one, wrapping).
pub fn try_alloc(state: &AtomicU64, bit: u64) -> Option<u32> {
    let v = state.load(Ordering::Relaxed);
    if v & HOLDER_BITS != 0 {
        return None;
    }
    let gen = generation(v).wrapping_add(1);
    // Acquire: pairs with the Release of the last holder's drop
    // ([`drop_holder`]), so its accesses to the old tensor happen before the
    // new owner's writes into the slot.
    state
        .compare_exchange(
            v,
            (u64::from(gen) << 32) | bit,
            Ordering::Acquire,
            Ordering::Relaxed,
        )
        .ok()
        .map(|_| gen)
}

/// Why [`share`] took no reference.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ShareError {
    /// The slot is free or at another generation: the tensor was freed.
    Stale,
    /// The word changed under every one of [`SHARE_TRIES`] CAS attempts.
    Contended,
}

/// Adds the holder `bit` to a slot that is held at generation `gen`.
pub fn share(state: &AtomicU64, gen: u32, bit: u64) -> Result<(), ShareError> {
    let mut v = state.load(Ordering::Relaxed);
    for _ in 0..SHARE_TRIES {
        if generation(v) != gen || v & HOLDER_BITS == 0 {
            return Err(ShareError::Stale);
        }
        // Acquire: pairs with the sender's Release (its drop of the slot, or
        // the topic that carried the descriptor), so its data is visible.
        match state.compare_exchange_weak(v, v | bit, Ordering::Acquire, Ordering::Relaxed) {
            Ok(_) => return Ok(()),
            Err(now) => v = now,
        }
    }
    Err(ShareError::Contended)
}

/// What [`drop_holder`] did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dropped {
    /// The bit was not set (already dropped: a reclaim repeated by a
    /// successor, or a release racing the reclaim of its own holder).
    NotHeld,
    /// The bit was dropped; other holders remain.
    Released,
    /// The bit was the last one: the slot is free now.
    Freed,
}

/// Drops the holder `bit` from the slot (a release, or a dead holder's
/// reclaim). Idempotent.
pub fn drop_holder(state: &AtomicU64, bit: u64) -> Dropped {
    // Release: this holder's accesses to the data happen before the next
    // allocation's Acquire CAS ([`try_alloc`]) on this word.
    let prev = state.fetch_and(!bit, Ordering::Release);
    if prev & bit == 0 {
        Dropped::NotHeld
    } else if prev & HOLDER_BITS == bit {
        Dropped::Freed
    } else {
        Dropped::Released
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn alloc_share_and_drop() {
        let s = AtomicU64::new(7 << 32);
        assert_eq!(try_alloc(&s, bit(0)), Some(8));
        assert_eq!(try_alloc(&s, bit(1)), None, "held");
        assert_eq!(share(&s, 7, bit(1)), Err(ShareError::Stale));
        assert_eq!(share(&s, 8, bit(1)), Ok(()));
        assert_eq!(holders(s.load(Ordering::Relaxed)), 2);
        assert_eq!(drop_holder(&s, bit(0)), Dropped::Released);
        assert_eq!(drop_holder(&s, bit(0)), Dropped::NotHeld);
        assert_eq!(drop_holder(&s, bit(1)), Dropped::Freed);
        assert_eq!(share(&s, 8, bit(1)), Err(ShareError::Stale), "freed");
    }

    #[test]
    fn generation_wraps() {
        let s = AtomicU64::new(u64::from(u32::MAX) << 32);
        assert_eq!(try_alloc(&s, bit(31)), Some(0));
    }
}
