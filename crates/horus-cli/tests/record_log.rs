//! `horus record` records the namespace's log records: a child process logs through
//! horus-log while the recorder runs; the file has a `/log` channel (`foxglove.Log`, JSON)
//! with each record's level, text, fields, name, file and line; `bag info` lists it, `bag
//! repair` copies it, `play` skips it, `--no-logs` leaves it out.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use horus_record::RecordingReader;
use serde_json::Value;

const PATIENCE: Duration = Duration::from_secs(60);
/// Records the burst fixture writes.
const BURST: u64 = 20_000;

/// The logging process (this test binary, re-run with `HORUS_RECORD_LOG_FIXTURE`): logs,
/// says "ready", and exits in order (removing its segment) when its stdin closes.
#[test]
fn fixture() {
    let Ok(mode) = std::env::var("HORUS_RECORD_LOG_FIXTURE") else {
        return;
    };
    if mode == "burst" {
        // A small ring and a burst: the process drops some, the recorder may miss some.
        let guard = horus_log::Builder::new()
            .ring_bytes(4096)
            .console(horus_log::Console::Off)
            .name("burst")
            .init()
            .unwrap();
        for i in 0..BURST {
            horus_log::info!("burst {}", i; pad = "some text to fill the ring");
        }
        println!("dropped {}", horus_log::dropped());
        println!("ready");
        let mut line = String::new();
        let _ = std::io::stdin().read_line(&mut line);
        drop(guard);
        return;
    }
    let guard = horus_log::Builder::new()
        .level(horus_log::Level::Trace)
        .console(horus_log::Console::Off)
        .name("recfix")
        .init()
        .unwrap();
    horus_log::trace!("trace detail {}", 1u8);
    horus_log::debug!("debug detail {}", true);
    horus_log::info!("goal {} reached", 7u32; speed = 0.5f64, mode = "auto");
    horus_log::warn!(target: "nav/planner", "obstacle at {:.1} m", 1.25f64);
    horus_log::error!("motor fault"; code = 17u16);
    println!("ready");
    let mut line = String::new();
    let _ = std::io::stdin().read_line(&mut line);
    drop(guard);
}

/// A child killed (and its segment left) only if the test fails before closing its stdin.
struct Kid(Child);

impl Drop for Kid {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Spawns the fixture in `mode`; returns it and the lines it printed before "ready".
fn spawn_fixture(ns: &str, mode: &str) -> (Kid, Vec<String>) {
    let mut kid = Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "fixture", "--nocapture", "--test-threads=1"])
        .env("HORUS_RECORD_LOG_FIXTURE", mode)
        .env("HORUS_NAMESPACE", ns)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .map(Kid)
        .unwrap();
    let mut before = Vec::new();
    for l in BufReader::new(kid.0.stdout.take().unwrap()).lines() {
        let l = l.unwrap();
        if l.ends_with("ready") {
            return (kid, before);
        }
        before.push(l);
    }
    panic!("fixture never became ready: {before:?}");
}

fn horus(ns: &str) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_horus"));
    c.env("HORUS_NAMESPACE", ns);
    c
}

/// A running `horus record`, stopped with SIGINT.
struct Recorder(Child);

impl Recorder {
    /// Starts recording; with `expect_log`, waits until it follows the log rings.
    fn start(ns: &str, out: &Path, args: &[&str], expect_log: bool) -> Recorder {
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
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            for l in BufReader::new(stderr).lines().map_while(Result::ok) {
                let _ = tx.send(l);
            }
        });
        if expect_log {
            loop {
                let l = rx.recv_timeout(PATIENCE).expect("recorder never started");
                if l == "horus record: recording /log (foxglove.Log)" {
                    break;
                }
            }
        }
        Recorder(child)
    }

    /// SIGINT, then the JSON report.
    fn stop(self) -> Value {
        // SAFETY: kill(2) on our own child's pid with a valid signal number.
        unsafe { libc::kill(self.0.id() as i32, libc::SIGINT) };
        let out = self.0.wait_with_output().unwrap();
        assert!(out.status.success(), "recorder failed: {:?}", out.status);
        let stdout = String::from_utf8_lossy(&out.stdout);
        serde_json::from_str(stdout.trim()).unwrap_or_else(|e| panic!("{e}: {stdout}"))
    }
}

