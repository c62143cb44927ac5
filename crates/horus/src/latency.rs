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

use crate::stamp::{self, StampField};

/// Whether (and where) a subscriber of one type reads the stamp.
#[derive(Clone, Copy, Debug)]
pub(crate) struct LatencyProbe {
    /// Byte offset of the `u64` stamp in the message; `None`: nothing recorded.
    offset: Option<usize>,
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
        }
    }

    /// Records the latency of the message `bytes` (the fixed part of a `T`) just received
    /// by `port`.
    #[inline]
    pub(crate) fn observe(&self, bytes: &[u8], port: &mut SubscriberPort) {
        let Some(offset) = self.offset else { return };
        let Some(b) = bytes.get(offset..offset.saturating_add(8)) else {
            return;
        };
        let sent = u64::from_le_bytes(b.try_into().expect("8 bytes"));
        if sent == 0 {
            // Not stamped (a zeroed header): no clock read, nothing counted.
            return;
        }
        match stamp::latency(sent, stamp::now_ns()) {
            Some(ns) => port.record_latency(ns),
            None => port.count_implausible_stamp(),
        }
    }
}
