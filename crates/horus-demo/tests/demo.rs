//! Runs the demo robot (four OS processes, five with the Python node) for
//! 2 s and checks its behaviour: it exits 0, reports every topic with a
//! non-zero rate each second, every robot process shut down cleanly, and
//! nothing is left in /dev/shm. Latencies are printed by the demo but never
//! asserted.
//!
//! The Python node (the obstacle detector) runs when a python with the
//! `horus` package is found: `HORUS_PYTHON` if set, else the repository's
//! `.venv` (what `make py-build` installs into). Without one, the demo must
//! run without it and say so.

use std::path::PathBuf;
use std::process::{Command, Stdio};

const TOPICS: [&str; 3] = ["demo/scan", "demo/imu", "demo/cmd_vel"];

/// A python that can import the demo's Python node, if there is one.
fn python() -> Option<PathBuf> {
    let python = match std::env::var_os("HORUS_PYTHON") {
        Some(p) if !p.is_empty() => PathBuf::from(p),
        _ => PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../.venv/bin/python"),
    };
    Command::new(&python)
        .args(["-c", "import horus.demo.obstacle_detector"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
        .then_some(python)
}

/// The rate column of each of `topic`'s lines.
fn rates(stdout: &str, topic: &str) -> Vec<f64> {
    stdout
        .lines()
        .filter(|l| l.split_whitespace().next() == Some(topic))
        .map(|l| {
            let rate = l.split_whitespace().nth(2).expect("a rate column");
            rate.parse().unwrap_or_else(|_| panic!("bad rate in {l:?}"))
        })
        .collect()
}

#[test]
fn demo_runs_reports_every_topic_and_cleans_up() {
    let ns = format!("test-demo-{}", std::process::id());
    let python = python();
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_horus-demo"));
    cmd.args(["--seconds", "2"]).env("HORUS_NAMESPACE", &ns);
    match &python {
        Some(p) => cmd.env("HORUS_PYTHON", p),
        None => cmd.env_remove("HORUS_PYTHON"),
    };
    let out = cmd.output().expect("running horus-demo");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "horus-demo failed ({}):\n{stdout}\n{stderr}",
        out.status
    );

    // Each topic has one line per second, and each shows messages flowing.
    for topic in TOPICS {
        let rates = rates(&stdout, topic);
        assert_eq!(rates.len(), 2, "one {topic} line per second:\n{stdout}");
        assert!(
            rates.iter().all(|&r| r > 0.0),
            "{topic} rates {rates:?}:\n{stdout}"
        );
    }
    // Every robot node reported, and every process ran its nodes' shutdown.
    for node in ["lidar", "imu", "controller", "motor"] {
        assert!(
            stdout.contains(&format!("{node}: shut down")),
            "{node} did not shut down cleanly:\n{stdout}"
        );
    }
    // The Python node: its topic is reported like the others, its node
    // appears in the table, and it ran its shutdown on SIGTERM and exited 0
    // (the demo's exit status covers the exit code). Without a python, the
    // demo says it runs without it and shows no such line.
    let flags = rates(&stdout, "demo/stop");
    if python.is_some() {
        assert_eq!(flags.len(), 2, "one demo/stop line per second:\n{stdout}");
        // 10 Hz scans: at least one flag a second, even on a busy machine.
        assert!(
            flags.iter().all(|&r| r > 0.0),
            "demo/stop {flags:?}:\n{stdout}"
        );
        assert!(
            stdout.lines().any(|l| l.starts_with("detector ")),
            "no detector node line:\n{stdout}"
        );
        assert!(
            stdout.contains("detector: shut down"),
            "the Python node did not shut down cleanly:\n{stdout}"
        );
    } else {
        assert!(flags.is_empty(), "{stdout}");
        assert!(
            stdout.contains("note: running without the Python node"),
            "{stdout}"
        );
    }
    assert!(
        stdout.contains("left behind") && !stdout.contains("left behind:"),
        "{stdout}"
    );

    // Checked here too, independently of the demo's own check.
    let prefix = format!("horus.{ns}.");
    let left: Vec<String> = std::fs::read_dir("/dev/shm")
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|n| n.starts_with(&prefix))
        .collect();
    assert!(left.is_empty(), "left in /dev/shm: {left:?}");
}
