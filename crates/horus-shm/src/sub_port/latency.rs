//! The port's side of its place's latency histogram (see [`crate::latency`]): the owner
//! records, anyone reads.

use super::SubscriberPort;
use crate::latency::LatencySnapshot;

impl SubscriberPort {
    /// Records the delivery latency of a message this port received, in ns (publish stamp
    /// to receive: the caller reads both, this crate knows no stamps). Costs a few relaxed
    /// loads and stores to this place's own cache lines; `&mut self` makes this port the
    /// histogram's only writer.
    #[inline]
    pub fn record_latency(&mut self, ns: u64) {
        self.chan().latency_record(self.place.j).record(ns);
    }

    /// Counts a received message whose stamp cannot be a publish time (in the future, or
    /// implausibly old): not recorded in the histogram, but visible beside it. A relaxed
    /// load and store of one word of this place's own record (no read-modify-write: `&mut
    /// self` makes this port its only writer); inline, as a user whose stamps are not
    /// wall-clock times takes it for every message.
    #[inline]
    pub fn count_implausible_stamp(&mut self) {
        self.chan().latency_record(self.place.j).count_implausible();
    }

    /// This place's latency histogram as it stands.
    pub fn latency(&self) -> LatencySnapshot {
        self.chan().latency_record(self.place.j).snapshot()
    }
}
