//! Participants: which processes have the shared buffer open, so that the
//! last one out removes the segment's name (and a stale one can be removed
//! when every participant is dead).
//!
//! Each open handle takes a place (a word holding its process token) with a
//! CAS from 0, or from the token of a dead process. Teardown uses a closing
//! flag in the Dekker style (all SeqCst): the closer sets `closing`, then
//! scans the places; an opener takes a place, then reads `closing`. At least
//! one of them sees the other: either the closer finds the opener's place
//! (clears `closing`, keeps the segment), or the opener finds `closing` set
//! (gives its place back and opens again, finding the name gone or the flag
//! cleared).

use horus_shm::sync::Ordering;
use horus_shm::ProcessId;

use crate::layout::{CLOSING_OFF, MAX_PARTICIPANTS, PARTICIPANTS_OFF};
use crate::mem::Mem;

fn place(mem: &Mem, i: usize) -> &horus_shm::sync::AtomicU64 {
    debug_assert!(i < MAX_PARTICIPANTS);
    mem.word(PARTICIPANTS_OFF + 8 * i)
}

fn alive(token: u64) -> bool {
    token != 0 && ProcessId::from_token(token).is_alive()
}

/// Takes a place for `me`; None when every place is held by a live process.
pub(crate) fn join(mem: &Mem, me: u64) -> Option<usize> {
    for i in 0..MAX_PARTICIPANTS {
        if place(mem, i)
            .compare_exchange(0, me, Ordering::SeqCst, Ordering::Relaxed)
            .is_ok()
        {
            return Some(i);
        }
    }
    for i in 0..MAX_PARTICIPANTS {
        let held = place(mem, i).load(Ordering::Relaxed);
        if !alive(held)
            && place(mem, i)
                .compare_exchange(held, me, Ordering::SeqCst, Ordering::Relaxed)
                .is_ok()
        {
            return Some(i);
        }
    }
    None
}

/// The closing flag's value once the closer decided to remove the name: the
/// segment is dead for good and nobody may use it again.
const CLOSED: u64 = u64::MAX;

/// Where the segment stands with teardown.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Closing {
    /// Open.
    No,
    /// A live closer is deciding.
    InProgress,
    /// Dead for good: its name is (being) removed.
    Closed,
}

/// Whether the segment is being torn down (read after joining). A closer
/// that died while deciding (its token in the flag is dead) is forgotten.
pub(crate) fn closing(mem: &Mem) -> Closing {
    let flag = mem.word(CLOSING_OFF);
    match flag.load(Ordering::SeqCst) {
        0 => Closing::No,
        CLOSED => Closing::Closed,
        closer if alive(closer) => Closing::InProgress,
        closer => {
            let _ = flag.compare_exchange(closer, 0, Ordering::SeqCst, Ordering::SeqCst);
            Closing::No
        }
    }
}

/// Gives place `i` back if `me` still holds it.
pub(crate) fn leave(mem: &Mem, i: usize, me: u64) {
    let _ = place(mem, i).compare_exchange(me, 0, Ordering::SeqCst, Ordering::Relaxed);
}

/// Live participants.
pub(crate) fn live(mem: &Mem) -> usize {
    (0..MAX_PARTICIPANTS)
        .filter(|&i| alive(place(mem, i).load(Ordering::SeqCst)))
        .count()
}

/// If no live process holds a place, marks the segment closed for good and
/// returns true: the caller removes the name. Otherwise leaves it open.
pub(crate) fn try_close(mem: &Mem, me: u64) -> bool {
    let flag = mem.word(CLOSING_OFF);
    match closing(mem) {
        Closing::No => {}
        Closing::InProgress => return false,
        Closing::Closed => return true,
    }
    if flag
        .compare_exchange(0, me, Ordering::SeqCst, Ordering::SeqCst)
        .is_err()
    {
        return false;
    }
    if live(mem) > 0 {
        flag.store(0, Ordering::SeqCst);
        return false;
    }
    flag.store(CLOSED, Ordering::SeqCst);
    true
}
