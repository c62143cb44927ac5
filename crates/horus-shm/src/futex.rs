//! Cross-process waiting: futex wait/wake on a 32-bit word in shared memory,
//! and the asymmetric barrier that keeps the publisher's hot path fence-free.
//!
//! The futex operations are the non-`PRIVATE` variants: the kernel keys them
//! by (inode, offset), so a waiter and a waker in different processes that
//! map the same segment meet on the same word.

use std::time::Duration;

use crate::sync::AtomicU32;

/// Sleeps while `*word == expected`, at most `timeout` (forever if `None`).
/// Returns on a wake, a value change, a signal, or the timeout; the caller
/// re-checks its condition in every case (spurious returns are allowed).
pub fn wait(word: &AtomicU32, expected: u32, timeout: Option<Duration>) {
    let ts = timeout.map(|d| libc::timespec {
        tv_sec: d.as_secs().min(i64::MAX as u64) as libc::time_t,
        tv_nsec: d.subsec_nanos() as libc::c_long,
    });
    let ts_ptr = ts
        .as_ref()
        .map_or(std::ptr::null(), |t| t as *const libc::timespec);
    // SAFETY: `word` is a live, 4-byte-aligned atomic for the duration of the
    // call; FUTEX_WAIT only reads it. `ts_ptr` is null or points to a
    // timespec that outlives the call.
    unsafe {
        libc::syscall(
            libc::SYS_futex,
            word.as_ptr(),
            libc::FUTEX_WAIT,
            expected,
            ts_ptr,
            std::ptr::null::<u32>(),
            0u32,
        );
    }
}

/// Wakes every waiter sleeping on `word`.
pub fn wake_all(word: &AtomicU32) {
    // SAFETY: `word` is a live, aligned atomic; FUTEX_WAKE does not access
    // the memory, it only uses the address as the wait-queue key.
    unsafe {
        libc::syscall(
            libc::SYS_futex,
            word.as_ptr(),
            libc::FUTEX_WAKE,
            i32::MAX,
            std::ptr::null::<libc::timespec>(),
            std::ptr::null::<u32>(),
            0u32,
        );
    }
}

const MEMBARRIER_CMD_GLOBAL: libc::c_int = 1;

/// Runs a full memory barrier on every running thread of the system
/// (`membarrier(MEMBARRIER_CMD_GLOBAL)`). Slow (milliseconds), used once when
/// a blocking subscriber registers: afterwards every publisher either sees
/// the registration or has made its earlier stores visible (see
/// `channel_wait.rs`). Returns false if the kernel lacks it.
pub fn global_barrier() -> bool {
    // SAFETY: membarrier takes no pointers; with GLOBAL it only blocks until
    // all CPUs have passed a barrier.
    let rc = unsafe { libc::syscall(libc::SYS_membarrier, MEMBARRIER_CMD_GLOBAL, 0, 0) };
    rc == 0
}
