//! `horus doctor`: a running robot's files are live (exit 0); planted stale files are reported
//! with advice (exit 1) until `horus clean` removes them; garbage is reported and kept.

mod common;

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, SystemTime};

use common::{horus, horus_json, shm_files, unique_ns, Fixture};
use serde_json::Value;

/// The fixture process's body; does nothing in a normal test run.
#[test]
fn fixture() {
    common::fixture_main();
}

/// A tensor pool holder process: opens pool 7 of its `HORUS_NAMESPACE`, says so and holds it
/// until killed; does nothing in a normal test run.
#[test]
fn tensor_pool_holder() {
    let Ok(ns) = std::env::var("HORUS_DOCTOR_POOL_HOLDER") else {
        return;
    };
    let cfg = horus_tensor::PoolConfig {
        slots: Some(2),
        slot_bytes: Some(4096),
    };
    let _pool = horus_tensor::TensorPool::open(&ns, 7, cfg).unwrap();
    println!("\n@@ holding");
    let mut line = String::new();
    let _ = std::io::stdin().read_line(&mut line);
}

fn entry<'a>(doc: &'a Value, kind: &str, name: &str) -> &'a Value {
    doc["files"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["kind"] == kind && f["name"] == name)
        .unwrap_or_else(|| panic!("no {kind} {name} in {doc}"))
}

fn check<'a>(doc: &'a Value, name: &str) -> Option<&'a Value> {
    doc["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["check"] == name)
}

/// Writes `bytes` as `/dev/shm/horus.<ns>.<kind>.<name>`, last modified an hour ago (so no
/// one could still be initialising it).
fn plant(ns: &str, kind: &str, name: &str, bytes: &[u8]) -> PathBuf {
    let path = PathBuf::from(format!("/dev/shm/horus.{ns}.{kind}.{name}"));
    std::fs::write(&path, bytes).unwrap();
    // 0600, as a file of this user's own processes would be (a file others may write is
    // refused before it is read at all).
    std::fs::set_permissions(&path, std::os::unix::fs::PermissionsExt::from_mode(0o600)).unwrap();
    let f = std::fs::File::options().write(true).open(&path).unwrap();
    f.set_modified(SystemTime::now() - Duration::from_secs(3600))
        .unwrap();
    path
}

#[test]
fn a_running_robot_is_live_and_healthy() {
    let ns = unique_ns("doctorlive");
    let robot = Fixture::robot(&ns);
    let (code, doc) = horus_json(&ns, &["doctor"]);
    assert_eq!(doc["namespace"], ns.as_str());
    assert_eq!(doc["namespace_source"], "HORUS_NAMESPACE");
    for (kind, name) in [
        ("scheduler", "robot"),
        ("topic", "robot/cmd"),
        ("service", "math/add"),
        ("service", "base/params"),
        ("service requests", "math/add"),
    ] {
        let e = entry(&doc, kind, name);
        assert_eq!(e["state"], "live", "{e}");
        assert!(e["bytes"].as_u64().unwrap() > 0);
    }
    assert!(entry(&doc, "scheduler", "robot")["detail"]
        .as_str()
        .unwrap()
        .contains(&format!("pid {}", robot.pid())));
    assert!(check(&doc, "stale files").is_none(), "{doc}");
    for key in ["memlock", "rtprio", "shm_space"] {
        assert!(doc["system"][key].is_object(), "{key}: {doc}");
    }
    assert!(doc["system"]["sched_fifo_allowed"].is_boolean());
    // Healthy unless the machine itself has a problem (e.g. /dev/shm full).
    let machine_fails = doc["checks"]
        .as_array()
        .unwrap()
        .iter()
        .any(|c| c["status"] == "fail");
    assert_eq!(code, if machine_fails { 1 } else { 0 }, "{doc}");
    assert_eq!(doc["ok"], !machine_fails);
}

#[test]
fn planted_stale_files_fail_until_clean_removes_them_and_garbage_is_kept() {
    let ns = unique_ns("doctorstale");
    // A scheduler table and a topic segment whose creators never initialised them (horus-shm's
    // one verdict: stale), and a topic segment full of garbage (unreadable: kept).
    let table = plant(&ns, "sched", "ghost", &[0; 300]);
    let uninit = plant(&ns, "t", "never~started", &[0; 8192]);
    let junk = plant(&ns, "t", "junk", &[0xa5; 8192]);

    let (code, doc) = horus_json(&ns, &["doctor"]);
    assert_eq!(code, 1, "{doc}");
    assert_eq!(doc["ok"], false);
    assert_eq!(entry(&doc, "scheduler", "ghost")["state"], "stale");
    assert_eq!(entry(&doc, "topic", "never/started")["state"], "stale");
    assert_eq!(entry(&doc, "topic", "junk")["state"], "unreadable");
    let stale = check(&doc, "stale files").unwrap();
    assert_eq!(stale["status"], "fail");
    assert!(
        stale["advice"].as_str().unwrap().contains("horus clean"),
        "{stale}"
    );
    assert_eq!(check(&doc, "unreadable files").unwrap()["status"], "fail");
    let (code, text, _) = horus(&ns, &["doctor"]);
    assert_eq!(code, 1);
    assert!(
        text.contains("STALE") && text.contains("horus clean --namespace"),
        "{text}"
    );

    // clean removes the stale ones and keeps the garbage.
    let (code, doc) = horus_json(&ns, &["clean"]);
    assert_eq!(code, 0, "{doc}");
    assert_eq!(doc["removed"], 2, "{doc}");
    assert!(!table.exists() && !uninit.exists());
    assert!(junk.exists());
    let (code, doc) = horus_json(&ns, &["doctor"]);
    assert_eq!(code, 1);
    assert!(check(&doc, "stale files").is_none(), "{doc}");

    std::fs::remove_file(&junk).unwrap();
    let (_, doc) = horus_json(&ns, &["doctor"]);
    assert!(check(&doc, "unreadable files").is_none(), "{doc}");
    assert_eq!(doc["files"], serde_json::json!([]));
    assert!(shm_files(&ns).is_empty());
}

