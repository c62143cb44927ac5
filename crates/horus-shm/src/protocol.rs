//! The steps of the composed publish/subscribe protocol that involve more
//! than one building block, as small functions the ports call and the loom
//! models (`tests/loom_protocol.rs`) call too, so the models check the code
//! that runs rather than a re-typed copy of it.
//!
//! The building blocks have their own modules: the slot seqlock
//! ([`crate::ring`]), the chunk state word ([`crate::pool`]) and the
//! membership word ([`crate::records`]). What lives here is how they are
//! put together:
//!
//! * the chunk descriptor a ring slot carries;
//! * starting a joining subscriber's cursor (publisher side) and picking it
//!   up (subscriber side);
//! * the room check over the reliable subscribers' cursors;
//! * which ring holds on chunks may be dropped once every reliable
//!   subscriber is past their messages;
//! * how a subscriber drops its pin on a chunk;
//! * the Dekker handshake between a subscriber going to sleep on the futex
//!   and a publisher deciding whether to wake it.
//!
//! Everything is `#[inline]` and uses exactly the atomics the ports used
//! before these steps were moved here.

use crate::pool;
use crate::records::{self, Wake};
use crate::ring::{self, SlotMem};
use crate::sync::{fence, AtomicU32, AtomicU64, Ordering};

/// Slot kind: the payload bytes are in the slot.
pub(crate) const KIND_INLINE: u32 = 0;
/// Slot kind: the slot holds a chunk descriptor.
pub(crate) const KIND_CHUNK: u32 = 1;

/// First descriptor word: generation in the high half, chunk index low.
#[inline]
pub(crate) fn descriptor_word(chunk: u32, gen: u32) -> u64 {
    (u64::from(gen) << 32) | u64::from(chunk)
}

/// The chunk index and generation of a descriptor word (untrusted: the
/// caller bounds-checks the index).
#[inline]
pub(crate) fn split_descriptor(word: u64) -> (usize, u32) {
    ((word & 0xffff_ffff) as usize, (word >> 32) as u32)
}

// ---------------------------------------------------------------- joining

/// Subscriber, before it sets its membership bit: no start on any ring yet
/// (see [`records::CURSOR_JOINING`]), and its observer bit set or cleared.
/// The Relaxed stores are published by the Release of the membership join
/// that follows (`records::join`).
#[inline]
pub(crate) fn prepare_join<'a>(
    cursors: impl IntoIterator<Item = &'a AtomicU64>,
    observers: &AtomicU32,
    j: usize,
    observer: bool,
) {
    for c in cursors {
        c.store(records::CURSOR_NOT_MEMBER, Ordering::Relaxed);
    }
    let bit = records::sub_member(j) as u32;
    if observer {
        observers.fetch_or(bit, Ordering::Relaxed);
    } else {
        observers.fetch_and(!bit, Ordering::Relaxed);
    }
}

/// Subscriber, once its membership bit is set: its cursors become
/// `CURSOR_JOINING`, which publishers may start (see
/// [`records::CURSOR_NOT_MEMBER`] for why not before). The caller then
/// [`records::touch`]es the membership word so cached scans are redone.
#[inline]
pub(crate) fn open_cursors<'a>(cursors: impl IntoIterator<Item = &'a AtomicU64>) {
    for c in cursors {
        // Release, not Relaxed: a publisher may read this value in a scan
        // made with a membership word from before our join (the place's
        // previous owner's bit) and start us with its CAS (Acquire). The
        // Release makes our membership join happen-before everything after
        // that CAS, so the publisher's next load of the membership word
        // shows our bit and it counts our cursor from then on. With a
        // Relaxed store it could still load the word from between the
        // previous owner's leave and our join, see no subscriber here, and
        // overwrite the message it had just started us at (a false overrun;
        // found by the loom model `recycled_place_racing_a_send`). The
        // `touch` that follows only covers publishers that had not read
        // this cursor yet.
        c.store(records::CURSOR_JOINING, Ordering::Release);
    }
}

