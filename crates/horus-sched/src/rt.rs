//! Real-time thread settings: `SCHED_FIFO`, CPU pinning, memory locking,
//! timer slack — each attempted, and what was granted reported honestly.

use std::io;
use std::sync::atomic::{AtomicBool, Ordering};

/// The scheduling policy a node's thread actually got.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum RtMode {
    /// No real-time priority was requested (main, compute and event nodes).
    #[default]
    NotRequested,
    /// `SCHED_FIFO` at this priority was requested and granted.
    Fifo {
        /// The priority in force.
        priority: u8,
    },
    /// `SCHED_FIFO` was requested but refused; the thread runs at normal
    /// priority.
    Fallback {
        /// The priority that was requested.
        requested: u8,
    },
}

impl RtMode {
    pub(crate) fn encode(self) -> u64 {
        match self {
            RtMode::NotRequested => 0,
            RtMode::Fifo { priority } => 1 | (u64::from(priority) << 8),
            RtMode::Fallback { requested } => 2 | (u64::from(requested) << 8),
        }
    }

    pub(crate) fn decode(v: u64) -> Option<RtMode> {
        let p = ((v >> 8) & 0xff) as u8;
        match v & 0xff {
            0 => Some(RtMode::NotRequested),
            1 => Some(RtMode::Fifo { priority: p }),
            2 => Some(RtMode::Fallback { requested: p }),
            _ => None,
        }
    }
}

/// Whether the process's memory is locked (`mlockall`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum MemoryLock {
    /// Not requested (no real-time node, or disabled by
    /// [`Scheduler::lock_memory`](crate::Scheduler::lock_memory)).
    #[default]
    NotRequested,
    /// `mlockall(MCL_CURRENT | MCL_FUTURE)` succeeded: no page faults on
    /// already-touched memory.
    Locked,
    /// Requested but refused or skipped (see the event for why).
    Failed,
}

impl MemoryLock {
    pub(crate) fn encode(self) -> u64 {
        self as u64
    }

    pub(crate) fn decode(v: u64) -> Option<MemoryLock> {
        match v {
            0 => Some(MemoryLock::NotRequested),
            1 => Some(MemoryLock::Locked),
            2 => Some(MemoryLock::Failed),
            _ => None,
        }
    }
}

/// Sets the calling thread's timer slack to 1 ns (the default 50 µs would
/// let the kernel delay our wake-ups by that much to batch timers).
pub(crate) fn minimize_timer_slack() {
    // SAFETY: PR_SET_TIMERSLACK takes one integer argument and affects only
    // the calling thread; the extra arguments are ignored.
    unsafe { libc::prctl(libc::PR_SET_TIMERSLACK, 1 as libc::c_ulong, 0, 0, 0) };
}

/// Pins the calling thread to CPU `core`.
pub(crate) fn pin_current_thread(core: usize) -> io::Result<()> {
    if core >= 8 * std::mem::size_of::<libc::cpu_set_t>() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "CPU index out of range",
        ));
    }
    // SAFETY: cpu_set_t is a plain bit array; all-zero is the empty set.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    // SAFETY: `core` is below the number of bits in `set` (checked above).
    unsafe { libc::CPU_SET(core, &mut set) };
    // SAFETY: `set` is initialised and its exact size is passed; pid 0 is the
    // calling thread only.
    let rc = unsafe { libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) };
    if rc == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

/// Switches the calling thread to `SCHED_FIFO` at `priority`.
pub(crate) fn set_fifo(priority: u8) -> io::Result<()> {
    let param = libc::sched_param {
        sched_priority: i32::from(priority),
    };
    // SAFETY: pthread_self() is the calling thread, alive for the call;
    // `param` is a valid sched_param. The function returns an error number
    // instead of setting errno.
    let rc = unsafe { libc::pthread_setschedparam(libc::pthread_self(), libc::SCHED_FIFO, &param) };
    if rc == 0 {
        Ok(())
    } else {
        Err(io::Error::from_raw_os_error(rc))
    }
}

/// Whether the calling process holds CAP_IPC_LOCK (bit 14 of `CapEff` in
/// `/proc/self/status`), i.e. may lock memory beyond `RLIMIT_MEMLOCK`.
fn has_cap_ipc_lock() -> bool {
    const CAP_IPC_LOCK: u32 = 14;
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            let hex = s
                .lines()
                .find_map(|l| l.strip_prefix("CapEff:"))?
                .trim()
                .to_owned();
            u64::from_str_radix(&hex, 16).ok()
        })
        .is_some_and(|caps| caps & (1 << CAP_IPC_LOCK) != 0)
}

/// Locks all current and future memory of the process.
///
/// Refuses (without trying) unless the process holds CAP_IPC_LOCK or its
/// `RLIMIT_MEMLOCK` is unlimited: with `MCL_FUTURE`, every later allocation
/// beyond the limit would fail, which is worse than page faults.
pub(crate) fn lock_memory() -> Result<(), String> {
    let mut lim = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: `lim` is a valid, writable rlimit.
    unsafe { libc::getrlimit(libc::RLIMIT_MEMLOCK, &mut lim) };
    if lim.rlim_cur != libc::RLIM_INFINITY && !has_cap_ipc_lock() {
        return Err(format!(
            "mlockall skipped: no CAP_IPC_LOCK and RLIMIT_MEMLOCK is {} bytes \
             (raise it with `ulimit -l unlimited` or grant CAP_IPC_LOCK)",
            lim.rlim_cur
        ));
    }
    // SAFETY: mlockall takes flags only and touches no memory of ours.
    let rc = unsafe { libc::mlockall(libc::MCL_CURRENT | libc::MCL_FUTURE) };
    if rc == 0 {
        Ok(())
    } else {
        Err(format!("mlockall failed: {}", io::Error::last_os_error()))
    }
}

/// Touches `KIB` KiB of stack so that a real-time thread takes its stack
/// page faults now rather than in its first ticks.
pub(crate) fn prefault_stack() {
    const KIB: usize = 64;
    let buf = [0_u8; KIB * 1024];
    std::hint::black_box(&buf);
}

/// Whether the one-per-process "no real-time" hint was already given.
static FALLBACK_WARNED: AtomicBool = AtomicBool::new(false);

/// Returns `true` exactly once per process: whether to print the fallback hint.
pub(crate) fn first_fallback() -> bool {
    !FALLBACK_WARNED.swap(true, Ordering::Relaxed)
}

/// The hint shown once when `SCHED_FIFO` is refused.
pub(crate) fn fallback_hint(err: &io::Error) -> String {
    format!(
        "SCHED_FIFO refused ({err}); running at normal priority. To allow it, run as root, \
         grant CAP_SYS_NICE (`setcap cap_sys_nice+ep <binary>`), or raise `ulimit -r` \
         (RLIMIT_RTPRIO); in a container, also allow real-time scheduling"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rt_mode_round_trips() {
        for m in [
            RtMode::NotRequested,
            RtMode::Fifo { priority: 80 },
            RtMode::Fallback { requested: 99 },
        ] {
            assert_eq!(RtMode::decode(m.encode()), Some(m));
        }
        assert_eq!(RtMode::decode(7), None);
    }

    #[test]
    fn pinning_to_cpu_zero_works_on_a_fresh_thread() {
        std::thread::spawn(|| pin_current_thread(0).unwrap())
            .join()
            .unwrap();
        assert!(pin_current_thread(1 << 20).is_err());
    }
}
