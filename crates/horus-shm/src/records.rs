//! Participant records and the membership word.
//!
//! Every publisher and subscriber holds one *place* in the channel: a record
//! whose `owner` word is the owning process's packed [`ProcessId`] token
//! (0 = free). Claiming a place is one CAS on `owner`; a place whose owner
//! is dead is reclaimed by whoever notices (see [`crate::place`]: the
//! owner-word and membership-word protocol, shared with the service table).
//!
//! The channel's membership word has subscriber places in bits 0..32 and
//! publisher places in bits 32..48.

#[cfg(not(loom))]
pub(crate) use crate::place::{classify, try_begin_reclaim, try_claim, Owner};
pub(crate) use crate::place::{free, join, leave, touch, try_close};
use crate::sync::{AtomicU32, AtomicU64};

/// A subscriber cursor that no publisher has started yet.
///
/// A joining subscriber stores this in each of its cursors *before* it sets
/// its membership bit. The publisher of each ring, the first time it sees
/// the new bit (it checks the membership word before every send), replaces
/// it with the sequence number it is about to write — one CAS, so exactly
/// one start is chosen, by the only party that knows which messages are
/// still to come. That makes "joined" mean "noticed by the publisher": the
/// subscriber never counts as lost a message published before that, and a
/// `Reject`/`Block` publisher never waits on it for one. Until then the
/// subscriber has nothing to read on that ring (messages published before
/// the notice are not its).
pub(crate) const CURSOR_JOINING: u64 = u64::MAX;

/// A subscriber cursor whose place is being claimed but is not a member yet.
///
/// The claimer stores this *before* it sets its membership bit, and replaces
/// it with [`CURSOR_JOINING`] only *after*. A publisher scans the cursors of
/// the places in a membership word it loaded earlier; in between, the
/// place's old owner may have left and a new one claimed it. Were the new
/// owner's cursor already `CURSOR_JOINING`, that stale scan would start it
/// (at the publisher's position then) and, its membership word then showing
/// no subscriber there, run ahead of it: the new subscriber joined to find
/// its start overwritten and counted thousands of overruns that were not
/// its. A publisher skips a place whose cursor reads `CURSOR_NOT_MEMBER`; a
/// `CURSOR_JOINING` it reads belongs to an owner that has joined.
pub(crate) const CURSOR_NOT_MEMBER: u64 = u64::MAX - 1;

/// Whether a cursor value is one of the two "not started" markers.
#[inline(always)]
pub(crate) fn is_unstarted(cursor: u64) -> bool {
    cursor >= CURSOR_NOT_MEMBER
}

/// Membership bit of subscriber place `j`.
pub(crate) fn sub_member(j: usize) -> u64 {
    1 << j
}

/// Membership bit of publisher place `k`.
pub(crate) fn pub_member(k: usize) -> u64 {
    1 << (32 + k)
}

/// Active subscriber places in a membership word.
pub(crate) fn subs_of(m: u64) -> u32 {
    m as u32
}

/// Active publisher places in a membership word.
pub(crate) fn pubs_of(m: u64) -> u32 {
    ((m >> 32) & 0xffff) as u32
}

/// A publisher's record: two cache lines, the first written at claim time,
/// the second by the owner on every send (read by others only for stats and
/// when joining).
#[repr(C)]
pub(crate) struct PubRecord {
    pub(crate) owner: AtomicU64,
    pub(crate) claims: AtomicU64,
    _pad0: [u64; 6],
    /// Sequence number of the last committed message (0 = none).
    pub(crate) head: AtomicU64,
    pub(crate) sent: AtomicU64,
    pub(crate) rejected: AtomicU64,
    pub(crate) timed_out: AtomicU64,
    pub(crate) loan_failures: AtomicU64,
    pub(crate) undelivered: AtomicU64,
    /// Payload bytes of every message sent (for `topic bw`), wrapping.
    pub(crate) bytes_sent: AtomicU64,
    /// Sequence number of the first message of this place's ring that is
    /// latched history: its publisher leaving (or found dead) sets it past
    /// its last message, so a subscriber joining later gets none of a
    /// departed publisher's history (0 = no floor; see
    /// `protocol::latched_start`).
    pub(crate) history_floor: AtomicU64,
}

/// The fixed part of a subscriber's record; one cursor word per publisher
/// place follows it.
#[repr(C)]
pub(crate) struct SubRecord {
    pub(crate) owner: AtomicU64,
    pub(crate) claims: AtomicU64,
    _reserved: u32,
    _pad0: u32,
    pub(crate) received: AtomicU64,
    /// Messages overwritten before this subscriber read them.
    pub(crate) overrun: AtomicU64,
    /// Messages passed over by `latest()`.
    pub(crate) skipped: AtomicU64,
    /// Slots or descriptors that failed validation.
    pub(crate) malformed: AtomicU64,
    _pad1: u64,
}

// (Not under loom, whose atomics are larger: there only the membership and
// wake words are used, by the protocol models.)
#[cfg(not(loom))]
const _: () = assert!(std::mem::size_of::<PubRecord>() == crate::layout::PUB_RECORD_SIZE);
#[cfg(not(loom))]
const _: () = assert!(std::mem::size_of::<SubRecord>() == crate::layout::SUB_RECORD_HEAD);

/// The wake words, and the observer set.
///
/// Every set here is a bitmask over subscriber places rather than a count:
/// setting and clearing a bit is idempotent, so a process killed between
/// two steps of a wait leaves a bit that the reclaimer clears exactly (a
/// count would be left one too high or too low for ever).
#[repr(C)]
pub(crate) struct Wake {
    /// Futex word: bumped by a publisher that wakes sleepers.
    pub(crate) notify: AtomicU32,
    /// Bit `j`: place `j` registered for futex wake-ups. While 0,
    /// publishers skip the wake path entirely.
    pub(crate) blocking: AtomicU32,
    /// Bit `j`: the port of place `j` is inside (or about to enter) a futex
    /// wait; bit `32 + j`: a readiness wait (`wait_pending`) of place `j`,
    /// which may run on another thread at the same time.
    pub(crate) waiting: AtomicU64,
    /// Bit `j`: place `j` is an observer (never back-pressures; see
    /// `SubscriberPort::join`).
    pub(crate) observers: AtomicU32,
    /// Futex word a `Block` publisher waiting for room sleeps on: bumped by
    /// a subscriber that moved a cursor (or left) while one waits (see
    /// `crate::room`).
    pub(crate) room: AtomicU32,
    /// Bit `k`: publisher place `k` registered for room wake-ups (its
    /// registration's global barrier ran). While 0, a subscriber's
    /// advance costs this one load and nothing else.
    pub(crate) room_blocking: AtomicU32,
    /// Bit `k`: publisher place `k` is inside (or about to enter) a futex
    /// wait for room.
    pub(crate) room_waiting: AtomicU32,
}

#[cfg(not(loom))]
const _: () = assert!(std::mem::size_of::<Wake>() <= 64);

/// The `waiting` bit of place `j`'s port wait.
pub(crate) fn port_wait_bit(j: usize) -> u64 {
    1 << j
}

/// The `room_blocking` / `room_waiting` bit of publisher place `k`.
pub(crate) fn room_wait_bit(k: usize) -> u32 {
    1 << k
}

/// The `waiting` bit of place `j`'s readiness wait.
pub(crate) fn pending_wait_bit(j: usize) -> u64 {
    1 << (32 + j)
}
