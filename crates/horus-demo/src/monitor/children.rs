//! The robot's processes as seen from the monitor: spawning, stopping with
//! SIGTERM, reaping, and collecting what they print.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use anyhow::Context;

use crate::child::{Role, PARENT_ENV};

/// A process the monitor starts and stops.
pub(crate) struct ChildSpec {
    /// Shown in the output.
    pub(crate) name: String,
    /// How to start it (namespace and parent pid are added to its
    /// environment).
    pub(crate) command: Command,
    /// The name of the horus scheduler it runs, whose statistics the
    /// monitor reads and shows (`None`: it runs none).
    pub(crate) scheduler: Option<String>,
}

/// Environment variable naming the Python interpreter that has the `horus`
/// package installed (`make demo` sets it to the venv's python).
pub(crate) const PYTHON_ENV: &str = "HORUS_PYTHON";

/// The name of the Python process and of the horus scheduler it runs (see
/// `python/horus/demo/obstacle_detector.py`).
pub(crate) const PYTHON: &str = "python";

/// The Python process (the obstacle detector, `python -m
/// horus.demo.obstacle_detector`), or why it is left out: `HORUS_PYTHON` is
/// unset, or that interpreter is missing or cannot import `horus`.
pub(crate) fn python() -> Result<ChildSpec, String> {
    let python = match std::env::var_os(PYTHON_ENV) {
        Some(p) if !p.is_empty() => PathBuf::from(p),
        _ => {
            return Err(format!(
                "{PYTHON_ENV} is not set (`make demo` sets it to the venv's python)"
            ))
        }
    };
    let importable = Command::new(&python)
        .args(["-c", "import horus.demo.obstacle_detector"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !importable {
        return Err(format!(
            "{PYTHON_ENV}={} cannot import horus.demo.obstacle_detector \
             (run `make py-build`)",
            python.display()
        ));
    }
    let mut command = Command::new(python);
    // -u: its shutdown report arrives even if it is killed.
    command.args(["-u", "-m", "horus.demo.obstacle_detector"]);
    Ok(ChildSpec {
        name: PYTHON.to_owned(),
        command,
        scheduler: Some(PYTHON.to_owned()),
    })
}

/// The robot: this executable re-run once per role.
///
/// The Python process (see [`python`]) joins as one more `ChildSpec`: it
/// gets `HORUS_NAMESPACE` (and `HORUS_DEMO_PARENT`) like the others, exits 0
/// on SIGTERM, and runs a horus scheduler named [`PYTHON`] whose nodes
/// appear in the table.
pub(crate) fn robot(exe: &Path) -> Vec<ChildSpec> {
    Role::ALL
        .into_iter()
        .map(|role| {
            let mut command = Command::new(exe);
            command.args(["--role", role.name()]);
            ChildSpec {
                name: role.name().to_owned(),
                command,
                scheduler: Some(role.name().to_owned()),
            }
        })
        .collect()
}

/// A started process.
pub(crate) struct Running {
    pub(crate) name: String,
    pub(crate) scheduler: Option<String>,
    child: Child,
    /// Collects its stdout (shutdown reports) until it closes.
    stdout: Option<JoinHandle<String>>,
}

/// How a process ended.
pub(crate) struct Ended {
    pub(crate) name: String,
    pub(crate) status: ExitStatus,
    /// Whether the monitor had to SIGKILL it.
    pub(crate) killed: bool,
    pub(crate) output: String,
}

impl Running {
    /// Starts `spec` in namespace `ns`. Its stderr goes to ours (warnings
    /// show at once); its stdout is collected and shown after it exits.
    pub(crate) fn spawn(mut spec: ChildSpec, ns: &str) -> anyhow::Result<Running> {
        let mut child = spec
            .command
            .env("HORUS_NAMESPACE", ns)
            .env(PARENT_ENV, std::process::id().to_string())
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .with_context(|| format!("starting the {} process", spec.name))?;
        let mut out = child.stdout.take().expect("stdout is piped");
        let stdout = std::thread::spawn(move || {
            let mut s = String::new();
            let _ = out.read_to_string(&mut s);
            s
        });
        Ok(Running {
            name: spec.name,
            scheduler: spec.scheduler,
            child,
            stdout: Some(stdout),
        })
    }

    pub(crate) fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Its exit status if it has exited already.
    pub(crate) fn exited(&mut self) -> Option<ExitStatus> {
        self.child.try_wait().ok().flatten()
    }

    /// Sends SIGTERM (a clean stop for a horus scheduler).
    pub(crate) fn terminate(&mut self) {
        if self.exited().is_none() {
            let pid = self.child.id() as libc::pid_t;
            // SAFETY: kill takes no pointers; `pid` is our own child, not yet
            // reaped (try_wait said so), so it cannot have been reused.
            unsafe { libc::kill(pid, libc::SIGTERM) };
        }
    }

    /// Waits for it to exit, SIGKILLing it after `grace`.
    pub(crate) fn wait(mut self, grace: Duration) -> anyhow::Result<Ended> {
        let deadline = Instant::now() + grace;
        let mut killed = false;
        let status = loop {
            if let Some(status) = self.child.try_wait()? {
                break status;
            }
            if Instant::now() >= deadline && !killed {
                self.child.kill()?;
                killed = true;
            }
            std::thread::sleep(Duration::from_millis(5));
        };
        let output = self
            .stdout
            .take()
            .and_then(|h| h.join().ok())
            .unwrap_or_default();
        Ok(Ended {
            name: std::mem::take(&mut self.name),
            status,
            killed,
            output,
        })
    }
}

impl Drop for Running {
    /// A monitor that fails half-way never leaves a robot process behind.
    fn drop(&mut self) {
        if self.exited().is_none() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}
