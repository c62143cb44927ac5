//! The services tests' rig: a bridge, horus servers and rclpy nodes, each a separate
//! process. horus processes are this test binary run again with `HR2_SVC_ROLE` (see
//! `roles.rs`); rclpy nodes run through `scripts/ros2-python` (ROS 2 kept on localhost:
//! `ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST`, the bridge announces on 127.0.0.1 only). Each
//! test has its own horus namespace and its own ROS 2 domain.

#![allow(dead_code, unreachable_pub)]

pub mod roles;

use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::time::{Duration, Instant};

use horus_ros2::{Direction, ServiceRouteStatus};
use serde_json::Value;

/// The test entry that child processes run (each test file has a `child_entry` test).
pub const CHILD_TEST: &str = "child_entry";

/// A child process with its pipes.
pub struct Proc {
    pub child: Child,
    stdin: Option<ChildStdin>,
    out: BufReader<ChildStdout>,
    pub what: String,
    /// The process that does the work when `child` is a wrapper (rclpy under ros2-python).
    pub worker_pid: Option<i32>,
}

impl Proc {
    /// A child started with piped stdin and stdout, once it printed `ready` (or `ready PID`).
    pub fn start(mut child: Child, what: &str) -> Proc {
        let stdin = child.stdin.take();
        let out = BufReader::new(child.stdout.take().expect("stdout"));
        let mut p = Proc {
            child,
            stdin,
            out,
            what: what.to_owned(),
            worker_pid: None,
        };
        let line = p.line_starting("ready");
        p.worker_pid = line.split_whitespace().nth(1).and_then(|s| s.parse().ok());
        p
    }

    /// The next line holding word `prefix`, from that word on (others are skipped; the
    /// test harness of a child prints `test child_entry ... ` before the role's first line).
    pub fn line_starting(&mut self, prefix: &str) -> String {
        let mut line = String::new();
        loop {
            line.clear();
            let n = self.out.read_line(&mut line).expect("child stdout");
            assert!(n > 0, "{} exited before printing {prefix:?}", self.what);
            let words: Vec<&str> = line.split_whitespace().collect();
            if let Some(i) = words.iter().position(|w| *w == prefix) {
                return words[i..].join(" ");
            }
        }
    }

