//! The latency horus delivers: each subscriber's own histogram of publish stamp to receive
//! (kept by the subscriber in the topic's segment, see [`horus::LatencySnapshot`]), as the
//! monitor shows it — per subscriber, and merged over a topic's subscribers. Unlike the
//! monitor's own figure (stamp to its poll) it does not include the monitor's polling.

use horus::LatencySnapshot;
use serde::Serialize;

/// Delivery latency as one subscriber (or a topic's subscribers together) measured it,
/// since it joined.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct DeliveredRow {
    /// Messages measured (received with a plausible stamp).
    pub samples: u64,
    /// Median, µs (the top of its histogram bucket: at most 25 % above).
    pub p50_us: f64,
    /// 99th percentile, µs (as the median).
    pub p99_us: f64,
    /// Largest, µs.
    pub max_us: f64,
    /// Messages whose stamp was not a wall-clock publish time (not measured).
    pub implausible_stamps: u64,
}

impl DeliveredRow {
    /// One histogram's figures; `None` when it holds nothing (the type has no stamp, or no
    /// stamped message arrived yet).
    pub fn of(h: &LatencySnapshot) -> Option<DeliveredRow> {
        let us = |ns: u64| ns as f64 / 1e3;
        Some(DeliveredRow {
            samples: h.total(),
            p50_us: us(h.quantile_ns(0.5)?),
            p99_us: us(h.quantile_ns(0.99)?),
            max_us: us(h.max_ns),
            implausible_stamps: h.implausible,
        })
    }

    /// The histograms merged.
    pub fn merged<'a>(hs: impl IntoIterator<Item = &'a LatencySnapshot>) -> Option<DeliveredRow> {
        let mut all = LatencySnapshot::default();
        for h in hs {
            all.merge(h);
        }
        Self::of(&all)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hist(values: &[u64]) -> LatencySnapshot {
        let mut h = LatencySnapshot::default();
        for &v in values {
            h.buckets[horus::latency_bucket_of(v)] += 1;
            h.count += 1;
            h.max_ns = h.max_ns.max(v);
        }
        h
    }

    #[test]
    fn an_empty_histogram_shows_nothing_and_merging_adds_up() {
        assert_eq!(DeliveredRow::of(&LatencySnapshot::default()), None);
        let a = hist(&[1_000, 2_000]);
        let b = hist(&[40_000]);
        let m = DeliveredRow::merged([&a, &b]).unwrap();
        assert_eq!(m.samples, 3);
        assert_eq!(m.max_us, 40.0);
        assert!((2.0..=2.5).contains(&m.p50_us), "{m:?}");
        assert_eq!(m.p99_us, 40.0);
    }
}
