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
