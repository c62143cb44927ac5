//! The echo side of a ping-pong as a separate OS process.
//!
//! The parent re-executes its own binary (`std::env::current_exe()`) as
//! `<exe> --child <role> <args…>`; the binary's `main` must dispatch [`CHILD_FLAG`]
//! before anything else. Parent and child talk over the child's stdout: protocol
//! lines start with [`PROTOCOL_PREFIX`] (the child announces readiness with
//! [`signal_ready`]); any other stdout line (a library's log, say) is forwarded to
//! the parent's stderr. The child's stderr is inherited, so its error messages
//! appear in the parent's terminal.
//!
//! [`ChildProcess`] kills and reaps the child on drop, so an early `?` in the parent
//! never leaves a spinning process behind; [`ChildProcess::finish`] turns a non-zero
//! exit into an error. The child asks the kernel to kill it if the parent thread
//! that spawned it dies (`PR_SET_PDEATHSIG`), so spawn and finish a child on the
//! same thread.

use anyhow::{anyhow, bail, Context};
use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Command, ExitStatus, Stdio};
use std::str::FromStr;
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

/// Hidden first argument that turns the binary into a child process.
pub const CHILD_FLAG: &str = "--child";
/// Prefix of protocol lines on the child's stdout.
pub const PROTOCOL_PREFIX: &str = "@horus-bench ";
/// How long a child may take to become ready.
pub const READY_TIMEOUT: Duration = Duration::from_secs(30);
/// How long a child may take to exit once its work is done.
pub const EXIT_TIMEOUT: Duration = Duration::from_secs(20);

const READY: &str = "READY";
/// Prefix of the line that carries a child's result as JSON.
const RESULT: &str = "RESULT ";

/// A running child process (parent side).
#[derive(Debug)]
pub struct ChildProcess {
    role: String,
    child: Child,
    lines: Receiver<String>,
    status: Option<ExitStatus>,
    /// The child's stdin, if it was spawned with [`ChildProcess::spawn_controlled`].
    stdin: Option<ChildStdin>,
}

impl ChildProcess {
    /// Starts `<current exe> --child <role> <args…>` with a piped stdout.
    pub fn spawn(role: &str, args: &[String]) -> anyhow::Result<Self> {
        Self::start(role, args, false)
    }

    /// Like [`ChildProcess::spawn`], with a piped stdin as well, so the parent can
    /// [`ChildProcess::send_line`] to the child (e.g. a start signal that several
    /// children receive only once all of them are ready; see [`wait_for_parent`]).
    pub fn spawn_controlled(role: &str, args: &[String]) -> anyhow::Result<Self> {
        Self::start(role, args, true)
    }

    fn start(role: &str, args: &[String], controlled: bool) -> anyhow::Result<Self> {
        let exe = std::env::current_exe().context("locating the benchmark executable")?;
        let mut child = Command::new(&exe)
            .arg(CHILD_FLAG)
            .arg(role)
            .args(args)
            .stdin(if controlled {
                Stdio::piped()
            } else {
                Stdio::null()
            })
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .with_context(|| format!("spawning child {role} ({})", exe.display()))?;
        let stdout = child.stdout.take().expect("stdout is piped");
        let stdin = child.stdin.take();
        let (tx, lines) = mpsc::channel();
        let tag = role.to_owned();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                match line.strip_prefix(PROTOCOL_PREFIX) {
                    Some(msg) => {
                        if tx.send(msg.to_owned()).is_err() {
                            break;
                        }
                    }
                    None => eprintln!("[{tag}] {line}"),
                }
            }
        });
        Ok(Self {
            role: role.to_owned(),
            child,
            lines,
            status: None,
            stdin,
        })
    }

    /// Sends one line to a child spawned with [`ChildProcess::spawn_controlled`].
    pub fn send_line(&mut self, line: &str) -> anyhow::Result<()> {
        let role = &self.role;
        let stdin = self
            .stdin
            .as_mut()
            .with_context(|| format!("child {role} was spawned without a stdin pipe"))?;
        writeln!(stdin, "{line}")
            .and_then(|()| stdin.flush())
            .with_context(|| format!("writing to child {role}"))
    }

    /// Waits up to `timeout` for the child's [`send_result`] and parses it.
    pub fn recv_result<T: serde::de::DeserializeOwned>(
        &mut self,
        timeout: Duration,
    ) -> anyhow::Result<T> {
        let line = self.recv_line(timeout)?;
        let json = line
            .strip_prefix(RESULT)
            .with_context(|| format!("child {} sent {line:?} instead of a result", self.role))?;
        serde_json::from_str(json).with_context(|| format!("parsing the result of {}", self.role))
    }

    /// Waits for the child's ready line (see [`signal_ready`]).
    pub fn wait_ready(&mut self) -> anyhow::Result<()> {
        let line = self.recv_line(READY_TIMEOUT)?;
        if line != READY {
            bail!("child {} sent {line:?} instead of {READY:?}", self.role);
        }
        Ok(())
    }

    /// Waits up to `timeout` for the next protocol line from the child.
    pub fn recv_line(&mut self, timeout: Duration) -> anyhow::Result<String> {
        match self.lines.recv_timeout(timeout) {
            Ok(line) => Ok(line),
            Err(RecvTimeoutError::Timeout) => {
                self.check_alive()?;
                bail!("child {} sent nothing for {timeout:?}", self.role)
            }
            Err(RecvTimeoutError::Disconnected) => {
                // stdout closed: the child exited or is exiting; report how.
                let status = self.wait_timeout(EXIT_TIMEOUT)?;
                bail!(
                    "child {} closed its stdout and exited with {status}",
                    self.role
                )
            }
        }
    }

    /// Fails if the child has already exited (cheap: one `waitpid(WNOHANG)`).
    pub fn check_alive(&mut self) -> anyhow::Result<()> {
        if let Some(status) = self.try_status()? {
            bail!("child {} exited early with {status}", self.role);
        }
        Ok(())
    }

    /// Waits for the child to exit on its own and fails unless it exited with 0.
    pub fn finish(mut self) -> anyhow::Result<()> {
        let status = self.wait_timeout(EXIT_TIMEOUT)?;
        if !status.success() {
            bail!("child {} failed: {status}", self.role);
        }
        Ok(())
    }

    fn try_status(&mut self) -> anyhow::Result<Option<ExitStatus>> {
        if self.status.is_none() {
            self.status = self.child.try_wait().context("waitpid on child")?;
        }
        Ok(self.status)
    }

    fn wait_timeout(&mut self, timeout: Duration) -> anyhow::Result<ExitStatus> {
        let deadline = Instant::now() + timeout;
        loop {
            if let Some(status) = self.try_status()? {
                return Ok(status);
            }
            if Instant::now() >= deadline {
                bail!("child {} did not exit within {timeout:?}", self.role);
            }
            std::thread::sleep(Duration::from_millis(1));
        }
    }
}

