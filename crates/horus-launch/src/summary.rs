//! How each process ended, whether that is clean, and the launch's exit status:
//! 0 when every process ended cleanly, 1 otherwise.
//!
//! Clean: exit status 0; or, after the SIGTERM of the shutdown, death by that SIGTERM (or
//! exit status 143, a shell's way of saying so), since a program without a handler is
//! meant to die of it; or never started because the launch was already stopping. The
//! last run decides: a process that crashed, was restarted and then stopped cleanly is
//! clean (its restarts are reported).
//! Not clean: any other exit status or signal, a SIGKILL after the grace period, a
//! process that could not be started.

use std::os::unix::process::ExitStatusExt;
use std::process::ExitStatus;

use serde_json::json;

/// Why a process that never ran is clean.
pub(crate) const NOT_STARTED_STOPPING: &str = "not started: the launch was stopping";

/// How one process ended (its last run).
#[derive(Clone, Debug)]
pub struct Ending {
    /// Exit code, if it exited.
    pub code: Option<i32>,
    /// Signal that killed it, if one did.
    pub signal: Option<i32>,
    /// The shutdown sent it SIGTERM.
    pub term_sent: bool,
    /// The shutdown SIGKILLed it.
    pub killed: bool,
    /// Never started, could not start, gave up restarting.
    pub problem: Option<String>,
}

impl Ending {
    pub(crate) fn of(
        status: Option<ExitStatus>,
        term_sent: bool,
        killed: bool,
        problem: Option<String>,
    ) -> Ending {
        Ending {
            code: status.and_then(|s| s.code()),
            signal: status.and_then(|s| s.signal()),
            term_sent,
            killed,
            problem,
        }
    }

    /// Whether this counts as a clean end (see the module docs).
    pub fn clean(&self) -> bool {
        if self.killed {
            return false;
        }
        match (self.code, self.signal) {
            (Some(0), _) => true,
            (Some(143), _) | (_, Some(libc::SIGTERM)) => self.term_sent,
            (Some(_), _) | (_, Some(_)) => false,
            // Never ran: clean only if the launch was stopping before its turn.
            (None, None) => self
                .problem
                .as_deref()
                .is_some_and(|p| p.starts_with(NOT_STARTED_STOPPING)),
        }
    }

    /// One phrase: `exit 0`, `killed by SIGKILL after the grace period`, ...
    pub fn describe(&self) -> String {
        let mut s = match (self.code, self.signal) {
            (Some(c), _) if self.term_sent && !self.killed => format!("exit {c} after SIGTERM"),
            (Some(c), _) => format!("exit {c}"),
            (_, Some(libc::SIGTERM)) if self.term_sent => "ended by the shutdown's SIGTERM".into(),
            (_, Some(sig)) => format!("killed by {}", signal_name(sig)),
            _ => String::new(),
        };
        if self.killed {
            s += " (SIGKILLed: did not stop within its grace period)";
        }
        if let Some(p) = &self.problem {
            if !s.is_empty() {
                s += "; ";
            }
            s += p;
        }
        s
    }
}

fn signal_name(sig: i32) -> String {
    match sig {
        libc::SIGTERM => "SIGTERM".into(),
        libc::SIGKILL => "SIGKILL".into(),
        libc::SIGINT => "SIGINT".into(),
        libc::SIGSEGV => "SIGSEGV".into(),
        libc::SIGABRT => "SIGABRT".into(),
        libc::SIGHUP => "SIGHUP".into(),
        other => format!("signal {other}"),
    }
}

/// One process in the summary.
#[derive(Clone, Debug)]
pub struct ProcessReport {
    /// Its name in the launch file.
    pub name: String,
    /// Pid of its last run.
    pub pid: Option<u32>,
    /// How many times it was started.
    pub starts: u32,
    /// How many of those starts were restarts.
    pub restarts: u32,
    /// Its restart policy, as shown.
    pub restart: String,
    /// How its last run ended.
    pub ending: Ending,
}

/// Everything `horus launch` reports at the end.
#[derive(Clone, Debug)]
pub struct Summary {
    /// Why the launch stopped (`SIGINT received`, `every process has ended`, ...).
    pub reason: String,
    /// Every process, in declaration order.
    pub processes: Vec<ProcessReport>,
    /// Whether every process ended cleanly (see the module docs) and all could start.
    pub clean: bool,
}

impl Summary {
    pub(crate) fn new(
        reason: String,
        processes: Vec<ProcessReport>,
        failed_to_start: bool,
    ) -> Self {
        let clean = !failed_to_start && processes.iter().all(|p| p.ending.clean());
        Summary {
            reason,
            processes,
            clean,
        }
    }

    /// The exit status of `horus launch`.
    pub fn exit_code(&self) -> u8 {
        if self.clean {
            0
        } else {
            1
        }
    }

    /// The table printed at the end.
    pub fn text(&self) -> String {
        let w = self
            .processes
            .iter()
            .map(|p| p.name.len())
            .max()
            .unwrap_or(0)
            .max(7);
        let mut s = format!(
            "launch summary ({}):\n  {:<w$}  {:>8}  {:>8}  status\n",
            self.reason, "process", "pid", "restarts"
        );
        for p in &self.processes {
            let pid = p.pid.map_or_else(|| "-".to_owned(), |p| p.to_string());
            s += &format!(
                "  {:<w$}  {pid:>8}  {:>8}  {}{}\n",
                p.name,
                p.restarts,
                p.ending.describe(),
                if p.ending.clean() {
                    ""
                } else {
                    "  [not clean]"
                }
            );
        }
        s += &if self.clean {
            "every process ended cleanly: exit status 0".to_owned()
        } else {
            "not every process ended cleanly: exit status 1".to_owned()
        };
        s
    }

    /// The `--json` document.
    pub fn json(&self, file: &str) -> serde_json::Value {
        json!({
            "file": file,
            "reason": self.reason,
            "clean": self.clean,
            "exit_code": self.exit_code(),
            "processes": self.processes.iter().map(|p| json!({
                "name": p.name,
                "pid": p.pid,
                "starts": p.starts,
                "restarts": p.restarts,
                "restart_policy": p.restart,
                "exit_code": p.ending.code,
                "signal": p.ending.signal,
                "sigterm_sent": p.ending.term_sent,
                "sigkilled": p.ending.killed,
                "problem": p.ending.problem,
                "status": p.ending.describe(),
                "clean": p.ending.clean(),
            })).collect::<Vec<_>>(),
        })
    }
}