/// Publisher: the cursor of an active subscriber on our ring, starting it
/// at `next_seq` (the next message we write) if it is still joining;
/// `None` if the place is not a member yet (it does not bound our room).
#[inline]
pub(crate) fn publisher_cursor(cursor: &AtomicU64, next_seq: u64) -> Option<u64> {
    // Acquire pairs with the subscriber's Release store of its cursor after
    // it finished copying the slot, so our overwrite (or the reuse of a
    // chunk it has consumed) cannot tear its read.
    let c = cursor.load(Ordering::Acquire);
    if c == records::CURSOR_NOT_MEMBER {
        return None;
    }
    if c != records::CURSOR_JOINING {
        return Some(c);
    }
    // A new subscriber: its first message on our ring is the next one we
    // write. One CAS (AcqRel: the subscriber's Acquire load of the cursor
    // pairs with it), because only this publisher and no one else starts
    // cursors on this ring; if it fails, the value found is a start a
    // predecessor of ours on this place chose.
    match cursor.compare_exchange(
        records::CURSOR_JOINING,
        next_seq,
        Ordering::AcqRel,
        Ordering::Acquire,
    ) {
        Ok(_) => Some(next_seq),
        Err(records::CURSOR_NOT_MEMBER) => None,
        Err(now) => Some(now),
    }
}

/// Subscriber of a transient-local channel: where its cursor on a ring
/// starts, chosen by itself at join (not by the publisher, which may never
/// send again: a latched topic is often published once). `head` is the
/// ring's last message, `floor` its `history_floor` (0 = none), `latched`
/// the channel's retained history (≤ `depth`).
///
/// The start is the oldest of the last `latched` messages, never before
/// message 1, the oldest slot of the ring or the floor a departed
/// publisher left. Everything from there is read as any message is: a
/// message overwritten (or whose chunk was reused) before the subscriber
/// gets to it is counted as an overrun, never skipped in silence. The
/// caller stores the start with [`start_cursor_at`].
///
/// Saturating arithmetic: `head` and `floor` come from shared memory.
#[inline]
pub(crate) fn latched_start(head: u64, floor: u64, latched: u64, depth: u64) -> u64 {
    let next = head.saturating_add(1);
    next.saturating_sub(latched.min(depth))
        .max(floor)
        .max(1)
        // An honest floor is at most `next` (a departed publisher's next
        // message); a larger one, or a `head` near u64::MAX, is corrupt and
        // must not become one of the "not started" markers.
        .min(next)
        .min(records::CURSOR_NOT_MEMBER - 1)
}

/// Subscriber, once its membership bit is set: starts its cursor on a ring
/// at `start` itself (a transient-local or oldest-first join), instead of
/// leaving it `CURSOR_JOINING` for the publisher. Release, as in
/// [`open_cursors`]: a publisher that reads the start (Acquire) in a scan
/// made with an older membership word then also sees our join.
#[inline]
pub(crate) fn start_cursor_at(cursor: &AtomicU64, start: u64) {
    debug_assert!(!records::is_unstarted(start));
    cursor.store(start, Ordering::Release);
}

/// Subscriber: the start its publisher chose on a ring, or `None` while it
/// has not noticed the join yet (nothing on that ring is ours then).
#[inline]
pub(crate) fn subscriber_start(cursor: &AtomicU64) -> Option<u64> {
    // Acquire pairs with the publisher's CAS that chose our start.
    let c = cursor.load(Ordering::Acquire);
    (!records::is_unstarted(c)).then_some(c)
}

/// Subscriber: our cursor on a ring moves to `next` (the message before it
/// is consumed: copied out, or its chunk pinned).
#[inline(always)]
pub(crate) fn publish_cursor(cursor: &AtomicU64, next: u64) {
    // Release: our copy of the slot (and our pin) is complete before a
    // Reject/Block publisher (Acquire) sees the cursor move past it and
    // overwrites the slot or drops the ring's hold on the chunk.
    cursor.store(next, Ordering::Release);
}

// ------------------------------------------------------------------ room

/// Publisher: for the active subscribers `subs` (of a membership word read
/// with Acquire, so their joins' stores are visible), returns the reliable
/// ones (not in `observers`) and the lowest cursor among them on our ring
/// (`next_seq` if there is none), starting the cursors of joining ones.
#[inline]
pub(crate) fn scan_cursors<'a>(
    mut subs: u32,
    observers: u32,
    next_seq: u64,
    cursor: impl Fn(usize) -> &'a AtomicU64,
) -> (u32, u64) {
    let mut min = u64::MAX;
    let mut reliable = 0;
    while subs != 0 {
        let j = subs.trailing_zeros() as usize;
        subs &= subs - 1;
        // Observers too: their cursors must be started like any other.
        let Some(c) = publisher_cursor(cursor(j), next_seq) else {
            continue;
        };
        if observers & (1 << j) == 0 {
            reliable |= 1 << j;
            min = min.min(c);
        }
    }
    let min_cursor = if min == u64::MAX {
        next_seq
    } else {
        min.min(next_seq)
    };
    (reliable, min_cursor)
}

