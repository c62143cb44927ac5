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

/// `page` from `heading` on.
fn after<'a>(page: &'a str, heading: &str) -> &'a str {
    let at = page.find(heading);
    &page[at.unwrap_or_else(|| panic!("no {heading:?} on the page"))..]
}

/// The fixture `file` (the shape its binary writes), copied into the results as `name`.
fn fixture_as(dir: &std::path::Path, file: &str, name: &str) {
    let from = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join(format!("tests/fixtures/{file}.json"));
    std::fs::copy(from, dir.join(format!("results/{name}.json"))).unwrap();
}

fn fixture(dir: &std::path::Path, name: &str) {
    fixture_as(dir, name, name);
}

#[test]
fn tf_and_block_wake_render_from_their_json_and_say_when_it_is_missing() {
    let dir = scratch("tf-block-wake");
    let out = report(&dir, &["--allow-missing"]);
    assert!(out.status.success(), "{out:?}");
    let page = std::fs::read_to_string(dir.join("benchmarks.md")).unwrap();
    assert!(page.contains("*Not measured in this run (tf.json missing).*"));
    assert!(page.contains("*Not measured in this run (block_wake.json missing).*"));

    fixture(&dir, "tf");
    fixture(&dir, "block_wake");
    let out = report(&dir, &["--allow-missing"]);
    assert!(out.status.success(), "{out:?}");
    let page = std::fs::read_to_string(dir.join("benchmarks.md")).unwrap();
    assert!(!page.contains("(tf.json missing)"));
    assert!(!page.contains("(block_wake.json missing)"));
    // Each table under its own heading, filled from the fixture.
    let from = |heading: &str| after(&page, heading).to_owned();
    assert!(
        from("### Lookups: 5-deep chain").contains("| Rust | shared | 876 | 1246 | 962 |"),
        "{page}"
    );
    assert!(from("### Host CPU: 20 processes").contains("| 1 | 0.231 × |"));
    assert!(from("## Transforms (`tf`)")
        .contains("| Rust lookup median ≤ 1 µs (shared buffer) | 876 ns | PASS |"));
    assert!(from("### The current build in this run")
        .contains("| 2000 | 21.3 µs | 52.8 µs | 131.0 µs | 12.4 ms | 1 |"));
    assert!(from("### The current build in this run").contains("Method: one topic of depth 1"));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn the_binaries_quick_output_renders_marked_as_a_smoke_run() {
    // Written by `tf --quick --python .venv/bin/python --json` and `block_wake --quick --json`
    // (debug builds: the figures mean nothing, the shape is the binaries').
    let dir = scratch("quick-tf-block-wake");
    fixture_as(&dir, "tf_quick", "tf");
    fixture_as(&dir, "block_wake_quick", "block_wake");
    let out = report(&dir, &["--allow-missing"]);
    assert!(out.status.success(), "{out:?}");
    let page = std::fs::read_to_string(dir.join("benchmarks.md")).unwrap();
    let tf = after(&page, "## Transforms (`tf`)");
    assert!(tf.contains("| Python | per-process |"), "{tf}");
    assert!(tf.contains("`--quick` run: a smoke run, not a measurement (its CPU window"));
    assert!(tf.contains("| 1 | "), "{tf}");
    let bw = after(&page, "### The current build in this run");
    assert!(bw.contains("| subscriber frees the slot → publisher's send returns | 500 |"));
    assert!(bw.contains("`--quick` run: a smoke run, not a measurement."));
    assert!(!page.contains("(tf.json missing)") && !page.contains("(block_wake.json missing)"));
    std::fs::remove_dir_all(&dir).unwrap();
}
