//! Each subscriber's histogram of delivery latency (publish stamp to receive), kept in the
//! channel so that any process mapping it — `horus topic info`, the monitor — reads what
//! the real receivers measured, not what an observer polling on its own clock sees.
//!
//! The histogram is log-linear, as HdrHistogram's (Gil Tene) with two significant bits:
//! values below 4 ns have a bucket each; above, every power of two is split into four
//! equal buckets, so a bucket is at most 25 % wide and any percentile read from it is off by
//! less than that. [`BUCKETS`] of them reach 2^37 ns (137 s); larger values land in the last
//! one. A latency is recorded in nanoseconds.
//!
//! Memory: one [`LatencyRecord`] per subscriber place (`LATENCY_RECORD_SIZE` bytes, whole
//! cache lines), in its own region after the subscriber records (see [`crate::layout`]).
//!
//! Writers and readers: only the subscriber that owns the place writes its record (the
//! port's `&mut self` methods), so every update is a relaxed load and a relaxed store of
//! the same word, with no read-modify-write instruction on the receive path. Readers
//! (observers in other processes) load each word once, relaxed. No ordering between words
//! is promised: a reader racing a receive may see the bucket incremented but not yet the
//! count, or the reverse — one sample off, which a statistic tolerates. Nothing read here is
//! used as an index or a size, and the record is untrusted memory (a hostile or corrupt peer
//! may write anything): [`LatencySnapshot`]'s figures use saturating arithmetic and clamp,
//! so garbage gives wrong numbers, never a panic or an out-of-bounds read.

use crate::sync::{AtomicU64, Ordering};

/// Buckets per histogram.
pub const BUCKETS: usize = 144;
/// Sub-buckets per power of two: `1 << SUB_BITS`.
const SUB_BITS: u32 = 2;
const SUB: u64 = 1 << SUB_BITS;

/// Bytes of one subscriber's latency record (a multiple of 64).
pub(crate) const LATENCY_RECORD_SIZE: usize = std::mem::size_of::<LatencyRecord>();

/// One subscriber's latency histogram in shared memory.
#[repr(C)]
pub(crate) struct LatencyRecord {
    /// Latencies recorded.
    count: AtomicU64,
    /// Their sum in ns (wrapping; for the mean).
    sum: AtomicU64,
    /// The largest recorded.
    max: AtomicU64,
    /// Stamps that cannot be publish times (in the future, or implausibly old): counted,
    /// not recorded.
    implausible: AtomicU64,
    _pad: [u64; 4],
    buckets: [AtomicU64; BUCKETS],
}

#[cfg(not(loom))]
const _: () =
    assert!(LATENCY_RECORD_SIZE.is_multiple_of(64) && LATENCY_RECORD_SIZE == 64 + 8 * BUCKETS);

/// The bucket of a latency of `ns` nanoseconds.
#[inline]
pub fn bucket_of(ns: u64) -> usize {
    if ns < SUB {
        return ns as usize;
    }
    // e ≥ SUB_BITS: the power of two below `ns`; the SUB_BITS bits after the leading one
    // pick the sub-bucket.
    let e = 63 - ns.leading_zeros();
    let sub = (ns >> (e - SUB_BITS)) & (SUB - 1);
    let b = (e - SUB_BITS + 1) as usize * SUB as usize + sub as usize;
    b.min(BUCKETS - 1)
}

/// The smallest and largest latency (ns) bucket `b` holds (the last bucket also holds
/// everything beyond it).
pub fn bucket_range(b: usize) -> (u64, u64) {
    let b = b.min(BUCKETS - 1) as u64;
    if b < SUB {
        return (b, b);
    }
    let e = b / SUB - 1 + u64::from(SUB_BITS);
    let width = 1u64 << (e - u64::from(SUB_BITS));
    let low = (SUB + b % SUB) << (e - u64::from(SUB_BITS));
    (low, low + (width - 1))
}

impl LatencyRecord {
    /// Zeroes the record: by a subscriber taking the place, before it joins (the join's
    /// Release publishes the zeros with the rest of the place's initialisation).
    pub(crate) fn reset(&self) {
        for w in [&self.count, &self.sum, &self.max, &self.implausible] {
            w.store(0, Ordering::Relaxed);
        }
        for b in &self.buckets {
            b.store(0, Ordering::Relaxed);
        }
    }