/// Every `/log` message of the file, JSON-decoded, with its log time.
fn log_messages(path: &Path) -> Vec<(u64, Value)> {
    let mut r = RecordingReader::open(path).unwrap();
    let mut out = Vec::new();
    while let Some(m) = r.next_message().unwrap() {
        let ch = r.channel(m.channel).unwrap();
        if ch.topic == "/log" {
            assert_eq!(ch.schema_name, "foxglove.Log");
            out.push((m.log_time, serde_json::from_slice(&m.cdr).unwrap()));
        }
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
fn log_records_of_a_new_process_are_recorded_as_foxglove_log() {
    let ns = format!("cli-reclog-{}", std::process::id());
    let d = std::env::temp_dir().join(format!("horus-cli-reclog-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    let with = d.join("with.mcap");
    let without = d.join("without.mcap");
    let rec = Recorder::start(&ns, &with, &["--json"], true);
    let quiet = Recorder::start(&ns, &without, &["--json", "--no-logs"], false);
    let (mut kid, _) = spawn_fixture(&ns, "calm");
    let pid = kid.0.id();
    let report = rec.stop();
    quiet.stop();
    // Let the child exit in order: its segment goes with it (its exit status is libtest's,
    // whose report goes to a closed pipe).
    drop(kid.0.stdin.take());
    let _ = kid.0.wait();

    let log = report["topics"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["topic"] == "/log")
        .unwrap_or_else(|| panic!("{report}"));
    assert_eq!(log["type"], "foxglove.Log");
    assert_eq!(log["messages"], 5, "{report}");
    assert_eq!(log["missed"], 0, "{report}");

    let msgs = log_messages(&with);
    let texts: Vec<&str> = msgs
        .iter()
        .map(|(_, v)| v["message"].as_str().unwrap())
        .collect();
    assert_eq!(
        texts,
        [
            "trace detail 1",
            "debug detail true",
            "goal 7 reached speed=0.5 mode=auto",
            "obstacle at 1.2 m",
            "motor fault code=17",
        ]
    );
    let levels: Vec<u64> = msgs
        .iter()
        .map(|(_, v)| v["level"].as_u64().unwrap())
        .collect();
    assert_eq!(levels, [1, 1, 2, 3, 4]);
    for (t, v) in &msgs {
        // Log time is the record's own time, as the message's timestamp says.
        let sec = v["timestamp"]["sec"].as_u64().unwrap();
        let nsec = v["timestamp"]["nsec"].as_u64().unwrap();
        assert!(nsec < 1_000_000_000);
        assert_eq!(*t, sec * 1_000_000_000 + nsec);
        assert!(
            v["file"].as_str().unwrap().ends_with("record_log.rs"),
            "{v}"
        );
        assert!(v["line"].as_u64().unwrap() > 0);
        assert!(
            v["name"]
                .as_str()
                .unwrap()
                .ends_with(&format!("(recfix[{pid}])")),
            "{v}"
        );
    }
    assert!(msgs[3].1["name"]
        .as_str()
        .unwrap()
        .starts_with("nav/planner "));
    assert!(log_messages(&without).is_empty());

    // bag info lists the channel with its encodings.
    let out = horus(&ns)
        .args(["--json", "bag", "info"])
        .arg(&with)
        .output()
        .unwrap();
    assert!(out.status.success());
    let info: Value = serde_json::from_slice(&out.stdout).unwrap();
    let ch = info["channels"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["topic"] == "/log")
        .unwrap_or_else(|| panic!("{info}"));
    assert_eq!(ch["schema"], "foxglove.Log");
    assert_eq!(ch["schema_encoding"], "jsonschema");
    assert_eq!(ch["message_encoding"], "json");
    assert_eq!(ch["messages"], 5);

    // bag repair copies the log channel as it is.
    let repaired = d.join("repaired.mcap");
    let out = horus(&ns)
        .args(["--json", "bag", "repair"])
        .arg(&with)
        .arg("-o")
        .arg(&repaired)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(log_messages(&repaired), msgs);

    // play skips the log channel: nothing published, no failure.
    let out = horus(&ns)
        .args(["--json", "play", "--no-keys"])
        .arg(&with)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let played: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(
        played["topics"].as_array().is_none_or(|t| t.is_empty()),
        "{played}"
    );

    assert!(leftover(&ns).is_empty(), "{:?}", leftover(&ns));
    std::fs::remove_dir_all(d).unwrap();
}

#[test]
fn every_record_of_a_burst_is_recorded_or_counted_as_missed() {
    let ns = format!("cli-reclog-burst-{}", std::process::id());
    let d = std::env::temp_dir().join(format!("horus-cli-reclog-burst-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    let file = d.join("burst.mcap");
    let rec = Recorder::start(&ns, &file, &["--json"], true);
    let (mut kid, printed) = spawn_fixture(&ns, "burst");
    let report = rec.stop();
    drop(kid.0.stdin.take());
    let _ = kid.0.wait();
    let dropped: u64 = printed
        .iter()
        .find_map(|l| l.split("dropped ").nth(1)?.trim().parse().ok())
        .unwrap_or_else(|| panic!("{printed:?}"));
    let log = report["topics"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["topic"] == "/log")
        .unwrap_or_else(|| panic!("{report}"));
    let recorded = log["messages"].as_u64().unwrap();
    let missed = log["missed"].as_u64().unwrap();
    eprintln!("burst: {recorded} recorded, {missed} missed, {dropped} dropped by the process");
    assert_eq!(recorded, log_messages(&file).len() as u64);
    // Records the process dropped are all counted; whatever was overwritten before the
    // recorder read it is counted in cells (at least one per record).
    assert!(missed >= dropped, "{report} dropped {dropped}");
    assert!(recorded + dropped <= BURST, "{report} dropped {dropped}");
    assert!(recorded + missed >= BURST, "{report} dropped {dropped}");
    // The file's losses record says the same.
    let out = horus(&ns)
        .args(["--json", "bag", "info"])
        .arg(&file)
        .output()
        .unwrap();
    let info: Value = serde_json::from_slice(&out.stdout).unwrap();
    let ch = info["channels"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["topic"] == "/log")
        .unwrap_or_else(|| panic!("{info}"));
    assert_eq!(ch["missed"], missed);
    assert!(leftover(&ns).is_empty(), "{:?}", leftover(&ns));
    std::fs::remove_dir_all(d).unwrap();
}
