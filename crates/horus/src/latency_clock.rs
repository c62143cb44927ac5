//! The wall clock as a receiving subscriber reads it for every stamped message, at a
//! fraction of `SystemTime::now()`'s cost (~35 ns on a VM; the histogram's whole cost).
//!
//! On x86-64 with an invariant TSC (`constant_tsc` and `nonstop_tsc` in `/proc/cpuinfo`:
//! it ticks at one rate in every power state and, on such machines, is synchronised across
//! cores), the time is extrapolated from the TSC (`rdtsc`, ~10 ns) along a line anchored
//! on real clock reads: `anchor_ns + (tsc - anchor_tsc) · rate`. The line is re-anchored
//! with a real read whenever it is older than [`REANCHOR`] (by the TSC) or every
//! [`REANCHOR_EVERY`] reads, and the rate is measured between two anchors at least
//! [`MIN_SPAN`] apart. Until a rate is known, after any anchor that disagrees with the
//! line by more than [`TOLERANCE`] (a clock step, a TSC that is not synchronised after
//! all), and wherever the TSC is not invariant or is not x86-64, every read is a real one.
//! An extrapolated read is therefore at most `REANCHOR` of rate error away from a real one
//! (a few ns); the figure it feeds is a histogram with 25 % buckets.

use std::time::Duration;

use crate::stamp::now_ns;

/// Longest extrapolation from an anchor.
const REANCHOR: Duration = Duration::from_millis(10);
/// Reads between two anchors at most (bounds the extrapolation when the rate is unknown).
const REANCHOR_EVERY: u32 = 4096;
/// Shortest span of a rate measurement.
const MIN_SPAN: Duration = Duration::from_millis(5);
/// A new anchor further than this from the line starts the rate over.
const TOLERANCE: Duration = Duration::from_micros(2);

/// One subscriber's clock (each has its own: no sharing, no synchronisation).
#[derive(Clone, Copy, Debug)]
pub(crate) struct LatencyClock {
    /// The TSC is invariant: extrapolate. Otherwise every read is real.
    tsc: bool,
    /// The latest clean real read and its tick: where the line starts.
    anchor_ns: u64,
    anchor_tsc: u64,
    /// The first clean real read since the rate was last reset: the rate is measured from
    /// it, over a span that grows as the subscriber lives (the longer, the more precise).
    origin_ns: u64,
    origin_tsc: u64,
    /// ns per tick, 32.32 fixed point; 0 while unknown.
    rate: u64,
    /// Ticks after the anchor beyond which the line is re-anchored.
    span_ticks: u64,
    reads: u32,
}

/// A real read bracketed by two ticks wider than this was interrupted (preempted, a
/// hypervisor exit): its tick cannot be trusted as the read's.
const MAX_BRACKET_TICKS: u64 = 2_000;

impl LatencyClock {
    pub(crate) fn new() -> LatencyClock {
        LatencyClock {
            tsc: invariant_tsc(),
            anchor_ns: 0,
            anchor_tsc: 0,
            origin_ns: 0,
            origin_tsc: 0,
            rate: 0,
            span_ticks: 0,
            reads: 0,
        }
    }

    /// Now, ns since the UNIX epoch.
    #[inline]
    pub(crate) fn now(&mut self) -> u64 {
        if !self.tsc {
            return now_ns();
        }
        let t = ticks();
        self.reads = self.reads.wrapping_add(1);
        let since = t.wrapping_sub(self.anchor_tsc);
        if self.rate != 0 && since < self.span_ticks && self.reads < REANCHOR_EVERY {
            return self.line(t);
        }
        self.reanchor()
    }

    /// The line's time at tick `t` (≥ the anchor's).
    #[inline]
    fn line(&self, t: u64) -> u64 {
        let since = t.wrapping_sub(self.anchor_tsc);
        self.anchor_ns
            .wrapping_add(((u128::from(since) * u128::from(self.rate)) >> 32) as u64)
    }

    /// A real read; the line moves to it when the read was clean.
    #[cold]
    fn reanchor(&mut self) -> u64 {
        self.reads = 0;
        let before = ticks();
        let now = now_ns();
        let after = ticks();
        if after < before || after - before > MAX_BRACKET_TICKS {
            // Interrupted: the value is right, its tick is not. Use it, keep the line.
            return now;
        }
        let t = before + (after - before) / 2;
        let restart = |c: &mut LatencyClock| {
            (c.anchor_ns, c.anchor_tsc, c.origin_ns, c.origin_tsc, c.rate) = (now, t, now, t, 0);
        };
        if self.origin_ns == 0 || now < self.anchor_ns || t < self.anchor_tsc {
            restart(self);
            return now;
        }
        if self.rate != 0 && self.line(t).abs_diff(now) > TOLERANCE.as_nanos() as u64 {
            // A clock step (NTP, settimeofday) or a TSC that is not what it claims.
            restart(self);
            return now;
        }
        let (dns, dt) = (now - self.origin_ns, t.wrapping_sub(self.origin_tsc));
        if dns >= MIN_SPAN.as_nanos() as u64 && dt > 0 {
            // Over at least MIN_SPAN, and ever longer: the reads' error shrinks to ppb.
            let rate = ((u128::from(dns) << 32) / u128::from(dt)).clamp(1, u128::from(u64::MAX));
            self.rate = rate as u64;
            self.span_ticks = ((u128::from(REANCHOR.as_nanos() as u64) << 32) / rate) as u64;
        }
        (self.anchor_ns, self.anchor_tsc) = (now, t);
        now
    }
}

#[cfg(target_arch = "x86_64")]
#[inline]
fn ticks() -> u64 {
    // SAFETY: rdtsc has no preconditions on x86-64 (it only reads the counter).
    unsafe { core::arch::x86_64::_rdtsc() }
}

#[cfg(not(target_arch = "x86_64"))]
#[inline]
fn ticks() -> u64 {
    0
}

/// Whether this machine's TSC ticks at one rate in every state (and so can be extrapolated).
fn invariant_tsc() -> bool {
    if !cfg!(target_arch = "x86_64") {
        return false;
    }
    static INVARIANT: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *INVARIANT.get_or_init(|| {
        std::fs::read_to_string("/proc/cpuinfo").is_ok_and(|s| {
            s.lines().find(|l| l.starts_with("flags")).is_some_and(|l| {
                let has = |f: &str| l.split_whitespace().any(|w| w == f);
                has("constant_tsc") && has("nonstop_tsc")
            })
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Whatever the machine, the clock never strays from the wall clock by more than the
    /// tolerance plus the reads' own spacing, across re-anchors.
    #[test]
    fn stays_with_the_wall_clock() {
        let mut c = LatencyClock::new();
        let end = std::time::Instant::now() + Duration::from_millis(40);
        let mut checked = 0;
        while std::time::Instant::now() < end {
            let before = now_ns();
            let mine = c.now();
            let after = now_ns();
            // Allow the tolerance either side (and a scheduling hiccup between the reads).
            let slack = TOLERANCE.as_nanos() as u64 + 1_000_000;
            assert!(
                mine + slack >= before && mine <= after + slack,
                "{before} {mine} {after}"
            );
            checked += 1;
        }
        assert!(checked > 0);
    }
}
