//! One run of one process: spawned in a process group of its own (so a terminal's Ctrl-C
//! reaches only `horus launch`, which then stops the processes in order, and a signal
//! reaches the whole group: a `sh -c` line and what it started), with its output pumped
//! through prefixes, and killed by the kernel if `horus launch` itself dies.

use std::os::unix::process::CommandExt;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::thread::JoinHandle;

use crate::output::{pump, Label, Sink};
use crate::spec::ProcessSpec;

/// Environment variable giving every process the pid of `horus launch`: SIGTERM to it
/// stops the whole system in order (what the demo's monitor does when its time is up).
pub(crate) const LAUNCH_PID_ENV: &str = "HORUS_LAUNCH_PID";
/// Environment variable giving every process its name in the launch file.
pub(crate) const LAUNCH_NAME_ENV: &str = "HORUS_LAUNCH_NAME";

/// A started process.
pub(crate) struct Running {
    child: Child,
    /// Copy its stdout and stderr; they end when the process (and whatever else holds
    /// its pipes) is gone.
    pub(crate) pumps: Vec<JoinHandle<()>>,
}

impl Running {
    /// Starts `spec`; stdout lines go to `out`, stderr lines to stderr.
    pub(crate) fn spawn(spec: &ProcessSpec, label: &Label, out: Sink) -> std::io::Result<Running> {
        let mut cmd = Command::new(&spec.argv[0]);
        cmd.args(&spec.argv[1..])
            .envs(spec.env.iter().map(|(k, v)| (k, v)))
            .env(LAUNCH_PID_ENV, std::process::id().to_string())
            .env(LAUNCH_NAME_ENV, &spec.name)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .process_group(0);
        if let Some(ns) = &spec.namespace {
            cmd.env("HORUS_NAMESPACE", ns);
        }
        if let Some(dir) = &spec.cwd {
            cmd.current_dir(dir);
        }
        // SAFETY: getpid has no preconditions.
        let parent = unsafe { libc::getpid() };
        // SAFETY: the closure runs in the forked child before exec, where only
        // async-signal-safe calls are allowed: prctl and getppid are system calls, and
        // the closure allocates nothing (the error is built from a raw errno).
        unsafe {
            cmd.pre_exec(move || {
                // The kernel sends SIGTERM to the child when the thread that forked it
                // (the supervisor's, which lives as long as `horus launch`) ends.
                if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGTERM) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
                // Died between fork and prctl: do not run orphaned.
                if libc::getppid() != parent {
                    return Err(std::io::Error::from_raw_os_error(libc::ESRCH));
                }
                Ok(())
            })
        };
        let mut child = cmd.spawn()?;
        let mut pumps = Vec::with_capacity(2);
        if let Some(o) = child.stdout.take() {
            pumps.push(pump(o, label, out));
        }
        if let Some(e) = child.stderr.take() {
            pumps.push(pump(e, label, Sink::Stderr));
        }
        Ok(Running { child, pumps })
    }

    pub(crate) fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Its exit status, if it has ended (reaping it).
    pub(crate) fn try_wait(&mut self) -> Option<ExitStatus> {
        self.child.try_wait().ok().flatten()
    }

    /// Sends `sig` to its process group. Only called before it is reaped (the caller
    /// checks with `try_wait` first), so the group id cannot have been reused.
    pub(crate) fn signal_group(&self, sig: libc::c_int) {
        let pgid = self.child.id() as libc::pid_t;
        // SAFETY: kill takes no pointers; -pgid names the group this child leads (it was
        // spawned with process_group(0)), which exists at least while the unreaped child
        // does.
        unsafe { libc::kill(-pgid, sig) };
    }
}
