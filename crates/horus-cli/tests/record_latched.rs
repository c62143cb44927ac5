//! `horus record` and `horus play` with topics that appear late and latched topics:
//! - a recorder started before the robot records every message of a topic the robot creates
//!   (a 500 Hz publisher of 500 `CmdVel` in another process: before, the first ~60 ms were
//!   missing and counted nowhere);
//! - what was overwritten before the recorder could attach is counted as missed;
//! - with `--from-oldest`, a topic that existed before the recorder is recorded the same way
//!   (without it, from its next message, nothing earlier counted);
//! - a latched topic that exists when the recorder starts gives its latched history, and the
//!   channel keeps its durability;
//! - `horus play` creates a recorded latched topic latched: a subscriber that joins after
//!   the player published still receives the latched messages.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use horus::inspect::{QosInfo, TopicView};
use horus::msgs::{CmdVel, MessageDescription};
use horus::{Durability, Overflow, Topic};
use horus_record::{RecordingReader, RecordingWriter, WriterOptions};
use serde_json::Value;

const PATIENCE: Duration = Duration::from_secs(60);
/// Messages the late robot publishes (500 Hz).
const BURST: u64 = 500;

fn ns(tag: &str) -> String {
    format!("cli-reclatch-{}-{tag}", std::process::id())
}

fn file(tag: &str) -> PathBuf {
    let d = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("horus-cli-record-latched-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    let p = d.join(format!("{tag}.mcap"));
    let _ = std::fs::remove_file(&p);
    p
}

fn horus(ns: &str) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_horus"));
    c.env("HORUS_NAMESPACE", ns);
    c
}

fn leftover(ns: &str) -> Vec<String> {
    std::fs::read_dir("/dev/shm")
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|n| n.contains(ns))
        .collect()
}

/// The robot (this test binary, re-run with `HORUS_RECLATCH_FIXTURE`): publishes, prints
/// "ready", and leaves (removing its topic) when its stdin closes.
#[test]
fn fixture() {
    let Ok(mode) = std::env::var("HORUS_RECLATCH_FIXTURE") else {
        return;
    };
    let (name, depth, durability, count, period) = match mode.as_str() {
        // 500 Hz: messages every 2 ms from the topic's creation.
        "burst" => (
            "late/cmd",
            64,
            Durability::Volatile,
            BURST,
            Duration::from_millis(2),
        ),
        // 20 at once on 4-deep rings: 16 overwritten before anyone could read them.
        "overwrite" => ("gone/cmd", 4, Durability::Volatile, 20, Duration::ZERO),
        // Three on a topic that keeps the last two.
        "latched" => (
            "l/static",
            4,
            Durability::TransientLocal { depth: 2 },
            3,
            Duration::ZERO,
        ),
        other => panic!("unknown fixture {other}"),
    };
    let t = Topic::<CmdVel>::builder(name)
        .depth(depth)
        .durability(durability)
        .open()
        .unwrap();
    let mut p = t.publisher().unwrap();
    for i in 0..count {
        p.send(CmdVel::new(i, 0.5, -0.5)).unwrap();
        std::thread::sleep(period);
    }
    println!("ready");
    let mut line = String::new();
    let _ = std::io::stdin().read_line(&mut line);
}

/// The robot process; killed only if the test fails before closing its stdin.
struct Robot(Child);

impl Robot {
    /// Starts the robot in `mode` and waits until it has published everything.
    fn run(ns: &str, mode: &str) -> Robot {
        let mut kid = Command::new(std::env::current_exe().unwrap())
            .args(["--exact", "fixture", "--nocapture", "--test-threads=1"])
            .env("HORUS_RECLATCH_FIXTURE", mode)
            .env("HORUS_NAMESPACE", ns)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .map(Robot)
            .unwrap();
        let mut lines = BufReader::new(kid.0.stdout.take().unwrap()).lines();
        let ready = lines
            .by_ref()
            .map_while(Result::ok)
            .any(|l| l.ends_with("ready"));
        assert!(ready, "robot {mode} never became ready");
        // Keep reading (libtest's last words) so the robot never writes to a closed pipe.
        std::thread::spawn(move || lines.for_each(drop));
        kid
    }

    /// Closes its stdin: it leaves in order.
    fn stop(mut self) {
        drop(self.0.stdin.take());
        assert!(self.0.wait().unwrap().success());
    }
}

impl Drop for Robot {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// A running `horus record`, stopped with SIGINT.
struct Recorder {
    child: Child,
    lines: mpsc::Receiver<String>,
}

impl Recorder {
    /// Starts recording and waits until it runs (it says so for `/log`).
    fn start(ns: &str, out: &Path) -> Recorder {
        Recorder::start_with(ns, out, &[])
    }