    /// The child's next JSON line.
    pub fn json(&mut self) -> Value {
        let mut line = String::new();
        loop {
            line.clear();
            let n = self.out.read_line(&mut line).expect("child stdout");
            assert!(n > 0, "{} exited without a result", self.what);
            let json = line.find('{').map_or("", |i| line[i..].trim());
            if let Ok(v) = serde_json::from_str::<Value>(json) {
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

    /// Writes `line` and returns the JSON answer.
    pub fn ask(&mut self, line: &str) -> Value {
        self.say(line);
        self.json()
    }

    /// SIGKILL to the process doing the work (the rclpy process, not its wrapper), and
    /// waits for the child to end.
    pub fn kill(mut self) {
        match self.worker_pid {
            // SAFETY: kill(2) on a pid this test started and has not reaped (its wrapper,
            // our child, is still waiting for it).
            Some(pid) => unsafe {
                libc::kill(pid, libc::SIGKILL);
            },
            None => {
                let _ = self.child.kill();
            }
        }
        let _ = self.child.wait();
    }
}

impl Drop for Proc {
    fn drop(&mut self) {
        self.stdin.take();
        let deadline = Instant::now() + Duration::from_secs(15);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        if let Some(pid) = self.worker_pid {
            // SAFETY: as in `kill`.
            unsafe { libc::kill(pid, libc::SIGKILL) };
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// One test's world: a horus namespace and a ROS 2 domain.
pub struct Rig {
    pub namespace: String,
    pub domain: u16,
    dir: PathBuf,
}

/// Where the ROS 2 venv's Python runner is.
fn ros2_python() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../scripts/ros2-python")
}

/// Whether rclpy can run here (the venv `make setup-ros2` makes).
fn have_rclpy() -> bool {
    let venv = std::env::var("HORUS_ROS2_VENV")
        .map(PathBuf::from)
        .unwrap_or_else(|_| {
            PathBuf::from(std::env::var("HOME").unwrap_or_default()).join(".cache/horus-ros2-venv")
        });
    venv.join("bin/python").exists()
}

impl Rig {
    /// A fresh namespace and domain for test `tag` (`k` tells a file's tests apart); `None`
    /// (with the reason printed) without the ROS 2 venv.
    pub fn new(tag: &str, k: u16) -> Option<Rig> {
        if !have_rclpy() {
            // HORUS_ROS2_REQUIRED=1: a missing venv fails instead (tests/common/mod.rs).
            assert!(
                std::env::var("HORUS_ROS2_REQUIRED").map_or(true, |v| v != "1"),
                "HORUS_ROS2_REQUIRED=1 but there is no ROS 2 venv (run `make setup-ros2`)"
            );
            eprintln!("skipped: no ROS 2 venv (run `make setup-ros2`)");
            return None;
        }
        let pid = std::process::id();
        let namespace = format!("hr2svc-{tag}-{pid}");
        // Domains 100..=231, apart per process and test.
        let domain = 100 + ((pid as u16).wrapping_mul(7).wrapping_add(k * 13)) % 132;
        let dir = std::env::temp_dir().join(format!("{namespace}-py"));
        std::fs::create_dir_all(&dir).expect("temp dir");
        std::fs::write(dir.join("client.py"), RCLPY_CLIENT).expect("client.py");
        std::fs::write(dir.join("server.py"), RCLPY_SERVER).expect("server.py");
        Some(Rig {
            namespace,
            domain,
            dir,
        })
    }

    /// This test binary run again in `role`.
    pub fn spawn(&self, role: &str, args: &[&str]) -> Proc {
        let mut cmd = Command::new(std::env::current_exe().expect("test binary"));
        cmd.args([CHILD_TEST, "--exact", "--nocapture", "--test-threads=1"])
            .env("HR2_SVC_ROLE", role)
            .env("HR2_SVC_ARGS", args.join(" "))
            .env("HORUS_NAMESPACE", &self.namespace)
            .env("ROS_DOMAIN_ID", self.domain.to_string())
            .env("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped());
        Proc::start(cmd.spawn().expect("spawn child"), role)
    }

    /// The bridge (stops when its stdin closes).
    pub fn bridge(&self) -> Proc {
        self.spawn("bridge", &[])
    }

    /// A horus SetBool server on `name`: `answer` (success = !data) or `hang` (takes one
    /// request, prints `got`, never answers).
    pub fn horus_server(&self, name: &str, mode: &str) -> Proc {
        self.spawn("horus_server", &[name, mode])
    }

    fn python(&self, script: &str, args: &[&str], what: &str) -> Proc {
        let mut cmd = Command::new(ros2_python());
        cmd.arg(self.dir.join(script))
            .args(args)
            .env("ROS_DOMAIN_ID", self.domain.to_string())
            .env("HORUS_NAMESPACE", &self.namespace)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped());
        Proc::start(cmd.spawn().expect("spawn rclpy"), what)
    }

    /// An rclpy client of `ty` (`SetBool` or `Trigger`) on ROS 2 service `name`, driven by
    /// lines: `wait SECONDS` → `{"available": bool}`; `call true|false SECONDS` →
    /// `{"success": .., "message": ..}` or `{"timeout": true}`.
    pub fn rclpy_client(&self, name: &str, ty: &str) -> Proc {
        self.python("client.py", &[name, ty], "rclpy client")
    }

    /// An rclpy SetBool server on `name`: `answer` (success = !data, message "rclpy") or
    /// `hang` (prints `got` and never answers).
    pub fn rclpy_server(&self, name: &str, mode: &str) -> Proc {
        self.python("server.py", &[name, mode], "rclpy server")
    }

    /// The bridge's status of service `name` in `direction`, once `done` holds for it
    /// (waits at most 60 s).
    pub fn wait_service(
        &self,
        name: &str,
        direction: Direction,
        what: &str,
        done: impl Fn(&ServiceRouteStatus) -> bool,
    ) -> ServiceRouteStatus {
        let deadline = Instant::now() + Duration::from_secs(60);
        let mut last = None;
        while Instant::now() < deadline {
            if let Ok(Some(st)) = horus_ros2::read_status_file(&self.namespace) {
                for v in st.services {
                    if let Ok(s) = serde_json::from_value::<ServiceRouteStatus>(v) {
                        if s.horus_service == name && s.direction == direction {
                            if done(&s) {
                                return s;
                            }
                            last = Some(s);
                        }
                    }
                }
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        panic!("service {name} {direction:?}: never {what}; last status {last:#?}");
    }

    /// Nothing of the namespace left in /dev/shm (after the processes ended).
    pub fn assert_clean(&self) {
        horus::clean::clean_stale(&self.namespace).ok();
        let tag = format!("horus.{}.", self.namespace);
        let left: Vec<String> = std::fs::read_dir("/dev/shm")
            .expect("/dev/shm")
            .filter_map(|e| e.ok()?.file_name().into_string().ok())
            .filter(|n| n.starts_with(&tag))
            .collect();
        assert!(left.is_empty(), "left behind in /dev/shm: {left:?}");
    }
}

impl Drop for Rig {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// Runs the child role if this process is a child; true if it was.
pub fn child_main() -> bool {
    match std::env::var("HR2_SVC_ROLE") {
        Ok(role) => {
            roles::run(&role);
            let _ = std::io::stdout().flush();
            true
        }
        Err(_) => false,
    }
}

const RCLPY_CLIENT: &str = r#"
import json, os, sys
import rclpy
from std_srvs.srv import SetBool, Trigger

name, kind = sys.argv[1], sys.argv[2]
T = SetBool if kind == "SetBool" else Trigger
rclpy.init()
node = rclpy.create_node("horus_test_client")
cli = node.create_client(T, name)
print("ready", os.getpid(), flush=True)
for line in sys.stdin:
    cmd = line.split()
    if not cmd:
        continue
    if cmd[0] == "wait":
        print(json.dumps({"available": cli.wait_for_service(timeout_sec=float(cmd[1]))}), flush=True)
    elif cmd[0] == "call":
        req = T.Request()
        if kind == "SetBool":
            req.data = cmd[1] == "true"
        fut = cli.call_async(req)
        rclpy.spin_until_future_complete(node, fut, timeout_sec=float(cmd[2]))
        if fut.done():
            r = fut.result()
            print(json.dumps({"success": r.success, "message": r.message}), flush=True)
        else:
            cli.remove_pending_request(fut)
            print(json.dumps({"timeout": True}), flush=True)
node.destroy_node()
rclpy.shutdown()
"#;

const RCLPY_SERVER: &str = r#"
import os, sys, threading, time
import rclpy
from std_srvs.srv import SetBool

name, mode = sys.argv[1], sys.argv[2]
rclpy.init()
node = rclpy.create_node("horus_test_server")

def answer(req, resp):
    if mode == "hang":
        print("got", flush=True)
        while True:
            time.sleep(1)
    resp.success = not req.data
    resp.message = "rclpy"
    return resp

srv = node.create_service(SetBool, name, answer)
done = threading.Event()
threading.Thread(target=lambda: (sys.stdin.read(), done.set()), daemon=True).start()
print("ready", os.getpid(), flush=True)
while not done.is_set():
    rclpy.spin_once(node, timeout_sec=0.05)
node.destroy_node()
rclpy.shutdown()
"#;
