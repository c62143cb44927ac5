//! `horus record`, `play` and `bag info` against real topics: this test process publishes,
//! the `horus` binary records; a recording played back and recorded again holds the same
//! bytes in the same order per topic; a played recording creates the topics it needs; damaged
//! files are clear errors naming the file and the offset.

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use horus::msgs::{CmdVel, PointCloud};
use horus::{Message, Topic};
use horus_record::RecordingReader;
use serde_json::Value;

horus::message! {
    /// A user-defined message: nested standard message and a 2-D array.
    pub struct Wheel: "cli_test/Wheel", version 1 {
        /// Stamp.
        pub stamp_ns: u64,
        /// Nested.
        pub cmd: CmdVel,
        /// Gains.
        pub gains: [[f32; 2]; 3],
    }
}

const PATIENCE: Duration = Duration::from_secs(60);

fn ns(tag: &str) -> String {
    format!("cli-record-{}-{tag}", std::process::id())
}

fn dir(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("horus-cli-record-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn horus(ns: &str) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_horus"));
    c.env("HORUS_NAMESPACE", ns);
    c
}

/// A running `horus record`, stopped with SIGINT.
struct Recorder {
    child: Child,
    lines: mpsc::Receiver<String>,
}

impl Recorder {
    /// Starts recording and waits until every topic of `expect` is being recorded.
    fn start(ns: &str, out: &Path, args: &[&str], expect: &[&str]) -> Recorder {
        let mut child = horus(ns)
            .arg("record")
            .arg("-o")
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
        let mut missing: Vec<&str> = expect.to_vec();
        while !missing.is_empty() {
            let l = r
                .lines
                .recv_timeout(PATIENCE)
                .expect("recorder never started");
            missing.retain(|t| !l.starts_with(&format!("horus record: recording {t} ")));
        }
        r
    }

    /// SIGINT, then the JSON report.
    fn stop(self) -> Value {
        // SAFETY: kill(2) on our own child's pid with a valid signal number.
        unsafe { libc::kill(self.child.id() as i32, libc::SIGINT) };
        let out = self.child.wait_with_output().unwrap();
        assert!(out.status.success(), "recorder failed: {:?}", out.status);
        let stdout = String::from_utf8_lossy(&out.stdout);
        serde_json::from_str(stdout.trim()).unwrap_or_else(|e| panic!("{e}: {stdout}"))
    }
}

/// Per topic, every message's exact bytes in file order.
fn by_topic(path: &Path) -> BTreeMap<String, Vec<Vec<u8>>> {
    let mut r = RecordingReader::open(path).unwrap();
    let mut out: BTreeMap<String, Vec<Vec<u8>>> = BTreeMap::new();
    while let Some(m) = r.next_message().unwrap() {
        let mut b = Vec::new();
        r.horus_bytes(&m, &mut b).unwrap().unwrap();
        let topic = r.channel(m.channel).unwrap().topic.clone();
        out.entry(topic).or_default().push(b);
    }
    out
}

fn leftover(ns: &str) -> Vec<String> {
    std::fs::read_dir("/dev/shm")
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|n| n.contains(ns))
        .collect()
}

