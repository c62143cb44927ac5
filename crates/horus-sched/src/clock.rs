//! Time: the monotonic clock, the simulated clock of deterministic mode, and
//! sleeping until an absolute release time.
//!
//! All scheduler times are `u64` nanoseconds on one timeline: for the real
//! clock that is `CLOCK_MONOTONIC`, so an absolute release time can be handed
//! straight to `clock_nanosleep(TIMER_ABSTIME)`; for the simulated clock it
//! starts at 0 and only moves when the scheduler advances it.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// Longest single sleep; threads wake at least this often to notice a stop
/// request even when their next release is far away (a 1 Hz node).
const MAX_SLEEP_SLICE_NS: u64 = 20_000_000;

/// Nanoseconds on `CLOCK_MONOTONIC`.
pub(crate) fn monotonic_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec; CLOCK_MONOTONIC always
    // exists on Linux, so the call cannot fail.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// The scheduler's clock: real (monotonic) or simulated (deterministic mode).
///
/// Cheap to clone; clones share the simulated time.
#[derive(Clone, Debug)]
pub struct Clock {
    sim: Option<Arc<AtomicU64>>,
}

impl Clock {
    /// The real monotonic clock.
    pub(crate) fn real() -> Clock {
        Clock { sim: None }
    }

    /// A simulated clock starting at 0 ns.
    pub(crate) fn simulated() -> Clock {
        Clock {
            sim: Some(Arc::new(AtomicU64::new(0))),
        }
    }

    /// Whether this is the simulated clock of deterministic mode.
    pub fn is_simulated(&self) -> bool {
        self.sim.is_some()
    }

    /// Current time in clock nanoseconds (see the module docs).
    pub(crate) fn now_ns(&self) -> u64 {
        match &self.sim {
            // Relaxed: the simulated time is only advanced by the thread that
            // also runs every node in deterministic mode.
            Some(t) => t.load(Ordering::Relaxed),
            None => monotonic_ns(),
        }
    }

    /// Current time on this clock's timeline.
    pub fn now(&self) -> Duration {
        Duration::from_nanos(self.now_ns())
    }

    /// Moves the simulated clock forward to `ns` (never backwards). No-op on
    /// the real clock.
    pub(crate) fn advance_to(&self, ns: u64) {
        if let Some(t) = &self.sim {
            t.fetch_max(ns, Ordering::Relaxed);
        }
    }
}

/// Sleeps until `deadline_ns` (CLOCK_MONOTONIC), waking early when `stop`
/// becomes true. Returns `false` if it returned because of `stop`.
///
/// The bulk of the wait is `clock_nanosleep(TIMER_ABSTIME)` — an absolute
/// wake-up, so the time spent computing the deadline never accumulates into
/// drift. The last `spin_ns` are busy-waited, trading CPU for a wake-up that
/// does not depend on the kernel's timer latency.
pub(crate) fn sleep_until(deadline_ns: u64, spin_ns: u64, stop: &AtomicBool) -> bool {
    loop {
        // Acquire pairs with the Release store of a stop request so that
        // whatever the requester wrote before stopping is visible after.
        if stop.load(Ordering::Acquire) {
            return false;
        }
        let now = monotonic_ns();
        if now >= deadline_ns {
            return true;
        }
        let sleep_target = deadline_ns.saturating_sub(spin_ns);
        if now < sleep_target {
            // Sleep in slices so that a stop request is noticed promptly.
            let target = sleep_target.min(now + MAX_SLEEP_SLICE_NS);
            nanosleep_abs(target);
            continue;
        }
        // Final spin: the deadline is within `spin_ns`.
        while monotonic_ns() < deadline_ns {
            std::hint::spin_loop();
        }
        return true;
    }
}

/// Sleeps until the absolute CLOCK_MONOTONIC time `target_ns`.
fn nanosleep_abs(target_ns: u64) {
    let ts = libc::timespec {
        tv_sec: (target_ns / 1_000_000_000) as libc::time_t,
        tv_nsec: (target_ns % 1_000_000_000) as libc::c_long,
    };
    // SAFETY: `ts` is a valid timespec with tv_nsec < 1e9; with TIMER_ABSTIME
    // the remainder pointer is unused and may be null. EINTR simply returns
    // early, and the caller's loop re-checks the time.
    unsafe {
        libc::clock_nanosleep(
            libc::CLOCK_MONOTONIC,
            libc::TIMER_ABSTIME,
            &ts,
            std::ptr::null_mut(),
        )
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn simulated_clock_only_moves_forward() {
        let c = Clock::simulated();
        assert_eq!(c.now_ns(), 0);
        c.advance_to(5_000);
        c.clone().advance_to(3_000);
        assert_eq!(c.now(), Duration::from_micros(5));
    }

    #[test]
    fn sleep_until_reaches_the_deadline() {
        let stop = AtomicBool::new(false);
        let deadline = monotonic_ns() + 2_000_000;
        assert!(sleep_until(deadline, 50_000, &stop));
        assert!(monotonic_ns() >= deadline);
    }

    #[test]
    fn sleep_until_returns_on_stop() {
        let stop = AtomicBool::new(true);
        assert!(!sleep_until(monotonic_ns() + 10_000_000_000, 0, &stop));
    }
}
