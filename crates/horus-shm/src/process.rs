//! Identity and liveness of participating processes.
//!
//! A pid alone is not an identity: pids are reused. We pair the pid with the
//! process start time (field 22 of `/proc/<pid>/stat`, clock ticks since boot),
//! as iceoryx2 and systemd do, so a recycled pid is never mistaken for the
//! participant that died.

use std::sync::atomic::{AtomicU32, AtomicU64, AtomicU8, Ordering};

/// A process identity that survives pid reuse: pid plus start time.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ProcessId {
    /// The kernel pid.
    pub pid: u32,
    /// Start time in clock ticks since boot; 0 if it could not be read.
    pub start_time: u64,
}

impl ProcessId {
    /// The identity of the calling process (computed once per process).
    ///
    /// A child made by `fork` gets its own identity: a `pthread_atfork`
    /// child handler forgets the cached one, and the child's first call
    /// derives it again. We chose the handler over comparing the cache with
    /// `getpid()` on every call because `getpid` is a real syscall on current
    /// glibc and this is called per request and per reply by services; the
    /// handler makes the common call one atomic load.
    ///
    /// Endpoints (ports, clients, servers) opened *before* a fork keep the
    /// parent's identity in the child: their places stay registered under
    /// the parent's token, are reclaimed when the parent dies and not when
    /// the child does. They are the parent's; a child must not use (or drop)
    /// them while the parent does — two processes on one place break its
    /// single-owner protocol. Open new endpoints in the child instead.
    ///
    /// A child made without running fork handlers (a raw `clone` syscall,
    /// glibc's `_Fork`) keeps its parent's cached identity.
    pub fn current() -> ProcessId {
        // Acquire pairs with the Release store in `current_uncached`: a pid
        // seen here comes with its start time.
        let pid = CACHED_PID.load(Ordering::Acquire);
        if pid != 0 {
            return ProcessId {
                pid,
                start_time: CACHED_START.load(Ordering::Relaxed),
            };
        }
        current_uncached()
    }

    /// Packs pid and the low 32 bits of the start time into one word, so a
    /// record's owner is claimed with a single CAS. Never 0, and bit 63 is
    /// clear (a pid is below 2^31): [`crate::place::RECLAIMING`] marks a
    /// reclaimer's token.
    pub fn token(&self) -> u64 {
        (u64::from(self.pid) << 32) | (self.start_time & 0xffff_ffff)
    }

    /// Inverse of [`ProcessId::token`] (start time truncated to 32 bits).
    pub fn from_token(token: u64) -> ProcessId {
        ProcessId {
            pid: (token >> 32) as u32,
            start_time: token & 0xffff_ffff,
        }
    }

    /// Whether this process is still running (and is the same process, not a
    /// new one that reused the pid). A `start_time` of 0 means "unknown" and
    /// is decided by the pid alone.
    ///
    /// A zombie (state `Z`: exited, not yet reaped by its parent) or a task
    /// being torn down (`X`) is dead: `kill(pid, 0)` still succeeds and its
    /// start time still matches, but it will never touch its places again,
    /// and a parent may leave it unreaped for as long as it likes.
    pub fn is_alive(&self) -> bool {
        if self.pid == 0 {
            return false;
        }
        if self.pid == std::process::id() {
            return self.start_time == 0
                || self.start_time as u32 == ProcessId::current().start_time as u32;
        }
        // SAFETY: kill with signal 0 performs only the permission and
        // existence check; it sends nothing and touches no memory of ours.
        let rc = unsafe { libc::kill(self.pid as libc::pid_t, 0) };
        if rc != 0 && std::io::Error::last_os_error().raw_os_error() == Some(libc::ESRCH) {
            return false;
        }
        match stat_of(self.pid) {
            Some(Stat {
                state: 'Z' | 'X' | 'x',
                ..
            }) => false,
            // Compared on the low 32 bits: records store a packed token.
            Some(Stat { start_time: t, .. }) => {
                self.start_time == 0 || t as u32 == self.start_time as u32
            }
            // /proc unreadable but kill said it exists (e.g. EPERM): alive.
            None => rc == 0 || std::io::Error::last_os_error().raw_os_error() == Some(libc::EPERM),
        }
    }
}

