//! A subscriber's delivery-latency recording: for a message type that carries a publish
//! stamp ([`crate::stamp`]), each message received is timed against the wall clock and
//! recorded in the subscriber's histogram in the topic's segment (see
//! [`horus_shm::LatencySnapshot`]), where `horus topic info` and the monitor read it.
//!
//! Cost per message: one clock read ([`LatencyClock`]) and a few stores to the subscriber's
//! own cache lines; nothing for types without a stamp. A stamp that is not a wall-clock
//! time (a sequence number, a simulated clock) is counted implausible, usually without a
//! clock read: see [`SURELY_OLD_NS`]. `HORUS_LATENCY=off` in the environment turns it off
//! for the process (for measuring what it costs).

use horus_msgs::{Message, MessageDescription};
use horus_shm::SubscriberPort;

use crate::latency_clock::LatencyClock;
use crate::stamp::{self, StampField};

/// A stamp at most this far ahead of the receiving clock records as 0 ns rather than as
/// implausible: the subscriber's clock is the TSC extrapolated between real reads
/// ([`LatencyClock`]), a few ns (at most its tolerance) off the wall clock the stamp came
/// from, and a sub-microsecond delivery may read as a little negative.
const CLOCK_SLACK_NS: u64 = 2_000;

/// A stamp older than the probe's latest clock reading by more than this (a day) is
/// counted implausible without reading the clock again: the clock cannot have gone back
/// that far since (short of a wall clock stepped back by more than a day), so the verdict
/// is the one a read would give, and the read (~10 ns with the TSC, ~35 without; the
/// whole cost of the path) is saved. A counter or a simulated time in the stamp field is
/// ~56 years old by the wall clock: all but one in [`SKIP_READS`] such messages take this
/// path. Stamps in the future are always checked against a read: a clock stepped forward
/// (NTP at boot on a machine without a real-time clock) must not make live stamps
/// implausible.
const SURELY_OLD_NS: u64 = 86_400 * 1_000_000_000;

/// At most this many stamps in a row are judged against the same reading (then the clock
/// is read again): bounds what a wall clock stepped back by more than a day can misjudge.
const SKIP_READS: u32 = 1024;

/// Whether (and where) a subscriber of one type reads the stamp.
#[derive(Clone, Copy, Debug)]
pub(crate) struct LatencyProbe {
    /// Byte offset of the `u64` stamp in the message; `None`: nothing recorded.
    offset: Option<usize>,
    clock: LatencyClock,
    /// The clock reading that last judged a stamp implausible (0: none yet), and how many
    /// stamps have been judged against it since without a read (see [`SURELY_OLD_NS`]).
    implausible_at: u64,
    judged_unread: u32,
}

impl LatencyProbe {
    /// For messages of type `T`.
    pub(crate) fn of<T: Message>() -> LatencyProbe {
        let off = std::env::var_os("HORUS_LATENCY").is_none_or(|v| v != "off");
        LatencyProbe {
            offset: off
                .then(|| StampField::find(&MessageDescription::of::<T>()))
                .flatten()
                .map(|f| f.offset),
            clock: LatencyClock::new(),
            implausible_at: 0,
            judged_unread: 0,
        }
    }

    /// Records the latency of the message `bytes` (the fixed part of a `T`) just received
    /// by `port`.
    #[inline]
    pub(crate) fn observe(&mut self, bytes: &[u8], port: &mut SubscriberPort) {
        let Some(offset) = self.offset else { return };
        let Some(b) = bytes.get(offset..offset.saturating_add(8)) else {
            return;
        };
        let sent = u64::from_le_bytes(b.try_into().expect("8 bytes"));
        if sent == 0 {
            // Not stamped (a zeroed header): no clock read, nothing counted.
            return;
        }
        if sent < self.implausible_at.saturating_sub(SURELY_OLD_NS)
            && self.judged_unread < SKIP_READS
        {
            // Far older than a recent reading: implausible whatever the clock reads now.
            self.judged_unread += 1;
            port.count_implausible_stamp();
            return;
        }
        let now = self.clock.now();
        match stamp::latency(sent, now) {
            Some(ns) => port.record_latency(ns),
            // Just ahead of our clock: the extrapolated clock's error, not a future stamp.
            None if sent > now && sent - now <= CLOCK_SLACK_NS => port.record_latency(0),
            None => {
                (self.implausible_at, self.judged_unread) = (now, 0);
                port.count_implausible_stamp();
            }
        }
    }
}