    /// [`start`](Self::start) with more arguments for `horus record`.
    fn start_with(ns: &str, out: &Path, args: &[&str]) -> Recorder {
        let mut child = horus(ns)
            .args(["--json", "record", "-o"])
            .arg(out)
            .args(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let stderr = child.stderr.take().unwrap();
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for l in BufReader::new(stderr).lines().map_while(Result::ok) {
                let _ = tx.send(l);
            }
        });
        let r = Recorder { child, lines };
        r.expect("horus record: recording /log ");
        r
    }

    fn expect(&self, start: &str) {
        loop {
            let l = self
                .lines
                .recv_timeout(PATIENCE)
                .expect("recorder went quiet");
            if l.starts_with(start) {
                return;
            }
        }
    }

    fn signal(&self, sig: i32) {
        // SAFETY: kill(2) on our own child's pid with a valid signal number.
        assert_eq!(unsafe { libc::kill(self.child.id() as i32, sig) }, 0);
    }

    /// SIGINT, then the JSON report.
    fn stop(self) -> Value {
        self.signal(libc::SIGINT);
        let out = self.child.wait_with_output().unwrap();
        assert!(out.status.success(), "recorder failed: {:?}", out.status);
        let stdout = String::from_utf8_lossy(&out.stdout);
        serde_json::from_str(stdout.trim()).unwrap_or_else(|e| panic!("{e}: {stdout}"))
    }
}

/// The recorded stamps of `topic`, in file order.
fn stamps(path: &Path, topic: &str) -> Vec<u64> {
    let mut r = RecordingReader::open(path).unwrap();
    let mut out = Vec::new();
    while let Some(m) = r.next_message().unwrap() {
        if r.channel(m.channel).unwrap().topic != topic {
            continue;
        }
        let mut b = Vec::new();
        r.horus_bytes(&m, &mut b).unwrap().unwrap();
        out.push(bytemuck::pod_read_unaligned::<CmdVel>(&b).stamp_ns);
    }
    out
}

/// `(messages, missed)` of `topic` in the recorder's report.
fn counts(report: &Value, topic: &str) -> (u64, u64) {
    let t = report["topics"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["topic"] == topic)
        .unwrap_or_else(|| panic!("{topic} not in {report}"));
    (
        t["messages"].as_u64().unwrap(),
        t["missed"].as_u64().unwrap(),
    )
}

#[test]
fn a_recorder_started_before_the_robot_records_every_message_of_a_new_topic() {
    let ns = ns("burst");
    let out = file("burst");
    let rec = Recorder::start(&ns, &out);
    let robot = Robot::run(&ns, "burst");
    let report = rec.stop();
    robot.stop();
    assert_eq!(
        stamps(&out, "late/cmd"),
        (0..BURST).collect::<Vec<_>>(),
        "{report}"
    );
    assert_eq!(counts(&report, "late/cmd"), (BURST, 0));
    assert!(leftover(&ns).is_empty(), "{:?}", leftover(&ns));
}

#[test]
fn messages_overwritten_before_the_recorder_attached_are_counted_missed() {
    let ns = ns("overwrite");
    let out = file("overwrite");
    let rec = Recorder::start(&ns, &out);
    // The recorder cannot attach while stopped: the robot overwrites 16 of its 20 messages.
    rec.signal(libc::SIGSTOP);
    let robot = Robot::run(&ns, "overwrite");
    rec.signal(libc::SIGCONT);
    rec.expect("horus record: recording gone/cmd ");
    let report = rec.stop();
    robot.stop();
    assert_eq!(stamps(&out, "gone/cmd"), (16..20).collect::<Vec<_>>());
    assert_eq!(counts(&report, "gone/cmd"), (4, 16), "{report}");
    let info = horus_record::RecordingInfo::read(&out).unwrap();
    let ch = info
        .channels
        .iter()
        .find(|c| c.topic == "gone/cmd")
        .unwrap();
    assert_eq!(ch.missed, 16, "in the file's losses");
    assert!(leftover(&ns).is_empty(), "{:?}", leftover(&ns));
}

#[test]
fn with_from_oldest_a_topic_there_before_the_recorder_is_recorded_from_its_rings_and_the_rest_counted_missed(
) {
    let ns = ns("oldest");
    let out = file("oldest");
    // The robot created its topic and published 20 on 4-deep rings before the recorder
    // started: a topic that exists when it starts.
    let robot = Robot::run(&ns, "overwrite");
    let rec = Recorder::start_with(&ns, &out, &["--from-oldest"]);
    rec.expect("horus record: recording gone/cmd ");
    let report = rec.stop();
    robot.stop();
    // What the rings still held, and the 16 published before it, counted.
    assert_eq!(stamps(&out, "gone/cmd"), (16..20).collect::<Vec<_>>());
    assert_eq!(counts(&report, "gone/cmd"), (4, 16), "{report}");
    assert!(leftover(&ns).is_empty(), "{:?}", leftover(&ns));
}

