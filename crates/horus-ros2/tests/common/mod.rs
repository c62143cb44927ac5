//! What the rclpy tests share: the ROS 2 venv check, a network namespace with only `lo`
//! (DDS never leaves it), the bridge as a child process (this test binary re-executed),
//! rclpy nodes as child processes, and the leftovers check.

#![allow(dead_code)]

use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

/// Set in the bridge child: its horus namespace.
pub(crate) const CHILD_ENV: &str = "HORUS_ROS2_TEST_BRIDGE";

/// Set in the bridge child: its `max_reassembly_bytes` (bytes), when a test needs a
/// process reassembly budget smaller than the default.
pub(crate) const MAX_REASSEMBLY_ENV: &str = "HORUS_ROS2_TEST_MAX_REASSEMBLY";

/// Set in the bridge child: its `max_held_bytes_per_reader` (bytes), when a test needs a
/// reader byte budget smaller than the default.
pub(crate) const MAX_HELD_ENV: &str = "HORUS_ROS2_TEST_MAX_HELD";

/// Set in the bridge child: its `call_timeout` in milliseconds, for a test of calls that
/// outlast it.
pub(crate) const CALL_TIMEOUT_ENV: &str = "HORUS_ROS2_TEST_CALL_TIMEOUT_MS";

/// Set in the bridge child: its `scan_interval` in milliseconds (50 otherwise), for a test
/// that needs the scan to lag behind the DDS readers (a writer's samples arriving before
/// the scan accepts it).
pub(crate) const SCAN_INTERVAL_ENV: &str = "HORUS_ROS2_TEST_SCAN_MS";

/// The name of the test that runs the bridge in the child.
pub(crate) const CHILD_TEST: &str = "bridge_process";

/// How long a test waits for anything to happen before it fails (not a timing assertion:
/// the bound that turns "never" into a failure).
pub(crate) const PATIENCE: Duration = Duration::from_secs(60);

/// Defines the test that, re-executed with [`CHILD_ENV`] set, is the bridge process.
#[macro_export]
macro_rules! bridge_process_test {
    () => {
        #[test]
        fn bridge_process() {
            common::bridge_child_main();
        }
    };
}

/// The bridge child: runs a bridge on the namespace in [`CHILD_ENV`] until its stdin closes.
pub(crate) fn bridge_child_main() {
    let Ok(namespace) = std::env::var(CHILD_ENV) else {
        return; // the ordinary test run: nothing to do
    };
    let mut cfg = horus_ros2::BridgeConfig::from_env(&namespace).expect("config");
    cfg.localhost_only = true;
    cfg.scan_interval = Duration::from_millis(50);
    if let Ok(ms) = std::env::var(SCAN_INTERVAL_ENV) {
        cfg.scan_interval = Duration::from_millis(ms.parse().expect("milliseconds"));
    }
    if let Ok(bytes) = std::env::var(MAX_REASSEMBLY_ENV) {
        cfg.max_reassembly_bytes = Some(bytes.parse().expect("a byte count above 0"));
    }
    if let Ok(ms) = std::env::var(CALL_TIMEOUT_ENV) {
        cfg.call_timeout = Duration::from_millis(ms.parse().expect("milliseconds"));
    }
    if let Ok(bytes) = std::env::var(MAX_HELD_ENV) {
        cfg.max_held_bytes_per_reader = Some(bytes.parse().expect("a byte count above 0"));
    }
    let mut bridge = horus_ros2::Bridge::start(cfg).expect("bridge start");
    let (tx, rx) = std::sync::mpsc::channel::<()>();
    std::thread::spawn(move || {
        let _ = std::io::stdin().lines().count();
        let _ = tx.send(());
    });
    println!("bridge: started");
    bridge.run(|_| matches!(rx.try_recv(), Err(std::sync::mpsc::TryRecvError::Empty)));
    println!("bridge: stopped");
}

/// The environment switch that turns "cannot run here" into a failure: set it to `1`
/// where the ROS 2 tests must run (`make test` on a machine set up for them), so that a lost
/// venv or missing root is not a silent pass.
pub(crate) const REQUIRED_ENV: &str = "HORUS_ROS2_REQUIRED";

/// Whether [`REQUIRED_ENV`] is `1`.
pub(crate) fn required() -> bool {
    std::env::var(REQUIRED_ENV).is_ok_and(|v| v == "1")
}

