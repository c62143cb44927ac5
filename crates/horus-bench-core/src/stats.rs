//! Order statistics of per-round-trip samples.
//!
//! Percentiles use the nearest-rank definition on the sorted samples: the p-th
//! percentile is the smallest sample such that at least p % of samples are `<=` it.
//! Nothing is interpolated and nothing is discarded as an "outlier": the max is the
//! worst round trip that actually happened.

use serde::{Deserialize, Serialize};

/// Distribution of round-trip times for one measured loop.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    /// Number of measured round trips (warm-up excluded).
    pub iterations: u64,
    /// Fastest round trip, ns.
    pub min_ns: u64,
    /// 50th percentile, ns.
    pub median_ns: u64,
    /// 99th percentile, ns.
    pub p99_ns: u64,
    /// 99.9th percentile, ns.
    pub p999_ns: u64,
    /// Slowest round trip, ns.
    pub max_ns: u64,
    /// Arithmetic mean, ns.
    pub mean_ns: f64,
    /// Round trips completed divided by the wall time of the whole measured loop
    /// (so it includes the timer reads and loop overhead between samples).
    pub msgs_per_sec: f64,
}

impl Summary {
    /// Builds the summary from per-round-trip nanoseconds and the wall time of the
    /// measured loop that produced them. Returns `None` for an empty sample set.
    pub fn from_samples(mut samples_ns: Vec<u64>, wall_ns: u64) -> Option<Self> {
        if samples_ns.is_empty() {
            return None;
        }
        samples_ns.sort_unstable();
        let n = samples_ns.len();
        let sum: u128 = samples_ns.iter().map(|&s| u128::from(s)).sum();
        let wall_s = wall_ns.max(1) as f64 / 1e9;
        Some(Self {
            iterations: n as u64,
            min_ns: samples_ns[0],
            median_ns: nearest_rank(&samples_ns, 500),
            p99_ns: nearest_rank(&samples_ns, 990),
            p999_ns: nearest_rank(&samples_ns, 999),
            max_ns: samples_ns[n - 1],
            mean_ns: sum as f64 / n as f64,
            msgs_per_sec: n as f64 / wall_s,
        })
    }
}

/// One-way throughput of a burst of messages.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Throughput {
    /// Messages sent and confirmed received.
    pub messages: u64,
    /// From the first send to the receiver's confirmation of the last message, ns.
    pub elapsed_ns: u64,
    /// `messages / elapsed`.
    pub msgs_per_sec: f64,
}

impl Throughput {
    /// Builds the figure from a message count and the elapsed time.
    pub fn new(messages: u64, elapsed_ns: u64) -> Self {
        Self {
            messages,
            elapsed_ns,
            msgs_per_sec: messages as f64 / (elapsed_ns.max(1) as f64 / 1e9),
        }
    }
}

/// Median of `v` (mean of the middle two for an even count); `NaN` if empty (the
/// summary of a statistic over rounds).
pub fn median(v: &[f64]) -> f64 {
    let mut s = v.to_vec();
    s.sort_by(f64::total_cmp);
    match s.len() {
        0 => f64::NAN,
        n if n % 2 == 1 => s[n / 2],
        n => (s[n / 2 - 1] + s[n / 2]) / 2.0,
    }
}

/// Nearest-rank percentile of an ascending, non-empty slice; the percentile is given
/// in per mille (999 = p99.9) so the rank is exact integer arithmetic.
fn nearest_rank(sorted: &[u64], per_mille: usize) -> u64 {
    debug_assert!(!sorted.is_empty() && per_mille <= 1000);
    let n = sorted.len();
    let rank = (n * per_mille).div_ceil(1000);
    sorted[rank.clamp(1, n) - 1]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn median_of_even_and_odd_counts() {
        assert_eq!(median(&[3.0, 1.0, 2.0, 10.0]), 2.5);
        assert_eq!(median(&[3.0, 1.0, 2.0]), 2.0);
        assert!(median(&[]).is_nan());
    }

    #[test]
    fn percentiles_of_one_to_thousand() {
        let samples: Vec<u64> = (1..=1000).rev().collect();
        let s = Summary::from_samples(samples, 1_000_000).unwrap();
        assert_eq!(s.iterations, 1000);
        assert_eq!(s.min_ns, 1);
        assert_eq!(s.median_ns, 500);
        assert_eq!(s.p99_ns, 990);
        assert_eq!(s.p999_ns, 999);
        assert_eq!(s.max_ns, 1000);
        assert_eq!(s.mean_ns, 500.5);
        assert_eq!(s.msgs_per_sec, 1_000_000.0);
    }

    #[test]
    fn single_sample_is_every_percentile() {
        let s = Summary::from_samples(vec![42], 42).unwrap();
        assert_eq!(
            (s.min_ns, s.median_ns, s.p999_ns, s.max_ns),
            (42, 42, 42, 42)
        );
    }

    #[test]
    fn empty_samples_have_no_summary() {
        assert!(Summary::from_samples(Vec::new(), 1).is_none());
    }

    #[test]
    fn throughput_is_messages_per_second() {
        assert_eq!(Throughput::new(500, 250_000_000).msgs_per_sec, 2000.0);
    }
}