/// Publisher: whether message `next_seq` can be written into a ring of
/// `depth` slots without overwriting one the slowest reliable subscriber
/// (next to read: `min_cursor`) has not consumed.
#[inline(always)]
pub(crate) fn has_room(next_seq: u64, min_cursor: u64, depth: u64) -> bool {
    // Saturating: `min_cursor` derives from shared memory.
    next_seq < min_cursor.saturating_add(depth)
}

// ------------------------------------------------------- chunk ring holds

/// Publisher: drops the ring's hold on the chunk the committed slot
/// references, if it references one (the slot is about to be overwritten,
/// or its message is consumed). A stale generation is ignored by
/// [`pool::release_ring`].
#[inline]
pub(crate) fn release_slot_hold<'a, S: SlotMem>(
    slot: &S,
    chunk_state: impl Fn(usize) -> Option<&'a AtomicU64>,
) {
    if let Some((KIND_CHUNK, desc, _)) = ring::peek_descriptor(slot) {
        let (c, gen) = split_descriptor(desc);
        if let Some(state) = chunk_state(c) {
            pool::release_ring(state, gen);
        }
    }
}

/// Publisher: the bound below which [`release_consumed`] may drop ring
/// holds: what every reliable subscriber consumed (`min_cursor`), and on a
/// transient-local channel never one of the last `latched` messages (up to
/// `next_seq - 1`), which a subscriber joining later starts with.
#[inline]
pub(crate) fn release_bound(min_cursor: u64, next_seq: u64, latched: u64) -> u64 {
    min_cursor.min(next_seq.saturating_sub(latched))
}

/// Publisher: drops the ring's hold on the chunks of messages below
/// `min_cursor` (consumed by every reliable subscriber), starting at
/// `released_upto`; returns the new `released_upto`. `slot(seq)` is the
/// slot of message `seq` in a ring of `depth` slots.
///
/// A subscriber that joins later starts after our head (on a
/// transient-local channel, at the retained history, which the caller
/// keeps out of `min_cursor` with [`release_bound`]), so it never needs
/// these chunks; one that still holds a sample keeps its own reference bit.
#[inline]
pub(crate) fn release_consumed<'a, S: SlotMem>(
    released_upto: u64,
    min_cursor: u64,
    depth: u64,
    slot: impl Fn(u64) -> S,
    chunk_state: impl Fn(usize) -> Option<&'a AtomicU64>,
) -> u64 {
    // Only the last `depth` messages can still hold a ring reference
    // (writing a slot releases the hold of the message it overwrites), so
    // never walk further back than one ring: after a long stretch with 0–1
    // subscribers, `released_upto` can be 10⁸ messages behind, and catching
    // up one by one stalled the first loan afterwards.
    let mut seq = released_upto.max(min_cursor.saturating_sub(depth));
    while seq < min_cursor {
        let s = slot(seq);
        // The slot may already hold a later message (it was overwritten,
        // which released this one's hold): leave that one alone.
        if ring::committed_seq(&s) == Some(seq) {
            release_slot_hold(&s, &chunk_state);
        }
        seq += 1;
    }
    seq
}

/// Subscriber place `j`: drops its pin on a chunk. If it is the only
/// reliable subscriber, nobody else still needs this message, so it drops
/// the ring's hold too and the publisher reuses the chunk while it is hot.
/// Observers do not count: the publisher owes them nothing (one that has
/// not read it yet finds the generation gone and counts an overrun).
///
/// On a transient-local channel (`latched`) a subscriber that joins later
/// may still need the message, so only the pin is dropped: the ring's hold
/// is the publisher's to drop, once the message is out of the retained
/// history ([`release_consumed`] with the history as a bound).
#[inline]
pub(crate) fn release_pinned(
    state: &AtomicU64,
    j: usize,
    membership: &AtomicU64,
    wake: &Wake,
    latched: bool,
) {
    if latched {
        pool::release(state, j);
        return;
    }
    // A Relaxed snapshot suffices. Reliable subscribers that joined before
    // us are in it (our own join was an RMW on this word, and coherence
    // forbids reading an older value after it). One that joins later starts
    // at a sequence number its publisher picks when it notices the join
    // (`CURSOR_JOINING`), which is past this message, already sent: it
    // never needs this chunk.
    let m = membership.load(Ordering::Relaxed);
    let observers = u64::from(wake.observers.load(Ordering::Relaxed));
    if u64::from(records::subs_of(m)) & !observers == 1 << j {
        pool::release_last_reader(state, j);
    } else {
        pool::release(state, j);
    }
}

