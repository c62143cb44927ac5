//! A subscriber's delivery-latency recording: for a message type that carries a publish
//! stamp ([`crate::stamp`]), each message received is timed against the wall clock and
//! recorded in the subscriber's histogram in the topic's segment (see
//! [`horus_shm::LatencySnapshot`]), where `horus topic info` and the monitor read it.
//!
//! Cost per message: one wall-clock read (vDSO) and a few stores to the subscriber's own
//! cache lines; nothing for types without a stamp. `HORUS_LATENCY=off` in the environment
//! turns it off for the process (for measuring what it costs).

use horus_msgs::{Message, MessageDescription};
use horus_shm::SubscriberPort;

use crate::latency_clock::LatencyClock;
use crate::stamp::{self, StampField};

/// A stamp at most this far ahead of the receiving clock records as 0 ns rather than as
/// implausible: the subscriber's clock is the TSC extrapolated between real reads
/// ([`LatencyClock`]), a few ns (at most its tolerance) off the wall clock the stamp came
/// from, and a sub-microsecond delivery may read as a little negative.
const CLOCK_SLACK_NS: u64 = 2_000;

/// Whether (and where) a subscriber of one type reads the stamp.
#[derive(Clone, Copy, Debug)]
pub(crate) struct LatencyProbe {
    /// Byte offset of the `u64` stamp in the message; `None`: nothing recorded.
    offset: Option<usize>,
    clock: LatencyClock,
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
        let now = self.clock.now();
        match stamp::latency(sent, now) {
            Some(ns) => port.record_latency(ns),
            // Just ahead of our clock: the extrapolated clock's error, not a future stamp.
            None if sent > now && sent - now <= CLOCK_SLACK_NS => port.record_latency(0),
            None => port.count_implausible_stamp(),
        }
    }
}
