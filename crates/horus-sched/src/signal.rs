//! Clean shutdown on SIGINT (Ctrl-C) and SIGTERM.
//!
//! The handler only increments an atomic counter (a lock-free `fetch_add` is
//! async-signal-safe); the supervisor thread of each running scheduler polls
//! the counter and starts a clean stop when it changes. Several schedulers may
//! run in one process: the handlers are installed when the first one starts
//! and the previous dispositions restored when the last one ends.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

static SIGNALS_SEEN: AtomicU64 = AtomicU64::new(0);

struct Installed {
    users: usize,
    previous: Vec<(libc::c_int, libc::sigaction)>,
}

static INSTALLED: Mutex<Installed> = Mutex::new(Installed {
    users: 0,
    previous: Vec::new(),
});

extern "C" fn on_signal(_signal: libc::c_int) {
    // Relaxed: the supervisor only needs to see the count change eventually.
    SIGNALS_SEEN.fetch_add(1, Ordering::Relaxed);
}

/// Number of SIGINT/SIGTERM received while a scheduler was running.
pub(crate) fn count() -> u64 {
    SIGNALS_SEEN.load(Ordering::Relaxed)
}

/// Keeps the handlers installed while alive.
pub(crate) struct SignalGuard(());

impl SignalGuard {
    /// Installs the handlers (if this is the first guard).
    pub(crate) fn install() -> std::io::Result<SignalGuard> {
        let mut inst = INSTALLED.lock().unwrap_or_else(|p| p.into_inner());
        if inst.users == 0 {
            for sig in [libc::SIGINT, libc::SIGTERM] {
                // SAFETY: a zeroed sigaction is a valid "no flags, empty
                // mask" value that we then fill in.
                let mut action: libc::sigaction = unsafe { std::mem::zeroed() };
                action.sa_sigaction = on_signal as extern "C" fn(libc::c_int) as usize;
                action.sa_flags = libc::SA_RESTART;
                // SAFETY: `sa_mask` is a valid sigset_t inside `action`.
                unsafe { libc::sigemptyset(&mut action.sa_mask) };
                // SAFETY: zeroed sigaction is a valid output buffer.
                let mut old: libc::sigaction = unsafe { std::mem::zeroed() };
                // SAFETY: both pointers are valid sigaction structs; the
                // handler is an `extern "C" fn(c_int)` that only touches an
                // atomic, so it is async-signal-safe.
                if unsafe { libc::sigaction(sig, &action, &mut old) } != 0 {
                    return Err(std::io::Error::last_os_error());
                }
                inst.previous.push((sig, old));
            }
        }
        inst.users += 1;
        Ok(SignalGuard(()))
    }
}

impl Drop for SignalGuard {
    fn drop(&mut self) {
        let mut inst = INSTALLED.lock().unwrap_or_else(|p| p.into_inner());
        inst.users -= 1;
        if inst.users == 0 {
            for (sig, old) in inst.previous.drain(..) {
                // SAFETY: `old` is the disposition sigaction returned for
                // `sig` when we installed ours; restoring it is always valid.
                unsafe { libc::sigaction(sig, &old, std::ptr::null_mut()) };
            }
        }
    }
}