/// Why the test cannot run here; it then prints this and passes, or, with
/// `HORUS_ROS2_REQUIRED=1`, fails with it.
pub(crate) fn skip_reason() -> Option<String> {
    let why = why_not_runnable()?;
    assert!(
        !required(),
        "{REQUIRED_ENV}=1 but this ROS 2 test cannot run here: {why}"
    );
    Some(why)
}

/// What is missing for the rclpy tests: the ROS 2 venv, root (network namespaces), `ip`.
fn why_not_runnable() -> Option<String> {
    if !python().exists() {
        return Some(format!("{} missing", python().display()));
    }
    let venv = std::env::var("HORUS_ROS2_VENV")
        .map(PathBuf::from)
        .unwrap_or_else(|_| {
            PathBuf::from(std::env::var("HOME").unwrap_or_default()).join(".cache/horus-ros2-venv")
        });
    if !venv.join("bin/python").exists() {
        return Some(format!(
            "no ROS 2 venv at {} (run `make setup-ros2`)",
            venv.display()
        ));
    }
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        return Some("network namespaces need root".into());
    }
    if Command::new("ip").arg("-V").output().is_err() {
        return Some("`ip` (iproute2) missing".into());
    }
    None
}

/// `scripts/ros2-python` of this repository.
pub(crate) fn python() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../scripts/ros2-python")
}

/// The repository's Fast DDS profile for nodes receiving large messages
/// (`ros2/fastdds-large-messages.xml`: a 4 MiB UDP receive buffer).
pub(crate) fn large_messages_profile() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../ros2/fastdds-large-messages.xml")
}

/// The rclpy test node.
pub(crate) fn node_py() -> PathBuf {
    // Through horus-ros2's directory: other crates' tests include this module too.
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../horus-ros2/tests/rclpy/node.py")
}

/// The Cyclone DDS test peer (`tests/cyclone/peer.py`: Eclipse Cyclone DDS's Python binding,
/// the `cyclonedds` wheel of the ROS 2 venv).
pub(crate) fn cyclone_peer_py() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../horus-ros2/tests/cyclone/peer.py")
}

/// The Cyclone DDS configuration of the tests (`tests/cyclone/localhost.xml`): only `lo`, no
/// multicast, unicast discovery to 127.0.0.1.
pub(crate) fn cyclone_config() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../horus-ros2/tests/cyclone/localhost.xml")
}

static NEXT: AtomicU32 = AtomicU32::new(0);

/// One test's world: a horus namespace, a ROS 2 domain, a network namespace with only `lo`.
pub(crate) struct World {
    /// The horus namespace.
    pub(crate) namespace: String,
    /// The ROS 2 domain.
    pub(crate) domain: u16,
    netns: String,
}

impl World {
    /// A fresh world for test `tag`.
    pub(crate) fn new(tag: &str) -> World {
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let pid = std::process::id();
        let netns = format!("hr2-{pid}-{n}");
        run("ip", &["netns", "add", &netns]);
        run("ip", &["-n", &netns, "link", "set", "lo", "up"]);
        World {
            namespace: format!("ros2t_{tag}_{pid}_{n}"),
            domain: u16::try_from((pid as usize + n as usize * 7) % 200 + 1).unwrap(),
            netns,
        }
    }

