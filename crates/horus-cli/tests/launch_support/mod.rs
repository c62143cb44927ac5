//! Helpers of the `horus launch` tests: scratch directories, running `horus launch` with
//! bounded waits, reading its JSON summary. Waits are bounded only so that a broken build
//! fails instead of hanging; no test asserts a duration.

// Each test binary uses a part of these.
#![allow(dead_code)]

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Output, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::Value;

/// Longest any wait in these tests may take before the test fails.
pub(crate) const BOUND: Duration = Duration::from_secs(60);

/// A scratch directory, removed at the end.
pub(crate) struct Dir(pub(crate) PathBuf);

impl Dir {
    pub(crate) fn new(tag: &str) -> Dir {
        let d = std::env::temp_dir().join(format!("horus-launch-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        Dir(d)
    }

    pub(crate) fn write(&self, name: &str, text: &str) -> PathBuf {
        let p = self.0.join(name);
        std::fs::write(&p, text).unwrap();
        p
    }

    pub(crate) fn path(&self, name: &str) -> PathBuf {
        self.0.join(name)
    }
}

impl Drop for Dir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

pub(crate) fn horus() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_horus"));
    c.stdin(Stdio::null());
    c
}

/// Runs `horus launch FILE ARGS... --json` to its end (it must end on its own).
pub(crate) fn launch_json(file: &Path, args: &[&str]) -> (ExitStatus, Value, String) {
    let mut cmd = horus();
    cmd.arg("launch").arg(file).args(args).arg("--json");
    let out = output_bounded(cmd);
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    let doc: Value = serde_json::from_str(stdout.trim())
        .unwrap_or_else(|e| panic!("not one JSON document ({e}):\n{stdout}\n{stderr}"));
    (out.status, doc, stderr)
}

/// Output of `cmd`, killed if it has not ended within [`BOUND`].
pub(crate) fn output_bounded(mut cmd: Command) -> Output {
    let live = Live::spawn(&mut cmd);
    live.finish()
}

/// A running `horus launch` whose output is collected as it comes.
pub(crate) struct Live {
    child: Child,
    out: Arc<Mutex<String>>,
    err: Arc<Mutex<String>>,
    readers: Vec<std::thread::JoinHandle<()>>,
}

impl Live {
    pub(crate) fn spawn(cmd: &mut Command) -> Live {
        let mut child = cmd
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("starting horus");
        let out = Arc::new(Mutex::new(String::new()));
        let err = Arc::new(Mutex::new(String::new()));
        let mut readers = Vec::new();
        for (stream, buf) in [
            (
                Box::new(child.stdout.take().unwrap()) as Box<dyn Read + Send>,
                &out,
            ),
            (
                Box::new(child.stderr.take().unwrap()) as Box<dyn Read + Send>,
                &err,
            ),
        ] {
            let buf = Arc::clone(buf);
            readers.push(std::thread::spawn(move || {
                let mut stream = stream;
                let mut chunk = [0u8; 4096];
                while let Ok(n) = stream.read(&mut chunk) {
                    if n == 0 {
                        break;
                    }
                    buf.lock()
                        .unwrap()
                        .push_str(&String::from_utf8_lossy(&chunk[..n]));
                }
            }));
        }
        Live {
            child,
            out,
            err,
            readers,
        }
    }

    pub(crate) fn text(&self) -> (String, String) {
        (
            self.out.lock().unwrap().clone(),
            self.err.lock().unwrap().clone(),
        )
    }

    /// Waits until `cond(stdout, stderr)` holds.
    pub(crate) fn wait_for(&self, what: &str, cond: impl Fn(&str, &str) -> bool) {
        let deadline = Instant::now() + BOUND;
        loop {
            let (o, e) = self.text();
            if cond(&o, &e) {
                return;
            }
            assert!(Instant::now() < deadline, "never saw {what}:\n{o}\n{e}");
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    pub(crate) fn signal(&self, sig: libc::c_int) {
        // SAFETY: kill takes no pointers; the pid is our own unreaped child.
        let rc = unsafe { libc::kill(self.child.id() as libc::pid_t, sig) };
        assert_eq!(rc, 0);
    }

    pub(crate) fn finish(mut self) -> Output {
        let deadline = Instant::now() + BOUND;
        let status = loop {
            if let Some(s) = self.child.try_wait().unwrap() {
                break s;
            }
            if Instant::now() >= deadline {
                let _ = self.child.kill();
                let (o, e) = self.text();
                panic!("horus launch did not end:\n{o}\n{e}");
            }
            std::thread::sleep(Duration::from_millis(10));
        };
        for r in self.readers.drain(..) {
            r.join().unwrap();
        }
        let (o, e) = self.text();
        Output {
            status,
            stdout: o.into_bytes(),
            stderr: e.into_bytes(),
        }
    }
}

pub(crate) fn process<'a>(doc: &'a Value, name: &str) -> &'a Value {
    doc["processes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"] == name)
        .unwrap_or_else(|| panic!("no process {name} in {doc}"))
}

/// Position of the first occurrence of `needle` in `hay` (which must contain it).
pub(crate) fn pos(hay: &str, needle: &str) -> usize {
    hay.find(needle)
        .unwrap_or_else(|| panic!("{needle:?} not in:\n{hay}"))
}

/// A process that says `NAME up`, and on SIGTERM `NAME got TERM` before exiting 0.
pub(crate) fn polite(name: &str) -> String {
    format!(
        r#"'trap "echo {name} got TERM; exit 0" TERM; echo {name} up; while :; do sleep 0.05; done'"#
    )
}

/// Waits (bounded) for `child` and collects its stderr.
pub(crate) fn output_of(mut child: Child) -> Output {
    let mut err = child.stderr.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut s = Vec::new();
        let _ = err.read_to_end(&mut s);
        s
    });
    let deadline = Instant::now() + BOUND;
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if Instant::now() >= deadline {
            let _ = child.kill();
            panic!("horus launch did not end");
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    Output {
        status,
        stdout: Vec::new(),
        stderr: reader.join().unwrap(),
    }
}
