//! Runs the demo robot (four OS processes) for 2 s and checks its behaviour:
//! it exits 0, reports every topic with a non-zero rate each second, every
//! robot process shut down cleanly, and nothing is left in /dev/shm.
//! Latencies are printed by the demo but never asserted.

use std::process::Command;

const TOPICS: [&str; 3] = ["demo/scan", "demo/imu", "demo/cmd_vel"];

#[test]
fn demo_runs_reports_every_topic_and_cleans_up() {
    let ns = format!("test-demo-{}", std::process::id());
    let out = Command::new(env!("CARGO_BIN_EXE_horus-demo"))
        .args(["--seconds", "2"])
        .env("HORUS_NAMESPACE", &ns)
        .output()
        .expect("running horus-demo");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "horus-demo failed ({}):\n{stdout}\n{stderr}",
        out.status
    );

    // Each topic has one line per second, and each shows messages flowing.
    for topic in TOPICS {
        let rates: Vec<f64> = stdout
            .lines()
            .filter(|l| l.split_whitespace().next() == Some(topic))
            .map(|l| {
                let rate = l.split_whitespace().nth(2).expect("a rate column");
                rate.parse().unwrap_or_else(|_| panic!("bad rate in {l:?}"))
            })
            .collect();
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