#[test]
fn without_from_oldest_a_topic_there_before_the_recorder_starts_at_its_next_message() {
    let ns = ns("next");
    let out = file("next");
    let robot = Robot::run(&ns, "overwrite");
    let rec = Recorder::start(&ns, &out);
    rec.expect("horus record: recording gone/cmd ");
    let report = rec.stop();
    robot.stop();
    // Nothing after the recorder started, and nothing earlier is counted.
    assert!(stamps(&out, "gone/cmd").is_empty(), "{report}");
    let listed = report["topics"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["topic"] == "gone/cmd")
        .map(|t| (t["messages"].as_u64(), t["missed"].as_u64()));
    assert!(
        matches!(listed, None | Some((Some(0), Some(0)))),
        "{report}"
    );
    assert!(leftover(&ns).is_empty(), "{:?}", leftover(&ns));
}

#[test]
fn a_latched_topic_is_recorded_with_its_history_and_durability() {
    let ns = ns("latched");
    let out = file("latched");
    let robot = Robot::run(&ns, "latched");
    // The topic was there first: the recording starts at its latched history (2 of 3).
    let rec = Recorder::start(&ns, &out);
    rec.expect("horus record: recording l/static ");
    let report = rec.stop();
    robot.stop();
    assert_eq!(stamps(&out, "l/static"), vec![1, 2], "{report}");
    assert_eq!(counts(&report, "l/static"), (2, 0));
    let mut r = RecordingReader::open(&out).unwrap();
    while r.next_message().unwrap().is_some() {}
    let ch = (0..16u16)
        .filter_map(|id| r.channel(id))
        .find(|c| c.topic == "l/static")
        .unwrap();
    assert_eq!(
        ch.meta.as_ref().unwrap().durability,
        Durability::TransientLocal { depth: 2 }
    );
    assert!(leftover(&ns).is_empty(), "{:?}", leftover(&ns));
}

#[test]
fn play_creates_a_recorded_latched_topic_latched_for_late_subscribers() {
    let ns = ns("play");
    let path = file("play");
    let qos = QosInfo {
        depth: 4,
        overflow: Some(Overflow::DropOldest),
        max_publishers: 2,
        max_subscribers: 4,
        inline_bytes: 16,
        chunk_bytes: 0,
        chunks_per_publisher: 0,
    };
    let desc = MessageDescription::of::<CmdVel>();
    let latched = Durability::TransientLocal { depth: 2 };
    let mut w = RecordingWriter::create(&path, WriterOptions::default()).unwrap();
    let statics = w
        .add_channel_durable("tf_static", &desc, &qos, latched)
        .unwrap();
    let later = w.add_channel("later", &desc, &qos).unwrap();
    let t0 = 1_000_000_000_000u64;
    for i in 0..3u64 {
        w.write(
            statics,
            t0 + i,
            bytemuck::bytes_of(&CmdVel::new(i, 0.0, 0.0)),
        )
        .unwrap();
    }
    // A message a minute later keeps the player running after the latched ones.
    w.write(
        later,
        t0 + 60_000_000_000,
        bytemuck::bytes_of(&CmdVel::new(9, 0.0, 0.0)),
    )
    .unwrap();
    w.finish().unwrap();

    let mut player = horus(&ns)
        .args(["play", "--no-keys"])
        .arg(&path)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // Wait until the player published the three (behaviour, not time).
    let end = Instant::now() + PATIENCE;
    let view = loop {
        let sent = TopicView::open(&ns, "tf_static")
            .ok()
            .filter(|v| v.snapshot().publishers.iter().map(|p| p.sent).sum::<u64>() == 3);
        if let Some(v) = sent {
            break v;
        }
        assert!(Instant::now() < end, "the player never published");
        std::thread::sleep(Duration::from_millis(5));
    };
    assert_eq!(view.durability(), latched);
    // A subscriber that joins now gets the last two, in order.
    let t = Topic::<CmdVel>::builder("tf_static")
        .namespace(&ns)
        .open()
        .unwrap();
    let mut sub = t.subscriber().unwrap();
    let mut got = Vec::new();
    while let Some(m) = sub.try_recv() {
        got.push(m.stamp_ns);
    }
    assert_eq!(got, vec![1, 2]);
    // SAFETY: kill(2) on our own child's pid.
    unsafe { libc::kill(player.id() as i32, libc::SIGINT) };
    assert!(player.wait().unwrap().success());
    drop((sub, t, view));
    assert!(leftover(&ns).is_empty(), "{:?}", leftover(&ns));
}
