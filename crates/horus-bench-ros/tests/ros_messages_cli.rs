//! Black-box run of `ros_messages` with tiny counts: both paths of each message,
//! pinned and unpinned, cross the processes, every loan-build method runs, and the
//! JSON has every row. Asserts behaviour, never timings.

use std::process::Command;

#[test]
fn ros_messages_cross_processes_on_both_paths_pinned_and_unpinned() {
    let json = std::env::temp_dir().join(format!("horus-ros-messages-{}.json", std::process::id()));
    let out = Command::new(env!("CARGO_BIN_EXE_ros_messages"))
        .args(["--rounds", "1", "--iters", "10", "--warmup", "2"])
        .args(["--messages", "Cloud1MiB,Scan1080,Tf50,Joints30"])
        .arg("--json")
        .arg(&json)
        .output()
        .expect("running ros_messages");
    assert!(
        out.status.success(),
        "ros_messages failed:\n{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let text = std::fs::read_to_string(&json).expect("json written");
    let _ = std::fs::remove_file(&json);
    let v: serde_json::Value = serde_json::from_str(&text).expect("valid json");
    assert!(v["errors"].as_array().unwrap().is_empty());
    let rows = v["rows"].as_array().unwrap();
    for kind in ["Cloud1MiB", "Scan1080", "Tf50", "Joints30"] {
        for path in ["ros", "fixed"] {
            for pinned in [true, false] {
                let n = rows
                    .iter()
                    .filter(|r| {
                        r["row"] == "round-trip"
                            && r["kind"] == kind
                            && r["path"] == path
                            && r["pinned"] == pinned
                    })
                    .count();
                assert_eq!(n, 1, "{kind} {path} pinned={pinned}");
            }
        }
    }
    let mut methods: Vec<&str> = rows
        .iter()
        .filter(|r| r["row"] == "loan-build")
        .map(|r| r["method"].as_str().unwrap())
        .collect();
    methods.sort_unstable();
    assert_eq!(methods, ["memcpy", "memcpy-no-loan", "publish", "write"]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("no verdict (fewer than 5 rounds)"),
        "{stdout}"
    );
}
