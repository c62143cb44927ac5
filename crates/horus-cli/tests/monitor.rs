//! `horus monitor` against the robot fixture (a scheduler with nodes, topic `robot/cmd`) plus
//! a topic this test publishes with wall-clock stamps in a `Header`: `--once --json` reports
//! topics, types, rates, latencies and nodes without changing what the publisher observes;
//! the terminal UI, driven in tmux, lists them and answers tab, s, enter, esc and q; its tf
//! view (key t) lists the frames this test broadcasts and marks the dynamic one stale once
//! its broadcaster stops sending.

mod common;

use std::process::Command;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use common::tf_tree::TfTree;
use common::{horus_json, poll_json, shm_files, unique_ns, Fixture, PATIENCE};
use horus::msgs::{Header, Time};
use horus::Topic;
use serde_json::Value;

horus::message! {
    /// A user message whose stamp is in a nested header.
    pub struct Stamped: "horus-cli-test/Stamped", version 1 {
        /// When it was published.
        pub header: Header,
        /// A payload.
        pub value: f64,
    }
}

/// The fixture process's body; does nothing in a normal test run.
#[test]
fn fixture() {
    common::fixture_main();
}

/// What the stamped publisher saw: messages sent, and sends that reached a number of
/// subscribers other than 1 (an observer counted as a subscriber would show here).
struct Sent {
    sent: u64,
    miscounted: u64,
    received: u64,
    stats: horus::PublisherStats,
}

/// A publishing thread, stopped and joined on drop (also when a test fails, so that its
/// topic is removed before the fixture's clean-up runs).
struct Stream {
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<Sent>>,
}

impl Stream {
    /// Publishes `Stamped` messages on `monitor/stamped` (one subscriber, drained).
    fn start(ns: &str) -> Stream {
        let stop = Arc::new(AtomicBool::new(false));
        let thread = Some(stamped_stream(ns, Arc::clone(&stop)));
        Stream { stop, thread }
    }

    /// Stops it; what the publisher saw.
    fn finish(mut self) -> Sent {
        self.stop.store(true, Ordering::Relaxed);
        self.thread.take().unwrap().join().unwrap()
    }
}

impl Drop for Stream {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

fn stamped_stream(ns: &str, stop: Arc<AtomicBool>) -> JoinHandle<Sent> {
    let topic = Topic::<Stamped>::builder("monitor/stamped")
        .namespace(ns)
        .depth(64)
        .open()
        .unwrap();
    std::thread::spawn(move || {
        let mut p = topic.publisher().unwrap();
        let mut s = topic.subscriber().unwrap();
        let (mut sent, mut miscounted, mut received) = (0, 0, 0);
        while !stop.load(Ordering::Relaxed) {
            let mut m: Stamped = bytemuck::Zeroable::zeroed();
            m.header.stamp_ns = Time::now().nanos;
            m.value = sent as f64;
            let d = p.send(m).unwrap();
            sent += 1;
            if d.subscribers != 1 {
                miscounted += 1;
            }
            while s.try_recv().is_some() {
                received += 1;
            }
            std::thread::sleep(Duration::from_millis(2));
        }
        Sent {
            sent,
            miscounted,
            received,
            stats: p.stats(),
        }
    })
}

fn topic<'a>(doc: &'a Value, name: &str) -> Option<&'a Value> {
    doc["topics"].as_array()?.iter().find(|t| t["name"] == name)
}

fn node<'a>(doc: &'a Value, name: &str) -> Option<&'a Value> {
    doc["nodes"].as_array()?.iter().find(|n| n["name"] == name)
}