/// Pid of the cached identity of this process; 0 while none is cached (never
/// derived yet, or forgotten in a forked child). Pid 0 is never a process.
static CACHED_PID: AtomicU32 = AtomicU32::new(0);
/// Start time of the cached identity; valid when `CACHED_PID` is not 0.
static CACHED_START: AtomicU64 = AtomicU64::new(0);

/// Derives the identity from the kernel and caches it once forks are watched.
#[cold]
fn current_uncached() -> ProcessId {
    let pid = std::process::id();
    let id = ProcessId {
        pid,
        start_time: start_time_of(pid).unwrap_or(0),
    };
    // Cached only after the fork handler is registered (program order, and
    // glibc's atfork lock orders registration before any later fork), so no
    // child can inherit a cache nobody will forget. Concurrent first callers
    // store the same values.
    if forks_watched() {
        CACHED_START.store(id.start_time, Ordering::Relaxed);
        CACHED_PID.store(pid, Ordering::Release);
    }
    id
}

/// Runs in a forked child (`pthread_atfork`), in its only thread, before
/// `fork` returns: forgets the parent's identity. One atomic store:
/// async-signal-safe.
extern "C" fn forget_identity_in_child() {
    CACHED_PID.store(0, Ordering::Relaxed);
}

/// Registers [`forget_identity_in_child`] once per process (children inherit
/// it). Returns whether it is registered. Never blocks (unlike `Once`, which
/// a fork during registration would leave locked forever in the child): a
/// caller racing the registration, or a child forked during it, just does not
/// cache and derives the identity each time — correct, only slower.
fn forks_watched() -> bool {
    const NONE: u8 = 0;
    const REGISTERING: u8 = 1;
    const WATCHED: u8 = 2;
    const FAILED: u8 = 3;
    static STATE: AtomicU8 = AtomicU8::new(NONE);
    match STATE.compare_exchange(NONE, REGISTERING, Ordering::AcqRel, Ordering::Acquire) {
        Ok(_) => {
            // SAFETY: registers a handler that only does an atomic store
            // (async-signal-safe, see there); it takes no pointers of ours.
            let rc = unsafe { libc::pthread_atfork(None, None, Some(forget_identity_in_child)) };
            let ok = rc == 0;
            STATE.store(if ok { WATCHED } else { FAILED }, Ordering::Release);
            ok
        }
        Err(state) => state == WATCHED,
    }
}

/// What liveness needs from `/proc/<pid>/stat`.
struct Stat {
    /// Field 3: `R`, `S`, `D`, `Z` (zombie), `X` (dead), …
    state: char,
    /// Field 22: start time in clock ticks since boot.
    start_time: u64,
}

/// Parses the state and start time out of `/proc/<pid>/stat`.
fn stat_of(pid: u32) -> Option<Stat> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    parse_stat(&stat)
}

fn parse_stat(stat: &str) -> Option<Stat> {
    // The command name (field 2) is in parentheses and may itself contain
    // spaces or ')' — so split after the *last* ')'.
    let rest = &stat[stat.rfind(')')? + 1..];
    let mut fields = rest.split_whitespace();
    // rest starts at field 3 (state); starttime is field 22 → 19 further.
    let state = fields.next()?.chars().next()?;
    let start_time = fields.nth(18)?.parse().ok()?;
    Some(Stat { state, start_time })
}

