//! SIGINT and SIGTERM to `horus launch`: counted by an async-signal-safe handler, read by
//! the supervisor's loop. The first asks for an orderly shutdown; a second one during the
//! shutdown kills what is left at once.

use std::sync::atomic::{AtomicI32, AtomicU32, Ordering};

/// Signals received so far.
static COUNT: AtomicU32 = AtomicU32::new(0);
/// The last one received.
static LAST: AtomicI32 = AtomicI32::new(0);
/// Who sent it (0: the kernel, e.g. the terminal's Ctrl-C).
static SENDER: AtomicI32 = AtomicI32::new(0);

extern "C" fn on_signal(sig: libc::c_int, info: *mut libc::siginfo_t, _: *mut libc::c_void) {
    let sender = if info.is_null() {
        0
    } else {
        // SAFETY: with SA_SIGINFO the kernel passes a valid siginfo_t for the duration of
        // the handler (not null: checked); si_pid reads the sender field, set for
        // SIGINT/SIGTERM sent by kill() and 0 for ones the kernel generates.
        unsafe { (*info).si_pid() }
    };
    // Only atomics: async-signal-safe. Relaxed: the values are independent flags that the
    // supervisor polls; nothing else is published through them.
    LAST.store(sig, Ordering::Relaxed);
    SENDER.store(sender, Ordering::Relaxed);
    COUNT.fetch_add(1, Ordering::Relaxed);
}

/// Installs the handler for SIGINT and SIGTERM.
pub fn install() -> std::io::Result<()> {
    for sig in [libc::SIGINT, libc::SIGTERM] {
        // SAFETY: a zeroed sigaction is a valid value (no flags, empty mask) that we then
        // fill in; sa_sigaction holds an `extern "C" fn(c_int, *mut siginfo_t, *mut
        // c_void)` handler, which is what the kernel calls with SA_SIGINFO; sigemptyset
        // and sigaction get valid pointers to that local struct. The handler only reads
        // its siginfo and touches atomics.
        let rc = unsafe {
            let mut action: libc::sigaction = std::mem::zeroed();
            action.sa_sigaction = on_signal
                as extern "C" fn(libc::c_int, *mut libc::siginfo_t, *mut libc::c_void)
                as libc::sighandler_t;
            action.sa_flags = libc::SA_RESTART | libc::SA_SIGINFO;
            libc::sigemptyset(&mut action.sa_mask);
            libc::sigaction(sig, &action, std::ptr::null_mut())
        };
        if rc != 0 {
            return Err(std::io::Error::last_os_error());
        }
    }
    Ok(())
}

/// How many SIGINT/SIGTERM have arrived.
pub fn count() -> u32 {
    COUNT.load(Ordering::Relaxed)
}

/// Name of the last signal received (`SIGINT`, `SIGTERM`).
pub fn last_name() -> &'static str {
    match LAST.load(Ordering::Relaxed) {
        libc::SIGINT => "SIGINT",
        libc::SIGTERM => "SIGTERM",
        _ => "a signal",
    }
}

/// The pid that sent the last signal (`None`: the kernel, e.g. a terminal's Ctrl-C).
pub fn last_sender() -> Option<u32> {
    u32::try_from(SENDER.load(Ordering::Relaxed))
        .ok()
        .filter(|&p| p != 0)
}