#[test]
fn once_json_reports_topics_nodes_rates_and_latencies_and_changes_nothing() {
    let ns = unique_ns("monitor-once");
    let robot = Fixture::robot(&ns);
    let stream = Stream::start(&ns);

    let args = ["monitor", "--once", "--window", "0.5"];
    let doc = poll_json(&ns, &args, |d| {
        topic(d, "robot/cmd").is_some_and(|t| t["rate_hz"].as_f64() > Some(0.0))
            && topic(d, "monitor/stamped")
                .is_some_and(|t| t["latency"].is_object() && t["delivered"].is_object())
            && ["imu", "adder", "caller", "base"]
                .iter()
                .all(|n| node(d, n).is_some_and(|n| n["window_rate_hz"].as_f64() > Some(0.0)))
    });
    assert_eq!(doc["namespace"], ns.as_str());
    assert_eq!(doc["window_s"], 0.5);

    let cmd = topic(&doc, "robot/cmd").unwrap();
    assert_eq!(cmd["type"], "horus/CmdVel");
    assert_eq!(cmd["publishers"].as_array().unwrap().len(), 1);
    assert_eq!(cmd["publishers"][0]["pid"], robot.pid());
    assert_eq!(cmd["subscribers"].as_array().unwrap().len(), 1);
    assert!(cmd["bytes_per_s"].as_f64().unwrap() > 0.0, "{cmd}");
    for kind in [
        "overrun",
        "rejected",
        "timed_out",
        "undelivered",
        "malformed",
    ] {
        assert!(cmd["losses"][kind].is_u64(), "{kind}: {cmd}");
    }
    // The fixture stamps its messages 1, 2, 3…: not times, so no latency, and it says why.
    assert!(cmd["latency"].is_null(), "{cmd}");
    assert!(
        cmd["latency_note"]
            .as_str()
            .unwrap()
            .contains("not wall-clock"),
        "{cmd}"
    );
    assert!(cmd["fields"]
        .as_array()
        .unwrap()
        .iter()
        .any(|f| f["path"] == "stamp_ns"));

    let st = topic(&doc, "monitor/stamped").unwrap();
    assert_eq!(st["type"], "horus-cli-test/Stamped");
    assert!(st["rate_hz"].as_f64().unwrap() > 0.0, "{st}");
    let lat = &st["latency"];
    assert_eq!(lat["stamp_field"], "header.stamp_ns");
    assert!(lat["samples"].as_u64().unwrap() > 0, "{st}");
    let (p50, p99) = (
        lat["p50_us"].as_f64().unwrap(),
        lat["p99_us"].as_f64().unwrap(),
    );
    assert!(p50 >= 0.0 && p99 >= p50, "{st}");
    assert!(st["monitor"]["read"].as_u64().unwrap() > 0, "{st}");
    // The latency horus delivers: the stream's own subscriber measured it (its histogram in
    // the segment), apart from the monitor's poll.
    let sub = &st["subscribers"][0];
    assert_eq!(sub["observer"], false, "{st}");
    let own = &sub["delivered"];
    assert!(own["samples"].as_u64().unwrap() > 0, "{st}");
    assert!(own["samples"].as_u64() <= sub["received"].as_u64(), "{st}");
    let delivered = &st["delivered"];
    assert_eq!(delivered["samples"], own["samples"], "{st}");
    let (p50, p99) = (
        delivered["p50_us"].as_f64().unwrap(),
        delivered["p99_us"].as_f64().unwrap(),
    );
    assert!(p50 > 0.0 && p99 >= p50, "{st}");
    // The fixture's stamps are counters: its subscriber measures nothing.
    assert!(cmd["delivered"].is_null(), "{cmd}");

    let imu = node(&doc, "imu").unwrap();
    assert_eq!(imu["scheduler"], "robot");
    assert_eq!(imu["pid"], robot.pid());
    assert_eq!(imu["alive"], true);
    assert_eq!(imu["running"], true);
    assert_eq!(imu["target_hz"], 200.0);
    for key in ["p50_us", "p99_us"] {
        assert!(imu["jitter"][key].is_number(), "jitter {key}: {imu}");
    }
    assert!(imu["exec"]["p99_us"].is_number());
    assert!(imu["restarts"].is_u64() && imu["deadline_misses"].is_u64());

    // The monitor was an observer: every message reached exactly the one subscriber, and the
    // publisher lost nothing.
    let sent = stream.finish();
    assert!(sent.sent > 0);
    assert_eq!(
        sent.miscounted, 0,
        "an observer was counted as a subscriber"
    );
    assert_eq!(sent.stats.sent, sent.sent);
    assert_eq!(sent.stats.rejected + sent.stats.timed_out, 0);
    assert_eq!(sent.stats.undelivered, 0);
    assert_eq!(sent.received, sent.sent);
    // And it left: no observer remains on the robot's topic.
    let (code, info) = horus_json(&ns, &["topic", "info", "robot/cmd"]);
    assert_eq!(code, 0);
    assert!(
        info["subscribers"]
            .as_array()
            .unwrap()
            .iter()
            .all(|s| s["observer"] == false),
        "{info}"
    );
    drop(robot);
    assert_eq!(shm_files(&ns), Vec::<String>::new());
}

#[test]
fn once_text_and_an_empty_namespace() {
    let ns = unique_ns("monitor-empty");
    let (code, doc) = horus_json(&ns, &["monitor", "--once", "--window", "0.1"]);
    assert_eq!(code, 0, "{doc}");
    assert_eq!(doc["topics"].as_array().unwrap().len(), 0);
    assert_eq!(doc["nodes"].as_array().unwrap().len(), 0);
    let (code, out, _) = common::horus(&ns, &["monitor", "--once", "--window", "0.1"]);
    assert_eq!(code, 0);
    assert!(
        out.contains("no topics") && out.contains("no nodes"),
        "{out}"
    );
    // Without a terminal and without --once it says what to do instead (exit 1).
    let (code, _, err) = common::horus(&ns, &["monitor"]);
    assert_eq!(code, 1);
    assert!(err.contains("--once"), "{err}");
    // A bad window is refused.
    assert_eq!(
        common::horus(&ns, &["monitor", "--once", "--window", "0"]).0,
        1
    );
}