    fn command(&self, program: &str) -> Command {
        let mut c = Command::new("ip");
        c.args(["netns", "exec", &self.netns, program])
            .env("ROS_DOMAIN_ID", self.domain.to_string())
            .env("HORUS_NAMESPACE", &self.namespace)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit());
        c
    }

    /// Starts the bridge process (this test binary, running [`CHILD_TEST`]).
    pub(crate) fn bridge(&self) -> Proc {
        self.bridge_with_env(&[])
    }

    /// Starts the bridge process with the variables `env` set (e.g.
    /// `HORUS_ROS2_NODE_NAME`, read by `BridgeConfig::from_env`).
    pub(crate) fn bridge_with_env(&self, env: &[(&str, &str)]) -> Proc {
        let exe = std::env::current_exe().unwrap();
        let mut c = self.command(exe.to_str().unwrap());
        c.args([CHILD_TEST, "--exact", "--nocapture", "--test-threads", "1"])
            .env(CHILD_ENV, &self.namespace)
            .envs(env.iter().copied());
        let p = Proc::spawn(c, "bridge");
        p.expect_line("bridge: started");
        p
    }

    /// Starts this test binary again running test `test` with `env=value` set (a child
    /// process role), and waits for its `ready`.
    pub(crate) fn spawn_self(&self, test: &str, env: &str, value: &str) -> Proc {
        let exe = std::env::current_exe().unwrap();
        let mut c = self.command(exe.to_str().unwrap());
        c.args([test, "--exact", "--nocapture", "--test-threads", "1"])
            .env(env, value);
        let p = Proc::spawn(c, test);
        p.expect_line("ready");
        p
    }

    /// Starts `program ARGS…` in the world (its network namespace, horus namespace and
    /// ROS 2 domain) and waits for a line holding `ready` (e.g. `horus ros2`'s first line).
    pub(crate) fn spawn(&self, program: &str, args: &[&str], ready: &str) -> Proc {
        let mut c = self.command(program);
        c.args(args);
        let p = Proc::spawn(c, program);
        p.expect_line(ready);
        p
    }

    /// Starts `node.py MODE ARGS…` and waits for its `ready`.
    pub(crate) fn rclpy(&self, mode: &str, args: &[&str]) -> Proc {
        let mut c = self.command(python().to_str().unwrap());
        c.arg(node_py()).arg(mode).args(args);
        let mut p = Proc::spawn(c, mode);
        p.exit_grace = EXIT_GRACE;
        p.expect_line("ready");
        p
    }

    /// Starts `node.py MODE ARGS…` with the large-message Fast DDS profile
    /// ([`large_messages_profile`], through `FASTDDS_DEFAULT_PROFILES_FILE`) and waits for
    /// its `ready`.
    pub(crate) fn rclpy_with_large_message_profile(&self, mode: &str, args: &[&str]) -> Proc {
        let mut c = self.command(python().to_str().unwrap());
        c.env("FASTDDS_DEFAULT_PROFILES_FILE", large_messages_profile())
            .arg(node_py())
            .arg(mode)
            .args(args);
        let mut p = Proc::spawn(c, mode);
        p.exit_grace = EXIT_GRACE;
        p.expect_line("ready");
        p
    }

    /// Starts the Cyclone DDS peer `tests/cyclone/peer.py MODE ARGS…` (through
    /// `scripts/ros2-python`, with `CYCLONEDDS_URI` set to [`cyclone_config`]) and waits for
    /// its `ready`.
    pub(crate) fn cyclone(&self, mode: &str, args: &[&str]) -> Proc {
        let mut c = self.command(python().to_str().unwrap());
        c.env(
            "CYCLONEDDS_URI",
            format!("file://{}", cyclone_config().display()),
        )
        .arg(cyclone_peer_py())
        .arg(mode)
        .args(args);
        let mut p = Proc::spawn(c, &format!("cyclone {mode}"));
        p.exit_grace = EXIT_GRACE;
        p.expect_line("ready");
        p
    }

    /// The horus segments (and bridge status files) of this world left in /dev/shm.
    pub(crate) fn leftovers(&self) -> Vec<String> {
        let prefix = format!("horus.{}.", self.namespace);
        std::fs::read_dir("/dev/shm")
            .map(|d| {
                d.filter_map(|e| e.ok())
                    .map(|e| e.file_name().to_string_lossy().into_owned())
                    .filter(|n| n.starts_with(&prefix))
                    .collect()
            })
            .unwrap_or_default()
    }

    /// Removes the world's topics `views` once every endpoint is gone, and checks that
    /// nothing of the world is left in /dev/shm.
    pub(crate) fn clean(&self, views: Vec<horus::inspect::TopicView>) {
        for v in &views {
            v.unlink_if_unused();
        }
        drop(views);
        assert_eq!(self.leftovers(), Vec::<String>::new(), "left in /dev/shm");
    }
}

impl Drop for World {
    /// Dropped last in a test (declared first): its processes are gone. A passing test has
    /// already checked that nothing was left; after a failure this removes what was.
    fn drop(&mut self) {
        let _ = Command::new("ip")
            .args(["netns", "delete", &self.netns])
            .status();
        for f in self.leftovers() {
            let _ = std::fs::remove_file(format!("/dev/shm/{f}"));
        }
    }
}

fn run(program: &str, args: &[&str]) {
    let st = Command::new(program).args(args).status().expect(program);
    assert!(st.success(), "{program} {args:?}: {st}");
}

