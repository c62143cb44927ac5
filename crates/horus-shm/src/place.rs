//! Places and the membership word: the ownership protocol every shared-memory
//! structure of horus uses (topic channels, service tables).
//!
//! A *place* is a record owned by one process at a time. Its `owner` word is
//! one of:
//!
//! * `0` — free; claimed with one CAS to the claimer's [`ProcessId`] token;
//! * a token (bit 63 clear: a pid never reaches 2^31) — owned by that process;
//! * [`RECLAIMING`]` | token` — the owner died and the process `token` is
//!   cleaning the place up.
//!
//! Whoever notices a dead owner CASes the word from the dead token to its own
//! reclaiming word, so exactly one process cleans the place. The reclaimer
//! names itself in the word so that its own death is survivable: a place
//! whose reclaimer died is [`Owner::Dead`] again, and the next process to look
//! takes the cleanup over with the same CAS (from the dead reclaimer's word).
//! Every cleanup step must therefore be idempotent — a step may run twice,
//! once by the dead reclaimer before it died and once by its successor —
//! which the channel's (membership bit, chunk references, wake bits) and the
//! service table's (membership bit, generation, response channel name) are.
//! A word `u64::MAX`, what reclaimers wrote before they named themselves,
//! reads as a reclaimer that died (pid `0x7fff_ffff` never runs).
//!
//! A *live* reclaimer that never finishes (stopped, or a hostile process that
//! wrote a reclaiming word naming itself) keeps the place [`Owner::Busy`] for
//! as long as it lives: its place stays out of use, and a caller that needs
//! that very place must give up with an error after a bounded wait.
//!
//! The *membership word* publishes which places are active (one bit each,
//! in bits 0..48, the structure chooses which bit is whose), counts joins and
//! leaves in bits 48..63 (an epoch, so a reader that caches the word notices
//! an endpoint that came and went) and carries [`CLOSING`], set by the last
//! member out before it unlinks the segment: a place can only become active
//! while `CLOSING` is clear, so nobody joins a segment that is being removed.
//!
//! [`ProcessId`]: crate::ProcessId

#[cfg(not(loom))]
use crate::process::ProcessId;
use crate::sync::{AtomicU64, Ordering};

/// Bit set in an owner word while its place is being reclaimed; the other
/// bits are the reclaimer's token.
pub const RECLAIMING: u64 = 1 << 63;
/// Set in the membership word once the segment is being unlinked.
pub const CLOSING: u64 = 1 << 63;
/// Bits 48..63 of the membership word count joins and leaves.
const EPOCH_SHIFT: u32 = 48;
const EPOCH_MASK: u64 = 0x7fff << EPOCH_SHIFT;
/// The place bits of the membership word.
pub const PLACES: u64 = (1 << EPOCH_SHIFT) - 1;

/// The owner word of a place being reclaimed by the process `token`.
pub fn reclaiming(token: u64) -> u64 {
    RECLAIMING | token
}

/// What an owner word says about its place.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Owner {
    /// Nobody owns it.
    Free,
    /// A live process owns it.
    Alive,
    /// A live process is reclaiming it.
    Busy,
    /// Its owner died, or its reclaimer died before finishing: the word
    /// (to CAS from with [`try_begin_reclaim`]).
    Dead(u64),
}

/// Classifies an owner word, deciding liveness of a token with `alive`.
pub fn classify_with(word: u64, alive: impl Fn(u64) -> bool) -> Owner {
    match word {
        0 => Owner::Free,
        w if w & RECLAIMING != 0 => {
            if alive(w & !RECLAIMING) {
                Owner::Busy
            } else {
                Owner::Dead(w)
            }
        }
        t if alive(t) => Owner::Alive,
        t => Owner::Dead(t),
    }
}

/// Classifies an owner word (liveness by pid and start time, reading
/// `/proc`: not for hot paths).
#[cfg(not(loom))]
pub fn classify(word: u64) -> Owner {
    classify_with(word, |t| ProcessId::from_token(t).is_alive())
}

