//! The one per-sample timer every system in a run is measured with.
//!
//! On x86_64 a timestamp is the time-stamp counter read as `lfence; rdtsc; lfence`:
//! the first fence keeps the read from being hoisted above the work being timed,
//! the second keeps the work after it from starting before the read. The counter
//! frequency is calibrated once against [`Instant`] over ~50 ms. On other
//! architectures a timestamp is nanoseconds since a process-wide [`Instant`].
//!
//! Timestamps are raw ticks; convert a pair with [`Clock::elapsed_ns`] *after* the
//! timed region so the conversion never lands inside a sample. Timestamps are only
//! comparable within one process (each process calibrates on its own).

use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// How long the calibration compares the tick counter with `Instant`.
const CALIBRATION_WINDOW: Duration = Duration::from_millis(50);

/// Calibration result, computed once per process.
#[derive(Debug)]
struct Calibration {
    /// Nanoseconds per tick.
    ns_per_tick: f64,
    /// Smallest observed cost of two back-to-back [`Clock::now`] calls, in ns.
    read_overhead_ns: f64,
    /// Median step between successive distinct readings, in ns (the resolution).
    resolution_ns: f64,
    /// Human-readable method line.
    description: String,
}

static CALIBRATION: OnceLock<Calibration> = OnceLock::new();

/// The benchmark clock. All functions are associated; there is no state to pass.
#[derive(Debug, Clone, Copy)]
pub struct Clock;

impl Clock {
    /// Reads the clock; the unit is ticks (see [`Clock::elapsed_ns`]).
    #[inline(always)]
    pub fn now() -> u64 {
        imp::now()
    }

    /// Nanoseconds between two timestamps taken in this process (0 if `end < start`).
    #[inline]
    pub fn elapsed_ns(start: u64, end: u64) -> u64 {
        let ticks = end.saturating_sub(start);
        (ticks as f64 * Self::calibration().ns_per_tick).round() as u64
    }

    /// Forces calibration now (it otherwise happens on first use of
    /// [`Clock::elapsed_ns`]), so the ~50 ms it takes never lands inside a run.
    pub fn calibrate() {
        let _ = Self::calibration();
    }

    /// The method line for reports, e.g.
    /// `"rdtsc (lfence-ordered) @ 2.450 GHz, calibrated against Instant over 50 ms; read cost ~9 ns"`.
    pub fn describe() -> String {
        Self::calibration().description.clone()
    }

    /// Smallest observed cost of one timestamp pair, in ns (included in every sample).
    pub fn read_overhead_ns() -> f64 {
        Self::calibration().read_overhead_ns
    }

    /// Median step between successive distinct readings, in ns.
    pub fn resolution_ns() -> f64 {
        Self::calibration().resolution_ns
    }

    fn calibration() -> &'static Calibration {
        CALIBRATION.get_or_init(calibrate)
    }
}

fn calibrate() -> Calibration {
    let (t0, c0) = (Instant::now(), imp::now());
    std::thread::sleep(CALIBRATION_WINDOW);
    let (c1, t1) = (imp::now(), Instant::now());
    let ns = t1.duration_since(t0).as_nanos() as f64;
    let ticks = c1.saturating_sub(c0).max(1) as f64;
    let ns_per_tick = if imp::IS_TSC { ns / ticks } else { 1.0 };

    // Cost of a timestamp pair: minimum over many back-to-back reads.
    let mut best = u64::MAX;
    for _ in 0..10_000 {
        let a = imp::now();
        let b = imp::now();
        best = best.min(b.saturating_sub(a));
    }
    let read_overhead_ns = best as f64 * ns_per_tick;

    // Resolution: some counters (e.g. AMD's TSC) advance in steps of several ticks.
    let mut steps: Vec<u64> = (0..1001)
        .map(|_| {
            let a = imp::now();
            let mut b = imp::now();
            while b == a {
                b = imp::now();
            }
            b - a
        })
        .collect();
    steps.sort_unstable();
    let resolution_ns = steps[steps.len() / 2] as f64 * ns_per_tick;

    let description = if imp::IS_TSC {
        let warning = if imp::tsc_is_invariant() {
            ""
        } else {
            " (WARNING: /proc/cpuinfo lacks constant_tsc/nonstop_tsc)"
        };
        format!(
            "rdtsc (lfence-ordered) @ {:.3} GHz, calibrated against Instant over {} ms{}; \
             resolution ~{:.0} ns; a timestamp pair costs ~{:.0} ns (inside every sample)",
            1.0 / ns_per_tick,
            CALIBRATION_WINDOW.as_millis(),
            warning,
            resolution_ns,
            read_overhead_ns
        )
    } else {
        format!(
            "std::time::Instant (monotonic clock); timestamp pair costs ~{read_overhead_ns:.0} ns"
        )
    };
    Calibration {
        ns_per_tick,
        read_overhead_ns,
        resolution_ns,
        description,
    }
}

#[cfg(target_arch = "x86_64")]
mod imp {
    use std::arch::x86_64::{_mm_lfence, _rdtsc};

    pub(super) const IS_TSC: bool = true;

    #[inline(always)]
    pub(super) fn now() -> u64 {
        // SAFETY: `lfence` (SSE2) and `rdtsc` are part of the x86_64 baseline, so the
        // instructions exist on every CPU this code can run on; neither touches memory.
        unsafe {
            _mm_lfence();
            let t = _rdtsc();
            _mm_lfence();
            t
        }
    }

    /// Whether the kernel reports a constant-rate, always-running TSC.
    pub(super) fn tsc_is_invariant() -> bool {
        let info = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
        info.lines()
            .find(|l| l.starts_with("flags"))
            .is_some_and(|l| {
                let mut flags = l.split_whitespace();
                let constant = flags.clone().any(|f| f == "constant_tsc");
                constant && flags.any(|f| f == "nonstop_tsc")
            })
    }
}

#[cfg(not(target_arch = "x86_64"))]
mod imp {
    use std::sync::OnceLock;
    use std::time::Instant;

    pub(super) const IS_TSC: bool = false;

    static EPOCH: OnceLock<Instant> = OnceLock::new();

    #[inline(always)]
    pub(super) fn now() -> u64 {
        EPOCH.get_or_init(Instant::now).elapsed().as_nanos() as u64
    }

    pub(super) fn tsc_is_invariant() -> bool {
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn elapsed_tracks_instant_within_ten_percent() {
        Clock::calibrate();
        let (t0, c0) = (Instant::now(), Clock::now());
        std::thread::sleep(Duration::from_millis(20));
        let (c1, t1) = (Clock::now(), Instant::now());
        let want = t1.duration_since(t0).as_nanos() as f64;
        let got = Clock::elapsed_ns(c0, c1) as f64;
        assert!(
            (got - want).abs() / want < 0.1,
            "clock {got} ns vs Instant {want} ns"
        );
    }

    #[test]
    fn clock_is_monotonic_and_described() {
        let a = Clock::now();
        let b = Clock::now();
        assert!(b >= a);
        assert_eq!(Clock::elapsed_ns(b, a), 0);
        assert!(!Clock::describe().is_empty());
    }
}
