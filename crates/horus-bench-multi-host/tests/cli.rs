//! The `multi_host` binary's command line, checked before it makes any host (so without
//! root): help, and arguments refused by name. The measurement itself runs in the
//! Makefile's bench smoke, where network namespaces can be made.

use std::process::{Command, Output};

fn multi_host(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_multi_host"))
        .args(args)
        .output()
        .expect("run multi_host")
}

#[test]
fn help_prints_the_usage_and_succeeds() {
    let out = multi_host(&["--help"]);
    assert!(out.status.success(), "{out:?}");
    assert!(String::from_utf8_lossy(&out.stdout).contains("USAGE: multi_host"));
}

#[test]
fn an_unknown_system_is_refused_by_name() {
    let out = multi_host(&["--systems", "zenoh,nanomsg"]);
    assert!(!out.status.success(), "{out:?}");
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("nanomsg"),
        "{out:?}"
    );
}

#[test]
fn a_loss_over_a_hundred_percent_is_refused() {
    let out = multi_host(&["--loss-percent", "101"]);
    assert!(!out.status.success(), "{out:?}");
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("--loss-percent"),
        "{out:?}"
    );
}
