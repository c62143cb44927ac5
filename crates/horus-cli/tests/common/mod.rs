//! Shared by the verb tests: a robot fixture process and a way to run the built `horus`.
//!
//! The fixture is this test binary run again as a separate process (the `fixture` test, which
//! does nothing unless `HORUS_CLI_FIXTURE` names a role), in the test's own `HORUS_NAMESPACE`:
//! a scheduler `robot` with nodes `imu` (200 Hz, publishes on topic `robot/cmd`), `adder`
//! (serves `math/add`), `caller` (calls it once) and `base` (serves the parameters of node
//! `base`). Tests poll the CLI until what they check has appeared (behaviour, never time).
#![allow(dead_code, unreachable_pub)]

pub mod tf_tree;

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use horus::prelude::*;
use horus_params::{ParamDecl, ParamServer, Parameters, Range};
use serde_json::Value;

horus::message! {
    /// Two numbers to add.
    pub struct Add: "horus-cli-test/Add", version 1 {
        /// First term.
        pub a: i64,
        /// Second term.
        pub b: i64,
    }
}

horus::message! {
    /// Their sum.
    pub struct Sum: "horus-cli-test/Sum", version 1 {
        /// a + b.
        pub sum: i64,
    }
}

/// How long a test waits for something to appear before calling it a hang. Generous: it only
/// turns a hang into a failure; no test asserts a duration.
pub const PATIENCE: Duration = Duration::from_secs(60);

/// Prefix of the fixture's report lines (libtest may print on the same line).
const REPORT: &str = "@@ ";

/// A namespace no other test (or test run) uses.
pub fn unique_ns(tag: &str) -> String {
    static N: AtomicU32 = AtomicU32::new(0);
    format!(
        "test-cli-{tag}-{}-{}",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    )
}

/// Runs `horus` with `args` in namespace `ns`; returns exit code, stdout, stderr.
pub fn horus(ns: &str, args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_horus"))
        .args(args)
        .env("HORUS_NAMESPACE", ns)
        .output()
        .expect("run horus");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Runs `horus --json` with `args`; returns the exit code and the one JSON document printed.
pub fn horus_json(ns: &str, args: &[&str]) -> (i32, Value) {
    let mut all = vec!["--json"];
    all.extend_from_slice(args);
    let (code, stdout, stderr) = horus(ns, &all);
    let lines: Vec<&str> = stdout.lines().filter(|l| !l.trim().is_empty()).collect();
    assert_eq!(
        lines.len(),
        1,
        "horus {args:?}: expected one JSON document, got:\n{stdout}\nstderr:\n{stderr}"
    );
    let doc = serde_json::from_str(lines[0])
        .unwrap_or_else(|e| panic!("horus {args:?}: not JSON ({e}): {}", lines[0]));
    (code, doc)
}

/// Polls `horus --json args` until `ok` accepts the document; returns it.
pub fn poll_json(ns: &str, args: &[&str], mut ok: impl FnMut(&Value) -> bool) -> Value {
    let end = Instant::now() + PATIENCE;
    loop {
        let (code, doc) = horus_json(ns, args);
        if code == 0 && ok(&doc) {
            return doc;
        }
        assert!(
            Instant::now() < end,
            "horus {args:?} never showed it: {doc}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Every file of namespace `ns` in `/dev/shm`.
pub fn shm_files(ns: &str) -> Vec<String> {
    let prefix = format!("horus.{ns}.");
    let mut v: Vec<String> = std::fs::read_dir("/dev/shm")
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|n| n.starts_with(&prefix))
        .collect();
    v.sort();
    v
}

/// The robot fixture process. Dropping it stops it with SIGTERM (a clean stop that removes its
/// files); [`Fixture::kill9`] kills it instead, leaving its files behind.
pub struct Fixture {
    child: Option<Child>,
    lines: mpsc::Receiver<String>,
    ns: String,
}

impl Fixture {
    /// Starts the robot in `ns` and waits until its scheduler runs.
    pub fn robot(ns: &str) -> Fixture {
        let mut child = Command::new(std::env::current_exe().unwrap())
            .args(["--exact", "fixture", "--nocapture", "--test-threads=1"])
            .env("HORUS_NAMESPACE", ns)
            .env("HORUS_CLI_FIXTURE", "robot")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap();
        let stdout = child.stdout.take().unwrap();
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if let Some(i) = line.find(REPORT) {
                    let _ = tx.send(line[i + REPORT.len()..].to_owned());
                }
            }
        });
        let mut f = Fixture {
            child: Some(child),
            lines,
            ns: ns.to_owned(),
        };
        f.expect("ready");
        f
    }

    /// Waits for the report line `what`.
    pub fn expect(&mut self, what: &str) {
        match self.lines.recv_timeout(PATIENCE) {
            Ok(line) if line == what => {}
            other => panic!("fixture: expected {what:?}, got {other:?}"),
        }
    }

    /// The fixture's pid.
    pub fn pid(&self) -> u32 {
        self.child.as_ref().map_or(0, Child::id)
    }

    /// Kills it with SIGKILL (and reaps it): everything it had in `/dev/shm` stays behind.
    pub fn kill9(&mut self) {
        if let Some(mut c) = self.child.take() {
            c.kill().unwrap();
            c.wait().unwrap();
        }
    }
}

