//! Time that means the same in every process, and the CPU a process used.
//!
//! [`crate::clock::Clock`] is the per-sample timer (rdtsc, calibrated per process);
//! its readings are only compared within one process. When two processes must
//! agree on an instant — a publisher stamps a message, a subscriber in another
//! process reads the stamp on arrival; a burst starts in one process and ends in
//! another — the benchmarks use [`monotonic_ns`], `CLOCK_MONOTONIC`, which is one
//! system-wide clock for every process on the machine (read through the vDSO, no
//! system call, ~20 ns).
//!
//! [`CpuMeter`] measures how much CPU time the calling process used (user +
//! system, all threads, from `getrusage(RUSAGE_SELF)`) over a wall-clock window,
//! as a percentage of one CPU.

use serde::{Deserialize, Serialize};

/// `CLOCK_MONOTONIC` in nanoseconds: comparable across processes on this machine.
pub fn monotonic_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec; CLOCK_MONOTONIC always exists on
    // Linux, so the call cannot fail with valid arguments.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// User + system CPU time of the whole calling process (all threads), ns.
pub fn process_cpu_ns() -> u64 {
    let mut usage = std::mem::MaybeUninit::<libc::rusage>::zeroed();
    // SAFETY: `usage` points to writable memory of the right size; RUSAGE_SELF is a
    // valid target, so the call fills the struct and returns 0.
    let rc = unsafe { libc::getrusage(libc::RUSAGE_SELF, usage.as_mut_ptr()) };
    if rc != 0 {
        return 0;
    }
    // SAFETY: zero-initialised above and filled by the successful call; rusage is
    // plain integers, valid for any bit pattern.
    let usage = unsafe { usage.assume_init() };
    let tv = |t: libc::timeval| t.tv_sec as u64 * 1_000_000_000 + t.tv_usec as u64 * 1_000;
    tv(usage.ru_utime) + tv(usage.ru_stime)
}

/// CPU use of this process over a window.
#[derive(Debug, Clone, Copy)]
pub struct CpuMeter {
    wall_start: u64,
    cpu_start: u64,
}

/// What a [`CpuMeter`] saw.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct CpuUse {
    /// Wall time of the window, ns.
    pub wall_ns: u64,
    /// CPU time the process used in it (user + system, all threads), ns.
    pub cpu_ns: u64,
    /// `cpu / wall` in percent of one CPU (can exceed 100 with several threads).
    pub percent: f64,
}

impl CpuMeter {
    /// Starts the window now.
    pub fn start() -> Self {
        Self {
            wall_start: monotonic_ns(),
            cpu_start: process_cpu_ns(),
        }
    }

    /// Ends the window now.
    pub fn stop(&self) -> CpuUse {
        let wall_ns = monotonic_ns().saturating_sub(self.wall_start).max(1);
        let cpu_ns = process_cpu_ns().saturating_sub(self.cpu_start);
        CpuUse {
            wall_ns,
            cpu_ns,
            percent: 100.0 * cpu_ns as f64 / wall_ns as f64,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn monotonic_advances_with_sleep() {
        let a = monotonic_ns();
        std::thread::sleep(std::time::Duration::from_millis(2));
        assert!(monotonic_ns() - a >= 2_000_000);
    }

    #[test]
    fn busy_process_uses_cpu_and_idle_one_little() {
        let meter = CpuMeter::start();
        let until = monotonic_ns() + 30_000_000;
        let mut x = 0u64;
        while monotonic_ns() < until {
            x = std::hint::black_box(x.wrapping_add(1));
        }
        let busy = meter.stop();
        assert!(busy.cpu_ns > 0 && busy.percent > 0.0);
    }
}
