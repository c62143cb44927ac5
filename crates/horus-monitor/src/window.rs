//! Figures over a sliding window: message rate and bandwidth from the publishers' counter
//! changes, latency percentiles from per-message samples.

use std::collections::VecDeque;
use std::time::{Duration, Instant};

use crate::stamp::quantile;
use crate::totals::Mark;

/// Most latency samples kept per topic (a 10 kHz topic over a 1 s window fits).
const MAX_SAMPLES: usize = 16_384;

/// The publisher counter changes of the last window (and the one before it).
///
/// Like `horus topic hz`: the rate is the messages sent between two changes divided by the
/// time between them, both ends being message arrivals seen within one poll period, so the
/// figure does not depend on where the window's edges fall.
#[derive(Debug, Default)]
pub(crate) struct RateWindow {
    marks: VecDeque<Mark>,
}

/// Rate and bandwidth over a window.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub(crate) struct Rate {
    /// Messages per second.
    pub(crate) hz: f64,
    /// Payload bytes per second.
    pub(crate) bytes_per_s: f64,
}

impl RateWindow {
    /// Records a change of the totals.
    pub(crate) fn push(&mut self, m: Mark) {
        self.marks.push_back(m);
    }

    /// Rate over the changes of the last `window` before `now`, measured from the last change
    /// before the window. Zero when nothing was sent in the window.
    pub(crate) fn rate(&mut self, now: Instant, window: Duration) -> Rate {
        let start = now.checked_sub(window).unwrap_or(now);
        // Keep one change at or before the window's start: the reference.
        while self.marks.len() > 1 && self.marks[1].at <= start {
            self.marks.pop_front();
        }
        let (Some(first), Some(last)) = (self.marks.front(), self.marks.back()) else {
            return Rate::default();
        };
        let span = last.at.saturating_duration_since(first.at).as_secs_f64();
        if last.at <= start || span <= 0.0 {
            return Rate::default();
        }
        Rate {
            hz: (last.messages - first.messages) as f64 / span,
            bytes_per_s: (last.bytes - first.bytes) as f64 / span,
        }
    }
}

/// Latency samples of the last window.
#[derive(Debug, Default)]
pub(crate) struct LatencyWindow {
    samples: VecDeque<(Instant, u64)>,
}

/// Latency percentiles over a window, ns.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Latency {
    pub(crate) samples: usize,
    pub(crate) p50_ns: u64,
    pub(crate) p99_ns: u64,
    pub(crate) max_ns: u64,
}

impl LatencyWindow {
    /// Records one message's latency, read at `at`.
    pub(crate) fn push(&mut self, at: Instant, ns: u64) {
        if self.samples.len() == MAX_SAMPLES {
            self.samples.pop_front();
        }
        self.samples.push_back((at, ns));
    }

    /// Percentiles of the samples of the last `window` before `now` (`None`: no sample).
    pub(crate) fn latency(&mut self, now: Instant, window: Duration) -> Option<Latency> {
        let start = now.checked_sub(window).unwrap_or(now);
        while self.samples.front().is_some_and(|(at, _)| *at < start) {
            self.samples.pop_front();
        }
        let mut v: Vec<u64> = self.samples.iter().map(|(_, ns)| *ns).collect();
        v.sort_unstable();
        Some(Latency {
            samples: v.len(),
            p50_ns: quantile(&v, 0.5)?,
            p99_ns: quantile(&v, 0.99)?,
            max_ns: *v.last()?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mark(t0: Instant, ms: u64, messages: u64) -> Mark {
        Mark {
            at: t0 + Duration::from_millis(ms),
            messages,
            bytes: messages * 16,
        }
    }

    #[test]
    fn rate_spans_the_changes_from_the_last_one_before_the_window() {
        let t0 = Instant::now();
        let mut w = RateWindow::default();
        // 100 Hz: one message every 10 ms for 2 s.
        for i in 1..=200 {
            w.push(mark(t0, i * 10, i));
        }
        let r = w.rate(t0 + Duration::from_millis(2005), Duration::from_secs(1));
        assert!((r.hz - 100.0).abs() < 1e-9, "{r:?}");
        assert!((r.bytes_per_s - 1600.0).abs() < 1e-6, "{r:?}");
    }

    #[test]
    fn a_silent_topic_reads_zero() {
        let t0 = Instant::now();
        let mut w = RateWindow::default();
        w.push(mark(t0, 10, 1));
        w.push(mark(t0, 20, 2));
        let r = w.rate(t0 + Duration::from_secs(5), Duration::from_secs(1));
        assert_eq!(r, Rate::default());
        assert_eq!(
            RateWindow::default().rate(t0, Duration::from_secs(1)),
            Rate::default()
        );
    }

    #[test]
    fn latency_keeps_only_the_window() {
        let t0 = Instant::now();
        let mut w = LatencyWindow::default();
        w.push(t0, 1_000_000);
        for i in 1..=100 {
            w.push(t0 + Duration::from_secs(2), i);
        }
        let l = w
            .latency(t0 + Duration::from_millis(2500), Duration::from_secs(1))
            .unwrap();
        assert_eq!(l.samples, 100);
        assert_eq!((l.p50_ns, l.p99_ns, l.max_ns), (50, 99, 100));
        assert_eq!(
            w.latency(t0 + Duration::from_secs(9), Duration::from_secs(1)),
            None
        );
    }
}