impl Drop for Fixture {
    fn drop(&mut self) {
        if let Some(mut c) = self.child.take() {
            // SAFETY: kill takes no pointers; the pid is our child, not yet reaped.
            unsafe { libc::kill(c.id() as libc::pid_t, libc::SIGTERM) };
            let _ = c.wait();
        }
        // Whatever a failing test left (a killed fixture): nothing stays in /dev/shm. `clean`
        // keeps a dead client's response channel for its first seconds (its client might
        // still be subscribing), so retry until it is old enough (bounded).
        let end = Instant::now() + PATIENCE;
        loop {
            let _ = horus::clean::clean_stale(&self.ns);
            if shm_files(&self.ns).is_empty() || Instant::now() >= end {
                break;
            }
            std::thread::sleep(Duration::from_millis(200));
        }
    }
}

/// The fixture process's body; does nothing in a normal test run.
pub fn fixture_main() {
    let Ok(role) = std::env::var("HORUS_CLI_FIXTURE") else {
        return;
    };
    assert_eq!(role, "robot");
    robot().unwrap();
}

fn report(what: &str) {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "\n{REPORT}{what}");
    let _ = out.flush();
}

/// The parameters of node `base`.
pub fn base_params() -> Parameters {
    let mut p = Parameters::new();
    p.declare(
        ParamDecl::new("max_speed", 1.0)
            .description("top speed, m/s")
            .range(Range::F64 { min: 0.0, max: 2.0 }),
    )
    .unwrap();
    p.declare(
        ParamDecl::new("rate_hz", 50_i64)
            .description("control loop rate")
            .range(Range::I64 { min: 1, max: 1000 }),
    )
    .unwrap();
    p.declare(
        ParamDecl::new("wheels", vec!["left".to_string(), "right".to_string()])
            .description("driven wheel joints"),
    )
    .unwrap();
    p.declare(ParamDecl::new("enabled", true).description("motors on"))
        .unwrap();
    p
}

fn robot() -> anyhow::Result<()> {
    let service = Service::<Add, Sum>::open("math/add")?;
    let mut server = service.server()?;
    let mut client = service.client()?;
    let topic = Topic::<CmdVel>::open("robot/cmd")?;
    let mut publisher = topic.publisher()?;
    let mut subscriber = topic.subscriber_with(WaitMode::BusyPoll)?;
    let mut params = base_params();
    let mut param_server = ParamServer::new("base")?;

    let mut sched = Scheduler::new()
        .name("robot")
        .stats_interval(Duration::from_millis(20));
    let mut first = true;
    let mut stamp = 0;
    sched.add(
        node_fn("imu", move |_| {
            if std::mem::take(&mut first) {
                // Ticking: signal handlers are in place, the statistics table exists.
                report("ready");
            }
            stamp += 1;
            let _ = publisher.send(CmdVel::new(stamp, 0.5, 0.0));
            while subscriber.try_recv().is_some() {}
            Ok(())
        }),
        NodeConfig::new().rate(200.hz()),
    )?;
    sched.add(
        node_fn("adder", move |_| {
            while let Some(request) = server.try_recv() {
                let sum = request.a + request.b;
                let _ = request.reply(&Sum { sum });
            }
            Ok(())
        }),
        NodeConfig::new().rate(100.hz()),
    )?;
    let mut pending = None;
    let mut called = false;
    sched.add(
        node_fn("caller", move |_| {
            if !called {
                pending = Some(
                    client
                        .call_async(&Add { a: 2, b: 3 })
                        .map_err(|e| e.to_string())?,
                );
                called = true;
            } else if let Some(p) = pending.as_mut() {
                if p.try_result().is_some() {
                    pending = None;
                }
            }
            Ok(())
        }),
        NodeConfig::new().rate(50.hz()),
    )?;
    sched.add(
        node_fn("base", move |_| {
            param_server.serve_pending(&mut params);
            Ok(())
        }),
        NodeConfig::new().rate(100.hz()),
    )?;
    sched.run()?;
    drop(sched);
    drop((topic, service));
    Ok(())
}
