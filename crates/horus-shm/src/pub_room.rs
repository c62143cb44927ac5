//! A publisher making room for its next message: the overflow policies
//! `Overwrite` (never wait), `Reject` (refuse when full) and `Block` (sleep
//! on the room futex until a subscriber frees a slot, with a timeout), the
//! lost-segment check, and the counting of each refusal.

use std::time::{Duration, Instant};

use crate::error::RoomError;
use crate::pub_port::PublisherPort;
use crate::records::{self, Wake};
use crate::sync::{AtomicU32, Ordering};
use crate::wait::{Futex, Spin, WaitStrategy, Waitable, Yield};
use crate::{futex, room};

/// What a send does when the ring is full.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RoomPolicy {
    /// Overwrite the oldest message (subscribers count an overrun).
    Overwrite,
    /// Refuse the message.
    Reject,
    /// Wait for room, at most this long, then refuse.
    Block(Duration),
}

/// Sends between two touches of the segment's last page (see
/// [`PublisherPort::make_room`]).
pub(crate) const PROBE_EVERY: u32 = 256;

/// Polls a `Block` wait spins before yielding, and yields before sleeping.
const SPINS: u32 = 64;
const YIELDS: u32 = 8;

/// How often a sleeping `Block` publisher wakes to reclaim dead subscribers
/// (one holding the ring full must not stall it until the timeout) and to
/// look for a truncated segment (nobody wakes it then).
const TICK: Duration = Duration::from_millis(20);
/// Longest sleep without a room registration (no membarrier): no wake-up is
/// guaranteed then, so it polls.
const UNREGISTERED_SLEEP: Duration = Duration::from_millis(1);

impl PublisherPort {
    /// Whether there is room for the next message under `policy`, waiting
    /// for it under `Block`. First checks that the segment is still there:
    /// one relaxed load per call, plus a touch of its last page every 256
    /// calls (a send racing with a truncation may still report success;
    /// the next one reports the loss). Counts a refusal (`rejected`,
    /// `timed_out`) once, here.
    pub fn make_room(&mut self, policy: RoomPolicy) -> Result<(), RoomError> {
        self.probe_in -= 1;
        let lost = if self.probe_in == 0 {
            self.probe_in = PROBE_EVERY;
            self.channel().probe_lost()
        } else {
            self.channel().is_lost()
        };
        if lost {
            return Err(RoomError::Lost);
        }
        match policy {
            RoomPolicy::Overwrite => Ok(()),
            RoomPolicy::Reject if self.has_space() => Ok(()),
            RoomPolicy::Reject => {
                self.count_rejected();
                Err(RoomError::Full)
            }
            RoomPolicy::Block(timeout) => {
                let r = self.wait_for_room(timeout);
                if r == Err(RoomError::TimedOut(timeout)) {
                    self.count_timed_out();
                }
                r
            }
        }
    }

    /// Waits until the next message fits (every reliable subscriber is less
    /// than a ring behind), at most `timeout`: spins, yields, then sleeps on
    /// the room futex, which a subscriber moving its cursor or leaving
    /// bumps (see `crate::room`). Wakes every 20 ms to reclaim dead
    /// subscribers and notice a truncated segment. Does not count.
    fn wait_for_room(&mut self, timeout: Duration) -> Result<(), RoomError> {
        if self.has_space() {
            return Ok(());
        }
        let deadline = Instant::now() + timeout;
        let registered = self.register_room_wakeups();
        let chan = std::sync::Arc::clone(self.channel());
        let bit = records::room_wait_bit(self.place());
        let mut w = RoomWait {
            port: self,
            wake: chan.wake(),
            bit,
            registered,
        };
        let ready = Spin { polls: SPINS }
            .wait(&mut w, Some(deadline))
            .or_else(|| Yield { polls: YIELDS }.wait(&mut w, Some(deadline)))
            .or_else(|| Futex.wait(&mut w, Some(deadline)));
        ready.unwrap_or(Err(RoomError::TimedOut(timeout)))
    }

    /// Registers this place for room wake-ups once (the first time it
    /// waits): sets its `room_blocking` bit, then runs a global barrier so
    /// that subscribers that still read the set as empty have made their
    /// cursor stores visible to us (see `crate::room`). False if the kernel
    /// lacks the barrier: then waits poll every millisecond.
    fn register_room_wakeups(&mut self) -> bool {
        if let Some(r) = self.room_registered {
            return r;
        }
        let bit = records::room_wait_bit(self.place());
        let wake = self.channel().wake();
        wake.room_blocking.fetch_or(bit, Ordering::SeqCst);
        let ok = futex::global_barrier();
        if !ok {
            wake.room_blocking.fetch_and(!bit, Ordering::SeqCst);
        }
        self.room_registered = Some(ok);
        ok
    }
}

/// A `Block` publisher's wait for room, as a [`Waitable`].
struct RoomWait<'a> {
    port: &'a mut PublisherPort,
    wake: &'a Wake,
    bit: u32,
    registered: bool,
}

impl Waitable for RoomWait<'_> {
    type Ready = Result<(), RoomError>;

    fn poll(&mut self) -> Option<Self::Ready> {
        if self.port.has_space() {
            return Some(Ok(()));
        }
        // Truncated while we wait: the cursors now read as zero and room
        // would never appear.
        self.port
            .channel()
            .is_lost()
            .then_some(Err(RoomError::Lost))
    }

    fn word(&self) -> &AtomicU32 {
        &self.wake.room
    }

    fn token(&self) -> u32 {
        room::token(self.wake)
    }

    fn announce(&self) {
        room::register(self.wake, self.bit);
    }

    fn withdraw(&self) {
        room::unregister(self.wake, self.bit);
    }

    fn tick_every(&self) -> Option<Duration> {
        Some(if self.registered {
            TICK
        } else {
            UNREGISTERED_SLEEP
        })
    }

    fn tick(&mut self) {
        // A subscriber that died holding the ring full: reclaiming its place
        // drops its cursor (reads /proc, so only once per tick).
        self.port.channel().reclaim_dead();
    }
}
