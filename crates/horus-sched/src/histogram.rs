//! A fixed-size log-linear histogram of nanosecond values with one writer and
//! any number of concurrent readers.
//!
//! Layout (the HdrHistogram idea with 4 sub-bucket bits): values below 16 ns
//! get one bucket each; above, every power of two `[2^e, 2^(e+1))` is split
//! into 16 equal buckets, so a bucket is at most 1/16 of its lower bound wide
//! and reporting its midpoint is within ±3.2 % of any value in it. Values of
//! 2^40 ns (~18 min) and more share the last bucket. 592 buckets, 4.7 KiB,
//! no allocation after construction.
//!
//! Concurrency: exactly one thread records at a time (the one ticking the
//! node; hand-offs between threads go through the node's mutex, which orders
//! them). Because there is a single writer, an increment is a relaxed load
//! plus a relaxed store — a plain `mov` on x86, no locked instruction. Readers
//! load relaxed and may see a histogram a few records behind, or `count` one
//! ahead of the buckets; the percentile walk tolerates both.

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

const SUB_BITS: u32 = 4;
const SUB: usize = 1 << SUB_BITS;
const MAX_EXP: u32 = 40;
/// Number of buckets.
pub(crate) const BUCKETS: usize = SUB + (MAX_EXP - SUB_BITS) as usize * SUB;

/// Bucket index of `v`.
fn index(v: u64) -> usize {
    if v < SUB as u64 {
        return v as usize;
    }
    let exp = 63 - v.leading_zeros(); // position of the top bit, >= SUB_BITS
    if exp >= MAX_EXP {
        return BUCKETS - 1;
    }
    let shift = exp - SUB_BITS;
    // The top SUB_BITS+1 bits are 1mmmm; keep mmmm.
    let mantissa = (v >> shift) as usize & (SUB - 1);
    SUB + shift as usize * SUB + mantissa
}

/// Midpoint of bucket `i` (exact for the linear buckets).
fn midpoint(i: usize) -> u64 {
    if i < SUB {
        return i as u64;
    }
    let shift = ((i - SUB) / SUB) as u32;
    let mantissa = ((i - SUB) % SUB) as u64;
    let lo = (SUB as u64 + mantissa) << shift;
    lo + ((1_u64 << shift) >> 1)
}

/// Adds one to a single-writer counter (see the module docs).
#[inline]
pub(crate) fn bump(a: &AtomicU64, by: u64) {
    a.store(a.load(Relaxed).wrapping_add(by), Relaxed);
}

/// The histogram; see the module docs.
pub(crate) struct AtomicHistogram {
    buckets: Box<[AtomicU64]>,
    count: AtomicU64,
    sum: AtomicU64,
    min: AtomicU64,
    max: AtomicU64,
}

impl AtomicHistogram {
    pub(crate) fn new() -> AtomicHistogram {
        AtomicHistogram {
            buckets: (0..BUCKETS).map(|_| AtomicU64::new(0)).collect(),
            count: AtomicU64::new(0),
            sum: AtomicU64::new(0),
            min: AtomicU64::new(u64::MAX),
            max: AtomicU64::new(0),
        }
    }

    /// Records `v` nanoseconds. Single writer only.
    #[inline]
    pub(crate) fn record(&self, v: u64) {
        let i = index(v);
        debug_assert!(i < BUCKETS);
        bump(&self.buckets[i], 1);
        bump(&self.count, 1);
        bump(&self.sum, v);
        if v < self.min.load(Relaxed) {
            self.min.store(v, Relaxed);
        }
        if v > self.max.load(Relaxed) {
            self.max.store(v, Relaxed);
        }
    }

    /// Number of values recorded.
    pub(crate) fn count(&self) -> u64 {
        self.count.load(Relaxed)
    }

    /// Sum of the values recorded.
    pub(crate) fn sum(&self) -> u64 {
        self.sum.load(Relaxed)
    }

    /// Min, the given quantiles, and max, in nanoseconds; all zero if empty.
    /// Quantile estimates are bucket midpoints clamped to `[min, max]`.
    pub(crate) fn quantiles<const N: usize>(&self, qs: [f64; N]) -> (u64, [u64; N], u64) {
        let min = self.min.load(Relaxed);
        let max = self.max.load(Relaxed);
        let counts: Vec<u64> = self.buckets.iter().map(|b| b.load(Relaxed)).collect();
        let total: u64 = counts.iter().sum();
        let mut out = [0; N];
        if total == 0 || min == u64::MAX {
            return (0, out, 0);
        }
        for (o, q) in out.iter_mut().zip(qs) {
            // Rank of the q-quantile, 1-based: the smallest value with at
            // least q·total values at or below it.
            let rank = ((q * total as f64).ceil() as u64).clamp(1, total);
            let mut seen = 0;
            for (i, c) in counts.iter().enumerate() {
                seen += c;
                if seen >= rank {
                    *o = midpoint(i).clamp(min, max);
                    break;
                }
            }
        }
        (min, out, max)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn index_and_midpoint_agree() {
        for v in [
            0,
            1,
            15,
            16,
            17,
            31,
            32,
            33,
            1000,
            999_999,
            123_456_789,
            1 << 39,
        ] {
            let m = midpoint(index(v));
            let err = (m as f64 - v as f64).abs() / (v.max(1) as f64);
            assert!(err <= 0.033, "v={v} midpoint={m} err={err}");
        }
        assert_eq!(index(u64::MAX), BUCKETS - 1);
        // Indices are monotonic in the value.
        let mut last = 0;
        for v in (0..100_000).step_by(7) {
            let i = index(v);
            assert!(i >= last);
            last = i;
        }
    }

    #[test]
    fn quantiles_of_a_uniform_range() {
        let h = AtomicHistogram::new();
        for v in 1..=10_000 {
            h.record(v * 1_000);
        }
        let (min, [p50, p99], max) = h.quantiles([0.5, 0.99]);
        assert_eq!(min, 1_000);
        assert_eq!(max, 10_000_000);
        assert!((p50 as f64 / 5_000_000.0 - 1.0).abs() < 0.04, "p50={p50}");
        assert!((p99 as f64 / 9_900_000.0 - 1.0).abs() < 0.04, "p99={p99}");
        assert_eq!(h.count(), 10_000);
    }

    #[test]
    fn empty_histogram_reports_zeros() {
        assert_eq!(AtomicHistogram::new().quantiles([0.5]), (0, [0], 0));
    }
}
