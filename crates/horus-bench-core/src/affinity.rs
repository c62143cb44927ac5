//! CPU pinning for the measuring threads and the echo processes.
//!
//! Benchmarks pin the two sides of a ping-pong to two distinct CPUs so that the
//! numbers describe a core-to-core handoff rather than the scheduler. Pinning is
//! done per thread (`sched_setaffinity(0, ..)` affects only the calling thread),
//! and [`run_on_cpu`] runs a closure on a fresh thread so that the caller's own
//! affinity never changes between a pinned and an unpinned pass.

use std::io;

/// Pins the calling thread to `cpu` (a logical CPU number as in `/proc/cpuinfo`).
///
/// Fails with the OS error if `cpu` is out of range or not in the process's
/// allowed set (for example inside a restricted cgroup).
pub fn pin_current_thread(cpu: usize) -> io::Result<()> {
    let max = 8 * std::mem::size_of::<libc::cpu_set_t>();
    if cpu >= max {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("cpu {cpu} is beyond the {max} CPUs a cpu_set_t can describe"),
        ));
    }
    // SAFETY: `cpu_set_t` is a plain bit array for which all-zero is the valid
    // empty set, so `zeroed` produces a valid value.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    // SAFETY: `CPU_SET` writes one bit inside `set`; `cpu < max` was checked above,
    // so the bit index is in bounds.
    unsafe { libc::CPU_SET(cpu, &mut set) };
    // SAFETY: `set` is a valid, initialised `cpu_set_t` and we pass its exact size;
    // pid 0 means "the calling thread", so no other thread is affected.
    let rc = unsafe { libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) };
    if rc == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

/// Number of CPUs this process may run on (its affinity mask), at least 1.
pub fn available_cpus() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// Runs `f` on a new thread, pinned to `cpu` if it is `Some`, and returns its result.
///
/// The thread is scoped, so `f` may borrow from the caller. A pinning failure is
/// returned as an error before `f` runs; a panic in `f` is propagated.
pub fn run_on_cpu<R, F>(cpu: Option<usize>, f: F) -> anyhow::Result<R>
where
    R: Send,
    F: FnOnce() -> anyhow::Result<R> + Send,
{
    std::thread::scope(|scope| {
        let handle = scope.spawn(move || {
            if let Some(cpu) = cpu {
                pin_current_thread(cpu)
                    .map_err(|e| anyhow::anyhow!("pinning thread to CPU {cpu}: {e}"))?;
            }
            f()
        });
        match handle.join() {
            Ok(result) => result,
            Err(panic) => std::panic::resume_unwind(panic),
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pinning_to_cpu_zero_succeeds() {
        run_on_cpu(Some(0), || Ok(())).unwrap();
    }

    #[test]
    fn pinning_to_an_absurd_cpu_fails() {
        assert!(pin_current_thread(1 << 20).is_err());
    }

    #[test]
    fn unpinned_run_returns_the_value() {
        assert_eq!(run_on_cpu(None, || Ok(7)).unwrap(), 7);
    }
}
