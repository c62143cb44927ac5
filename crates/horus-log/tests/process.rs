//! horus-log across processes: a child logs and is SIGKILLed, its last records stay
//! readable; a full ring drops and counts; corrupt and hostile segments are refused or
//! skipped, never a crash. The child is this test binary, re-run with
//! `HORUS_LOG_FIXTURE=<mode>` on its `fixture` test.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};

use horus_log::{Console, Level, LogSegment, Val};

fn unique_ns(tag: &str) -> String {
    format!("logtest-{tag}-{}", std::process::id())
}

/// The child's body; does nothing in a normal test run.
#[test]
fn fixture() {
    let Ok(mode) = std::env::var("HORUS_LOG_FIXTURE") else {
        return;
    };
    let ns = std::env::var("HORUS_NAMESPACE").unwrap();
    match mode.as_str() {
        "basic" => {
            let guard = horus_log::Builder::new()
                .namespace(&ns)
                .level(Level::Debug)
                .console(Console::Off)
                .name("fixture")
                .init()
                .unwrap();
            for i in 0..5u32 {
                horus_log::info!("tick {} of {}", i, 5u8; phase = "run", ratio = 0.5f64);
            }
            horus_log::debug!(target: "nav/planner", "plan {:?} ok={}", "a b", true);
            horus_log::trace!("not kept (below debug)");
            horus_log::warn!(
                "pose {}",
                horus_log::display(&std::net::Ipv4Addr::LOCALHOST)
            );
            horus_log::error!("last words"; code = -3i32);
            println!("ready");
            std::mem::forget(guard);
            loop {
                std::thread::sleep(std::time::Duration::from_secs(1));
            }
        }
        "full" => {
            // The console blocks on the first record: nothing is consumed, the ring fills.
            let _guard = horus_log::Builder::new()
                .namespace(&ns)
                .ring_bytes(4096)
                .console(Console::Func(Box::new(|_| loop {
                    std::thread::sleep(std::time::Duration::from_secs(1));
                })))
                .init()
                .unwrap();
            for i in 0..1000u32 {
                horus_log::info!("record {}", i);
            }
            println!("dropped {}", horus_log::dropped());
            loop {
                std::thread::sleep(std::time::Duration::from_secs(1));
            }
        }
        other => panic!("unknown fixture mode {other}"),
    }
}

struct Kid(Child);

impl Kid {
    fn spawn(mode: &str, ns: &str) -> (Kid, String) {
        let mut child = Command::new(std::env::current_exe().unwrap())
            .args(["--exact", "fixture", "--nocapture", "--test-threads=1"])
            .env("HORUS_LOG_FIXTURE", mode)
            .env("HORUS_NAMESPACE", ns)
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
        let line = lines
            .find_map(|l| {
                let l = l.ok()?;
                // The harness prints `test fixture ... ` before the child's first line.
                let at = l.find("ready").or_else(|| l.find("dropped "))?;
                Some(l[at..].to_owned())
            })
            .expect("fixture never became ready");
        (Kid(child), line)
    }

