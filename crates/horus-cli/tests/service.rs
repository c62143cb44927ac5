//! `horus service list` against a running robot: its services, their types, servers, clients
//! and counters; a killed robot's endpoints are shown dead (and nothing is reclaimed).

mod common;

use common::{horus, horus_json, poll_json, shm_files, unique_ns, Fixture};
use serde_json::Value;

/// The fixture process's body; does nothing in a normal test run.
#[test]
fn fixture() {
    common::fixture_main();
}

fn service<'a>(doc: &'a Value, name: &str) -> Option<&'a Value> {
    doc["services"]
        .as_array()?
        .iter()
        .find(|s| s["name"] == name)
}

#[test]
fn service_list_shows_types_endpoints_and_counters() {
    let ns = unique_ns("svclist");
    let robot = Fixture::robot(&ns);
    // The caller node makes one call; wait until it was answered.
    let doc = poll_json(&ns, &["service", "list"], |d| {
        service(d, "math/add").is_some_and(|s| s["totals"]["clients"]["responses"] == 1)
    });
    let names: Vec<&str> = doc["services"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["base/params", "math/add"]);
    let add = service(&doc, "math/add").unwrap();
    assert_eq!(add["request_type"], "horus-cli-test/Add v1");
    assert_eq!(add["response_type"], "horus-cli-test/Sum v1");
    assert_eq!(add["servers"].as_array().unwrap().len(), 1);
    assert_eq!(add["clients"].as_array().unwrap().len(), 1);
    for end in ["servers", "clients"] {
        assert_eq!(add[end][0]["pid"], robot.pid());
        assert_eq!(add[end][0]["alive"], true);
    }
    assert_eq!(add["totals"]["clients"]["calls"], 1);
    assert_eq!(add["totals"]["servers"]["received"], 1);
    assert_eq!(add["totals"]["servers"]["replied"], 1);
    let params = service(&doc, "base/params").unwrap();
    assert_eq!(params["request_type"], "horus/ParamRequest v1");
    assert_eq!(params["servers"].as_array().unwrap().len(), 1);

    let (code, text, _) = horus(&ns, &["service", "list"]);
    assert_eq!(code, 0);
    let lines: Vec<&str> = text.lines().collect();
    assert!(lines[0].starts_with("service") && lines[0].contains("request"));
    assert!(lines[2].starts_with("math/add") && lines[2].contains("horus-cli-test/Add v1"));
}

#[test]
fn a_killed_robots_endpoints_are_shown_dead_and_left_alone() {
    let ns = unique_ns("svcdead");
    let mut robot = Fixture::robot(&ns);
    poll_json(&ns, &["service", "list"], |d| {
        service(d, "math/add").is_some()
    });
    robot.kill9();
    let before = shm_files(&ns);
    for _ in 0..2 {
        let (code, doc) = horus_json(&ns, &["service", "list"]);
        assert_eq!(code, 0);
        let add = service(&doc, "math/add").unwrap();
        assert_eq!(add["servers"][0]["alive"], false);
        assert_eq!(add["clients"][0]["alive"], false);
    }
    // Listing reclaimed nothing: the files are as the kill left them.
    assert_eq!(shm_files(&ns), before);
    let (_, text, _) = horus(&ns, &["service", "list"]);
    assert!(text.contains("1 (1 dead)"), "{text}");
}

#[test]
fn no_services_is_an_empty_list() {
    let ns = unique_ns("svcnone");
    let (code, doc) = horus_json(&ns, &["service", "list"]);
    assert_eq!(code, 0);
    assert_eq!(doc["services"], serde_json::json!([]));
}