    /// Records a latency. Only the place's owner calls this (single writer: a load and a
    /// store suffice, see the module docs).
    #[inline]
    pub(crate) fn record(&self, ns: u64) {
        bump(&self.buckets[bucket_of(ns)]);
        bump(&self.count);
        let sum = &self.sum;
        sum.store(
            sum.load(Ordering::Relaxed).wrapping_add(ns),
            Ordering::Relaxed,
        );
        if ns > self.max.load(Ordering::Relaxed) {
            self.max.store(ns, Ordering::Relaxed);
        }
    }

    /// Counts a stamp that cannot be a publish time. Owner only.
    #[inline]
    pub(crate) fn count_implausible(&self) {
        bump(&self.implausible);
    }

    /// Copies the record out (any process; untrusted).
    pub(crate) fn snapshot(&self) -> LatencySnapshot {
        let mut buckets = [0u64; BUCKETS];
        for (o, b) in buckets.iter_mut().zip(&self.buckets) {
            *o = b.load(Ordering::Relaxed);
        }
        LatencySnapshot {
            count: self.count.load(Ordering::Relaxed),
            sum_ns: self.sum.load(Ordering::Relaxed),
            max_ns: self.max.load(Ordering::Relaxed),
            implausible: self.implausible.load(Ordering::Relaxed),
            buckets,
        }
    }
}

#[inline]
fn bump(w: &AtomicU64) {
    w.store(w.load(Ordering::Relaxed).wrapping_add(1), Ordering::Relaxed);
}

/// A copy of one subscriber's latency histogram, as read from the channel. The words are
/// whatever the segment held: every figure below is computed without trusting them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LatencySnapshot {
    /// Latencies recorded (the messages received with a plausible stamp).
    pub count: u64,
    /// Their sum in ns (wrapping).
    pub sum_ns: u64,
    /// The largest, in ns.
    pub max_ns: u64,
    /// Stamps that could not be publish times (in the future, or too old), not recorded.
    pub implausible: u64,
    /// Count per bucket (see [`bucket_range`]).
    pub buckets: [u64; BUCKETS],
}

impl Default for LatencySnapshot {
    fn default() -> Self {
        LatencySnapshot {
            count: 0,
            sum_ns: 0,
            max_ns: 0,
            implausible: 0,
            buckets: [0; BUCKETS],
        }
    }
}

impl LatencySnapshot {
    /// The samples the buckets hold (saturating: garbage counts cannot overflow).
    pub fn total(&self) -> u64 {
        self.buckets.iter().fold(0u64, |a, &b| a.saturating_add(b))
    }

    /// The `q` quantile (0..=1, clamped) in ns, nearest rank over the buckets: the top of
    /// the bucket it falls in, never above [`max_ns`](Self::max_ns) when that is in the
    /// same bucket. `None` without samples.
    pub fn quantile_ns(&self, q: f64) -> Option<u64> {
        let total = self.total();
        if total == 0 {
            return None;
        }
        let q = if q.is_nan() { 1.0 } else { q.clamp(0.0, 1.0) };
        // The rank, 1..=total (f64 rounding near u64::MAX is clamped).
        let rank = ((q * total as f64).ceil() as u64).clamp(1, total);
        let mut seen = 0u64;
        for (b, &n) in self.buckets.iter().enumerate() {
            seen = seen.saturating_add(n);
            if seen >= rank {
                let (low, high) = bucket_range(b);
                return Some(if (low..=high).contains(&self.max_ns) {
                    self.max_ns
                } else {
                    high
                });
            }
        }
        None
    }

    /// Merges another histogram into this one (saturating).
    pub fn merge(&mut self, other: &LatencySnapshot) {
        self.count = self.count.saturating_add(other.count);
        self.sum_ns = self.sum_ns.wrapping_add(other.sum_ns);
        self.max_ns = self.max_ns.max(other.max_ns);
        self.implausible = self.implausible.saturating_add(other.implausible);
        for (a, b) in self.buckets.iter_mut().zip(&other.buckets) {
            *a = a.saturating_add(*b);
        }
    }

