//! Shared helpers for the black-box and multi-process tests.
#![allow(dead_code, unreachable_pub)]

use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};

/// A namespace no other test (or test run) uses, so tests run in parallel.
pub fn unique_ns(tag: &str) -> String {
    static N: AtomicU32 = AtomicU32::new(0);
    format!(
        "test-{}-{}-{}",
        tag,
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    )
}

/// Path of the segment file of topic `name` in `ns`.
pub fn segment_path(ns: &str, name: &str) -> String {
    let shm = horus_shm::name::segment_name(ns, "t", name).unwrap();
    format!("/dev/shm{shm}")
}

/// Re-runs this test binary as a separate OS process executing the `peer`
/// test with `role` and `args` (see `peer_main` in each test file).
pub fn spawn_peer(ns: &str, role: &str, args: &[&str]) -> Child {
    Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "peer", "--nocapture", "--test-threads=1"])
        .env("HORUS_NAMESPACE", ns)
        .env("HORUS_PEER_ROLE", role)
        .env("HORUS_PEER_ARGS", args.join(","))
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap()
}

/// The role and arguments when running as a peer process.
pub fn peer_role() -> Option<(String, Vec<String>)> {
    let role = std::env::var("HORUS_PEER_ROLE").ok()?;
    let args = std::env::var("HORUS_PEER_ARGS")
        .unwrap_or_default()
        .split(',')
        .filter(|s| !s.is_empty())
        .map(str::to_owned)
        .collect();
    Some((role, args))
}

/// Waits for a child and asserts it succeeded.
pub fn expect_success(mut child: Child) -> String {
    use std::io::Read;
    let mut out = String::new();
    child
        .stdout
        .take()
        .unwrap()
        .read_to_string(&mut out)
        .unwrap();
    let status = child.wait().unwrap();
    assert!(status.success(), "peer failed: {status}\n{out}");
    out
}

/// Sends SIGKILL.
pub fn kill9(child: &mut Child) {
    // SAFETY: kill with a pid we spawned and still own (not yet waited).
    unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGKILL) };
    child.wait().unwrap();
}

/// Polls `cond` until true, for at most `secs` seconds (behavioural wait,
/// not a timing assertion: the generous bound only turns a hang into a
/// failure).
pub fn wait_until(secs: u64, mut cond: impl FnMut() -> bool) -> bool {
    let end = std::time::Instant::now() + std::time::Duration::from_secs(secs);
    while std::time::Instant::now() < end {
        if cond() {
            return true;
        }
        std::thread::sleep(std::time::Duration::from_millis(2));
    }
    cond()
}

/// How long a test waits for a peer's report, or for a peer to exit, before
/// calling it a hang. Generous: it only turns a hang into a failure, it is
/// not a timing assertion.
pub const PEER_PATIENCE: std::time::Duration = std::time::Duration::from_secs(120);

/// Prefix of the report lines a peer writes on stdout (libtest may put its
/// own text on the same line, so the prefix is searched, not anchored).
const REPORT: &str = "@@ ";

/// A peer process driven line by line: the test writes commands to its
/// stdin ([`Peer::tell`]) and waits for its reports ([`Peer::expect`]).
/// Dropping a peer that is still running kills it, so a failing test never
/// leaves processes behind.
pub struct Peer {
    role: String,
    child: Option<Child>,
    stdin: Option<std::process::ChildStdin>,
    lines: std::sync::mpsc::Receiver<String>,
    log: Vec<String>,
}

impl Peer {
    /// Starts this test binary as a peer with `role` and `args` in `ns`.
    pub fn spawn(ns: &str, role: &str, args: &[&str]) -> Peer {
        use std::io::BufRead;
        let mut child = Command::new(std::env::current_exe().unwrap())
            .args(["--exact", "peer", "--nocapture", "--test-threads=1"])
            .env("HORUS_NAMESPACE", ns)
            .env("HORUS_PEER_ROLE", role)
            .env("HORUS_PEER_ARGS", args.join(","))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap();
        let stdout = child.stdout.take().unwrap();
        let (tx, lines) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in std::io::BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        Peer {
            role: role.to_owned(),
            stdin: child.stdin.take(),
            child: Some(child),
            lines,
            log: Vec::new(),
        }
    }

    /// The peer's pid.
    pub fn pid(&self) -> u32 {
        self.child.as_ref().expect("peer still running").id()
    }

