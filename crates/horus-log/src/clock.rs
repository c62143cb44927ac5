//! Record time stamps: the time-stamp counter on x86_64 (a few ns, no system call),
//! CLOCK_MONOTONIC nanoseconds elsewhere. The segment header carries a base pair
//! (clock reading, Unix time) and the counter's period, so any reader — also after the
//! process died — turns a stamp into wall-clock time.

use crate::layout::{CLOCK_MONO, CLOCK_TSC};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// The clock of this build: one of the `layout::CLOCK_*` kinds.
pub(crate) const KIND: u32 = if cfg!(target_arch = "x86_64") {
    CLOCK_TSC
} else {
    CLOCK_MONO
};

/// Reads the clock (ticks of [`KIND`]).
#[inline(always)]
pub(crate) fn now() -> u64 {
    #[cfg(target_arch = "x86_64")]
    {
        // SAFETY: rdtsc has no preconditions; every x86_64 CPU has it.
        unsafe { core::arch::x86_64::_rdtsc() }
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        mono_ns()
    }
}

/// CLOCK_MONOTONIC in nanoseconds.
#[allow(dead_code)]
pub(crate) fn mono_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: ts is a valid out-pointer; CLOCK_MONOTONIC always exists.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// Unix time in nanoseconds.
pub(crate) fn unix_ns() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64)
}

/// `(kind, base reading, Unix ns at that reading, ns per tick)`, measured over ~1 ms
/// (the drain thread refines the period later with [`period_since`]).
pub(crate) fn calibrate() -> (u32, u64, u64, f64) {
    let (base, unix) = (now(), unix_ns());
    if KIND == CLOCK_MONO {
        return (KIND, base, unix, 1.0);
    }
    let start = Instant::now();
    let t0 = now();
    while start.elapsed() < Duration::from_millis(1) {
        std::hint::spin_loop();
    }
    let (t1, el) = (now(), start.elapsed());
    let period = el.as_nanos() as f64 / (t1.wrapping_sub(t0).max(1)) as f64;
    (KIND, base, unix, period)
}

/// The period measured from the base pair to now (None until enough time has passed).
pub(crate) fn period_since(base: u64, unix_base: u64) -> Option<f64> {
    let (t, u) = (now(), unix_ns());
    let ticks = t.wrapping_sub(base);
    let ns = u.checked_sub(unix_base)?;
    (KIND == CLOCK_TSC && ns > 10_000_000 && ticks > 0).then(|| ns as f64 / ticks as f64)
}

/// Unix nanoseconds of a stamp, given a segment's clock parameters.
pub(crate) fn to_unix_ns(stamp: u64, base: u64, unix_base: u64, period: f64) -> u64 {
    let delta = stamp.wrapping_sub(base) as i64 as f64 * period;
    (unix_base as f64 + delta).max(0.0) as u64
}
