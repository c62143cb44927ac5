//! Real scheduler processes: SIGTERM shuts every node down and removes the
//! statistics file; statistics are read cross-process while they run; without
//! real-time privileges the fallback is reported once and visible in stats.

use std::io::{BufRead, BufReader, Read};
use std::path::PathBuf;
use std::process::{Child, ChildStdout, Command, Stdio};
use std::time::{Duration, Instant};

use horus_sched::{read_stats, MemoryLock, RtMode, SchedulerStats};

use crate::common::namespace;

const NODES: [&str; 5] = ["main", "compute", "realtime", "realtime2", "event"];

struct Fixture {
    child: Child,
    out: BufReader<ChildStdout>,
    path: PathBuf,
    markers: PathBuf,
}

/// Starts the fixture (optionally under `wrapper`, e.g. setpriv) in its own
/// namespace and waits until every periodic node has ticked.
fn start(test: &str, wrapper: &[&str]) -> (Fixture, SchedulerStats) {
    let ns = namespace(test);
    let markers = std::env::temp_dir().join(&ns);
    let _ = std::fs::remove_dir_all(&markers);
    std::fs::create_dir_all(&markers).unwrap();
    let exe = env!("CARGO_BIN_EXE_sched_fixture");
    let mut cmd = match wrapper.split_first() {
        Some((prog, args)) => {
            let mut c = Command::new(prog);
            c.args(args).arg(exe);
            c
        }
        None => Command::new(exe),
    };
    let mut child = cmd
        .arg(&markers)
        .env("HORUS_NAMESPACE", &ns)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut out = BufReader::new(child.stdout.take().unwrap());
    let mut first = String::new();
    out.read_line(&mut first).unwrap();
    let path = PathBuf::from(first.trim());
    // From here on, a failed assertion kills the child (Drop).
    let fixture = Fixture {
        child,
        out,
        path: path.clone(),
        markers,
    };
    assert_eq!(path, horus_sched::stats_path(&ns, "fixture"));
    let t0 = Instant::now();
    let stats = loop {
        assert!(
            t0.elapsed() < Duration::from_secs(20),
            "fixture never got going"
        );
        if let Ok(s) = read_stats(&path) {
            let periodic_ticked = s
                .nodes
                .iter()
                .filter(|n| n.name != "event")
                .all(|n| n.ticks > 0);
            if s.nodes.len() == NODES.len() && periodic_ticked {
                break s;
            }
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    (fixture, stats)
}

impl Drop for Fixture {
    /// A failed assertion must not leave the child running.
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

impl Fixture {
    /// SIGTERM, then wait; returns (stdout rest, stderr).
    fn terminate(mut self) -> (String, String) {
        // SAFETY: kill only sends a signal to our own child process.
        let rc = unsafe { libc::kill(self.child.id() as libc::pid_t, libc::SIGTERM) };
        assert_eq!(rc, 0);
        let t0 = Instant::now();
        let status = loop {
            if let Some(st) = self.child.try_wait().unwrap() {
                break st;
            }
            if t0.elapsed() > Duration::from_secs(20) {
                let _ = self.child.kill();
                panic!("the fixture did not exit after SIGTERM");
            }
            std::thread::sleep(Duration::from_millis(10));
        };
        let (mut rest, mut err) = (String::new(), String::new());
        self.out.read_to_string(&mut rest).unwrap();
        self.child
            .stderr
            .take()
            .unwrap()
            .read_to_string(&mut err)
            .unwrap();
        assert!(status.success(), "{status:?} {rest} {err}");
        assert!(rest.contains("stopped: Signal"), "{rest}");
        for node in NODES {
            assert!(
                self.markers.join(format!("{node}.shutdown")).exists(),
                "{node}'s shutdown did not run"
            );
        }
        assert!(!self.path.exists(), "statistics file left behind");
        let _ = std::fs::remove_dir_all(&self.markers);
        (rest, err)
    }
}

#[test]
fn sigterm_shuts_every_node_down_and_removes_the_stats_file() {
    let (fixture, stats) = start("sigterm", &[]);
    assert_eq!(stats.pid, fixture.child.id());
    let rt = stats.nodes.iter().find(|n| n.name == "realtime").unwrap();
    assert!(matches!(
        rt.rt_mode,
        RtMode::Fifo { .. } | RtMode::Fallback { .. }
    ));
    fixture.terminate();
}

#[test]
fn without_rt_privileges_the_fallback_is_reported_once_and_in_stats() {
    // Drop the capabilities that allow SCHED_FIFO and memory locking. If this
    // process cannot (not root, no setpriv), there is nothing to test here.
    let wrapper = [
        "setpriv",
        "--inh-caps=-sys_nice,-ipc_lock",
        "--bounding-set=-sys_nice,-ipc_lock",
        "prlimit",
        "--rtprio=0",
        "--memlock=65536",
        "--",
    ];
    let probe = Command::new(wrapper[0])
        .args(&wrapper[1..6])
        .arg("true")
        .status();
    if !probe.is_ok_and(|s| s.success()) {
        eprintln!("skipped: cannot drop capabilities with setpriv here");
        return;
    }
    let (fixture, stats) = start("rt_fallback", &wrapper);
    for name in ["realtime", "realtime2"] {
        let n = stats.nodes.iter().find(|n| n.name == name).unwrap();
        assert!(
            matches!(n.rt_mode, RtMode::Fallback { .. }),
            "{name}: {:?}",
            n.rt_mode
        );
    }
    assert_eq!(stats.memory_lock, MemoryLock::Failed);
    let (_, err) = fixture.terminate();
    assert_eq!(
        err.matches("SCHED_FIFO refused").count(),
        1,
        "one-time warning: {err}"
    );
    assert!(err.contains("mlockall skipped"), "{err}");
}
