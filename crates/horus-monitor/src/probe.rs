//! One topic as the monitor follows it: its publishers' counters (rate, bandwidth) and,
//! when its messages carry a stamp, a polling observer that reads each message's stamp.
//!
//! The observer never registers a wake-up (publishers never make a system call for it), is
//! never in a publisher's room check and is not counted by publishers: attaching it changes
//! nothing the robot's endpoints observe. It is attached only while the topic has a
//! publisher (there is nothing to read otherwise): a segment is removed by its last
//! participant, and a robot whose publishers stopped first and whose subscribers then leave
//! must find its segment gone, not kept by the monitor. (A process that drops its publisher
//! and its subscriber together can still leave the monitor last; it then removes the
//! segment at its next poll.)

use std::time::{Duration, Instant};

use horus::inspect::{RawObserver, TopicView};
use horus::msgs::MessageDescription;
use horus_shm::ChannelSnapshot;

use crate::stamp::{latency, now_ns, StampField};
use crate::totals::PublisherTotals;
use crate::window::{Latency, LatencyWindow, Rate, RateWindow};

/// Most messages read from one topic per poll (bounded: the rings are a peer's memory).
const MAX_PER_POLL: usize = 4096;
/// Messages whose stamp is not a time, with none that is, after which the observer leaves
/// for good (reading the topic would cost time and give no latency).
const GIVE_UP: u64 = 64;

/// What the monitor knows of one topic.
pub(crate) struct TopicProbe {
    view: TopicView,
    /// The description, or why the topic cannot be decoded.
    description: Result<MessageDescription, String>,
    stamp: Option<StampField>,
    totals: PublisherTotals,
    rate: RateWindow,
    latency: LatencyWindow,
    observer: Option<RawObserver>,
    /// Why there is no observer when one is wanted (no free place…).
    observer_error: Option<String>,
    /// Counts of observers dropped when the robot left (kept: they are the monitor's own).
    past_counts: (u64, u64, u64),
    /// Messages whose stamp was not a plausible publish time, and those whose was.
    implausible: u64,
    plausible: u64,
    snapshot: ChannelSnapshot,
}

impl TopicProbe {
    /// Follows `view` from now on.
    pub(crate) fn new(view: TopicView) -> TopicProbe {
        let description = view.description().map_err(|e| {
            format!(
                "topic {} ({}) cannot be decoded: {e}",
                view.name(),
                view.schema_text()
            )
        });
        let stamp = description.as_ref().ok().and_then(StampField::find);
        let snapshot = view.snapshot();
        TopicProbe {
            totals: PublisherTotals::new(&snapshot),
            view,
            description,
            stamp,
            rate: RateWindow::default(),
            latency: LatencyWindow::default(),
            observer: None,
            observer_error: None,
            past_counts: (0, 0, 0),
            implausible: 0,
            plausible: 0,
            snapshot,
        }
    }

    /// Reads the counters and every message the observer has; joins or leaves as the robot
    /// comes and goes.
    pub(crate) fn poll(&mut self, now: Instant) {
        self.snapshot = self.view.snapshot();
        if let Some(m) = self.totals.update(&self.snapshot, now) {
            self.rate.push(m);
        }
        if self.snapshot.publishers.is_empty() {
            self.leave();
            return;
        }
        if self.observer.is_none() && self.observer_error.is_none() {
            self.join();
        }
        let (Some(stamp), Some(obs)) = (&self.stamp, self.observer.as_mut()) else {
            return;
        };
        for _ in 0..MAX_PER_POLL {
            let Some(msg) = obs.try_recv() else { break };
            // The clock is read per message, right after reading it.
            match stamp.read(&msg.bytes).and_then(|s| latency(s, now_ns())) {
                Some(ns) => {
                    self.plausible += 1;
                    self.latency.push(Instant::now(), ns);
                }
                None => self.implausible += 1,
            }
        }
        if self.plausible == 0 && self.implausible >= GIVE_UP {
            self.stamp = None;
            self.leave();
        }
    }

    /// Retries a refused join (called at each discovery round, so a refused join is retried
    /// at that pace, not at every poll).
    pub(crate) fn retry_join(&mut self) {
        self.observer_error = None;
        self.join();
    }

    /// Joins the observer if one is wanted (a stamp to read, a publisher to read from).
    fn join(&mut self) {
        if self.observer.is_some() || self.stamp.is_none() || self.snapshot.publishers.is_empty() {
            return;
        }
        match self.view.observer(false) {
            Ok(o) => {
                self.observer = Some(o);
                self.observer_error = None;
            }
            Err(e) => self.observer_error = Some(e.to_string()),
        }
    }

    fn leave(&mut self) {
        if let Some(o) = self.observer.take() {
            let (r, m, x) = o.counts();
            self.past_counts.0 += r;
            self.past_counts.1 += m;
            self.past_counts.2 += x;
        }
    }

    /// Whether nobody at all is on the topic any more (its segment is being removed, or a
    /// new one may replace it: the monitor opens it again at the next discovery).
    pub(crate) fn abandoned(&self) -> bool {
        self.snapshot.publishers.is_empty() && self.snapshot.subscribers.is_empty()
            || self.view.is_lost()
    }

    pub(crate) fn view(&self) -> &TopicView {
        &self.view
    }

    pub(crate) fn description(&self) -> &Result<MessageDescription, String> {
        &self.description
    }

    pub(crate) fn stamp(&self) -> Option<&StampField> {
        self.stamp.as_ref()
    }

    pub(crate) fn snapshot(&self) -> &ChannelSnapshot {
        &self.snapshot
    }

    pub(crate) fn observer_error(&self) -> Option<&str> {
        self.observer_error.as_deref()
    }

    pub(crate) fn rate(&mut self, now: Instant, window: Duration) -> Rate {
        self.rate.rate(now, window)
    }

    pub(crate) fn latency(&mut self, now: Instant, window: Duration) -> Option<Latency> {
        self.latency.latency(now, window)
    }

    /// The monitor's own reading: messages read, missed (overwritten before it read them),
    /// malformed, and stamps that were not publish times.
    pub(crate) fn own_counts(&self) -> (u64, u64, u64, u64) {
        let (r, m, x) = self
            .observer
            .as_ref()
            .map_or((0, 0, 0), RawObserver::counts);
        (
            r + self.past_counts.0,
            m + self.past_counts.1,
            x + self.past_counts.2,
            self.implausible,
        )
    }

    /// Whether the monitor's observer is attached.
    pub(crate) fn observing(&self) -> bool {
        self.observer.is_some()
    }
}
