//! `horus log` against real processes: a SIGKILLed process's last records are shown with
//! its state and dropped count; level, node and regex filters; JSON Lines; `--follow` on a
//! live process; a hostile segment is reported and skipped; `--clean` removes dead ones.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use serde_json::Value;

fn unique_ns(tag: &str) -> String {
    format!("test-cli-log-{tag}-{}", std::process::id())
}

/// The logging process (this test binary, re-run with `HORUS_LOG_FIXTURE`).
#[test]
fn fixture() {
    let Ok(mode) = std::env::var("HORUS_LOG_FIXTURE") else {
        return;
    };
    let _guard = horus_log::Builder::new()
        .level(horus_log::Level::Debug)
        .console(horus_log::Console::Off)
        .name("logfix")
        .init()
        .unwrap();
    for i in 0..3u32 {
        horus_log::info!("tick {}", i; speed = 0.5f64, mode = "auto");
    }
    horus_log::warn!(target: "nav/planner", "obstacle at {:.1} m", 1.25f64);
    horus_log::debug!("debug detail {}", true);
    horus_log::error!("motor fault"; code = 17u16);
    println!("ready");
    for i in 0u64.. {
        if mode == "live" {
            horus_log::info!("beat {}", i);
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

struct Kid(Child);

impl Drop for Kid {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn spawn_fixture(mode: &str, ns: &str) -> Kid {
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "fixture", "--nocapture", "--test-threads=1"])
        .env("HORUS_LOG_FIXTURE", mode)
        .env("HORUS_NAMESPACE", ns)
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    assert!(
        lines.any(|l| l.is_ok_and(|l| l.ends_with("ready"))),
        "fixture never became ready"
    );
    Kid(child)
}

fn horus(ns: &str, args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_horus"))
        .args(args)
        .env("HORUS_NAMESPACE", ns)
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn json_lines(ns: &str, args: &[&str]) -> Vec<Value> {
    let mut all = vec!["--json", "log"];
    all.extend_from_slice(args);
    let (code, out, err) = horus(ns, &all);
    assert_eq!(code, 0, "{out}\n{err}");
    out.lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect()
}

fn messages(docs: &[Value]) -> Vec<String> {
    docs.iter()
        .filter_map(|d| d["message"].as_str().map(str::to_owned))
        .collect()
}

fn clean(ns: &str) {
    let (code, out, _) = horus(ns, &["log", "--clean"]);
    assert_eq!(code, 0, "{out}");
    let prefix = format!("horus.{ns}.");
    let left: Vec<_> = std::fs::read_dir("/dev/shm")
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|n| n.starts_with(&prefix))
        .collect();
    assert!(left.is_empty(), "{left:?}");
}

#[test]
fn killed_process_is_shown_with_its_last_records_and_filters_apply() {
    let ns = unique_ns("killed");
    let mut kid = spawn_fixture("quiet", &ns);
    let pid = kid.0.id();
    kid.0.kill().unwrap();
    kid.0.wait().unwrap();

    let (code, out, err) = horus(&ns, &["log"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains(&format!("INFO  logfix[{pid}]")), "{out}");
    assert!(out.contains("tick 2 speed=0.5 mode=auto"), "{out}");
    assert!(out.contains("nav/planner: obstacle at 1.2 m"), "{out}");
    assert!(out.contains("ERROR logfix"), "{out}");
    assert!(out.contains("dead (last records kept): 0 dropped"), "{out}");

    let all = json_lines(&ns, &[]);
    assert_eq!(
        messages(&all),
        [
            "tick 0",
            "tick 1",
            "tick 2",
            "obstacle at 1.2 m",
            "debug detail true",
            "motor fault"
        ]
    );
    let first = &all[0];
    assert_eq!(first["level"], "INFO");
    assert_eq!(first["pid"], pid);
    assert_eq!(first["process"], "logfix");
    assert_eq!(first["fields"]["speed"], 0.5);
    assert_eq!(first["fields"]["mode"], "auto");
    assert!(first["file"].as_str().unwrap().ends_with("log.rs"));
    let status = all.iter().find_map(|d| d.get("status")).unwrap();
    assert_eq!(status["state"], "dead (last records kept)");
    assert_eq!(status["dropped"], 0);
    assert_eq!(status["malformed"], 0);

    assert_eq!(
        messages(&json_lines(&ns, &["--level", "warn"])),
        ["obstacle at 1.2 m", "motor fault"]
    );
    assert_eq!(
        messages(&json_lines(&ns, &["--node", "nav"])),
        ["obstacle at 1.2 m"]
    );
    assert_eq!(
        messages(&json_lines(&ns, &["--grep", "tick [12]|code=17"])),
        ["tick 1", "tick 2", "motor fault"]
    );
    assert_eq!(
        messages(&json_lines(&ns, &["--tail", "2"])),
        ["debug detail true", "motor fault"]
    );
    assert_eq!(
        messages(&json_lines(
            &ns,
            &["--pid", &pid.to_string(), "--level", "error"]
        )),
        ["motor fault"]
    );
    let (code, _, err) = horus(&ns, &["log", "--grep", "("]);
    assert_ne!(code, 0, "a bad regex is an error");
    assert!(err.contains("regex"), "{err}");
    // `horus doctor` reports the dead process's segment as stale ...
    let (_, out, _) = horus(&ns, &["--json", "doctor"]);
    let doc: Value = serde_json::from_str(out.trim()).unwrap();
    let files = doc["files"].as_array().unwrap();
    assert_eq!(files.len(), 1, "{doc}");
    assert_eq!(
        (&files[0]["kind"], &files[0]["state"]),
        (&"log".into(), &"stale".into())
    );
    // ... and `horus clean` removes it.
    let (code, out, err) = horus(&ns, &["--json", "clean"]);
    assert_eq!(code, 0, "{err}");
    let doc: Value = serde_json::from_str(out.trim()).unwrap();
    assert_eq!(doc["logs"].as_array().map(Vec::len), Some(1), "{doc}");
    assert_eq!(doc["removed"], 1, "{doc}");
    clean(&ns);
}

#[test]
fn follow_prints_new_records_until_ctrl_c() {
    let ns = unique_ns("follow");
    let _kid = spawn_fixture("live", &ns);
    let mut follow = Kid(Command::new(env!("CARGO_BIN_EXE_horus"))
        .args(["--json", "log", "--follow", "--grep", "beat"])
        .env("HORUS_NAMESPACE", &ns)
        .stdout(Stdio::piped())
        .spawn()
        .unwrap());
    let mut lines = BufReader::new(follow.0.stdout.take().unwrap()).lines();
    let mut beats = Vec::new();
    while beats.len() < 20 {
        let line = lines.next().expect("follow ended early").unwrap();
        let doc: Value = serde_json::from_str(&line).unwrap();
        if let Some(m) = doc["message"].as_str() {
            beats.push(m.to_owned());
        }
    }
    // Consecutive, none lost or repeated.
    let first: u64 = beats[0].strip_prefix("beat ").unwrap().parse().unwrap();
    for (i, b) in beats.iter().enumerate() {
        assert_eq!(*b, format!("beat {}", first + i as u64));
    }
    // SAFETY: kill sends SIGINT to our own child; no memory is involved.
    unsafe { libc::kill(follow.0.id() as libc::pid_t, libc::SIGINT) };
    let status = follow.0.wait().unwrap();
    assert!(status.success(), "{status}");
    drop(_kid);
    clean(&ns);
}

#[test]
fn hostile_segment_is_reported_and_skipped() {
    let ns = unique_ns("hostile");
    let _kid = spawn_fixture("quiet", &ns);
    let bad = format!("/dev/shm/horus.{ns}.log.1");
    std::fs::write(&bad, vec![0x5au8; 8192]).unwrap();
    // 0600: a file of this user's own (a file others may write is refused unread).
    std::fs::set_permissions(&bad, std::os::unix::fs::PermissionsExt::from_mode(0o600)).unwrap();
    let (code, out, err) = horus(&ns, &["log"]);
    assert_eq!(code, 0, "{err}");
    assert!(
        err.contains("skipped") && err.contains("not a valid log segment"),
        "{err}"
    );
    assert!(out.contains("motor fault"), "{out}");
    assert!(out.contains("running: 0 dropped"), "{out}");
    let docs = json_lines(&ns, &[]);
    assert!(docs.iter().any(|d| d.get("skipped").is_some()), "{docs:?}");
    drop(_kid);
    // --clean removes the dead process's segment and the unreadable file (no pid 1 of
    // ours writes it: pid 1 is alive, so it is kept: remove it by hand).
    std::fs::remove_file(&bad).unwrap();
    clean(&ns);
}