impl Drop for ChildProcess {
    fn drop(&mut self) {
        if self.status.is_none() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// Child side: call first in a child role. Makes the kernel kill this process if
/// the parent thread that spawned it dies, so a crashed parent never leaves a
/// busy-polling child behind.
pub fn init_child() -> anyhow::Result<()> {
    let parent = std::os::unix::process::parent_id();
    // SAFETY: PR_SET_PDEATHSIG takes a signal number as its only argument; the
    // remaining variadic arguments are ignored by the kernel for this option.
    let rc = unsafe { libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0) };
    if rc != 0 {
        return Err(std::io::Error::last_os_error()).context("prctl(PR_SET_PDEATHSIG)");
    }
    // The parent may have died before the prctl took effect.
    if std::os::unix::process::parent_id() != parent {
        bail!("parent exited during child start-up");
    }
    Ok(())
}

/// Child side: tells the parent this child is ready to serve.
pub fn signal_ready() -> anyhow::Result<()> {
    send_line(READY)
}

/// Child side: sends `value` to the parent as one JSON line ([`ChildProcess::recv_result`]).
pub fn send_result<T: serde::Serialize>(value: &T) -> anyhow::Result<()> {
    send_line(&format!("{RESULT}{}", serde_json::to_string(value)?))
}

/// Child side: blocks until the parent sends `expected` on stdin
/// ([`ChildProcess::send_line`]); fails if stdin closes or carries anything else.
pub fn wait_for_parent(expected: &str) -> anyhow::Result<()> {
    let mut line = String::new();
    let n = std::io::stdin()
        .lock()
        .read_line(&mut line)
        .context("reading the parent's signal")?;
    anyhow::ensure!(n > 0, "the parent closed stdin before sending {expected:?}");
    anyhow::ensure!(
        line.trim_end() == expected,
        "expected {expected:?} from the parent, got {line:?}"
    );
    Ok(())
}

/// Child side: sends one protocol line to the parent.
pub fn send_line(line: &str) -> anyhow::Result<()> {
    let mut out = std::io::stdout().lock();
    writeln!(out, "{PROTOCOL_PREFIX}{line}")?;
    out.flush()?;
    Ok(())
}

/// Child side: positional arguments of a child role, parsed in order.
#[derive(Debug)]
pub struct ChildArgs {
    role: String,
    args: std::vec::IntoIter<String>,
}

impl ChildArgs {
    /// Wraps the arguments that followed `--child <role>`.
    pub fn new(role: &str, args: Vec<String>) -> Self {
        Self {
            role: role.to_owned(),
            args: args.into_iter(),
        }
    }

    /// Next argument parsed as `T`; `what` names it in errors.
    pub fn next<T>(&mut self, what: &str) -> anyhow::Result<T>
    where
        T: FromStr,
        T::Err: std::fmt::Display,
    {
        let raw = self
            .args
            .next()
            .ok_or_else(|| anyhow!("missing argument <{what}> (role {})", self.role))?;
        raw.parse()
            .map_err(|e| anyhow!("bad <{what}> {raw:?}: {e}"))
    }

    /// Next argument as an optional CPU: a number, or `-` for "not pinned".
    pub fn next_cpu(&mut self) -> anyhow::Result<Option<usize>> {
        let raw: String = self.next("cpu")?;
        if raw == "-" {
            return Ok(None);
        }
        raw.parse()
            .map(Some)
            .map_err(|e| anyhow!("bad <cpu> {raw:?}: {e}"))
    }
}

/// Formats an optional CPU for [`ChildArgs::next_cpu`].
pub fn cpu_arg(cpu: Option<usize>) -> String {
    cpu.map_or_else(|| "-".to_owned(), |c| c.to_string())
}
