//! Two hosts for the bridge's tests: network namespaces joined by a veth pair
//! (`horus-netns`), a bridge in each, and endpoints as separate processes (this test binary
//! run again with `HZ_ROLE`, see `roles.rs`). Each host has its own horus namespace, standing
//! for its own `/dev/shm` (network namespaces share the machine's), so nothing reaches the
//! other host except through the bridges.

#![allow(dead_code, unreachable_pub)]

pub mod intruder;
pub mod roles;
pub mod third_host;

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, ChildStdout, Stdio};
use std::time::{Duration, Instant};

use horus_netns::{Side, TwoHosts};
use serde_json::Value;

/// The test entry that child processes run (see `child_entry` in each test file).
pub const CHILD_TEST: &str = "child_entry";

/// Zenoh's port on both hosts.
const PORT: u16 = 7447;

/// A child process with its pipes.
pub struct Proc {
    pub child: Child,
    stdin: Option<ChildStdin>,
    out: BufReader<ChildStdout>,
    pub what: String,
}

impl Proc {
    /// A child started with piped stdin and stdout, once it is ready.
    pub fn start(mut child: Child, what: &str) -> Proc {
        let stdin = child.stdin.take();
        let out = BufReader::new(child.stdout.take().expect("stdout"));
        let mut p = Proc {
            child,
            stdin,
            out,
            what: what.to_owned(),
        };
        p.wait_ready();
        p
    }

    /// Waits until the child prints `line` (a line of its output; others are skipped).
    pub fn wait_line(&mut self, want: &str) {
        let mut line = String::new();
        loop {
            line.clear();
            let n = self.out.read_line(&mut line).expect("child stdout");
            assert!(n > 0, "{} exited before printing {want:?}", self.what);
            if line.trim() == want {
                return;
            }
            // Its result line: it gave up waiting.
            if let Ok(v) = serde_json::from_str::<Value>(line.trim()) {
                panic!("{} finished without printing {want:?}: {v}", self.what);
            }
        }
    }

    /// Waits for the child's `ready` line.
    pub fn wait_ready(&mut self) {
        let mut line = String::new();
        loop {
            line.clear();
            let n = self.out.read_line(&mut line).expect("child stdout");
            assert!(n > 0, "{} exited before it was ready", self.what);
            if line.trim() == "ready" {
                return;
            }
        }
    }

    /// The child's JSON result line (waits for it).
    pub fn result(&mut self) -> Value {
        let mut line = String::new();
        loop {
            line.clear();
            let n = self.out.read_line(&mut line).expect("child stdout");
            assert!(n > 0, "{} exited without a result", self.what);
            if let Ok(v) = serde_json::from_str::<Value>(line.trim()) {
                return v;
            }
        }
    }

    /// Writes a line to the child's stdin.
    pub fn say(&mut self, line: &str) {
        let stdin = self.stdin.as_mut().expect("stdin open");
        writeln!(stdin, "{line}").expect("child stdin");
        stdin.flush().expect("child stdin");
    }

    /// Closes stdin (the child's signal to finish) and waits for it.
    pub fn finish(mut self) {
        self.stdin.take();
        let _ = self.child.wait();
    }

