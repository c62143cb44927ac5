//! What the black-box tests of the benchmark binaries share (this crate's and those of
//! the benchmark crates above it).

use std::process::Command;

/// Runs the suite binary `bin` with `args` and `--json` to a file of its own, checks it
/// succeeded with no failed measurement and a method, and returns its JSON document.
///
/// # Panics
/// If the binary cannot run or fails, or its JSON is missing, malformed or records errors
/// (this is a test helper: the panic is the test's failure).
pub fn run_suite(bin: &str, args: &[&str]) -> serde_json::Value {
    let name = std::path::Path::new(bin)
        .file_name()
        .unwrap()
        .to_string_lossy();
    let json = std::env::temp_dir().join(format!(
        "horus-suite-test-{}-{name}.json",
        std::process::id()
    ));
    let out = Command::new(bin)
        .args(args)
        .arg("--json")
        .arg(&json)
        .output()
        .expect("running the benchmark");
    assert!(
        out.status.success(),
        "{bin} failed:\n{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let text = std::fs::read_to_string(&json).expect("json written");
    let _ = std::fs::remove_file(&json);
    let v: serde_json::Value = serde_json::from_str(&text).expect("valid json");
    assert!(v["errors"].as_array().unwrap().is_empty());
    assert!(!v["method"].as_array().unwrap().is_empty());
    v
}
