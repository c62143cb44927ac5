//! Call slots of request/response services: the claim word.
//!
//! A client with calls in flight has one claim word per call slot (`id &
//! (depth - 1)`). Servers race to take a call by CAS-ing its word from
//! "unclaimed" to "claimed by me", and the client withdraws a call (timed
//! out, dropped, or found unserviceable) with a CAS from "unclaimed" to
//! "cancelled": exactly one of them wins the word, so a call is answered by
//! at most one server, and a withdrawn call by none. The liveness of the
//! server that claimed a call is then read from its place (`crate::place`
//! owner word and a generation that moves on whenever the place changes
//! hands), which is how a client learns that its server died.
//!
//! The word is `id << 20 | (server generation & 0x3fff) << 6 | tag`, where
//! `tag` is `server + 1` (1..=32) for a claimed call and [`TAG_CANCELLED`]
//! for a call the client withdrew before any server took it. A word whose id
//! is before a call's id says nothing about that call (it is left from an
//! earlier call in the same slot): the call is unclaimed.
//!
//! Ids live in `1..MAX_CALL_ID` and wrap (to 1) there, so "before" and
//! "after" are serial-number comparisons modulo [`MAX_CALL_ID`]: a word whose
//! id is less than half the id space ahead of a call's is after it. A plain
//! `<` made every word left near the maximum read as after every call once
//! the ids wrapped, and every later call failed with `NoServer`. A slot's
//! word trails its next call by one lap of the slots (`depth` ids) while the
//! client runs, and a joining client rewrites the words of its place, so no
//! word is ever half the id space away.
//!
//! Every word is read from shared memory another process can write: any
//! value decodes to some [`State`], never to a server index above 31.

use crate::sync::{AtomicU64, Ordering};

/// Call ids stay below this so that they fit a claim word.
pub const MAX_CALL_ID: u64 = 1 << 44;

const ID_SHIFT: u32 = 20;
const GEN_SHIFT: u32 = 6;
const GEN_MASK: u64 = 0x3fff;
const TAG_MASK: u64 = 0x3f;
/// Tag of a call withdrawn by the client.
pub const TAG_CANCELLED: u64 = 63;

/// What a claim word says about call `id`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum State {
    /// No server took it (yet).
    Unclaimed,
    /// Taken by server place `server` of generation `gen` (low bits).
    Claimed {
        /// The server place (0..32).
        server: usize,
        /// The low 14 bits of the place's generation when it claimed.
        gen: u64,
    },
    /// Withdrawn by the client.
    Cancelled,
    /// The word belongs to a later call: `id` is long settled.
    Stale,
}

/// The word of call `id` claimed by server place `server` (< 32) of
/// generation `gen`.
pub fn claimed(id: u64, server: usize, gen: u64) -> u64 {
    debug_assert!(server < 32);
    (id << ID_SHIFT) | ((gen & GEN_MASK) << GEN_SHIFT) | (server as u64 + 1)
}

/// The word of call `id` withdrawn by its client.
pub fn cancelled(id: u64) -> u64 {
    (id << ID_SHIFT) | TAG_CANCELLED
}

/// The call id a word is about.
pub fn id_of(word: u64) -> u64 {
    word >> ID_SHIFT
}

/// Whether two generations agree in the bits a claim word keeps.
pub fn gen_matches(a: u64, b: u64) -> bool {
    a & GEN_MASK == b & GEN_MASK
}

/// Whether id `a` comes after id `b` (serial order modulo `MAX_CALL_ID`:
/// less than half the id space ahead).
pub fn after(a: u64, b: u64) -> bool {
    let ahead = a.wrapping_sub(b) & (MAX_CALL_ID - 1);
    ahead != 0 && ahead < MAX_CALL_ID / 2
}

/// What `word` says about call `id`.
pub fn state(word: u64, id: u64) -> State {
    let found = id_of(word) & (MAX_CALL_ID - 1);
    if found != id {
        return if after(found, id) {
            State::Stale
        } else {
            State::Unclaimed
        };
    }
    match word & TAG_MASK {
        TAG_CANCELLED => State::Cancelled,
        // Tag 0 or > 32 is no value we write: treat the call as taken
        // by nobody we can check, i.e. withdrawn.
        t if t == 0 || t > 32 => State::Cancelled,
        t => State::Claimed {
            server: (t - 1) as usize,
            gen: (word >> GEN_SHIFT) & GEN_MASK,
        },
    }
}

/// A server takes call `id` for place `server` of generation `gen` unless
/// another server took it or its client withdrew it. Returns whether it
/// did. Bounded: each failed CAS means another party changed the word; only
/// an honest race (a few parties) or a hostile writer can.
pub fn try_claim(word: &AtomicU64, id: u64, server: usize, gen: u64) -> bool {
    let mine = claimed(id, server, gen);
    for _ in 0..64 {
        let cur = word.load(Ordering::Acquire);
        if state(cur, id) != State::Unclaimed {
            return false;
        }
        // AcqRel: exactly one of the servers' and the client's CASes on this
        // word wins; the winner's later reads see the others' state.
        if word
            .compare_exchange(cur, mine, Ordering::AcqRel, Ordering::Acquire)
            .is_ok()
        {
            return true;
        }
    }
    false
}

/// The client withdraws call `id` unless a server took it; returns whether
/// it did (bounded as [`try_claim`]).
pub fn try_withdraw(word: &AtomicU64, id: u64) -> bool {
    for _ in 0..16 {
        let cur = word.load(Ordering::Acquire);
        if state(cur, id) != State::Unclaimed {
            return false;
        }
        // AcqRel: the CAS races with a server's claiming CAS; exactly one
        // of them wins the word.
        if word
            .compare_exchange(cur, cancelled(id), Ordering::AcqRel, Ordering::Acquire)
            .is_ok()
        {
            return true;
        }
    }
    false
}