#[test]
fn other_namespaces_are_listed() {
    let ns = unique_ns("doctorns");
    let other = unique_ns("doctorother");
    let _robot = Fixture::robot(&other);
    let (_, doc) = horus_json(&ns, &["doctor"]);
    let others = doc["other_namespaces"].as_array().unwrap();
    let o = others
        .iter()
        .find(|o| o["namespace"] == other.as_str())
        .unwrap_or_else(|| panic!("{other} not in {doc}"));
    assert!(o["files"].as_u64().unwrap() >= 5, "{o}");
    assert_eq!(doc["files"], serde_json::json!([]));
}

#[test]
fn doctor_judges_a_tensor_pool_of_a_killed_process_stale_and_a_live_one_live() {
    let ns = unique_ns("doctorpool");
    let mut holder = Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "tensor_pool_holder",
            "--nocapture",
            "--test-threads=1",
        ])
        .env("HORUS_DOCTOR_POOL_HOLDER", &ns)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut out = BufReader::new(holder.stdout.take().unwrap());
    let mut line = String::new();
    while !line.contains("@@ holding") {
        line.clear();
        assert!(out.read_line(&mut line).unwrap() > 0, "holder exited");
    }

    let (code, doc) = horus_json(&ns, &["doctor"]);
    let pool = entry(&doc, "tensor pool", "7");
    assert_eq!(pool["state"], "live", "{doc}");
    assert_eq!(pool["detail"], "1 holder(s)", "{doc}");
    assert!(check(&doc, "stale files").is_none(), "{doc}");
    assert_eq!(code, 0, "{doc}");

    // SAFETY: kill(2) on the pid of a child we spawned and have not reaped.
    assert_eq!(unsafe { libc::kill(holder.id() as i32, libc::SIGKILL) }, 0);
    holder.wait().unwrap();
    let (code, doc) = horus_json(&ns, &["doctor"]);
    let pool = entry(&doc, "tensor pool", "7");
    assert_eq!(pool["state"], "stale", "{doc}");
    assert_eq!(pool["detail"], "1 holder(s), all processes dead", "{doc}");
    assert_eq!(code, 1, "{doc}");
    assert_eq!(check(&doc, "stale files").unwrap()["status"], "fail");

    // The one rule: what doctor calls stale, clean removes.
    let (code, doc) = horus_json(&ns, &["clean"]);
    assert_eq!(code, 0, "{doc}");
    assert!(shm_files(&ns).is_empty(), "{:?}", shm_files(&ns));
}

#[test]
fn doctor_judges_a_killed_schedulers_statistics_file_stale_and_clean_removes_it() {
    let ns = unique_ns("doctorsched");
    let mut robot = Fixture::robot(&ns);
    let (_, doc) = horus_json(&ns, &["doctor"]);
    assert_eq!(entry(&doc, "scheduler", "robot")["state"], "live", "{doc}");
    // A live writer's file is kept by clean.
    let (code, doc) = horus_json(&ns, &["clean"]);
    assert_eq!(code, 0, "{doc}");
    assert!(shm_files(&ns).iter().any(|f| f.ends_with(".sched.robot")));
    let _ = doc;

    robot.kill9();
    let (code, doc) = horus_json(&ns, &["doctor"]);
    let sched = entry(&doc, "scheduler", "robot");
    assert_eq!(sched["state"], "stale", "{doc}");
    assert!(
        sched["detail"].as_str().unwrap().contains("is dead"),
        "{doc}"
    );
    assert_eq!(code, 1, "{doc}");
    let (code, doc) = horus_json(&ns, &["clean"]);
    assert_eq!(code, 0, "{doc}");
    assert!(
        doc["schedulers"]
            .as_array()
            .unwrap()
            .iter()
            .all(|s| s["fate"] == "removed"),
        "{doc}"
    );
    assert!(shm_files(&ns).is_empty(), "{:?}", shm_files(&ns));
}