    /// SIGKILL, and reap.
    pub fn kill(mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for Proc {
    fn drop(&mut self) {
        self.stdin.take();
        let deadline = Instant::now() + Duration::from_secs(10);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Two hosts, each with its horus namespace.
pub struct Rig {
    pub hosts: TwoHosts,
    pub tag: String,
}

impl Rig {
    /// Two fresh hosts, or `None` (with the reason printed) where namespaces cannot be made.
    pub fn new(tag: &str) -> Option<Rig> {
        if let Err(why) = horus_netns::available() {
            eprintln!("SKIPPED: network namespaces are not available here: {why}");
            return None;
        }
        let hosts = TwoHosts::create(tag).expect("two hosts");
        Some(Rig {
            hosts,
            tag: format!("{tag}-{}", std::process::id()),
        })
    }

    /// The horus namespace of a side.
    pub fn namespace(&self, side: Side) -> String {
        format!("hz-{}-{}", self.tag, side.letter())
    }

    /// Starts a child with `role` on `side`; `env` adds variables.
    pub fn spawn(&self, side: Side, role: &str, env: &[(&str, String)]) -> Proc {
        let exe = std::env::current_exe().expect("test binary");
        let mut cmd = self.hosts.host(side).command(exe);
        cmd.args(["--exact", CHILD_TEST, "--nocapture", "--test-threads=1"])
            .env("HZ_ROLE", role)
            .env("HORUS_NAMESPACE", self.namespace(side))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped());
        for (k, v) in env {
            cmd.env(k, v);
        }
        let mut child = cmd.spawn().expect("spawn child");
        let stdin = child.stdin.take();
        let out = BufReader::new(child.stdout.take().expect("stdout"));
        let mut p = Proc {
            child,
            stdin,
            out,
            what: format!("{role} on {side:?}"),
        };
        p.wait_ready();
        p
    }

    /// Starts the bridge of `side`, connecting to the other side's.
    pub fn bridge(&self, side: Side) -> Proc {
        self.bridge_with(side, "")
    }

    /// The address a raw Zenoh peer connects to for a side's bridge.
    pub fn endpoint(&self, side: Side) -> String {
        format!("tcp/{}:{PORT}", self.hosts.host(side).addr())
    }

    /// Starts the bridge of `side` with a YAML configuration on top of the test's.
    pub fn bridge_with(&self, side: Side, yaml: &str) -> Proc {
        let other = match side {
            Side::A => Side::B,
            Side::B => Side::A,
        };
        let me = self.hosts.host(side);
        let peer = self.hosts.host(other);
        self.spawn(
            side,
            "bridge",
            &[
                ("HZ_HOST", format!("host-{}", side.letter())),
                ("HZ_LISTEN", format!("tcp/{}:{PORT}", me.addr())),
                ("HZ_CONNECT", format!("tcp/{}:{PORT}", peer.addr())),
                ("HZ_CONFIG", yaml.to_owned()),
            ],
        )
    }

    /// Starts the bridge of `side` with multicast discovery and no addresses.
    pub fn bridge_multicast(&self, side: Side) -> Proc {
        let me = self.hosts.host(side);
        self.spawn(
            side,
            "bridge",
            &[
                ("HZ_HOST", format!("host-{}", side.letter())),
                ("HZ_LISTEN", format!("tcp/{}:{PORT}", me.addr())),
                ("HZ_MULTICAST", "1".into()),
            ],
        )
    }

    /// The status a side's bridge reports (its status file), if it runs.
    pub fn status(&self, side: Side) -> Option<horus_zenoh::BridgeStatus> {
        horus_zenoh::read_status_file(&self.namespace(side)).expect("readable status")
    }

    /// Waits (bounded) until `f` holds for a side's bridge status.
    pub fn wait_status(
        &self,
        side: Side,
        what: &str,
        f: impl Fn(&horus_zenoh::BridgeStatus) -> bool,
    ) -> horus_zenoh::BridgeStatus {
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            if let Some(s) = self.status(side) {
                if f(&s) {
                    return s;
                }
                assert!(
                    Instant::now() < deadline,
                    "{what}: not reached; last status {s:#?}"
                );
            } else {
                assert!(Instant::now() < deadline, "{what}: no bridge status");
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Nothing of either namespace left in /dev/shm.
    pub fn assert_clean(&self) {
        for side in [Side::A, Side::B] {
            let ns = self.namespace(side);
            let left: Vec<String> = std::fs::read_dir("/dev/shm")
                .unwrap()
                .filter_map(|e| e.ok()?.file_name().into_string().ok())
                .filter(|n| n.contains(&format!(".{ns}.")))
                .collect();
            assert!(left.is_empty(), "left behind in /dev/shm: {left:?}");
        }
    }
}

/// The usual start of a two-host test: `None` in a child process (which has run its role) or
/// where namespaces cannot be made (skipped, saying why); else two hosts with a bridge each.
pub fn bridged_hosts(tag: &str) -> Option<(Rig, Proc, Proc)> {
    if child_main() {
        return None;
    }
    let rig = Rig::new(tag)?;
    let a = rig.bridge(Side::A);
    let b = rig.bridge(Side::B);
    Some((rig, a, b))
}

impl Rig {
    /// The usual end: the bridges stop, what dead endpoints left is cleaned, and nothing of
    /// either host is left in /dev/shm.
    pub fn end(&self, bridges: [Proc; 2]) {
        for b in bridges {
            b.finish();
        }
        for side in [Side::A, Side::B] {
            horus::clean::clean_stale(&self.namespace(side)).ok();
        }
        self.assert_clean();
    }
}

/// Runs the child role if this process is a child; true if it was.
pub fn child_main() -> bool {
    match std::env::var("HZ_ROLE") {
        Ok(role) => {
            roles::run(&role);
            let _ = std::io::stdout().flush();
            true
        }
        Err(_) => false,
    }
}

/// The schema key (`id`, `layout`) a bridge uses for a topic of a namespace (the topic must
/// exist there).
pub fn topic_schema(namespace: &str, topic: &str) -> (u64, u64) {
    let view = horus::inspect::TopicView::open(namespace, topic).expect("topic exists");
    let s = view.schema().expect("typed topic");
    let id = horus_msgs::fnv1a64_extend(
        horus_msgs::fnv1a64(s.name.as_bytes()),
        &s.version.to_le_bytes(),
    );
    (id, s.layout_hash)
}

/// The schema key a bridge uses for a service of a namespace.
pub fn service_schema(namespace: &str, service: &str) -> (u64, u64) {
    let l = horus::list_services(namespace)
        .expect("services")
        .into_iter()
        .find(|l| l.name == service)
        .expect("service exists");
    let snap = l.snapshot.expect("readable service");
    (
        horus_msgs::fnv1a64(snap.request_schema.as_bytes()),
        horus_msgs::fnv1a64(snap.response_schema.as_bytes()),
    )
}

/// What a bridge refused of `host` (zeros when nothing).
pub fn refusals(s: &horus_zenoh::BridgeStatus, host: &str) -> horus_zenoh::HostRefusals {
    s.refusals
        .iter()
        .find(|r| r.host == host)
        .cloned()
        .unwrap_or_default()
}

/// A topic's counters in a status (zeros when absent).
pub fn counters(s: &horus_zenoh::BridgeStatus, topic: &str) -> horus_zenoh::TopicCounters {
    s.topics
        .iter()
        .find(|t| t.name == topic)
        .map(|t| t.counters.clone())
        .unwrap_or_default()
}