/// A tmux server of our own (its own socket), killed on drop.
struct Tmux {
    socket: String,
}

impl Tmux {
    fn run(&self, args: &[&str]) -> std::process::Output {
        Command::new("tmux")
            .arg("-L")
            .arg(&self.socket)
            .args(args)
            .output()
            .expect("run tmux")
    }

    fn screen(&self) -> String {
        String::from_utf8_lossy(&self.run(&["capture-pane", "-p", "-t", "mon"]).stdout).into_owned()
    }

    fn keys(&self, keys: &[&str]) {
        let mut args = vec!["send-keys", "-t", "mon"];
        args.extend_from_slice(keys);
        assert!(self.run(&args).status.success());
    }

    /// Polls the screen until `ok` accepts it.
    fn wait_for(&self, what: &str, ok: impl Fn(&str) -> bool) -> String {
        let end = Instant::now() + PATIENCE;
        loop {
            let s = self.screen();
            if ok(&s) {
                return s;
            }
            assert!(Instant::now() < end, "never showed {what}; screen:\n{s}");
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    fn alive(&self) -> bool {
        self.run(&["has-session", "-t", "mon"]).status.success()
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = self.run(&["kill-server"]);
    }
}

fn tmux_available() -> bool {
    Command::new("tmux")
        .arg("-V")
        .output()
        .is_ok_and(|o| o.status.success())
}

/// `horus monitor` of namespace `ns` in a 200×50 tmux pane of its own server.
fn open_monitor(ns: &str) -> Tmux {
    let tmux = Tmux {
        socket: format!("horus-test-{ns}"),
    };
    let cmd = format!(
        "env HORUS_NAMESPACE={ns} TERM=xterm-256color {} monitor",
        env!("CARGO_BIN_EXE_horus")
    );
    let out = tmux.run(&[
        "new-session",
        "-d",
        "-x",
        "200",
        "-y",
        "50",
        "-s",
        "mon",
        &cmd,
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    tmux
}

/// Waits until the monitor in `tmux` exits after `q`.
fn quit(tmux: &Tmux) {
    tmux.keys(&["q"]);
    let end = Instant::now() + PATIENCE;
    while tmux.alive() {
        assert!(Instant::now() < end, "q did not quit:\n{}", tmux.screen());
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn the_terminal_ui_lists_topics_and_nodes_and_answers_its_keys() {
    if !tmux_available() {
        eprintln!("SKIPPED: tmux is not installed (`make setup` installs it); the terminal UI was not tested");
        return;
    }
    let ns = unique_ns("monitor-tui");
    let _robot = Fixture::robot(&ns);
    let stream = Stream::start(&ns);
    let tmux = open_monitor(&ns);

    // Every topic and node, with figures.
    tmux.wait_for("the topics and nodes", |s| {
        [
            "robot/cmd",
            "monitor/stamped",
            "CmdVel",
            "imu",
            "adder",
            "caller",
            "base",
        ]
        .iter()
        .all(|w| s.contains(w))
            && s.contains("Topics (2)")
            && s.contains("Nodes (4)")
            && s.contains("sort (by topic)")
            && s.contains("Log")
    });

    // s: the topics table sorts on its next column.
    tmux.keys(&["s"]);
    tmux.wait_for("sorting by type", |s| s.contains("sort (by type)"));
    // tab: the nodes table has the focus (the legend names its sort column).
    tmux.keys(&["Tab"]);
    tmux.wait_for("the nodes table focused", |s| s.contains("sort (by node)"));
    // Sorted by name, the first node is adder; enter shows it.
    tmux.keys(&["Enter"]);
    tmux.wait_for("the detail of node adder", |s| {
        s.contains("Node adder")
            && s.contains("scheduler   robot")
            && s.contains("target      100 Hz")
            && s.contains("jitter")
            && s.contains("exec")
    });
    // esc: back to the tables, the nodes table still focused.
    tmux.keys(&["Escape"]);
    tmux.wait_for("the tables again", |s| {
        s.contains("Topics (2)") && s.contains("sort (by node)")
    });
    // tab back to topics; sorted by type, horus-cli-test/Stamped comes before horus/CmdVel.
    tmux.keys(&["Tab"]);
    tmux.wait_for("the topics table focused", |s| s.contains("sort (by type)"));
    tmux.keys(&["Enter"]);
    // All of the detail at once (a capture may catch the pane mid-redraw).
    tmux.wait_for("the detail of monitor/stamped", |s| {
        s.contains("Topic monitor/stamped")
            && s.contains("stamp field header.stamp_ns")
            && s.contains("the subscribers' own, since they joined")
            && s.contains("latency p50/p99/max µs (n)")
            && s.contains("Publishers (1)")
            && s.contains("Subscribers (1)")
            && s.contains("horus-cli-test/Stamped")
    });
    tmux.keys(&["Enter"]);
    tmux.wait_for("the tables again", |s| s.contains("Topics (2)"));
    // down: the next topic, robot/cmd.
    tmux.keys(&["Down", "Enter"]);
    // Waits for the whole detail: tmux may capture the pane mid-redraw (the title drawn,
    // the lines below still the table's), so the title alone does not mean it is all there.
    tmux.wait_for("the detail of robot/cmd", |s| {
        s.contains("Topic robot/cmd") && s.contains("not wall-clock")
    });
    tmux.keys(&["Escape"]);
    tmux.wait_for("the tables again", |s| s.contains("Topics (2)"));
    // q: the monitor exits.
    quit(&tmux);
    let sent = stream.finish();
    assert_eq!(
        sent.miscounted, 0,
        "an observer was counted as a subscriber"
    );
}

/// The line of the tf table whose first cell is `frame` (indentation and border removed).
fn frame_line<'s>(screen: &'s str, frame: &str) -> Option<&'s str> {
    screen
        .lines()
        .find(|l| l.trim_start_matches('│').split_whitespace().next() == Some(frame))
}

#[test]
fn the_tf_view_lists_the_frames_and_marks_a_frame_whose_broadcaster_stopped_stale() {
    if !tmux_available() {
        eprintln!(
            "SKIPPED: tmux is not installed (`make setup` installs it); the tf view was not tested"
        );
        return;
    }
    let ns = unique_ns("monitor-tf");
    let mut tree = TfTree::start(&ns);
    let tmux = open_monitor(&ns);
    tmux.wait_for("the tables with the tf key", |s| {
        s.contains("Topics (") && s.contains("t: tf frames")
    });
    tmux.keys(&["t"]);
    let has = |s: &str, frame: &str, words: &[&str]| {
        frame_line(s, frame).is_some_and(|l| words.iter().all(|w| l.contains(w)))
    };
    // Every frame with its parent and kind; the statics (latched before the monitor started)
    // and the dynamic frame, which is being updated, are not stale.
    tmux.wait_for("the tf frames, none stale", |s| {
        s.contains("tf frames (3, 0 stale)")
            && has(s, "map", &["root"])
            && has(s, "odom", &["map", "static", "ok"])
            && has(s, "base_link", &["odom", "dynamic", "ok"])
            && has(s, "laser", &["base_link", "static", "ok"])
            && s.contains("t/esc: back to the tables")
    });
    // Its broadcaster stops sending: base_link alone becomes stale.
    tree.stop_sending();
    tmux.wait_for("base_link marked stale", |s| {
        s.contains("tf frames (3, 1 stale)")
            && has(s, "base_link", &["odom", "dynamic", "STALE"])
            && has(s, "odom", &["static", "ok"])
            && has(s, "laser", &["static", "ok"])
    });
    // t: back to the tables, which still answer their keys.
    tmux.keys(&["t"]);
    tmux.wait_for("the tables again", |s| s.contains("sort (by topic)"));
    tmux.keys(&["s"]);
    tmux.wait_for("sorting by type", |s| s.contains("sort (by type)"));
    quit(&tmux);
    drop(tmux);
    drop(tree);
    assert_eq!(shm_files(&ns), Vec::<String>::new());
}

#[test]
fn the_latest_log_lines_are_in_the_snapshot() {
    let ns = unique_ns("monitor-log");
    let guard = horus_log::Builder::new()
        .namespace(&ns)
        .console(horus_log::Console::Off)
        .name("monitor-test")
        .init()
        .unwrap();
    horus_log::info!("monitor test line {}", 42u32; answer = true);
    horus_log::warn!("second line");
    let doc = poll_json(&ns, &["monitor", "--once", "--window", "0.1"], |d| {
        d["logs"]["lines"].as_array().is_some_and(|l| l.len() >= 2)
    });
    let logs = &doc["logs"];
    assert_eq!(logs["processes"], 1, "{logs}");
    let lines: Vec<&str> = logs["lines"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l.as_str().unwrap())
        .collect();
    let first = lines
        .iter()
        .position(|l| l.contains("monitor test line 42") && l.contains("answer=true"))
        .unwrap_or_else(|| panic!("{lines:?}"));
    let second = lines
        .iter()
        .position(|l| l.contains("second line") && l.contains("WARN"))
        .unwrap_or_else(|| panic!("{lines:?}"));
    assert!(first < second, "oldest first: {lines:?}");
    drop(guard);
    assert_eq!(shm_files(&ns), Vec::<String>::new());
}