/// A child process whose stdout lines arrive on a channel; closing its stdin stops it.
pub(crate) struct Proc {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<String>,
    name: String,
    /// How long a drop waits for the process to exit after closing its stdin before
    /// killing it ([`EXIT_GRACE`] for rclpy nodes, none for the others).
    exit_grace: Duration,
}

impl Proc {
    fn spawn(mut c: Command, name: &str) -> Proc {
        let mut child = c.spawn().unwrap_or_else(|e| panic!("{name}: {e}"));
        let stdin = child.stdin.take();
        let out = child.stdout.take().unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(out).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        Proc {
            child,
            stdin,
            lines: rx,
            name: name.to_owned(),
            exit_grace: Duration::ZERO,
        }
    }

    /// The next line holding `prefix` (others skipped), from `prefix` on, within [`PATIENCE`].
    pub(crate) fn next_line(&self, prefix: &str) -> String {
        let deadline = Instant::now() + PATIENCE;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left) {
                // The test harness prints `test bridge_process ... ` before the child's
                // first line: look for the prefix anywhere, return from it on.
                Ok(l) => {
                    if let Some(at) = l.find(prefix) {
                        return l[at..].to_owned();
                    }
                }
                Err(RecvTimeoutError::Timeout) => {
                    panic!("{}: no line starting {prefix:?} in {PATIENCE:?}", self.name)
                }
                Err(RecvTimeoutError::Disconnected) => {
                    panic!("{}: exited before a line starting {prefix:?}", self.name)
                }
            }
        }
    }

    /// Waits for a line starting with `prefix`.
    pub(crate) fn expect_line(&self, prefix: &str) {
        self.next_line(prefix);
    }

    /// Lines that arrived so far, without waiting.
    pub(crate) fn drain(&self) -> Vec<String> {
        self.lines.try_iter().collect()
    }

    /// Closes stdin and waits for the process to exit; panics if it failed.
    pub(crate) fn stop(mut self) {
        drop(self.stdin.take());
        let st = self.child.wait().unwrap();
        assert!(st.success(), "{} exited with {st}", self.name);
    }

    /// SIGKILL.
    pub(crate) fn kill(mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    /// Writes a line to the process's stdin.
    pub(crate) fn send(&mut self, line: &str) {
        let s = self.stdin.as_mut().unwrap();
        writeln!(s, "{line}").unwrap();
    }
}

/// How long a dropped [`Proc`] whose stdin was closed gets to exit on its own before it is
/// killed: an rclpy node (through `scripts/ros2-python`, a shell that cleans /dev/shm when
/// Python ends) needs a moment to shut down, and killing the shell at once would leave the
/// Python process behind, orphaned.
const EXIT_GRACE: Duration = Duration::from_secs(10);

impl Drop for Proc {
    fn drop(&mut self) {
        drop(self.stdin.take());
        let deadline = Instant::now() + self.exit_grace;
        while let Ok(None) = self.child.try_wait() {
            if Instant::now() >= deadline {
                let _ = self.child.kill();
                break;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = self.child.wait();
    }
}

/// Decodes a hex string.
pub(crate) fn unhex(s: &str) -> Vec<u8> {
    (0..s.len() / 2)
        .map(|i| u8::from_str_radix(&s[2 * i..2 * i + 2], 16).unwrap())
        .collect()
}

/// The bytes in a `word TOPIC HEX` line.
pub(crate) fn line_bytes(line: &str) -> (String, Vec<u8>) {
    let mut parts = line.split(' ');
    let _ = parts.next();
    let topic = parts.next().unwrap_or_default().to_owned();
    (topic, unhex(parts.next().unwrap_or_default()))
}

/// Waits until the bridge's status satisfies `pred` (the status file is rewritten on change).
pub(crate) fn wait_status(
    namespace: &str,
    what: &str,
    pred: impl Fn(&horus_ros2::BridgeStatus) -> bool,
) -> horus_ros2::BridgeStatus {
    let deadline = Instant::now() + PATIENCE;
    loop {
        if let Ok(Some(s)) = horus_ros2::read_status_file(namespace) {
            if pred(&s) {
                return s;
            }
        }
        assert!(
            Instant::now() < deadline,
            "bridge status never showed {what}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// How a horus topic names the ROS 2 message type `M` (its name, RIHS01 hash and definition).
pub(crate) fn ros2_type<M: horus::cdr::RosMessage>() -> horus::msgs::Ros2Type {
    horus::msgs::Ros2Type::new(M::TYPE_NAME, M::TYPE_HASH, M::DEFINITION)
}
