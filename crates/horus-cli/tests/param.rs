//! `horus param list|get|set|dump|load` against a running node's parameter service.

mod common;

use common::{unique_ns, Fixture};
use serde_json::{json, Value};

/// The fixture process's body; does nothing in a normal test run.
#[test]
fn fixture() {
    common::fixture_main();
}

/// A generous answer timeout: a loaded machine must not turn into a failed test.
const TIMEOUT: [&str; 2] = ["--timeout", "30"];

/// `horus param ...` (text).
fn horus(ns: &str, args: &[&str]) -> (i32, String, String) {
    common::horus(ns, &[args, &TIMEOUT[..]].concat())
}

/// `horus --json param ...`.
fn horus_json(ns: &str, args: &[&str]) -> (i32, Value) {
    common::horus_json(ns, &[args, &TIMEOUT[..]].concat())
}

fn get(ns: &str, name: &str) -> Value {
    let (code, doc) = horus_json(ns, &["param", "get", "base", name]);
    assert_eq!(code, 0, "{doc}");
    doc["value"].clone()
}

#[test]
fn list_and_get_show_the_declarations_and_values() {
    let ns = unique_ns("paramlist");
    let _robot = Fixture::robot(&ns);
    let (code, doc) = horus_json(&ns, &["param", "list", "base"]);
    assert_eq!(code, 0, "{doc}");
    assert_eq!(doc["node"], "base");
    let params = doc["params"].as_array().unwrap();
    let names: Vec<&str> = params.iter().map(|p| p["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["max_speed", "rate_hz", "wheels", "enabled"]);
    assert_eq!(params[0]["kind"], "f64");
    assert_eq!(params[0]["value"], 1.0);
    assert_eq!(params[0]["range"], json!({ "min": 0.0, "max": 2.0 }));
    assert_eq!(params[0]["description"], "top speed, m/s");
    assert_eq!(params[1]["kind"], "i64");
    assert_eq!(params[2]["kind"], "string[]");
    assert_eq!(params[2]["value"], json!(["left", "right"]));
    assert_eq!(params[3]["value"], true);

    assert_eq!(get(&ns, "rate_hz"), 50);
    let (code, text, _) = horus(&ns, &["param", "get", "base", "wheels"]);
    assert_eq!((code, text.trim()), (0, r#"["left", "right"]"#));
    let (code, text, _) = horus(&ns, &["param", "list", "base"]);
    assert_eq!(code, 0);
    assert!(
        text.lines().nth(1).unwrap().starts_with("max_speed  f64"),
        "{text}"
    );
}

#[test]
fn set_changes_the_value_and_rejections_leave_it_unchanged() {
    let ns = unique_ns("paramset");
    let _robot = Fixture::robot(&ns);
    let (code, doc) = horus_json(&ns, &["param", "set", "base", "max_speed", "1.5"]);
    assert_eq!((code, &doc["value"]), (0, &json!(1.5)), "{doc}");
    assert_eq!(get(&ns, "max_speed"), 1.5);
    // An integer for an f64 parameter is the float.
    assert_eq!(horus(&ns, &["param", "set", "base", "max_speed", "2"]).0, 0);
    assert_eq!(get(&ns, "max_speed"), 2.0);
    horus(&ns, &["param", "set", "base", "max_speed", "1.5"]);

    // Out of range: the node's typed error, exit 1, unchanged.
    let (code, doc) = horus_json(&ns, &["param", "set", "base", "max_speed", "3.0"]);
    assert_eq!(code, 1);
    assert_eq!(doc["kind"], "out_of_range", "{doc}");
    assert!(doc["error"].as_str().unwrap().contains("outside"), "{doc}");
    assert_eq!(get(&ns, "max_speed"), 1.5);
    // A negative value is a value, not an option.
    let (code, doc) = horus_json(&ns, &["param", "set", "base", "max_speed", "-1"]);
    assert_eq!((code, &doc["kind"]), (1, &json!("out_of_range")), "{doc}");
    assert_eq!(get(&ns, "max_speed"), 1.5);
    // Wrong type.
    let (code, doc) = horus_json(&ns, &["param", "set", "base", "rate_hz", "fast"]);
    assert_eq!(code, 1);
    assert_eq!(doc["kind"], "wrong_type", "{doc}");
    assert_eq!(get(&ns, "rate_hz"), 50);
    let (code, _, err) = horus(&ns, &["param", "set", "base", "enabled", "3"]);
    assert_eq!(code, 1);
    assert!(err.contains("is bool, got i64"), "{err}");
    assert_eq!(get(&ns, "enabled"), true);
    // Arrays: a list; any element out of range is refused.
    let (code, doc) = horus_json(&ns, &["param", "set", "base", "wheels", "[a, b, c]"]);
    assert_eq!((code, &doc["value"]), (0, &json!(["a", "b", "c"])), "{doc}");
    // Unknown parameter.
    let (code, doc) = horus_json(&ns, &["param", "set", "base", "nosuch", "1"]);
    assert_eq!((code, &doc["kind"]), (1, &json!("not_found")), "{doc}");
    // A value that is no parameter value: refused before sending.
    let (code, _, err) = horus(&ns, &["param", "set", "base", "rate_hz", "{a: 1}"]);
    assert_eq!(code, 1, "{err}");
    assert_eq!(get(&ns, "rate_hz"), 50);
    // Usage errors are exit 2.
    assert_eq!(horus(&ns, &["param", "set", "base", "rate_hz"]).0, 2);
    assert_eq!(
        horus(&ns, &["param", "get", "base", "x", "--timeout", "-1"]).0,
        2
    );
}

#[test]
fn dump_then_load_round_trips_and_a_bad_file_applies_nothing() {
    let ns = unique_ns("paramfile");
    let _robot = Fixture::robot(&ns);
    let dir = std::env::temp_dir().join(&ns);
    std::fs::create_dir_all(&dir).unwrap();

    let (code, dump, _) = horus(&ns, &["param", "dump", "base"]);
    assert_eq!(code, 0);
    assert!(
        dump.contains("# top speed, m/s (f64, 0.0..=2.0)\nmax_speed: 1.0\n"),
        "{dump}"
    );
    // Change two values in the dump and load it back.
    let edited = dump
        .replace("max_speed: 1.0", "max_speed: 0.25")
        .replace("rate_hz: 50", "rate_hz: 200");
    let good = dir.join("good.yaml");
    std::fs::write(&good, &edited).unwrap();
    let (code, doc) = horus_json(&ns, &["param", "load", "base", good.to_str().unwrap()]);
    assert_eq!(code, 0, "{doc}");
    assert_eq!(doc["set"].as_array().unwrap().len(), 4);
    assert_eq!(get(&ns, "max_speed"), 0.25);
    assert_eq!(get(&ns, "rate_hz"), 200);
    // The dump now is the edited file.
    assert_eq!(horus(&ns, &["param", "dump", "base"]).1, edited);

    // A bad file: the error has its line and column, and nothing from it is applied.
    let bad = dir.join("bad.yaml");
    std::fs::write(&bad, "max_speed: 1.5\nrate_hz: 5000\n").unwrap();
    let (code, doc) = horus_json(&ns, &["param", "load", "base", bad.to_str().unwrap()]);
    assert_eq!(code, 1);
    assert_eq!(
        (&doc["kind"], &doc["line"]),
        (&json!("yaml"), &json!(2)),
        "{doc}"
    );
    assert!(doc["column"].as_u64().is_some(), "{doc}");
    assert_eq!(get(&ns, "max_speed"), 0.25);
    std::fs::write(&bad, "max_speed: 1.5\nspeed: 1\n").unwrap();
    let (code, _, err) = horus(&ns, &["param", "load", "base", bad.to_str().unwrap()]);
    assert_eq!(code, 1);
    assert!(
        err.contains("line 2") && err.contains("unknown parameter `speed`"),
        "{err}"
    );
    assert_eq!(get(&ns, "max_speed"), 0.25);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_node_that_is_not_running_is_exit_1() {
    let ns = unique_ns("paramnone");
    let (code, doc) = horus_json(&ns, &["param", "list", "ghost"]);
    assert_eq!(code, 1);
    assert_eq!(doc["kind"], "no_server", "{doc}");
    assert!(common::shm_files(&ns).is_empty());
}
