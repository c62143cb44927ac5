//! Waking a `Block` publisher when room appears: the handshake between a
//! publisher going to sleep on a full ring and a subscriber whose cursor
//! move (or departure) frees a slot. The ports call these functions and the
//! loom model (`tests/loom_room.rs`) calls them too.
//!
//! It is the subscriber wake-up of [`crate::protocol`] (`register_wait` /
//! `must_wake`) with the roles swapped — the same design as a futex-based
//! condition variable (Drepper, "Futexes Are Tricky", and the Linux
//! `futex(2)` man page): the sleeper reads the futex word, checks its
//! condition, announces itself, checks again, and sleeps only while the word
//! still holds the value it read; the waker changes the condition, then, if
//! anyone is announced, bumps the word and wakes.
//!
//! **Orderings (no lost wake-up).** Publisher ([`register`] then a re-check
//! of the cursors): store its `room_waiting` bit, SeqCst fence, load the
//! cursors. Subscriber ([`must_wake`] after `protocol::publish_cursor`):
//! store the cursor, SeqCst fence, load `room_waiting`. The two fences are
//! totally ordered: if the subscriber's comes first, the publisher's re-check
//! sees the new cursor and does not sleep; if the publisher's comes first,
//! the subscriber sees the bit, bumps `room` and wakes — and as the publisher
//! read `room` before its re-check, a bump between the re-check and the sleep
//! makes `FUTEX_WAIT` return at once (the kernel compares the word with the
//! value read under its own lock).
//!
//! **The common path stays one load.** The fence is only paid while some
//! publisher is registered (`room_blocking` ≠ 0). A publisher registers
//! once, at its first wait, and then runs a global memory barrier
//! (`membarrier`): a subscriber that still read `room_blocking == 0` and
//! skipped the fence had its cursor store made visible by that barrier, so
//! the publisher's first re-check sees it. Without the barrier (old kernel,
//! seccomp) the publisher does not register and sleeps at most 1 ms at a time.
//!
//! Bits, not counts: a publisher killed mid-wait leaves a bit the reclaimer
//! clears exactly (`Channel::clear_room_bits`).

use crate::records::Wake;
use crate::sync::{fence, Ordering};

/// Publisher, before checking for room it may then sleep for: the value of
/// the futex word to sleep on.
#[inline]
pub(crate) fn token(wake: &Wake) -> u32 {
    // Acquire: pairs with the Release bump, so a later re-check sees at
    // least the cursors of the subscriber that bumped.
    wake.room.load(Ordering::Acquire)
}

/// Publisher place with room bit `bit`: about to sleep. The caller then
/// re-checks for room and sleeps only if there is none.
#[inline]
pub(crate) fn register(wake: &Wake, bit: u32) {
    wake.room_waiting.fetch_or(bit, Ordering::Relaxed);
    // SeqCst: orders the bit store before the re-check's cursor loads
    // (an RMW alone does not order later plain loads; see the module doc).
    fence(Ordering::SeqCst);
}

/// Publisher: done waiting (room, timeout, or lost segment).
#[inline]
pub(crate) fn unregister(wake: &Wake, bit: u32) {
    wake.room_waiting.fetch_and(!bit, Ordering::Relaxed);
}

/// Subscriber, after storing a cursor (or leaving): whether a publisher
/// may be asleep waiting for room (then [`bump`] and wake it). One Relaxed
/// load while no publisher is registered.
#[inline]
pub(crate) fn must_wake(wake: &Wake) -> bool {
    if wake.room_blocking.load(Ordering::Relaxed) == 0 {
        return false;
    }
    // SeqCst: the other half of [`register`]'s Dekker pattern.
    fence(Ordering::SeqCst);
    wake.room_waiting.load(Ordering::Relaxed) != 0
}

/// Subscriber: changes the futex word before waking, so a publisher that
/// read the old value and has not slept yet does not.
#[inline]
pub(crate) fn bump(wake: &Wake) {
    // Release: a publisher that reads the new value (Acquire, [`token`])
    // sees the cursor stored before.
    wake.room.fetch_add(1, Ordering::Release);
}

/// Wrappers for the loom model (`tests/loom_room.rs`).
#[cfg(loom)]
pub(crate) mod model {
    use crate::protocol::model::WakeWords;
    use crate::sync::AtomicU32;

    /// Registers publisher places `bits` for room wake-ups (the model's
    /// stand-in for a registration whose global barrier has run).
    pub fn room_register_blocking(wake: &WakeWords, bits: u32) {
        wake.0
            .room_blocking
            .fetch_or(bits, crate::sync::Ordering::SeqCst);
    }
    /// The room futex word.
    pub fn room_word(wake: &WakeWords) -> &AtomicU32 {
        &wake.0.room
    }
    /// The `room_waiting` set.
    pub fn room_waiting(wake: &WakeWords) -> &AtomicU32 {
        &wake.0.room_waiting
    }
    /// See [`super::token`].
    pub fn room_token(wake: &WakeWords) -> u32 {
        super::token(&wake.0)
    }
    /// See [`super::register`].
    pub fn room_register(wake: &WakeWords, bit: u32) {
        super::register(&wake.0, bit)
    }
    /// See [`super::unregister`].
    pub fn room_unregister(wake: &WakeWords, bit: u32) {
        super::unregister(&wake.0, bit)
    }
    /// See [`super::must_wake`].
    pub fn room_must_wake(wake: &WakeWords) -> bool {
        super::must_wake(&wake.0)
    }
    /// See [`super::bump`].
    pub fn room_bump(wake: &WakeWords) {
        super::bump(&wake.0)
    }
}
