//! `horus topic …` against real topics: this test process publishes and subscribes, the
//! `horus` binary (another process) lists, inspects, echoes, measures and publishes.

use std::io::Write;
use std::process::{Command, Output, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use horus::msgs::{CmdVel, Imu, Odometry};
use horus::{Message, Topic};
use serde_json::Value;

fn ns(tag: &str) -> String {
    format!("cli-topic-{}-{tag}", std::process::id())
}

fn horus(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_horus"))
        .args(args)
        .output()
        .expect("run horus")
}

fn json_lines(o: &Output) -> Vec<Value> {
    assert!(
        o.status.success(),
        "horus failed: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8_lossy(&o.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect()
}

/// Publishes `Imu` messages with increasing stamps until stopped.
fn imu_stream(topic: Topic<Imu>, stop: Arc<AtomicBool>) -> std::thread::JoinHandle<u64> {
    std::thread::spawn(move || {
        let mut p = topic.publisher().unwrap();
        let mut n = 0u64;
        while !stop.load(Ordering::Relaxed) {
            let mut m: Imu = bytemuck::Zeroable::zeroed();
            n += 1;
            m.stamp_ns = n;
            m.orientation = [0.0, 0.0, 0.0, 1.0];
            let d = p.send(m).unwrap();
            assert_eq!(d.subscribers, 1, "tools must not be counted as subscribers");
            std::thread::sleep(Duration::from_millis(2));
        }
        n
    })
}

#[test]
fn list_and_info_report_types_endpoints_and_qos() {
    let ns = ns("list");
    let imu = Topic::<Imu>::builder("robot/imu")
        .namespace(&ns)
        .open()
        .unwrap();
    let cmd = Topic::<CmdVel>::builder("cmd_vel")
        .namespace(&ns)
        .open()
        .unwrap();
    let _p = imu.publisher().unwrap();
    let _s1 = imu.subscriber().unwrap();
    let _s2 = cmd.subscriber().unwrap();

    let list = &json_lines(&horus(&[
        "--json",
        "topic",
        "list",
        "--namespace",
        &ns,
        "--window",
        "0",
    ]))[0];
    let topics = list["topics"].as_array().unwrap();
    assert_eq!(topics.len(), 2);
    let by_name = |n: &str| topics.iter().find(|t| t["name"] == n).unwrap().clone();
    let i = by_name("robot/imu");
    assert_eq!(i["type"], "horus/Imu");
    assert_eq!(
        (i["publishers"].as_u64(), i["subscribers"].as_u64()),
        (Some(1), Some(1))
    );
    assert_eq!(i["qos"]["overflow"], "drop-oldest");
    let c = by_name("cmd_vel");
    assert_eq!(c["type"], "horus/CmdVel");
    assert_eq!(
        (c["publishers"].as_u64(), c["subscribers"].as_u64()),
        (Some(0), Some(1))
    );

    let info = &json_lines(&horus(&[
        "--json",
        "topic",
        "info",
        "robot/imu",
        "--namespace",
        &ns,
    ]))[0];
    assert_eq!(info["publishers"][0]["pid"], std::process::id());
    assert_eq!(info["publishers"][0]["alive"], true);
    assert_eq!(info["subscribers"][0]["observer"], false);
    let root = &info["description"]["types"][0];
    assert_eq!(root["name"], "horus/Imu");
    assert_eq!(root["fields"].as_array().unwrap().len(), Imu::FIELDS.len());

    let text = horus(&["topic", "list", "--namespace", &ns, "--window", "0"]);
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(
        text.contains("robot/imu") && text.contains("horus/Imu"),
        "{text}"
    );
}

#[test]
fn echo_is_an_observer_and_prints_selected_fields() {
    let ns = ns("echo");
    let imu = Topic::<Imu>::builder("imu").namespace(&ns).open().unwrap();
    let mut sub = imu.subscriber().unwrap();
    let stop = Arc::new(AtomicBool::new(false));
    let pubr = imu_stream(imu.clone(), Arc::clone(&stop));
    let drain = {
        let stop = Arc::clone(&stop);
        std::thread::spawn(move || {
            while !stop.load(Ordering::Relaxed) {
                while sub.try_recv().is_some() {}
                std::thread::sleep(Duration::from_millis(1));
            }
            sub.stats()
        })
    };
    let out = horus(&[
        "--json",
        "topic",
        "echo",
        "imu",
        "--namespace",
        &ns,
        "--count",
        "3",
        "--timeout",
        "20",
    ]);
    let lines = json_lines(&out);
    assert_eq!(lines.len(), 3);
    let stamps: Vec<u64> = lines
        .iter()
        .map(|l| l["stamp_ns"].as_u64().unwrap())
        .collect();
    assert!(stamps.windows(2).all(|w| w[1] > w[0]), "{stamps:?}");
    assert_eq!(lines[0]["orientation"][3], 1.0);

    let out = horus(&[
        "--json",
        "topic",
        "echo",
        "imu",
        "--namespace",
        &ns,
        "--once",
        "--field",
        "stamp_ns",
        "-f",
        "orientation.3",
        "--timeout",
        "20",
    ]);
    let line = &json_lines(&out)[0];
    assert_eq!(line.as_object().unwrap().len(), 2);
    assert_eq!(line["orientation.3"], 1.0);

    let text = horus(&[
        "topic",
        "echo",
        "imu",
        "--namespace",
        &ns,
        "--once",
        "--timeout",
        "20",
    ]);
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(
        text.contains("covariance: [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, … 19 more]"),
        "{text}"
    );

    stop.store(true, Ordering::Relaxed);
    let sent = pubr.join().unwrap();
    let stats = drain.join().unwrap();
    assert_eq!(stats.overrun, 0);
    assert!(stats.received <= sent);
}

#[test]
fn info_shows_the_durability_and_a_late_echo_prints_the_latched_messages_first() {
    let ns = ns("latched");
    let imu = Topic::<Imu>::builder("static")
        .namespace(&ns)
        .depth(8)
        .durability(horus::Durability::TransientLocal { depth: 2 })
        .open()
        .unwrap();
    let mut p = imu.publisher().unwrap();
    for n in 1..=5 {
        let mut m: Imu = bytemuck::Zeroable::zeroed();
        m.stamp_ns = n;
        p.send(m).unwrap();
    }
    let info = &json_lines(&horus(&[
        "--json",
        "topic",
        "info",
        "static",
        "--namespace",
        &ns,
    ]))[0];
    assert_eq!(info["durability"]["kind"], "transient_local");
    assert_eq!(info["durability"]["depth"], 2);
    let text = horus(&["topic", "info", "static", "--namespace", &ns]);
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(text.contains("durability transient-local (2)"), "{text}");
    // The publisher is idle: echo gets the two latched messages, nothing else.
    let echoed = json_lines(&horus(&[
        "--json",
        "topic",
        "echo",
        "static",
        "--namespace",
        &ns,
        "--count",
        "2",
        "--field",
        "stamp_ns",
        "--timeout",
        "20",
    ]));
    let stamps: Vec<u64> = echoed
        .iter()
        .map(|l| l["stamp_ns"].as_u64().unwrap())
        .collect();
    assert_eq!(stamps, vec![4, 5]);
    let volatile = Topic::<Imu>::builder("live").namespace(&ns).open().unwrap();
    let _p = volatile.publisher().unwrap();
    let info = &json_lines(&horus(&[
        "--json",
        "topic",
        "info",
        "live",
        "--namespace",
        &ns,
    ]))[0];
    assert_eq!(info["durability"]["kind"], "volatile");
}

#[test]
fn what_echo_prints_pub_sends_back_identically() {
    let ns = ns("roundtrip");
    let odom = Topic::<Odometry>::builder("odom")
        .namespace(&ns)
        .open()
        .unwrap();
    let mut sub = odom.subscriber().unwrap();
    let mut m: Odometry = bytemuck::Zeroable::zeroed();
    m.stamp_ns = 99;
    m.set_frame_id("odom").unwrap();
    m.set_child_frame_id("base_link").unwrap();
    m.pose.position.x = 1.25;
    m.pose.orientation.w = 1.0;
    m.twist.angular.z = -0.1;
    m.pose_covariance[0] = f64::INFINITY;

    // Echo in the background, then publish the original once it is listening.
    let echo = Command::new(env!("CARGO_BIN_EXE_horus"))
        .args([
            "--json",
            "topic",
            "echo",
            "odom",
            "--namespace",
            &ns,
            "--once",
            "--timeout",
            "20",
        ])
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut p = odom.publisher().unwrap();
    let view = horus::inspect::TopicView::open(&ns, "odom").unwrap();
    while !view.snapshot().subscribers.iter().any(|s| s.observer) {
        std::thread::sleep(Duration::from_millis(5));
    }
    p.send(m).unwrap();
    assert_eq!(*sub.try_recv().unwrap(), m);
    let echoed = echo.wait_with_output().unwrap();
    assert!(echoed.status.success());

    let mut publish = Command::new(env!("CARGO_BIN_EXE_horus"))
        .args(["--json", "topic", "pub", "odom", "-", "--namespace", &ns])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    publish
        .stdin
        .take()
        .unwrap()
        .write_all(&echoed.stdout)
        .unwrap();
    let result = &json_lines(&publish.wait_with_output().unwrap())[0];
    assert_eq!(result["sent"], 1);
    assert_eq!(result["deliveries"], 1);
    let back = sub.try_recv().expect("pub delivered a message");
    assert_eq!(bytemuck::bytes_of(&*back), bytemuck::bytes_of(&m));
}

#[test]
fn hz_and_bw_count_from_the_publishers_records() {
    let ns = ns("hz");
    let imu = Topic::<Imu>::builder("imu").namespace(&ns).open().unwrap();
    let _sub = imu.subscriber().unwrap();
    let stop = Arc::new(AtomicBool::new(false));
    let pubr = imu_stream(imu.clone(), Arc::clone(&stop));
    let hz = json_lines(&horus(&[
        "--json",
        "topic",
        "hz",
        "imu",
        "--namespace",
        &ns,
        "--window",
        "0.3",
        "--count",
        "3",
    ]));
    let bw = json_lines(&horus(&[
        "--json",
        "topic",
        "bw",
        "imu",
        "--namespace",
        &ns,
        "--window",
        "0.3",
        "--count",
        "2",
    ]));
    stop.store(true, Ordering::Relaxed);
    let sent = pubr.join().unwrap();
    assert_eq!(hz.len(), 3);
    let counted: u64 = hz.iter().map(|w| w["messages"].as_u64().unwrap()).sum();
    assert!(counted > 0 && counted <= sent, "{counted} of {sent}");
    assert!(hz
        .iter()
        .any(|w| w["rate_hz"].as_f64().is_some_and(|r| r > 0.0)));
    assert_eq!(bw.len(), 2);
    for w in bw.iter().filter(|w| w["messages"].as_u64() > Some(0)) {
        assert_eq!(
            w["mean_message_bytes"].as_f64(),
            Some(std::mem::size_of::<Imu>() as f64)
        );
    }
}

#[test]
fn bad_input_is_a_clear_error_and_exit_status_1() {
    let ns = ns("bad");
    let cmd = Topic::<CmdVel>::builder("cmd")
        .namespace(&ns)
        .open()
        .unwrap();
    let mut sub = cmd.subscriber().unwrap();
    let o = horus(&[
        "topic",
        "pub",
        "cmd",
        "{linear: 1, warp: 9}",
        "--namespace",
        &ns,
    ]);
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stderr).contains("warp"));
    let o = horus(&["topic", "pub", "cmd", "{stamp_ns: -3}", "--namespace", &ns]);
    assert_eq!(o.status.code(), Some(1));
    let o = horus(&["topic", "pub", "cmd", "{linear: [", "--namespace", &ns]);
    assert_eq!(o.status.code(), Some(1));
    assert!(sub.try_recv().is_none(), "nothing was published");
    let o = horus(&["--json", "topic", "echo", "nope", "--namespace", &ns]);
    assert_eq!(o.status.code(), Some(1));
    let err: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert!(err["error"].as_str().unwrap().contains("no topic nope"));
    // A good one goes through.
    let o = horus(&[
        "topic",
        "pub",
        "cmd",
        "{linear: 0.5, angular: -0.25}",
        "--namespace",
        &ns,
    ]);
    assert!(o.status.success());
    let m = sub.try_recv().unwrap();
    assert_eq!((m.linear, m.angular), (0.5, -0.25));
}
