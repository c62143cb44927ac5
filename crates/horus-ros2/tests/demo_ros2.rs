//! `make demo-ros2`'s script (scripts/demo-ros2.sh, launch/demo_ros2.yaml) run for 3 s:
//! the demo robot, `horus ros2`, an rclpy teleop and an rclpy scan listener, all separate
//! processes in a network namespace of their own. The rclpy listener must have received
//! horus scans, the horus teleop listener the rclpy teleop's Twists, every process must end
//! cleanly, and nothing of the run's namespace may be left in /dev/shm (the script checks).
//!
//! Needs what the other rclpy tests need (root, the ROS 2 venv), the `horus` (with the
//! `ros2` feature) and `horus-demo` binaries of this build beside the test binary
//! (`cargo test --workspace` builds them), and a Python with the horus package
//! (`HORUS_PYTHON`, else the repository's `.venv`); else it prints `SKIPPED: why`.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The directory of this build's binaries (the test binary is in its `deps/`).
fn bin_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("test binary path");
    exe.parent()
        .and_then(Path::parent)
        .expect("target/<profile>/deps")
        .to_path_buf()
}

fn works(program: &Path, args: &[&str]) -> bool {
    Command::new(program)
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// Why this test cannot run here, or the binaries' directory and the horus Python.
fn setup() -> Result<(PathBuf, PathBuf), String> {
    if let Some(why) = common::skip_reason() {
        return Err(why);
    }
    let bin = bin_dir();
    for b in ["horus", "horus-demo"] {
        if !bin.join(b).exists() {
            return Err(format!("{} not built", bin.join(b).display()));
        }
    }
    if !works(&bin.join("horus"), &["ros2", "--help"]) {
        return Err("this build's horus has no `ros2` verb (feature off)".into());
    }
    let python = match std::env::var_os("HORUS_PYTHON") {
        Some(p) if !p.is_empty() => PathBuf::from(p),
        _ => repo().join(".venv/bin/python"),
    };
    if !works(
        &python,
        &["-c", "import horus.interfaces.geometry_msgs.msg"],
    ) {
        return Err(format!("{} cannot import horus", python.display()));
    }
    Ok((bin, python))
}

/// The number in the line of `stdout` that starts (after the launch's prefix) with
/// `prefix`, e.g. "scan_listener: received 27 scans" with prefix "scan_listener: received".
fn count_after(stdout: &str, prefix: &str) -> Option<u64> {
    stdout
        .lines()
        .filter_map(|l| l.split_once(" | ").map(|(_, rest)| rest))
        .find_map(|rest| rest.strip_prefix(prefix))
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|n| n.parse().ok())
}

#[test]
fn demo_with_ros2_nodes_carries_scans_and_teleop_and_cleans_up() {
    let (bin, python) = match setup() {
        Ok(x) => x,
        Err(why) => {
            println!("SKIPPED: {why}");
            return;
        }
    };
    let domain = std::process::id() % 100 + 1;
    let out = Command::new("timeout")
        .arg("120")
        .arg(repo().join("scripts/demo-ros2.sh"))
        .arg(&bin)
        .arg(&python)
        .arg("3")
        .env("ROS_DOMAIN_ID", domain.to_string())
        .output()
        .expect("running scripts/demo-ros2.sh");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    let all = format!("{stdout}\n--- stderr ---\n{stderr}");
    assert!(
        out.status.success(),
        "demo-ros2 failed ({}):\n{all}",
        out.status
    );
    let scans = count_after(&stdout, "scan_listener: received");
    assert!(
        scans.is_some_and(|n| n > 0),
        "the rclpy listener received no horus scans:\n{all}"
    );
    let twists = count_after(&stdout, "teleop_listener: received");
    assert!(
        twists.is_some_and(|n| n > 0),
        "the horus side received no teleop Twist:\n{all}"
    );
    assert!(
        all.contains("every process ended cleanly"),
        "a process did not end cleanly:\n{all}"
    );
    assert!(
        stdout.contains("nothing of namespace"),
        "the /dev/shm check did not run:\n{all}"
    );
}
