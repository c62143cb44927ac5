//! Follows a topic's publisher counters (messages and bytes sent, per publisher place) by
//! polling its records: no payload is read and nothing the robot observes changes.

use std::time::Instant;

use horus::inspect::TopicView;

/// Publisher places a segment can have (horus_shm::layout::MAX_PUBLISHERS).
const PLACES: usize = 16;

/// The running totals, and when they last changed.
#[derive(Clone, Copy, Debug)]
pub(super) struct Mark {
    /// When the change was seen.
    pub(super) at: Instant,
    /// Messages sent on the topic since the sampler started.
    pub(super) messages: u64,
    /// Payload bytes sent since the sampler started.
    pub(super) bytes: u64,
}

pub(super) struct Sampler<'a> {
    view: &'a TopicView,
    /// Last counters seen per publisher place (they are cumulative per place, across owners).
    last: [Option<(u64, u64)>; PLACES],
    messages: u64,
    bytes: u64,
    publishers: usize,
}

impl<'a> Sampler<'a> {
    pub(super) fn new(view: &'a TopicView) -> Sampler<'a> {
        let mut s = Sampler {
            view,
            last: [None; PLACES],
            messages: 0,
            bytes: 0,
            publishers: 0,
        };
        s.poll(Instant::now());
        // What was sent before we started is not ours to count.
        s.messages = 0;
        s.bytes = 0;
        s
    }

    /// Reads the counters; returns the new totals if any publisher sent since the last poll.
    pub(super) fn poll(&mut self, now: Instant) -> Option<Mark> {
        let snap = self.view.snapshot();
        self.publishers = snap.publishers.len();
        let mut changed = false;
        for p in &snap.publishers {
            let Some(last) = self.last.get_mut(p.place) else {
                continue;
            };
            if let Some((sent, bytes)) = *last {
                // Wrapping: the counters are u64 that a peer may have left anywhere.
                let dm = p.sent.wrapping_sub(sent);
                if dm != 0 && dm < u64::MAX / 2 {
                    self.messages += dm;
                    self.bytes += p.bytes_sent.wrapping_sub(bytes);
                    changed = true;
                }
            }
            *last = Some((p.sent, p.bytes_sent));
        }
        changed.then_some(Mark {
            at: now,
            messages: self.messages,
            bytes: self.bytes,
        })
    }

    /// Live publishers at the last poll.
    pub(super) fn publishers(&self) -> usize {
        self.publishers
    }
}
