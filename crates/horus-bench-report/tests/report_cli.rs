//! The `report` binary as `make bench` and the benchmark smoke test run it: a page from
//! whatever results are there (`--allow-missing`), a typed refusal otherwise. (These
//! tests also make `cargo test` build the binary the smoke test runs.)

use std::path::PathBuf;
use std::process::Command;

/// A fresh scratch directory of this test.
fn scratch(test: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("horus-report-{test}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("results")).unwrap();
    dir
}

fn report(dir: &std::path::Path, extra: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_report"))
        .arg("--results")
        .arg(dir.join("results"))
        .arg("--out")
        .arg(dir.join("benchmarks.md"))
        .arg("--img")
        .arg(dir.join("img"))
        .args(extra)
        .output()
        .unwrap()
}

#[test]
fn a_run_with_no_results_renders_every_section_as_missing_with_allow_missing() {
    let dir = scratch("allow-missing");
    let out = report(&dir, &["--allow-missing"]);
    assert!(out.status.success(), "{out:?}");
    let page = std::fs::read_to_string(dir.join("benchmarks.md")).unwrap();
    assert!(page.starts_with("# horus benchmarks"), "{}", &page[..80]);
    assert!(!page.contains("{{"), "an unfilled template key");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn missing_results_are_refused_by_name_and_no_page_is_written() {
    let dir = scratch("missing");
    let out = report(&dir, &[]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("missing result files") && err.contains("peers.json"),
        "{err}"
    );
    assert!(!dir.join("benchmarks.md").exists());
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn an_unknown_argument_is_an_error() {
    let out = Command::new(env!("CARGO_BIN_EXE_report"))
        .arg("--frob")
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("unknown argument \"--frob\""));
}
