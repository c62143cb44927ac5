//! `horus node list` / `horus node info` against a running scheduler (and a killed one).

mod common;

use common::{horus, horus_json, poll_json, unique_ns, Fixture};
use serde_json::Value;

/// The fixture process's body; does nothing in a normal test run.
#[test]
fn fixture() {
    common::fixture_main();
}

fn node<'a>(doc: &'a Value, name: &str) -> Option<&'a Value> {
    doc["nodes"].as_array()?.iter().find(|n| n["name"] == name)
}

#[test]
fn node_list_shows_every_node_of_the_running_scheduler() {
    let ns = unique_ns("nodelist");
    let robot = Fixture::robot(&ns);
    // Wait until every node has ticked and the figures were published.
    let doc = poll_json(&ns, &["node", "list"], |d| {
        ["imu", "adder", "caller", "base"]
            .iter()
            .all(|n| node(d, n).is_some_and(|n| n["ticks"].as_u64() > Some(2)))
    });
    assert_eq!(doc["namespace"], ns.as_str());
    let names: Vec<&str> = doc["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["imu", "adder", "caller", "base"]);
    let imu = node(&doc, "imu").unwrap();
    assert_eq!(imu["scheduler"], "robot");
    assert_eq!(imu["pid"], robot.pid());
    assert_eq!(imu["alive"], true);
    assert_eq!(imu["state"], "running");
    assert_eq!(imu["class"], "main");
    assert_eq!(imu["target_hz"], 200.0);
    assert_eq!(node(&doc, "caller").unwrap()["target_hz"], 50.0);
    for key in ["rate_hz", "deadline_misses"] {
        assert!(imu[key].is_number(), "{key}: {imu}");
    }
    for key in ["mean_us", "p99_us", "max_us"] {
        assert!(imu["exec"][key].is_number(), "exec {key}: {imu}");
        assert!(imu["jitter"][key].is_number(), "jitter {key}: {imu}");
    }
    assert!(imu["exec"]["samples"].as_u64().unwrap() > 0);
    let sched = &doc["schedulers"][0];
    assert_eq!(sched["scheduler"], "robot");
    assert_eq!(sched["alive"], true);
    assert_eq!(sched["error"], Value::Null);

    // Text: an aligned table with a header and one line per node.
    let (code, text, _) = horus(&ns, &["node", "list"]);
    assert_eq!(code, 0);
    let lines: Vec<&str> = text.lines().collect();
    assert!(lines[0].starts_with("node") && lines[0].contains("jitter p99"));
    assert_eq!(lines.len(), 5, "{text}");
    let col = lines[0].find("scheduler").unwrap();
    for l in &lines[1..] {
        assert_eq!(&l[col..col + 5], "robot", "{text}");
    }
}

#[test]
fn node_info_shows_one_node_and_an_unknown_node_is_exit_1() {
    let ns = unique_ns("nodeinfo");
    let robot = Fixture::robot(&ns);
    let doc = poll_json(&ns, &["node", "info", "adder"], |d| {
        d["nodes"][0]["ticks"].as_u64() > Some(0)
    });
    let adder = &doc["nodes"][0];
    assert_eq!(doc["nodes"].as_array().unwrap().len(), 1);
    assert_eq!(adder["name"], "adder");
    assert_eq!(adder["pid"], robot.pid());
    assert_eq!(adder["target_hz"], 100.0);

    let (code, text, _) = horus(&ns, &["node", "info", "adder"]);
    assert_eq!(code, 0);
    assert!(text.contains("node        adder"), "{text}");
    assert!(text.contains("exec") && text.contains("jitter"), "{text}");

    let (code, doc) = horus_json(&ns, &["node", "info", "nosuch"]);
    assert_eq!(code, 1);
    assert!(doc["error"].as_str().unwrap().contains("nosuch"), "{doc}");
    // Usage errors are exit 2.
    assert_eq!(horus(&ns, &["node", "info"]).0, 2);
}

#[test]
fn a_killed_scheduler_is_listed_as_dead() {
    let ns = unique_ns("nodedead");
    let mut robot = Fixture::robot(&ns);
    poll_json(&ns, &["node", "list"], |d| {
        node(d, "imu").is_some_and(|n| n["ticks"].as_u64() > Some(0))
    });
    let pid = robot.pid();
    robot.kill9();
    let (code, doc) = horus_json(&ns, &["node", "list"]);
    assert_eq!(code, 0);
    let imu = node(&doc, "imu").unwrap();
    assert_eq!(imu["pid"], pid);
    assert_eq!(imu["alive"], false);
    let (_, text, _) = horus(&ns, &["node", "list"]);
    assert!(text.contains(&format!("{pid} (dead)")), "{text}");
    // The fixture's drop cleans up what the kill left.
}