/// Tries to claim a free place for the process `me`: CAS `owner` 0 → `me`.
pub fn try_claim_as(owner: &AtomicU64, me: u64) -> bool {
    // Acquire: the previous owner's (or reclaimer's) writes to the record,
    // released by its store of 0, are visible before we reinitialise it.
    owner
        .compare_exchange(0, me, Ordering::Acquire, Ordering::Relaxed)
        .is_ok()
}

/// Tries to claim a free place for this process.
#[cfg(not(loom))]
pub fn try_claim(owner: &AtomicU64) -> bool {
    try_claim_as(owner, ProcessId::current().token())
}

/// Tries to take a dead place for cleanup by the process `me`: CAS `owner`
/// from `seen` (an [`Owner::Dead`] word: a dead owner's token, or a dead
/// reclaimer's word) to `me`'s reclaiming word. The winner runs the cleanup
/// and ends it with [`free`].
pub fn try_begin_reclaim_as(owner: &AtomicU64, seen: u64, me: u64) -> bool {
    // Acquire: what the dead owner (or dead reclaimer) wrote to the record
    // before it died is visible to the cleanup.
    owner
        .compare_exchange(seen, reclaiming(me), Ordering::Acquire, Ordering::Relaxed)
        .is_ok()
}

/// Tries to take a dead place for cleanup by this process.
#[cfg(not(loom))]
pub fn try_begin_reclaim(owner: &AtomicU64, seen: u64) -> bool {
    try_begin_reclaim_as(owner, seen, ProcessId::current().token())
}

/// Reclaims the place if its owner (or its reclaimer) is dead: takes it for
/// cleanup by `me`, runs `cleanup` (which must be idempotent: a reclaimer
/// before us may have died after any of its steps) and frees it. Returns
/// whether this call reclaimed it.
pub fn reclaim_if_dead_with(
    owner: &AtomicU64,
    me: u64,
    alive: impl Fn(u64) -> bool,
    cleanup: impl FnOnce(),
) -> bool {
    let Owner::Dead(seen) = classify_with(owner.load(Ordering::Acquire), alive) else {
        return false;
    };
    if !try_begin_reclaim_as(owner, seen, me) {
        return false;
    }
    cleanup();
    free(owner);
    true
}

/// [`reclaim_if_dead_with`] for this process, liveness from `/proc`.
#[cfg(not(loom))]
pub fn reclaim_if_dead(owner: &AtomicU64, cleanup: impl FnOnce()) -> bool {
    reclaim_if_dead_with(
        owner,
        ProcessId::current().token(),
        |t| ProcessId::from_token(t).is_alive(),
        cleanup,
    )
}

/// What one [`try_take_with`] did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Take {
    /// The owner word is now `me`.
    Taken,
    /// A live process (its token) is reclaiming the place: wait, or give up.
    Busy(u64),
    /// The word changed under us, or we just reclaimed a dead owner's
    /// place: look again.
    Again,
}

/// One step of taking a place this process already has the right to (given
/// by something else it holds exclusively, such as the channel place that
/// goes with it): a free word, or one naming a live process (hostile, or a
/// forked parent's leftover: the place is ours, whoever it names), becomes
/// `me` with a CAS; a dead owner's (or dead reclaimer's) place is reclaimed
/// first with `cleanup`, as in [`reclaim_if_dead_with`]; a live reclaimer
/// is left alone ([`Take::Busy`]). The caller loops on [`Take::Again`] and
/// bounds its wait on [`Take::Busy`]: it never goes on without the word.
pub fn try_take_with(
    owner: &AtomicU64,
    me: u64,
    alive: impl Fn(u64) -> bool,
    cleanup: impl FnOnce(),
) -> Take {
    let p = owner.load(Ordering::Acquire);
    match classify_with(p, alive) {
        Owner::Free | Owner::Alive => {
            // A CAS, not a store: a reclaimer that read a dead owner's token
            // then fails its own CAS and leaves our record alone. AcqRel:
            // Acquire as in `try_claim_as`; Release orders nothing we wrote
            // before but is harmless.
            match owner.compare_exchange(p, me, Ordering::AcqRel, Ordering::Relaxed) {
                Ok(_) => Take::Taken,
                Err(_) => Take::Again,
            }
        }
        Owner::Dead(seen) => {
            if try_begin_reclaim_as(owner, seen, me) {
                cleanup();
                free(owner);
            }
            Take::Again
        }
        Owner::Busy => Take::Busy(p & !RECLAIMING),
    }
}

