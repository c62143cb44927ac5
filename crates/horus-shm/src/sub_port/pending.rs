//! Peeking: is a message waiting for this subscriber? Answered without
//! copying a payload and without moving a cursor, so a scheduler can ask
//! before deciding to run the node that owns the subscriber.
//!
//! The answer comes from the subscriber's cursors as mirrored in its record
//! (the port is their only writer and stores them with `Release` after every
//! read) and from the stamp of the slot each cursor points at (see
//! [`crate::ring`] for the stamp encoding). Reading the mirror rather than
//! the port's private copy is what lets a handle on another thread — the
//! scheduler's event loop — ask while the node owns the port.

use std::time::{Duration, Instant};

use super::{SubPlace, SubscriberPort, SubscriberWait};
use crate::records;
use crate::ring::SlotMem;
use crate::sync::Ordering;
use crate::wait::{Futex, WaitStrategy};

/// Whether a slot whose stamp is `stamp` holds, for a reader whose next
/// message is `seq`, something to read: message `seq` itself (stamp
/// `2·seq`) or a later one (the reader was lapped; the next receive counts
/// the overrun and returns the oldest message still in the ring). Stamp 0
/// (never written) and `2·seq + 1` (being written) are not ready.
fn stamp_has_message(stamp: u64, seq: u64, head: u64) -> bool {
    if stamp == 0 || records::is_unstarted(seq) {
        return false;
    }
    // Compare halves rather than `2·seq` so that a hostile cursor near
    // u64::MAX cannot overflow.
    let found = stamp / 2;
    // A stamp beyond `head + 1` is one no honest writer made yet (it stores
    // `head` before starting the next slot): corrupt, nothing to wake for.
    // Without this, stamps scribbled far ahead kept `has_pending` true for
    // ever and the scheduler spun on a node with nothing to read.
    if found > head.saturating_add(1) {
        return false;
    }
    found > seq || (found == seq && stamp.is_multiple_of(2))
}

impl SubPlace {
    /// Whether a message is waiting for this subscriber on any publisher's
    /// ring (active or departed). Copies nothing and moves no cursor. Costs
    /// two loads per publisher place.
    ///
    /// A `true` is almost always followed by a successful receive; the
    /// exceptions are a slot that turns out corrupt or a chunk that was
    /// recycled under a lapped reader, each of which the receive counts.
    pub fn has_pending(&self) -> bool {
        let chan = &self.chan;
        let places = chan.layout().config.max_publishers as usize;
        (0..places).any(|k| {
            // Acquire pairs with the port's Release store in `advance`: if
            // the port (maybe on another thread) has consumed message `seq-1`
            // we see at least `seq`, never an older cursor that would make
            // an already-read message look pending.
            let seq = chan.cursor(self.j, k).load(Ordering::Acquire);
            // Acquire pairs with the writer's publishing Release store of
            // the stamp (the same pairing `ring::read` relies on).
            let stamp = chan.slot(k, seq).stamp().load(Ordering::Acquire);
            // Acquire load of the stamp first: it synchronises with the
            // writer's Release stores (odd or even), so this head is at least
            // the one stored before that slot was started.
            let head = chan.pub_record(k).head.load(Ordering::Acquire);
            stamp_has_message(stamp, seq, head)
        })
    }

    /// Blocks until a message is probably waiting (see
    /// [`has_pending`](SubPlace::has_pending)) or `timeout` passes; returns
    /// `has_pending()` at the end. Waits with the [`Futex`] strategy on the
    /// channel's futex, so a publisher's send wakes it across processes;
    /// without the blocking registration (busy-poll subscribers) publishers
    /// may not wake it, and it sleeps at most 1 ms at a time instead.
    pub fn wait_pending(&self, timeout: Duration) -> bool {
        // Same handshake as `SubscriberPort::receive_blocking`, with our own
        // bit (not the port's), so a port wait on another thread and this
        // one never clear each other's.
        let bit = records::pending_wait_bit(self.j);
        let mut w = SubscriberWait::new(self.chan.wake(), bit, self.blocking, || {
            self.has_pending().then_some(())
        });
        Futex.wait(&mut w, Some(Instant::now() + timeout)).is_some()
    }
}

impl SubscriberPort {
    /// Whether a message is waiting; see [`SubPlace::has_pending`].
    pub fn has_pending(&self) -> bool {
        self.place.has_pending()
    }
}

#[cfg(test)]
mod tests {
    use super::stamp_has_message;
    use crate::records;

    #[test]
    fn stamps_that_mean_a_message_is_waiting() {
        // Never written.
        assert!(!stamp_has_message(0, 1, 0));
        assert!(!stamp_has_message(0, 0, 0));
        // Message 5 complete, reader wants 5.
        assert!(stamp_has_message(10, 5, 5));
        // Complete but head not yet stored.
        assert!(stamp_has_message(10, 5, 4));
        // Message 5 being written.
        assert!(!stamp_has_message(11, 5, 4));
        // Reader wants 6; the slot still holds 6 - depth (older): nothing new.
        assert!(!stamp_has_message(2 * 2, 6, 5));
        // Lapped: the slot holds a later message (complete or being written).
        assert!(stamp_has_message(2 * 9, 5, 9));
        assert!(stamp_has_message(2 * 9 + 1, 5, 8));
        // A hostile cursor does not overflow; a joining one has nothing.
        assert!(!stamp_has_message(10, u64::MAX, 5));
        assert!(!stamp_has_message(10, records::CURSOR_JOINING, 5));
        assert!(!stamp_has_message(10, records::CURSOR_NOT_MEMBER, 5));
    }

    /// Regression: stamps scribbled far beyond the ring's head made
    /// `has_pending` true for ever (and the scheduler spin).
    #[test]
    fn hostile_stamps_ahead_of_head_are_not_pending() {
        assert!(!stamp_has_message(2 * 1_000_000, 5, 10));
        assert!(!stamp_has_message(u64::MAX, 5, 10));
    }
}
