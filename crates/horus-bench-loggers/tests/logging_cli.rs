//! The `logging` binary's command line: help, and an unknown argument refused by name. The
//! measurement itself runs in the Makefile's bench smoke.

use std::process::{Command, Output};

fn logging(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_logging"))
        .args(args)
        .output()
        .expect("run logging")
}

#[test]
fn help_prints_the_usage_and_succeeds() {
    let out = logging(&["--help"]);
    assert!(out.status.success(), "{out:?}");
    assert!(String::from_utf8_lossy(&out.stdout).contains("USAGE: logging"));
}

#[test]
fn an_unknown_argument_is_refused_by_name() {
    let out = logging(&["--frobnicate"]);
    assert!(!out.status.success(), "{out:?}");
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("--frobnicate"),
        "{out:?}"
    );
}
