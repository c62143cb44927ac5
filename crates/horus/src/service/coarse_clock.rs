//! The coarse monotonic clock (`CLOCK_MONOTONIC_COARSE`): the monotonic time
//! of the kernel's last timer tick. Reading it is a few loads from the vDSO
//! page, where the precise clock behind `Instant` also reads the time-stamp
//! counter (some 20 ns in a VM, and it orders the pipeline) — too much for
//! code that runs on every reply or every poll of a busy-polling caller, when
//! all it needs to know is that a few milliseconds have not yet passed.
//!
//! What callers rely on: the coarse time is at most the precise monotonic
//! time, and behind it by at most one tick (its [`resolution`]) while the
//! kernel's tick runs, which it does on a CPU that is running a polling
//! thread (a tick delayed beyond that, e.g. a VM not scheduled, delays a
//! decision taken on this clock by as much).

use std::time::Duration;

/// Coarse resolutions above this are not trusted for deadline decisions.
const MAX_RESOLUTION: Duration = Duration::from_millis(20);

fn read(what: fn(libc::clockid_t, *mut libc::timespec) -> libc::c_int) -> Option<Duration> {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    let rc = what(libc::CLOCK_MONOTONIC_COARSE, &mut ts);
    let secs = u64::try_from(ts.tv_sec).ok()?;
    let nanos = u32::try_from(ts.tv_nsec)
        .ok()
        .filter(|&n| n < 1_000_000_000)?;
    (rc == 0).then(|| Duration::new(secs, nanos))
}

/// Now on the coarse clock; `None` if it cannot be read.
pub(super) fn now() -> Option<Duration> {
    read(|clock, ts| {
        // SAFETY: `ts` points to a valid, writable timespec for the call.
        unsafe { libc::clock_gettime(clock, ts) }
    })
}

/// The coarse clock's resolution (one tick), if it can be read and is at
/// most [`MAX_RESOLUTION`].
pub(super) fn resolution() -> Option<Duration> {
    read(|clock, ts| {
        // SAFETY: as in `now`.
        unsafe { libc::clock_getres(clock, ts) }
    })
    .filter(|&r| r <= MAX_RESOLUTION)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What `Started::quiet_until` relies on: the coarse time is at most the
    /// precise monotonic time read after it.
    #[test]
    fn the_coarse_clock_is_never_ahead_of_the_precise_one() {
        assert!(resolution().is_some(), "a usable coarse clock on Linux");
        for _ in 0..1000 {
            let coarse = now().expect("readable");
            let mut ts = libc::timespec {
                tv_sec: 0,
                tv_nsec: 0,
            };
            // SAFETY: `ts` is a valid, writable timespec for the call.
            let rc = unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
            assert_eq!(rc, 0);
            let precise = Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32);
            assert!(coarse <= precise, "{coarse:?} after {precise:?}");
        }
    }
}
