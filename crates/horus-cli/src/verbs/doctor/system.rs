//! The machine's side: limits and permissions real-time nodes need, `/dev/shm` space, and the
//! system calls horus relies on. Every probe is read-only, except the SCHED_FIFO one, which
//! changes the policy of a thread of its own that exits right after.

use serde::Serialize;

/// A resource limit (`None`: unlimited).
#[derive(Clone, Copy, Debug, Serialize)]
pub(super) struct Limit {
    pub(super) soft: Option<u64>,
    pub(super) hard: Option<u64>,
}

fn rlimit(resource: libc::__rlimit_resource_t) -> Option<Limit> {
    let mut r = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit writes one rlimit through a valid pointer to a local.
    if unsafe { libc::getrlimit(resource, &mut r) } != 0 {
        return None;
    }
    let v = |x: libc::rlim_t| (x != libc::RLIM_INFINITY).then_some(x);
    Some(Limit {
        soft: v(r.rlim_cur),
        hard: v(r.rlim_max),
    })
}

/// `RLIMIT_MEMLOCK`: how much memory the process may lock (`mlockall` for real-time nodes).
pub(super) fn memlock() -> Option<Limit> {
    rlimit(libc::RLIMIT_MEMLOCK)
}

/// `RLIMIT_RTPRIO`: the highest real-time priority an unprivileged process may take.
pub(super) fn rtprio() -> Option<Limit> {
    rlimit(libc::RLIMIT_RTPRIO)
}

/// `CAP_IPC_LOCK`: lock any amount of memory whatever `RLIMIT_MEMLOCK` says.
pub(super) const CAP_IPC_LOCK: u32 = 14;
/// `CAP_SYS_NICE`: real-time priorities whatever `RLIMIT_RTPRIO` says.
pub(super) const CAP_SYS_NICE: u32 = 23;

/// Whether the effective capabilities include `cap` (from `/proc/self/status`).
pub(super) fn capability(cap: u32) -> Option<bool> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let hex = status
        .lines()
        .find_map(|l| l.strip_prefix("CapEff:"))?
        .trim();
    let caps = u64::from_str_radix(hex, 16).ok()?;
    Some(caps & (1 << cap) != 0)
}

/// Whether this process may run a thread under SCHED_FIFO: tried on a throwaway thread (priority
/// 1), so nothing else of the process changes. `Err` carries the OS error.
pub(super) fn sched_fifo_allowed() -> Result<(), String> {
    std::thread::spawn(|| {
        let param = libc::sched_param { sched_priority: 1 };
        // SAFETY: pthread_self is the calling thread; param is a valid local.
        let rc =
            unsafe { libc::pthread_setschedparam(libc::pthread_self(), libc::SCHED_FIFO, &param) };
        if rc == 0 {
            Ok(())
        } else {
            Err(std::io::Error::from_raw_os_error(rc).to_string())
        }
    })
    .join()
    .unwrap_or_else(|_| Err("the probe thread panicked".into()))
}

/// Whether `membarrier(MEMBARRIER_CMD_GLOBAL)` is available (blocking subscribers run it once
/// when they register). Asks the kernel with `MEMBARRIER_CMD_QUERY`, which runs no barrier.
pub(super) fn membarrier_global() -> Result<bool, String> {
    const MEMBARRIER_CMD_QUERY: libc::c_int = 0;
    const MEMBARRIER_CMD_GLOBAL: libc::c_long = 1;
    // SAFETY: membarrier with QUERY takes no pointers and only returns a bit mask.
    let rc = unsafe { libc::syscall(libc::SYS_membarrier, MEMBARRIER_CMD_QUERY, 0, 0) };
    if rc < 0 {
        return Err(std::io::Error::last_os_error().to_string());
    }
    Ok(rc & MEMBARRIER_CMD_GLOBAL != 0)
}

/// Size and free space of a file system.
#[derive(Clone, Copy, Debug, Serialize)]
pub(super) struct Space {
    pub(super) total_bytes: u64,
    pub(super) free_bytes: u64,
}

/// Size and free space of the file system at `path`.
pub(super) fn space(path: &str) -> Result<Space, String> {
    let c = std::ffi::CString::new(path).map_err(|e| e.to_string())?;
    // SAFETY: an all-zero statvfs is a valid value to be overwritten.
    let mut s: libc::statvfs = unsafe { std::mem::zeroed() };
    // SAFETY: c is NUL-terminated; s is a valid out-pointer.
    if unsafe { libc::statvfs(c.as_ptr(), &mut s) } != 0 {
        return Err(std::io::Error::last_os_error().to_string());
    }
    let frsize = s.f_frsize as u64;
    Ok(Space {
        total_bytes: (s.f_blocks as u64).saturating_mul(frsize),
        free_bytes: (s.f_bavail as u64).saturating_mul(frsize),
    })
}