    fn kill9(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

impl Drop for Kid {
    fn drop(&mut self) {
        self.kill9();
    }
}

fn only_segment(ns: &str) -> LogSegment {
    let segs = horus_log::segments(ns).unwrap();
    assert_eq!(segs.len(), 1, "{segs:?}");
    LogSegment::open(&segs[0].name).unwrap()
}

fn clean(ns: &str) {
    horus_log::remove_dead(ns).unwrap();
    assert!(horus_log::segments(ns).unwrap().is_empty());
}

#[test]
fn killed_process_last_records_stay_readable() {
    let ns = unique_ns("killed");
    let (mut kid, _) = Kid::spawn("basic", &ns);
    let pid = kid.0.id();
    kid.kill9();
    let mut seg = only_segment(&ns);
    assert_eq!(seg.pid(), pid);
    assert_eq!(seg.process(), "fixture");
    assert!(!seg.is_alive());
    assert!(!seg.exited_cleanly());
    let batch = seg.read_from(0, false);
    assert_eq!(batch.malformed, 0);
    let msgs: Vec<_> = batch.records.iter().map(|r| r.message.as_str()).collect();
    assert_eq!(
        msgs,
        [
            "tick 0 of 5",
            "tick 1 of 5",
            "tick 2 of 5",
            "tick 3 of 5",
            "tick 4 of 5",
            "plan \"a b\" ok=true",
            "pose 127.0.0.1",
            "last words"
        ]
    );
    let r = &batch.records[0];
    assert_eq!(r.level, Level::Info);
    assert_eq!(r.pid, pid);
    assert!(r.file.ends_with("process.rs"), "{}", r.file);
    assert_eq!(
        r.fields,
        [
            ("phase".to_owned(), Val::Str("run".into())),
            ("ratio".to_owned(), Val::F64(0.5))
        ]
    );
    assert_eq!(batch.records[5].target, "nav/planner");
    assert_eq!(batch.records[5].level, Level::Debug);
    let last = batch.records.last().unwrap();
    assert_eq!(last.level, Level::Error);
    assert_eq!(last.fields, [("code".to_owned(), Val::I64(-3))]);
    // Times are wall clock, in order, and recent.
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos() as u64;
    assert!(batch
        .records
        .windows(2)
        .all(|w| w[0].unix_ns <= w[1].unix_ns));
    assert!(last.unix_ns <= now + 1_000_000_000 && last.unix_ns + 600_000_000_000 > now);
    // Reading again from where we stopped finds nothing new.
    assert!(seg.read_from(batch.next, true).records.is_empty());
    drop(seg);
    clean(&ns);
}

#[test]
fn full_ring_drops_and_counts() {
    let ns = unique_ns("full");
    let (mut kid, line) = Kid::spawn("full", &ns);
    let dropped: u64 = line.strip_prefix("dropped ").unwrap().parse().unwrap();
    assert!(dropped > 0, "{line}");
    let mut seg = only_segment(&ns);
    assert_eq!(seg.counters().dropped, dropped);
    let batch = seg.read_from(0, false);
    // Everything not dropped is in the ring, in order, from record 0.
    assert_eq!(batch.records.len() as u64 + dropped, 1000);
    for (i, r) in batch.records.iter().enumerate() {
        assert_eq!(r.message, format!("record {i}"));
    }
    kid.kill9();
    drop(seg);
    clean(&ns);
}

/// Writes `bytes` at `offset` of the segment file `name`.
fn scribble(name: &str, offset: u64, bytes: &[u8]) {
    use std::os::unix::fs::FileExt;
    let f = std::fs::OpenOptions::new()
        .write(true)
        .open(format!("/dev/shm{name}"))
        .unwrap();
    f.write_all_at(bytes, offset).unwrap();
}

#[test]
fn corrupt_records_are_skipped_and_counted() {
    let ns = unique_ns("corrupt");
    let (mut kid, _) = Kid::spawn("basic", &ns);
    kid.kill9();
    let name = horus_log::segments(&ns).unwrap()[0].name.clone();
    // The header says: ring at 4096, 1 MiB of 32-byte cells, stamps after it.
    let cells = (1u64 << 20) / 32;
    let stamps = 4096 + (1u64 << 20);
    // Every stamp claims a record starts in its cell; the records say garbage.
    let mut s = Vec::new();
    for i in 0..64u64 {
        s.extend_from_slice(&(i + 1).to_ne_bytes());
    }
    scribble(&name, stamps, &s);
    let mut garbage = vec![0u8; 64 * 32];
    for (i, b) in garbage.iter_mut().enumerate() {
        *b = (i as u8).wrapping_mul(151).wrapping_add(7);
    }
    scribble(&name, 4096, &garbage);
    // Lengths that point past the ring, and a huge value count.
    scribble(&name, 4096 + 4, &u32::MAX.to_ne_bytes());
    scribble(&name, 4096 + 32 + 4, &24u32.to_ne_bytes());
    scribble(&name, 4096 + 32 + 20, &u16::MAX.to_ne_bytes());
    let mut seg = LogSegment::open(&name).unwrap();
    let batch = seg.read_from(0, false);
    assert!(batch.malformed > 0, "{batch:?}");
    assert!(batch.next <= cells);
    // The head is hostile too: far ahead, the reader still stops within one ring.
    scribble(&name, 192, &(u64::MAX / 2).to_ne_bytes());
    let batch = seg.read_from(0, false);
    assert!(batch.next <= u64::MAX / 2);
    drop(seg);
    clean(&ns);
}

#[test]
fn invalid_segments_are_refused() {
    let ns = unique_ns("hostile");
    let name = format!("/horus.{ns}.log.1");
    let path = format!("/dev/shm{name}");
    // Each file is this user's own and 0600 (a file others may write is refused unread).
    let write = |bytes: &[u8]| {
        std::fs::write(&path, bytes).unwrap();
        std::fs::set_permissions(&path, std::os::unix::fs::PermissionsExt::from_mode(0o600))
            .unwrap();
    };
    // Too short for a header.
    write(b"short");
    assert!(LogSegment::open(&name).is_err());
    // A header-sized file of garbage.
    write(&vec![0xa5u8; 8192]);
    assert!(LogSegment::open(&name).is_err());
    // A valid magic with an absurd geometry.
    let mut h = vec![0u8; 8192];
    h[..8].copy_from_slice(b"HORUSLOG");
    h[8..12].copy_from_slice(&1u32.to_ne_bytes());
    h[12..16].copy_from_slice(&4096u32.to_ne_bytes());
    h[32..40].copy_from_slice(&(1u64 << 40).to_ne_bytes());
    write(&h);
    let err = LogSegment::open(&name).unwrap_err().to_string();
    assert!(err.contains("not a valid log segment"), "{err}");
    std::fs::remove_file(&path).unwrap();
}