// ------------------------------------------------------------ wake-ups

/// Subscriber, before checking for a message it may then sleep for: the
/// futex word's value to sleep on. Any wake-up after this changes it, so
/// the futex wait returns at once instead of sleeping through it.
#[inline]
pub(crate) fn wait_token(wake: &Wake) -> u32 {
    wake.notify.load(Ordering::Acquire)
}

/// Subscriber: announces it is about to sleep (`bit` in `waiting`); the
/// caller then re-checks for a message and only sleeps if there is none.
///
/// Dekker's pattern with [`must_wake`]: we store our bit, then load the slot
/// stamp; the publisher stores the stamp, then loads `waiting`. Each side
/// needs a SeqCst fence between its store and its load — an RMW alone does
/// not order our later (non-SeqCst) stamp load — so that either it sees our
/// bit and wakes us, or our re-check sees its message. A bit, not a count:
/// if we die here, the reclaimer clears exactly it.
#[inline]
pub(crate) fn register_wait(wake: &Wake, bit: u64) {
    wake.waiting.fetch_or(bit, Ordering::Relaxed);
    fence(Ordering::SeqCst);
}

/// Subscriber: done waiting (woken, timed out, or found a message).
#[inline]
pub(crate) fn unregister_wait(wake: &Wake, bit: u64) {
    wake.waiting.fetch_and(!bit, Ordering::Relaxed);
}

/// Publisher, after storing a slot's stamp: whether a subscriber may be
/// asleep (or about to be) and must be woken. Costs one load while no
/// blocking subscriber is registered.
///
/// The other half of [`register_wait`]'s Dekker pattern: stamp store,
/// SeqCst fence, load `waiting`. The two fences are totally ordered, so
/// either we see the subscriber's bit, or its re-check sees our message. A
/// subscriber registering as blocking runs a global membarrier, so a
/// publisher that read `blocking == 0` (and skipped the fence) has its slot
/// write visible to it.
#[inline]
pub(crate) fn must_wake(wake: &Wake) -> bool {
    if wake.blocking.load(Ordering::Relaxed) == 0 {
        return false;
    }
    fence(Ordering::SeqCst);
    wake.waiting.load(Ordering::Relaxed) != 0
}

/// Publisher: changes the futex word before waking its sleepers, so a
/// subscriber that read the old value and has not slept yet does not.
#[inline]
pub(crate) fn bump_notify(wake: &Wake) {
    wake.notify.fetch_add(1, Ordering::Release);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn latched_start_is_the_last_n_never_before_the_floor_or_message_1() {
        assert_eq!(latched_start(10, 0, 3, 8), 8);
        assert_eq!(latched_start(2, 0, 4, 8), 1, "fewer published than kept");
        assert_eq!(latched_start(0, 0, 4, 8), 1, "nothing published");
        assert_eq!(latched_start(10, 11, 3, 8), 11, "the publisher left at 10");
        assert_eq!(latched_start(20, 11, 3, 8), 18, "a new publisher since");
        assert_eq!(latched_start(10, 0, 64, 8), 3, "never more than a ring");
    }

    /// Regression: a hostile `head` or `history_floor` near u64::MAX made
    /// the start one of the "not started" cursor markers.
    #[test]
    fn hostile_head_or_floor_never_makes_a_start_marker() {
        for (head, floor) in [
            (u64::MAX, 0),
            (u64::MAX - 1, 0),
            (5, u64::MAX),
            (u64::MAX, u64::MAX),
        ] {
            let s = latched_start(head, floor, 3, 8);
            assert!(!records::is_unstarted(s), "head {head} floor {floor}: {s}");
            assert!(s <= head.saturating_add(1));
        }
    }
}

