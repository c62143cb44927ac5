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