/// [`try_take_with`] for this process, liveness from `/proc`.
#[cfg(not(loom))]
pub fn try_take(owner: &AtomicU64, cleanup: impl FnOnce()) -> Take {
    try_take_with(
        owner,
        ProcessId::current().token(),
        |t| ProcessId::from_token(t).is_alive(),
        cleanup,
    )
}

/// [`try_take`] until the place is ours, waiting while a live process
/// reclaims it — but not past `deadline`: `Err(token)` names the process
/// that still held it then (a stopped or hostile reclaimer; a word that kept
/// changing under us names its last value). Waits with the kit's strategies:
/// a few [`Yield`](crate::wait::Yield)s, then [`Futex`](crate::wait::Futex)
/// sleeps of at most [`TAKE_POLL`] on a private word: nobody wakes a place's
/// waiters (a reclaim is a handful of stores), so the sleep ends at its tick
/// and the word is looked at again.
#[cfg(not(loom))]
pub fn take_waiting(
    owner: &AtomicU64,
    cleanup: impl FnMut(),
    deadline: std::time::Instant,
) -> Result<(), u64> {
    use crate::wait::{Futex, WaitStrategy, Yield};
    let mut w = TakeWait {
        owner,
        cleanup,
        last: 0,
        never_woken: crate::sync::AtomicU32::new(0),
    };
    let taken = Yield { polls: 64 }
        .wait(&mut w, Some(deadline))
        .or_else(|| Futex.wait(&mut w, Some(deadline)));
    taken.ok_or(w.last)
}

/// Longest sleep of [`take_waiting`] between two looks at the word.
#[cfg(not(loom))]
pub const TAKE_POLL: std::time::Duration = std::time::Duration::from_millis(1);

/// [`take_waiting`] as a [`Waitable`](crate::wait::Waitable).
#[cfg(not(loom))]
struct TakeWait<'a, F> {
    owner: &'a AtomicU64,
    cleanup: F,
    /// The holder's token at the last look.
    last: u64,
    /// What the futex strategy sleeps on; nobody changes it.
    never_woken: crate::sync::AtomicU32,
}

#[cfg(not(loom))]
impl<F: FnMut()> crate::wait::Waitable for TakeWait<'_, F> {
    type Ready = ();

    fn poll(&mut self) -> Option<()> {
        // `Again` after our own reclaim (or a lost CAS) is looked at again at
        // once, a few times, before this poll counts as not ready.
        for _ in 0..4 {
            match try_take(self.owner, &mut self.cleanup) {
                Take::Taken => return Some(()),
                Take::Busy(holder) => {
                    self.last = holder;
                    return None;
                }
                Take::Again => self.last = self.owner.load(Ordering::Relaxed) & !RECLAIMING,
            }
        }
        None
    }

    fn word(&self) -> &crate::sync::AtomicU32 {
        &self.never_woken
    }

    fn announce(&self) {}

    fn withdraw(&self) {}

    fn tick_every(&self) -> Option<std::time::Duration> {
        Some(TAKE_POLL)
    }
}

/// Releases a place (after cleanup, or by its owner when it leaves).
pub fn free(owner: &AtomicU64) {
    // Release: everything we wrote to the record happens before the next
    // claimer's Acquire CAS.
    owner.store(0, Ordering::Release);
}

fn bump_epoch(m: u64) -> u64 {
    // Wrapping: the word may hold any value a corrupt peer wrote (CLOSING
    // and a full epoch would overflow a plain add); only the epoch bits
    // take the carry.
    (m & !EPOCH_MASK) | (m.wrapping_add(1 << EPOCH_SHIFT) & EPOCH_MASK)
}

