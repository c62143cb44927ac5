//! Counters. Every way a message can fail to arrive has its own counter, and
//! each end can read the other's through [`TopicStats`].

use horus_shm::ChannelSnapshot;

/// Counters of one publisher (this endpoint only).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PublisherStats {
    /// Messages published.
    pub sent: u64,
    /// Messages published while no subscriber was active.
    pub undelivered: u64,
    /// Messages handed back: history full under `Reject`.
    pub rejected: u64,
    /// Messages handed back: no room within the `Block` timeout.
    pub timed_out: u64,
    /// Sends and loans refused: every pool chunk in use.
    pub pool_exhausted: u64,
    /// Subscribers active when the stats were read.
    pub subscribers: u32,
}

/// Counters of one subscriber (this endpoint only).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SubscriberStats {
    /// Messages received.
    pub received: u64,
    /// Messages overwritten before being read (`DropOldest`): lost.
    pub overrun: u64,
    /// Messages passed over on purpose by `latest()`.
    pub skipped: u64,
    /// Messages rejected as corrupt (wrong size, bad descriptor).
    pub malformed: u64,
    /// Publishers active when the stats were read.
    pub publishers: u32,
    /// Delivery latency (publish stamp to receive) of the stamped messages received, for a
    /// type that carries a stamp (see [`crate::stamp`]); empty otherwise.
    pub latency: horus_shm::LatencySnapshot,
}

/// Counters of every active endpoint of a topic, in every process.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TopicStats {
    /// Per publisher place and per subscriber place.
    pub snapshot: ChannelSnapshot,
}

impl TopicStats {
    pub(crate) fn from_snapshot(snapshot: ChannelSnapshot) -> TopicStats {
        TopicStats { snapshot }
    }

    /// Live publishers.
    pub fn publishers(&self) -> usize {
        self.snapshot.publishers.len()
    }

    /// Live subscribers.
    pub fn subscribers(&self) -> usize {
        self.snapshot.subscribers.len()
    }

    /// Messages lost by all subscribers (overwritten or malformed).
    pub fn lost(&self) -> u64 {
        self.snapshot
            .subscribers
            .iter()
            .map(|s| s.overrun + s.malformed)
            .sum()
    }

    /// Messages refused to all publishers (rejected, timed out, no chunk).
    pub fn refused(&self) -> u64 {
        self.snapshot
            .publishers
            .iter()
            .map(|p| p.rejected + p.timed_out + p.loan_failures)
            .sum()
    }
}