/// Public wrappers for the loom model tests (`tests/loom_protocol.rs`).
#[cfg(loom)]
pub(crate) mod model {
    use crate::records;
    use crate::ring::heap::HeapSlotForTests;
    use crate::ring::{ReadOutcome, SlotMem};
    use crate::sync::{AtomicU32, AtomicU64};

    /// A cursor no publisher has started yet.
    pub const CURSOR_JOINING: u64 = records::CURSOR_JOINING;

    /// A borrowed heap slot, so `release_consumed` can be handed slots the
    /// model owns.
    struct SlotRef<'s>(&'s HeapSlotForTests);

    impl SlotMem for SlotRef<'_> {
        fn stamp(&self) -> &AtomicU64 {
            self.0.stamp()
        }
        fn meta(&self) -> &AtomicU64 {
            self.0.meta()
        }
        unsafe fn word(&self, i: usize) -> &AtomicU64 {
            // SAFETY: our caller guarantees i < capacity_words, which is
            // the inner slot's.
            unsafe { self.0.word(i) }
        }
        fn capacity_words(&self) -> usize {
            self.0.capacity_words()
        }
    }

    /// Slot kind of a chunk descriptor.
    pub const KIND_CHUNK: u32 = super::KIND_CHUNK;

    /// The channel's wake words and observer set.
    pub struct WakeWords(pub(crate) records::Wake);

    impl WakeWords {
        /// All sets empty; `blocking` holds the places registered for
        /// wake-ups (the model's stand-in for a registration whose global
        /// barrier has run).
        pub fn new(blocking: u32) -> Self {
            WakeWords(records::Wake {
                notify: AtomicU32::new(0),
                blocking: AtomicU32::new(blocking),
                waiting: AtomicU64::new(0),
                observers: AtomicU32::new(0),
                room: AtomicU32::new(0),
                room_blocking: AtomicU32::new(0),
                room_waiting: AtomicU32::new(0),
            })
        }
        /// The futex word.
        pub fn notify(&self) -> &AtomicU32 {
            &self.0.notify
        }
        /// The `waiting` set.
        pub fn waiting(&self) -> &AtomicU64 {
            &self.0.waiting
        }
        /// The observer set.
        pub fn observers(&self) -> &AtomicU32 {
            &self.0.observers
        }
    }

    /// Membership bit of subscriber place `j`.
    pub fn sub_member(j: usize) -> u64 {
        records::sub_member(j)
    }
    /// Active subscriber places of a membership word.
    pub fn subs_of(m: u64) -> u32 {
        records::subs_of(m)
    }
    /// See `records::join`.
    pub fn join(membership: &AtomicU64, bit: u64) -> bool {
        records::join(membership, bit)
    }
    /// See `records::leave`.
    pub fn leave(membership: &AtomicU64, bit: u64) -> u64 {
        records::leave(membership, bit)
    }
    /// The `waiting` bit of place `j`'s port wait.
    pub fn port_wait_bit(j: usize) -> u64 {
        records::port_wait_bit(j)
    }

    /// See [`super::descriptor_word`].
    pub fn descriptor_word(chunk: u32, gen: u32) -> u64 {
        super::descriptor_word(chunk, gen)
    }
    /// See [`super::split_descriptor`].
    pub fn split_descriptor(word: u64) -> (usize, u32) {
        super::split_descriptor(word)
    }
    /// See [`super::prepare_join`].
    pub fn prepare_join<'a>(
        cursors: impl IntoIterator<Item = &'a AtomicU64>,
        wake: &WakeWords,
        j: usize,
        observer: bool,
    ) {
        super::prepare_join(cursors, &wake.0.observers, j, observer)
    }
    /// See [`super::open_cursors`].
    pub fn open_cursors<'a>(cursors: impl IntoIterator<Item = &'a AtomicU64>) {
        super::open_cursors(cursors)
    }
    /// See `records::touch`.
    pub fn touch(membership: &AtomicU64) {
        records::touch(membership)
    }
    /// See [`super::subscriber_start`].
    pub fn subscriber_start(cursor: &AtomicU64) -> Option<u64> {
        super::subscriber_start(cursor)
    }
    /// See [`super::publish_cursor`].
    pub fn publish_cursor(cursor: &AtomicU64, next: u64) {
        super::publish_cursor(cursor, next)
    }
    /// See [`super::scan_cursors`].
    pub fn scan_cursors<'a>(
        subs: u32,
        observers: u32,
        next_seq: u64,
        cursor: impl Fn(usize) -> &'a AtomicU64,
    ) -> (u32, u64) {
        super::scan_cursors(subs, observers, next_seq, cursor)
    }
    /// See [`super::has_room`].
    pub fn has_room(next_seq: u64, min_cursor: u64, depth: u64) -> bool {
        super::has_room(next_seq, min_cursor, depth)
    }
    /// See [`super::release_slot_hold`].
    pub fn release_slot_hold<'a>(
        slot: &HeapSlotForTests,
        chunk_state: impl Fn(usize) -> Option<&'a AtomicU64>,
    ) {
        super::release_slot_hold(slot, chunk_state)
    }
    /// See [`super::release_consumed`]; `slot(seq)` is message `seq`'s slot.
    pub fn release_consumed<'a, 's>(
        released_upto: u64,
        min_cursor: u64,
        depth: u64,
        slot: impl Fn(u64) -> &'s HeapSlotForTests,
        chunk_state: impl Fn(usize) -> Option<&'a AtomicU64>,
    ) -> u64 {
        super::release_consumed(
            released_upto,
            min_cursor,
            depth,
            |seq| SlotRef(slot(seq)),
            chunk_state,
        )
    }
    /// See [`super::release_pinned`].
    pub fn release_pinned(state: &AtomicU64, j: usize, membership: &AtomicU64, wake: &WakeWords) {
        super::release_pinned(state, j, membership, &wake.0, false)
    }
    /// See [`super::release_pinned`], on a transient-local channel.
    pub fn release_pinned_latched(
        state: &AtomicU64,
        j: usize,
        membership: &AtomicU64,
        wake: &WakeWords,
    ) {
        super::release_pinned(state, j, membership, &wake.0, true)
    }
    /// See [`super::latched_start`].
    pub fn latched_start(head: u64, floor: u64, latched: u64, depth: u64) -> u64 {
        super::latched_start(head, floor, latched, depth)
    }
    /// See [`super::start_cursor_at`].
    pub fn start_cursor_at(cursor: &AtomicU64, start: u64) {
        super::start_cursor_at(cursor, start)
    }
    /// See [`super::release_bound`].
    pub fn release_bound(min_cursor: u64, next_seq: u64, latched: u64) -> u64 {
        super::release_bound(min_cursor, next_seq, latched)
    }
    /// Writes message `seq` of kind `kind` into `slot` (`ring::write`).
    pub fn write_slot(slot: &HeapSlotForTests, seq: u64, kind: u32, payload: &[u8]) {
        crate::ring::write(slot, seq, kind, payload)
    }
    /// Reads message `seq` from `slot` (`ring::read`): `Ok((len, kind))`
    /// when intact, otherwise the outcome's name (`"not-ready"`,
    /// `"lapped"`, `"torn"`, `"malformed"`).
    pub fn read_slot(
        slot: &HeapSlotForTests,
        seq: u64,
        out: &mut [u64],
    ) -> Result<(usize, u32), &'static str> {
        match crate::ring::read(slot, seq, out) {
            ReadOutcome::Ready { len, kind } => Ok((len, kind)),
            ReadOutcome::NotReady { .. } => Err("not-ready"),
            ReadOutcome::Lapped { .. } => Err("lapped"),
            ReadOutcome::Torn => Err("torn"),
            ReadOutcome::Malformed => Err("malformed"),
        }
    }
    /// See [`super::wait_token`].
    pub fn wait_token(wake: &WakeWords) -> u32 {
        super::wait_token(&wake.0)
    }
    /// See [`super::register_wait`].
    pub fn register_wait(wake: &WakeWords, bit: u64) {
        super::register_wait(&wake.0, bit)
    }
    /// See [`super::unregister_wait`].
    pub fn unregister_wait(wake: &WakeWords, bit: u64) {
        super::unregister_wait(&wake.0, bit)
    }
    /// See [`super::must_wake`].
    pub fn must_wake(wake: &WakeWords) -> bool {
        super::must_wake(&wake.0)
    }
    /// See [`super::bump_notify`].
    pub fn bump_notify(wake: &WakeWords) {
        super::bump_notify(&wake.0)
    }
}
