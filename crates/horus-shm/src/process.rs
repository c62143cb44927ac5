//! Identity and liveness of participating processes.
//!
//! A pid alone is not an identity: pids are reused. We pair the pid with the
//! process start time (field 22 of `/proc/<pid>/stat`, clock ticks since boot),
//! as iceoryx2 and systemd do, so a recycled pid is never mistaken for the
//! participant that died.

use std::sync::OnceLock;

/// A process identity that survives pid reuse: pid plus start time.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ProcessId {
    /// The kernel pid.
    pub pid: u32,
    /// Start time in clock ticks since boot; 0 if it could not be read.
    pub start_time: u64,
}

impl ProcessId {
    /// The identity of the calling process (computed once).
    pub fn current() -> ProcessId {
        static CURRENT: OnceLock<ProcessId> = OnceLock::new();
        *CURRENT.get_or_init(|| {
            let pid = std::process::id();
            ProcessId {
                pid,
                start_time: start_time_of(pid).unwrap_or(0),
            }
        })
    }

    /// Packs pid and the low 32 bits of the start time into one word, so a
    /// record's owner is claimed with a single CAS. Never 0 or `u64::MAX`.
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
        match start_time_of(self.pid) {
            // Compared on the low 32 bits: records store a packed token.
            Some(t) => self.start_time == 0 || t as u32 == self.start_time as u32,
            // /proc unreadable but kill said it exists (e.g. EPERM): alive.
            None => rc == 0 || std::io::Error::last_os_error().raw_os_error() == Some(libc::EPERM),
        }
    }
}

/// Reads field 22 (`starttime`) of `/proc/<pid>/stat`.
fn start_time_of(pid: u32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name (field 2) is in parentheses and may itself contain
    // spaces or ')' — so split after the *last* ')'.
    let rest = &stat[stat.rfind(')')? + 1..];
    // rest starts at field 3 (state); starttime is field 22 → index 19.
    rest.split_whitespace().nth(19)?.parse().ok()
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