    /// Waits for the next report starting with `what` and returns the rest
    /// of it (trimmed). Fails if the peer exits or stays silent for
    /// [`PEER_PATIENCE`].
    pub fn expect(&mut self, what: &str) -> String {
        let deadline = std::time::Instant::now() + PEER_PATIENCE;
        loop {
            let left = deadline.saturating_duration_since(std::time::Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(line) => {
                    self.log.push(line.clone());
                    if let Some(at) = line.find(REPORT) {
                        let report = &line[at + REPORT.len()..];
                        if let Some(rest) = report.strip_prefix(what) {
                            return rest.trim().to_owned();
                        }
                    }
                }
                Err(e) => panic!(
                    "peer {} did not report {what:?} ({e:?}); its output:\n{}",
                    self.role,
                    self.log.join("\n")
                ),
            }
        }
    }

    /// Sends one command line to the peer.
    pub fn tell(&mut self, command: &str) {
        use std::io::Write;
        let stdin = self.stdin.as_mut().expect("peer stdin open");
        writeln!(stdin, "{command}").unwrap();
        stdin.flush().unwrap();
    }

    /// SIGKILLs the peer and reaps it.
    pub fn kill9(&mut self) {
        let mut child = self.child.take().expect("peer still running");
        kill9(&mut child);
    }

    /// Sends SIGKILL and does *not* reap the process: it stays a zombie
    /// (state `Z`) until the returned handle is waited for.
    pub fn kill9_unreaped(&mut self) -> Child {
        let child = self.child.take().expect("peer still running");
        // SAFETY: kill with a pid we spawned and have not waited for.
        unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGKILL) };
        child
    }

    /// Closes the peer's stdin and waits (bounded) for it to exit; asserts
    /// it succeeded. Returns every line it wrote.
    pub fn finish(mut self) -> Vec<String> {
        self.stdin = None;
        let mut child = self.child.take().expect("peer still running");
        let deadline = std::time::Instant::now() + PEER_PATIENCE;
        let status = loop {
            if let Some(status) = child.try_wait().unwrap() {
                break status;
            }
            if std::time::Instant::now() > deadline {
                kill9(&mut child);
                panic!("peer {} did not exit; it hangs", self.role);
            }
            std::thread::sleep(std::time::Duration::from_millis(5));
        };
        // The reader thread ends at EOF, which follows the exit.
        while let Ok(line) = self.lines.recv_timeout(std::time::Duration::from_secs(10)) {
            self.log.push(line);
        }
        assert!(
            status.success(),
            "peer {} failed: {status}; its output:\n{}",
            self.role,
            self.log.join("\n")
        );
        std::mem::take(&mut self.log)
    }
}

impl Drop for Peer {
    fn drop(&mut self) {
        if let Some(mut child) = self.child.take() {
            kill9(&mut child);
        }
    }
}

/// In a peer process: the role and arguments. Also arranges for the peer to
/// be killed if the test that spawned it goes away, so a peer never outlives
/// a crashed or timed-out test.
pub fn enter_peer() -> Option<(String, Vec<String>)> {
    let role = peer_role()?;
    // SAFETY: prctl(PR_SET_PDEATHSIG) only sets a flag of this process.
    unsafe { libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) };
    Some(role)
}

/// In a peer process: writes a report line for [`Peer::expect`].
pub fn report(line: impl std::fmt::Display) {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    writeln!(out, "\n{REPORT}{line}").unwrap();
    out.flush().unwrap();
}

/// In a peer process: waits for the next command line from the test;
/// `"eof"` once the test closed stdin ([`Peer::finish`]) or went away.
pub fn command() -> String {
    let mut line = String::new();
    match std::io::stdin().read_line(&mut line) {
        Ok(n) if n > 0 => line.trim().to_owned(),
        _ => "eof".to_owned(),
    }
}

/// In a peer process: waits for the command `expected` (fails on another).
pub fn await_command(expected: &str) {
    let got = command();
    assert_eq!(got, expected, "peer expected command {expected:?}");
}

/// In a peer process: the namespace the test gave it.
pub fn peer_ns() -> String {
    std::env::var("HORUS_NAMESPACE").expect("peers run with HORUS_NAMESPACE")
}

/// Runs `f` on another thread and returns its result, failing the test if
/// it does not return within `secs` seconds (a hang becomes a failure).
pub fn within<R: Send + 'static>(secs: u64, f: impl FnOnce() -> R + Send + 'static) -> R {
    let (tx, rx) = std::sync::mpsc::channel();
    let handle = std::thread::spawn(move || {
        let r = f();
        let _ = tx.send(());
        r
    });
    match rx.recv_timeout(std::time::Duration::from_secs(secs)) {
        Ok(()) | Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => match handle.join() {
            Ok(r) => r,
            Err(panic) => std::panic::resume_unwind(panic),
        },
        Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {
            panic!("operation did not finish within {secs} s: it hangs")
        }
    }
}
