//! The `ros2` binary's command line: help, and an unknown argument refused by name. The
//! measurement itself runs in the Makefile's bench smoke.

use std::process::{Command, Output};

fn ros2(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_ros2"))
        .args(args)
        .output()
        .expect("run ros2")
}

#[test]
fn help_prints_the_usage_and_succeeds() {
    let out = ros2(&["--help"]);
    assert!(out.status.success(), "{out:?}");
    assert!(String::from_utf8_lossy(&out.stdout).contains("USAGE: ros2"));
}

#[test]
fn an_unknown_argument_is_refused_by_name() {
    let out = ros2(&["--frobnicate"]);
    assert!(!out.status.success(), "{out:?}");
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("--frobnicate"),
        "{out:?}"
    );
}
