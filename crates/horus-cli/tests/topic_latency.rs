//! The latency horus delivers, as the receivers measure it: a publisher process sends
//! wall-clock-stamped messages, a subscriber in this test process receives them, and
//! `horus topic info` (`--json` and text) shows that subscriber's own latency histogram —
//! as many measurements as messages received — while an unstamped topic's subscriber shows
//! none.

mod common;

use std::process::{Command, Stdio};
use std::time::Duration;

use common::{horus, horus_json, shm_files, unique_ns, PATIENCE};
use horus::msgs::{CmdVel, Time};
use horus::prelude::*;

/// Messages the publisher process sends.
const MESSAGES: u64 = 300;

/// The publisher process's body (`HORUS_LATENCY_TEST_PUBLISHER` set): sends [`MESSAGES`]
/// stamped `CmdVel`s on `lat/cmd`, then exits. Does nothing in a normal test run.
#[test]
fn publisher_process() {
    if std::env::var_os("HORUS_LATENCY_TEST_PUBLISHER").is_none() {
        return;
    }
    let topic = Topic::<CmdVel>::builder("lat/cmd")
        .depth(512)
        .open()
        .unwrap();
    let mut p = topic.publisher().unwrap();
    for i in 0..MESSAGES {
        let d = p
            .send(CmdVel::new(Time::now().nanos, i as f32, 0.0))
            .unwrap();
        assert_eq!(d.subscribers, 1);
        std::thread::sleep(Duration::from_micros(200));
    }
}

#[test]
fn topic_info_shows_each_subscribers_latency_histogram_counting_what_it_received() {
    let ns = unique_ns("latency");
    let topic = Topic::<CmdVel>::builder("lat/cmd")
        .namespace(&ns)
        .depth(512)
        .open()
        .unwrap();
    let mut sub = topic.subscriber().unwrap();
    let mut publisher = Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "publisher_process", "--test-threads=1"])
        .env("HORUS_NAMESPACE", &ns)
        .env("HORUS_LATENCY_TEST_PUBLISHER", "1")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    let mut received = 0;
    while received < MESSAGES {
        sub.recv_timeout(PATIENCE)
            .expect("every message the publisher process sends");
        received += 1;
    }
    let status = publisher.wait().unwrap();
    assert!(status.success(), "publisher process failed: {status}");
    assert!(sub.try_recv().is_none(), "more messages than sent");
    let own = sub.stats();
    assert_eq!(own.latency.count, MESSAGES, "{own:?}");

    let (code, info) = horus_json(&ns, &["topic", "info", "lat/cmd"]);
    assert_eq!(code, 0, "{info}");
    let subs = info["subscribers"].as_array().unwrap();
    assert_eq!(subs.len(), 1, "{info}");
    let s = &subs[0];
    assert_eq!(s["pid"], std::process::id());
    assert_eq!(s["received"], MESSAGES);
    let lat = &s["latency"];
    assert_eq!(lat["count"], MESSAGES, "{info}");
    assert_eq!(lat["implausible_stamps"], 0, "{info}");
    let (p50, p99, max) = (
        lat["p50_ns"].as_u64().unwrap(),
        lat["p99_ns"].as_u64().unwrap(),
        lat["max_ns"].as_u64().unwrap(),
    );
    assert!(0 < p50 && p50 <= p99 && p99 <= max, "{lat}");
    assert!(max < PATIENCE.as_nanos() as u64, "{lat}");

    // The text table has the column, with this subscriber's count.
    let (code, out, err) = horus(&ns, &["topic", "info", "lat/cmd"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("latency p50/p99/max µs (n)"), "{out}");
    assert!(out.contains(&format!("({MESSAGES})")), "{out}");

    drop(sub);
    drop(topic);
    assert_eq!(shm_files(&ns), Vec::<String>::new());
}

#[test]
fn unstamped_and_implausible_stamps_record_no_latency() {
    let ns = unique_ns("latency-none");
    let topic = Topic::<CmdVel>::builder("lat/zero")
        .namespace(&ns)
        .depth(16)
        .open()
        .unwrap();
    let mut sub = topic.subscriber().unwrap();
    let mut p = topic.publisher().unwrap();
    // A zero stamp is "not stamped": nothing measured, nothing counted.
    p.send(CmdVel::new(0, 1.0, 0.0)).unwrap();
    // A counter is not a publish time: counted apart, not measured.
    p.send(CmdVel::new(7, 1.0, 0.0)).unwrap();
    assert!(sub.try_recv().is_some() && sub.try_recv().is_some());
    let (code, info) = horus_json(&ns, &["topic", "info", "lat/zero"]);
    assert_eq!(code, 0, "{info}");
    let lat = &info["subscribers"][0]["latency"];
    assert_eq!(lat["count"], 0, "{info}");
    assert_eq!(lat["implausible_stamps"], 1, "{info}");
    assert!(lat["p50_ns"].is_null(), "{info}");
    drop((sub, p, topic));
    assert_eq!(shm_files(&ns), Vec::<String>::new());
}
