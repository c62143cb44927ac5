//! Follows a topic's publisher counters (messages and bytes sent, per publisher place) by
//! polling its records: no payload is read and nothing the robot observes changes.

use std::time::Instant;

use horus::inspect::TopicView;
pub(super) use horus_monitor::Mark;
use horus_monitor::PublisherTotals;

pub(super) struct Sampler<'a> {
    view: &'a TopicView,
    totals: PublisherTotals,
}

impl<'a> Sampler<'a> {
    pub(super) fn new(view: &'a TopicView) -> Sampler<'a> {
        Sampler {
            view,
            totals: PublisherTotals::new(&view.snapshot()),
        }
    }

    /// Reads the counters; returns the new totals if any publisher sent since the last poll.
    pub(super) fn poll(&mut self, now: Instant) -> Option<Mark> {
        self.totals.update(&self.view.snapshot(), now)
    }

    /// Live publishers at the last poll.
    pub(super) fn publishers(&self) -> usize {
        self.totals.publishers()
    }
}
