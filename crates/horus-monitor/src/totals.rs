//! A topic's publisher counters (messages and bytes sent, per publisher place) followed
//! across snapshots of its records (`horus topic hz`/`bw` and the monitor): no payload is
//! read and nothing the robot observes changes.

use std::time::Instant;

use horus_shm::ChannelSnapshot;

/// Publisher places a segment can have (horus_shm::layout::MAX_PUBLISHERS).
const PLACES: usize = 16;

/// The running totals, and when they last changed.
#[derive(Clone, Copy, Debug)]
pub struct Mark {
    /// When the change was seen.
    pub at: Instant,
    /// Messages sent on the topic since the sampler started.
    pub messages: u64,
    /// Payload bytes sent since the sampler started.
    pub bytes: u64,
}

/// Messages and bytes sent on a topic, accumulated from successive snapshots of its
/// publisher records (for callers that take the snapshot themselves, e.g. `horus monitor`).
#[derive(Debug)]
pub struct PublisherTotals {
    /// Last counters seen per publisher place (they are cumulative per place, across owners).
    last: [Option<(u64, u64)>; PLACES],
    messages: u64,
    bytes: u64,
    publishers: usize,
}

impl PublisherTotals {
    /// Totals counted from `snap` on (what was sent before is not counted).
    pub fn new(snap: &ChannelSnapshot) -> PublisherTotals {
        let mut t = PublisherTotals {
            last: [None; PLACES],
            messages: 0,
            bytes: 0,
            publishers: 0,
        };
        t.update(snap, Instant::now());
        // What was sent before we started is not ours to count.
        t.messages = 0;
        t.bytes = 0;
        t
    }

    /// Adds what was sent since the last snapshot; returns the new totals if anything was.
    pub fn update(&mut self, snap: &ChannelSnapshot, now: Instant) -> Option<Mark> {
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

    /// Live publishers at the last update.
    pub fn publishers(&self) -> usize {
        self.publishers
    }
}