#[test]
fn record_play_record_again_gives_the_same_bytes_in_order() {
    let ns = ns("roundtrip");
    let d = dir("roundtrip");
    // Deep rings: every message stays readable until the recorder takes it, however slow.
    let cmd = Topic::<CmdVel>::builder("r/cmd")
        .namespace(&ns)
        .depth(256)
        .open()
        .unwrap();
    let cloud = Topic::<PointCloud>::builder("r/cloud")
        .namespace(&ns)
        .depth(32)
        .max_tail_bytes(4096)
        .open()
        .unwrap();
    let wheel = Topic::<Wheel>::builder("r/wheel")
        .namespace(&ns)
        .depth(64)
        .open()
        .unwrap();
    let first = d.join("first.mcap");
    let rec = Recorder::start(
        &ns,
        &first,
        &["--json", "--regex", "^r/", "--compression", "lz4"],
        &["r/cmd", "r/cloud", "r/wheel"],
    );
    let (mut pc, mut pp, mut pw) = (
        cmd.publisher().unwrap(),
        cloud.publisher().unwrap(),
        wheel.publisher().unwrap(),
    );
    for i in 0..200u64 {
        pc.send(CmdVel::new(i, i as f32 * 0.5, -(i as f32)))
            .unwrap();
        if i % 10 == 0 {
            let mut h = PointCloud::new((i / 10) as u32, false);
            h.seq = i as u32;
            let tail: Vec<u8> = (0..h.tail_len()).map(|k| (k as u64 + i) as u8).collect();
            pp.send_with_tail(&h, &tail).unwrap();
        }
        if i % 4 == 0 {
            let mut w: Wheel = bytemuck::Zeroable::zeroed();
            w.stamp_ns = i;
            w.cmd = CmdVel::new(i, 1.0, 2.0);
            w.gains = [[i as f32, 1.5], [2.5, 3.5], [4.5, -1.0]];
            pw.send(w).unwrap();
        }
        std::thread::sleep(Duration::from_micros(200));
    }
    let report = rec.stop();
    let recorded = by_topic(&first);
    assert_eq!(recorded["r/cmd"].len(), 200, "{report}");
    assert_eq!(recorded["r/cloud"].len(), 20);
    assert_eq!(recorded["r/wheel"].len(), 50);
    let c0: &CmdVel = bytemuck::from_bytes(&recorded["r/cmd"][7]);
    assert_eq!(*c0, CmdVel::new(7, 3.5, -7.0));
    assert_eq!(
        recorded["r/cloud"][3].len(),
        PointCloud::SCHEMA.size() as usize + 3 * 12
    );
    for t in report["topics"].as_array().unwrap() {
        assert_eq!(t["missed"], 0, "{report}");
    }

    // bag info from the summary.
    let out = horus(&ns)
        .args(["--json", "bag", "info"])
        .arg(&first)
        .output()
        .unwrap();
    assert!(out.status.success());
    let info: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(info["messages"], 270);
    assert_eq!(info["from_summary"], true);
    let counts: BTreeMap<String, u64> = info["channels"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c["topic"].as_str().unwrap().to_owned(),
                c["messages"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(counts["r/cmd"], 200);
    assert_eq!(info["channels"][0]["missed"], 0);

    // Play it back onto the same topics (fast) while recording again.
    let second = d.join("second.mcap");
    let rec = Recorder::start(
        &ns,
        &second,
        &["--json", "--regex", "^r/"],
        &["r/cmd", "r/cloud", "r/wheel"],
    );
    let out = horus(&ns)
        .args(["--json", "play", "--no-keys", "--rate", "4"])
        .arg(&first)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let played: Value = serde_json::from_slice(&out.stdout).unwrap();
    for t in played["topics"].as_array().unwrap() {
        assert_eq!(t["failed"], 0, "{played}");
    }
    rec.stop();
    assert_eq!(by_topic(&second), recorded);

    drop((pc, pp, pw, cmd, cloud, wheel));
    assert!(leftover(&ns).is_empty(), "{:?}", leftover(&ns));
    std::fs::remove_dir_all(d).unwrap();
}

#[test]
fn play_creates_missing_topics_from_the_recording() {
    let ns = ns("create");
    let d = dir("create");
    let file = d.join("a.mcap");
    {
        let cmd = Topic::<CmdVel>::builder("c/cmd")
            .namespace(&ns)
            .depth(64)
            .open()
            .unwrap();
        let rec = Recorder::start(&ns, &file, &["--json"], &["c/cmd"]);
        let mut p = cmd.publisher().unwrap();
        for i in 0..20u64 {
            p.send(CmdVel::new(i, 0.25, 0.5)).unwrap();
        }
        rec.stop();
    }
    assert!(leftover(&ns).is_empty());
    let ns2 = format!("{ns}-b");
    let mut play = horus(&ns2)
        .args(["play", "--no-keys", "--loop", "--rate", "10"])
        .arg(&file)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let end = Instant::now() + PATIENCE;
    while !horus::inspect::list_topics(&ns2)
        .unwrap()
        .contains(&"c/cmd".to_owned())
    {
        assert!(Instant::now() < end, "play never created the topic");
        std::thread::sleep(Duration::from_millis(10));
    }
    let t = Topic::<CmdVel>::builder("c/cmd")
        .namespace(&ns2)
        .open()
        .unwrap();
    let mut sub = t.subscriber().unwrap();
    let mut got = Vec::new();
    while got.len() < 30 {
        assert!(Instant::now() < end, "nothing played");
        match sub.try_recv() {
            Some(m) => got.push(*m),
            None => std::thread::sleep(Duration::from_millis(1)),
        }
    }
    for m in &got {
        assert!(
            m.stamp_ns < 20 && m.linear == 0.25 && m.angular == 0.5,
            "{m:?}"
        );
    }
    // SAFETY: kill(2) on our own child's pid.
    unsafe { libc::kill(play.id() as i32, libc::SIGTERM) };
    assert!(play.wait().unwrap().success());
    drop((sub, t));
    assert!(leftover(&ns2).is_empty(), "{:?}", leftover(&ns2));
    std::fs::remove_dir_all(d).unwrap();
}

#[test]
fn damaged_recordings_are_errors_naming_the_file_and_offset() {
    let ns = ns("damaged");
    let d = dir("damaged");
    let file = d.join("whole.mcap");
    {
        let cmd = Topic::<CmdVel>::builder("d/cmd")
            .namespace(&ns)
            .depth(256)
            .open()
            .unwrap();
        let rec = Recorder::start(&ns, &file, &["--json", "--chunk-size", "1K"], &["d/cmd"]);
        let mut p = cmd.publisher().unwrap();
        for i in 0..200u64 {
            p.send(CmdVel::new(i, 0.0, 0.0)).unwrap();
        }
        rec.stop();
    }
    let whole = std::fs::read(&file).unwrap();
    let cut = d.join("cut.mcap");
    std::fs::write(&cut, &whole[..whole.len() * 2 / 3]).unwrap();
    for args in [
        vec!["bag", "info"],
        vec!["play", "--no-keys", "--rate", "100"],
    ] {
        let out = horus(&ns).args(&args).arg(&cut).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {err}");
        assert!(
            err.contains("cut.mcap") && err.contains("truncated at offset"),
            "{err}"
        );
    }
    // Repair keeps every message of the complete chunks, in order, in a finished file.
    let fixed = d.join("fixed.mcap");
    let out = horus(&ns)
        .args(["bag", "repair"])
        .arg(&cut)
        .arg("-o")
        .arg(&fixed)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let info = horus_record::RecordingInfo::read(&fixed).unwrap();
    assert!(info.from_summary && info.messages > 0 && info.messages < 200);
    let kept = &by_topic(&fixed)["d/cmd"];
    assert_eq!(kept[..], by_topic(&file)["d/cmd"][..kept.len()]);
    let junk = d.join("junk.mcap");
    std::fs::write(&junk, b"not an mcap file at all").unwrap();
    let out = horus(&ns)
        .args(["bag", "info"])
        .arg(&junk)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("junk.mcap: not an MCAP file"));
    assert!(leftover(&ns).is_empty());
    std::fs::remove_dir_all(d).unwrap();
}

#[test]
fn play_selects_topics_offset_and_duration_in_recorded_time() {
    use horus::inspect::QosInfo;
    use horus::msgs::MessageDescription;
    use horus_record::{RecordingWriter, WriterOptions};

    let ns = ns("select");
    let d = dir("select");
    let file = d.join("grid.mcap");
    // Two topics, a message every 10 ms of log time for 1 s.
    let qos = QosInfo {
        depth: 128,
        overflow: Some(horus::Overflow::DropOldest),
        max_publishers: 2,
        max_subscribers: 4,
        inline_bytes: 16,
        chunk_bytes: 0,
        chunks_per_publisher: 0,
    };
    let desc = MessageDescription::of::<CmdVel>();
    let mut w = RecordingWriter::create(&file, WriterOptions::default()).unwrap();
    let a = w.add_channel("g/a", &desc, &qos).unwrap();
    let b = w.add_channel("g/b", &desc, &qos).unwrap();
    for i in 0..=100u64 {
        let t = 1_000_000_000_000 + i * 10_000_000;
        let m = CmdVel::new(i, 0.0, 0.0);
        w.write(a, t, bytemuck::bytes_of(&m)).unwrap();
        w.write(b, t, bytemuck::bytes_of(&m)).unwrap();
    }
    w.finish().unwrap();

    // From 205 ms to 505 ms of recorded time (messages at 210 … 500 ms: 30), topic g/a only,
    // ten times as fast; the topic does not exist and is created from the file.
    let out = horus(&ns)
        .args(["--json", "play", "--no-keys", "--topics", "g/a"])
        .args([
            "--start-offset",
            "0.205",
            "--duration",
            "0.3",
            "--rate",
            "10",
        ])
        .arg(&file)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    let topics = report["topics"].as_array().unwrap();
    assert_eq!(topics.len(), 1, "{report}");
    assert_eq!(topics[0]["topic"], "g/a");
    assert_eq!(topics[0]["published"], 30, "{report}");
    assert!(leftover(&ns).is_empty(), "{:?}", leftover(&ns));
    std::fs::remove_dir_all(d).unwrap();
}

#[test]
fn play_on_a_terminal_pauses_and_steps_one_message_per_key() {
    use std::io::Write as _;
    use std::os::fd::{FromRawFd, OwnedFd};

    use horus::inspect::QosInfo;
    use horus::msgs::MessageDescription;
    use horus_record::{RecordingWriter, WriterOptions};

    let ns = ns("keys");
    let d = dir("keys");
    let file = d.join("keys.mcap");
    // One message at t = 0 on another topic, then the played topic from t = 60 s: the player
    // waits, so the keys reach it before anything is due.
    let qos = QosInfo {
        depth: 16,
        overflow: Some(horus::Overflow::DropOldest),
        max_publishers: 2,
        max_subscribers: 4,
        inline_bytes: 16,
        chunk_bytes: 0,
        chunks_per_publisher: 0,
    };
    let desc = MessageDescription::of::<CmdVel>();
    let mut w = RecordingWriter::create(&file, WriterOptions::default()).unwrap();
    let start = w.add_channel("k/start", &desc, &qos).unwrap();
    let data = w.add_channel("k/data", &desc, &qos).unwrap();
    let t0 = 1_000_000_000_000u64;
    w.write(start, t0, bytemuck::bytes_of(&CmdVel::new(0, 0.0, 0.0)))
        .unwrap();
    for i in 0..10u64 {
        let m = CmdVel::new(i, 1.0, 0.0);
        w.write(
            data,
            t0 + 60_000_000_000 + i * 1_000_000,
            bytemuck::bytes_of(&m),
        )
        .unwrap();
    }
    w.finish().unwrap();

    let (mut master, mut slave) = (0, 0);
    // SAFETY: openpty writes two new descriptors into the locals; the other arguments may be
    // null (no name, default terminal settings and size).
    let rc = unsafe {
        libc::openpty(
            &mut master,
            &mut slave,
            std::ptr::null_mut(),
            std::ptr::null(),
            std::ptr::null(),
        )
    };
    assert_eq!(rc, 0, "openpty");
    // SAFETY: both descriptors were just opened by openpty and are owned by nobody else.
    let (master, slave) = unsafe { (OwnedFd::from_raw_fd(master), OwnedFd::from_raw_fd(slave)) };
    let mut keys = std::fs::File::from(master);
    let mut child = horus(&ns)
        .args(["play", "--topics", "k/data"])
        .arg(&file)
        .stdin(Stdio::from(slave))
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
    let expect = |what: &str| loop {
        let l = lines.recv_timeout(PATIENCE).expect("player went quiet");
        if l.contains(what) {
            break;
        }
    };
    expect("space pauses/resumes");
    keys.write_all(b" ").unwrap();
    expect("horus play: paused");
    keys.write_all(b"sss").unwrap();
    // Each step publishes one message (created from the file): wait until the third is out.
    let end = Instant::now() + PATIENCE;
    loop {
        let published = horus::inspect::TopicView::open(&ns, "k/data")
            .map(|v| v.snapshot().publishers.iter().map(|p| p.sent).sum::<u64>())
            .unwrap_or(0);
        if published == 3 {
            break;
        }
        assert!(
            published < 3 && Instant::now() < end,
            "{published} published"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    // SAFETY: kill(2) on our own child's pid.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success());
    let report = String::from_utf8_lossy(&out.stdout);
    let row = report.lines().find(|l| l.starts_with("k/data")).unwrap();
    assert_eq!(row.split_whitespace().nth(1), Some("3"), "{report}");
    assert!(leftover(&ns).is_empty(), "{:?}", leftover(&ns));
    std::fs::remove_dir_all(d).unwrap();
}

#[test]
fn record_refuses_to_overwrite_existing_file() {
    // `File::create` truncated whatever was there (and default names had a one-second
    // resolution, so two recorders started in the same second wrote one file).
    let ns = ns("overwrite");
    let d = dir("overwrite");
    let file = d.join("precious.mcap");
    std::fs::write(&file, b"an earlier recording").unwrap();
    let out = horus(&ns)
        .args(["record", "--duration", "0.1", "-o"])
        .arg(&file)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains("precious.mcap already exists") && err.contains("overwrite"),
        "{err}"
    );
    assert_eq!(std::fs::read(&file).unwrap(), b"an earlier recording");

    // Split files are refused the same way (`<stem>_0.mcap` exists).
    let split = d.join("split_0.mcap");
    std::fs::write(&split, b"part of an earlier recording").unwrap();
    let out = horus(&ns)
        .args(["record", "--duration", "0.1", "--max-size", "1M", "-o"])
        .arg(d.join("split.mcap"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("split_0.mcap already exists"));
    assert_eq!(
        std::fs::read(&split).unwrap(),
        b"part of an earlier recording"
    );

    // --overwrite replaces it with a recording.
    let out = horus(&ns)
        .args(["record", "--duration", "0.1", "--overwrite", "-o"])
        .arg(&file)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(RecordingReader::open(&file).is_ok());

    // Default names: two recorders started together get two files.
    let a = horus(&ns)
        .current_dir(&d)
        .args(["record", "--duration", "0.1"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let b = horus(&ns)
        .current_dir(&d)
        .args(["record", "--duration", "0.1"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    assert!(a.wait_with_output().unwrap().status.success());
    assert!(b.wait_with_output().unwrap().status.success());
    let named: Vec<String> = std::fs::read_dir(&d)
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|n| n.starts_with("horus-") && n.ends_with(".mcap"))
        .collect();
    assert_eq!(named.len(), 2, "{named:?}");
    assert!(leftover(&ns).is_empty());
    std::fs::remove_dir_all(d).unwrap();
}