    /// What was recorded since `earlier`, a snapshot of the same place taken before
    /// (saturating: a place reused since reads as empty, not negative). The maximum is the
    /// top of the highest bucket that grew, clamped to the overall maximum.
    pub fn since(&self, earlier: &LatencySnapshot) -> LatencySnapshot {
        let mut d = LatencySnapshot {
            count: self.count.saturating_sub(earlier.count),
            sum_ns: self.sum_ns.wrapping_sub(earlier.sum_ns),
            max_ns: 0,
            implausible: self.implausible.saturating_sub(earlier.implausible),
            buckets: [0; BUCKETS],
        };
        for (b, (now, then)) in self.buckets.iter().zip(&earlier.buckets).enumerate() {
            d.buckets[b] = now.saturating_sub(*then);
            if d.buckets[b] != 0 {
                let (low, high) = bucket_range(b);
                d.max_ns = self.max_ns.clamp(low, high);
            }
        }
        d
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    fn record() -> Box<LatencyRecord> {
        // SAFETY: LatencyRecord is atomics and padding of u64s: all-zero is a valid value.
        Box::new(unsafe { std::mem::zeroed() })
    }

    #[test]
    fn buckets_are_log_linear_contiguous_and_monotonic() {
        let mut next = 0;
        for b in 0..BUCKETS - 1 {
            let (low, high) = bucket_range(b);
            assert_eq!(low, next, "bucket {b} starts where {} ended", b.max(1) - 1);
            assert!(high >= low);
            assert!(high - low <= low / 4 + 1, "bucket {b} at most 25 % wide");
            assert_eq!(bucket_of(low), b);
            assert_eq!(bucket_of(high), b);
            next = high + 1;
        }
        assert_eq!(bucket_of(u64::MAX), BUCKETS - 1);
        assert!(bucket_range(BUCKETS - 1).0 <= 1 << 37);
        assert!(
            bucket_range(BUCKETS - 1).1 >= 100_000_000_000,
            "beyond 100 s"
        );
    }

    #[test]
    fn quantiles_come_from_the_recorded_values() {
        let r = record();
        for ns in 1..=1000u64 {
            r.record(ns * 1000);
        }
        r.count_implausible();
        let s = r.snapshot();
        assert_eq!((s.count, s.total(), s.implausible), (1000, 1000, 1));
        assert_eq!(s.max_ns, 1_000_000);
        let p50 = s.quantile_ns(0.5).unwrap();
        assert!((500_000..=500_000 * 5 / 4).contains(&p50), "{p50}");
        let p99 = s.quantile_ns(0.99).unwrap();
        assert!((990_000..=1_000_000).contains(&p99), "{p99}");
        assert_eq!(s.quantile_ns(1.0), Some(1_000_000));
        assert_eq!(LatencySnapshot::default().quantile_ns(0.5), None);
        r.reset();
        assert_eq!(r.snapshot(), LatencySnapshot::default());
    }

    /// The record is untrusted memory: any words give figures, never a panic.
    #[test]
    fn garbage_histograms_give_figures_not_panics() {
        let s = LatencySnapshot {
            count: u64::MAX,
            sum_ns: u64::MAX,
            max_ns: u64::MAX,
            implausible: u64::MAX,
            buckets: [u64::MAX; BUCKETS],
        };
        assert_eq!(s.total(), u64::MAX);
        for q in [0.0, 0.5, 0.99, 1.0, -3.0, 7.0, f64::NAN, f64::INFINITY] {
            assert!(s.quantile_ns(q).is_some());
        }
        let mut m = s.clone();
        m.merge(&s);
        assert_eq!(m.count, u64::MAX);
        let d = LatencySnapshot::default().since(&s);
        assert_eq!((d.count, d.total()), (0, 0));
        let d = s.since(&LatencySnapshot::default());
        assert_eq!(d.total(), u64::MAX);
    }

    #[test]
    fn since_gives_what_was_recorded_in_between() {
        let r = record();
        r.record(100);
        let before = r.snapshot();
        r.record(5_000);
        r.record(6_000);
        let d = r.snapshot().since(&before);
        assert_eq!((d.count, d.total()), (2, 2));
        assert_eq!(d.max_ns, 6_000);
        assert!(d.quantile_ns(0.0).unwrap() >= 5_000);
    }
}