/// Sets `bit` (a place bit) in the membership word unless the segment is
/// closing. Returns whether it did.
pub fn join(membership: &AtomicU64, bit: u64) -> bool {
    let mut m = membership.load(Ordering::Relaxed);
    loop {
        if m & CLOSING != 0 {
            return false;
        }
        // AcqRel: Release publishes the record initialisation that precedes
        // the join to anyone who sees the bit; Acquire orders our later
        // reads after earlier leavers.
        match membership.compare_exchange_weak(
            m,
            bump_epoch(m | bit),
            Ordering::AcqRel,
            Ordering::Relaxed,
        ) {
            Ok(_) => return true,
            Err(now) => m = now,
        }
    }
}

/// Bumps the epoch without changing any place bit, so that readers that
/// cache the membership word look at the places again.
pub fn touch(membership: &AtomicU64) {
    let mut m = membership.load(Ordering::Relaxed);
    loop {
        // AcqRel as in `join`: Release publishes the stores made before.
        match membership.compare_exchange_weak(
            m,
            bump_epoch(m),
            Ordering::AcqRel,
            Ordering::Relaxed,
        ) {
            Ok(_) => return,
            Err(now) => m = now,
        }
    }
}

/// Clears `bit`; returns the place bits that remain. Idempotent.
pub fn leave(membership: &AtomicU64, bit: u64) -> u64 {
    let mut m = membership.load(Ordering::Relaxed);
    loop {
        // AcqRel as in `join`.
        match membership.compare_exchange_weak(
            m,
            bump_epoch(m & !bit),
            Ordering::AcqRel,
            Ordering::Relaxed,
        ) {
            Ok(_) => return m & !bit & PLACES,
            Err(now) => m = now,
        }
    }
}

/// Marks the segment as closing if nobody is a member. The caller that
/// succeeds unlinks the segment.
pub fn try_close(membership: &AtomicU64) -> bool {
    let m = membership.load(Ordering::Relaxed);
    m & (PLACES | CLOSING) == 0
        && membership
            .compare_exchange(m, m | CLOSING, Ordering::AcqRel, Ordering::Relaxed)
            .is_ok()
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    /// Regression: the epoch increment overflowed (a panic in debug builds)
    /// on a word with `CLOSING` set and a full epoch, which a corrupt peer
    /// can write.
    #[test]
    fn epoch_wraps_without_touching_other_bits() {
        let m = CLOSING | EPOCH_MASK | 0b101;
        let bumped = bump_epoch(m);
        assert_eq!(bumped & !EPOCH_MASK, m & !EPOCH_MASK);
        assert_eq!(bumped & EPOCH_MASK, 0);
        assert_eq!(bump_epoch(u64::MAX) & !EPOCH_MASK, !EPOCH_MASK);
    }

    /// Regression (issue 22): a reclaimer killed right after its CAS to the
    /// reclaiming marker left the place unreclaimable for good (the marker
    /// was one constant, read as "someone is at it" forever).
    #[test]
    fn a_dead_reclaimers_place_is_taken_over() {
        let me = ProcessId::current().token();
        let dead_owner = ProcessId {
            pid: 0x7fff_fff0,
            start_time: 1,
        }
        .token();
        let word = AtomicU64::new(dead_owner);
        assert_eq!(classify(dead_owner), Owner::Dead(dead_owner));
        // The first reclaimer (a dead process) took it and died.
        let dead_reclaimer = reclaiming(dead_owner);
        word.store(dead_reclaimer, Ordering::Relaxed);
        assert_eq!(classify(dead_reclaimer), Owner::Dead(dead_reclaimer));
        assert!(try_begin_reclaim(&word, dead_reclaimer));
        // Now ours: others see a live reclaimer.
        assert_eq!(classify(word.load(Ordering::Relaxed)), Owner::Busy);
        assert!(!try_begin_reclaim(&word, dead_reclaimer));
        free(&word);
        assert!(try_claim(&word));
        assert_eq!(word.load(Ordering::Relaxed), me);
        // What older reclaimers wrote reads as a dead reclaimer too.
        assert_eq!(classify(u64::MAX), Owner::Dead(u64::MAX));
    }
}