/// Reads field 22 (`starttime`) of `/proc/<pid>/stat`.
fn start_time_of(pid: u32) -> Option<u64> {
    stat_of(pid).map(|s| s.start_time)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn current_process_is_alive() {
        let me = ProcessId::current();
        assert_ne!(me.start_time, 0);
        assert!(me.is_alive());
    }

    #[test]
    fn reused_pid_with_other_start_time_is_dead() {
        let me = ProcessId::current();
        let impostor = ProcessId {
            pid: me.pid,
            start_time: me.start_time + 1,
        };
        assert!(!impostor.is_alive());
    }

    #[test]
    fn stat_fields_are_found_after_the_last_parenthesis() {
        let line = "42 (a) b) (c) Z 1 42 42 0 -1 4194560 107 0 0 0 0 0 0 0 20 0 1 0 777 0 0";
        let s = parse_stat(line).unwrap();
        assert_eq!(s.state, 'Z');
        assert_eq!(s.start_time, 777);
        assert!(parse_stat("garbage").is_none());
    }

    /// Regression: a killed child that its parent has not reaped yet
    /// (state `Z`) passed both `kill(pid, 0)` and the start-time check, so
    /// it kept its places and chunks and messages "delivered" to it were
    /// never counted as lost.
    #[test]
    fn unreaped_zombie_is_dead() {
        let mut child = std::process::Command::new("sleep")
            .arg("30")
            .spawn()
            .unwrap();
        let id = ProcessId {
            pid: child.id(),
            start_time: start_time_of(child.id()).unwrap(),
        };
        assert!(id.is_alive());
        // SAFETY: kill takes no pointers; the pid is our own unreaped child.
        let rc = unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGKILL) };
        assert_eq!(rc, 0);
        // Do not reap: wait until the kernel shows the zombie.
        let mut state = ' ';
        for _ in 0..10_000 {
            state = stat_of(child.id()).map_or('?', |s| s.state);
            if state == 'Z' {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
        assert_eq!(state, 'Z', "child never became a zombie");
        assert!(!id.is_alive(), "a zombie counts as alive");
        child.wait().unwrap();
    }

    /// Regression: the identity was cached in a `OnceLock`, so a forked
    /// child answered its parent's pid and start time: places it claimed were
    /// never reclaimed when it died, and were reclaimed under it when the
    /// parent died.
    #[test]
    fn forked_child_has_its_own_process_identity() {
        let parent = ProcessId::current();
        let mut fds = [0 as libc::c_int; 2];
        // SAFETY: fds is a valid array of two ints for pipe to fill.
        assert_eq!(unsafe { libc::pipe(fds.as_mut_ptr()) }, 0);
        // SAFETY: the child only computes its identity, writes it to the pipe
        // and leaves with _exit (no unwinding, no atexit handlers, no locks
        // of the parent's other threads taken beyond glibc's fork-safe malloc).
        let child = unsafe { libc::fork() };
        assert!(child >= 0, "fork failed");
        if child == 0 {
            let me = ProcessId::current();
            let mut buf = [0u8; 12];
            buf[..4].copy_from_slice(&me.pid.to_ne_bytes());
            buf[4..].copy_from_slice(&me.start_time.to_ne_bytes());
            // SAFETY: buf is 12 readable bytes; fds[1] is the pipe's write end.
            unsafe {
                libc::write(fds[1], buf.as_ptr().cast(), buf.len());
                libc::_exit(0);
            }
        }
        // SAFETY: fds[1] is our copy of the write end, closed once.
        unsafe { libc::close(fds[1]) };
        let mut buf = [0u8; 12];
        // SAFETY: buf is 12 writable bytes; fds[0] is the pipe's read end.
        let n = unsafe { libc::read(fds[0], buf.as_mut_ptr().cast(), buf.len()) };
        let mut status = 0;
        // SAFETY: child is our own child; status is a valid int to fill.
        unsafe {
            libc::close(fds[0]);
            libc::waitpid(child, &mut status, 0);
        }
        assert_eq!(n, 12, "the child wrote no identity");
        let seen = ProcessId {
            pid: u32::from_ne_bytes(buf[..4].try_into().unwrap()),
            start_time: u64::from_ne_bytes(buf[4..].try_into().unwrap()),
        };
        assert_eq!(seen.pid, child as u32, "the child has its parent's pid");
        assert_ne!(seen.start_time, 0);
        assert_ne!(seen, parent);
        assert!(
            !seen.is_alive(),
            "the dead child's identity counts as alive"
        );
        assert_eq!(ProcessId::current(), parent);
        assert!(parent.is_alive());
    }

    #[test]
    fn exited_child_is_dead() {
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let id = ProcessId {
            pid: child.id(),
            start_time: start_time_of(child.id()).unwrap_or(0),
        };
        child.wait().unwrap();
        assert!(!id.is_alive());
    }
}
