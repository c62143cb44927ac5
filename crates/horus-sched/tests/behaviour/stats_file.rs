//! The statistics file: readable while running, typed errors on garbage,
//! stale files replaced, live ones respected, removed on a clean stop.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use horus_sched::prelude::*;
use horus_sched::{read_stats, ExecClass, ReadStatsError, RunError, StatsFileError};

use crate::common::scheduler;

fn wait_for(path: &Path) {
    let t0 = Instant::now();
    while !path.exists() {
        assert!(
            t0.elapsed() < Duration::from_secs(10),
            "{} never appeared",
            path.display()
        );
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// Runs a two-node scheduler in the background while `f` looks at its file.
fn with_running<R>(test: &str, f: impl FnOnce(&Path) -> R) -> (R, PathBuf) {
    let (s, _) = scheduler(test);
    let mut s = s.stats_interval(Duration::from_millis(10));
    s.add(node_fn("imu", |_| Ok(())), NodeConfig::new().rate(200.hz()))
        .unwrap();
    s.add(
        node_fn("planner", |_| Ok(())),
        NodeConfig::new().rate(20.hz()).compute(),
    )
    .unwrap();
    let path = s.stats_path();
    let stop = s.stop_handle();
    let runner = std::thread::spawn(move || s.run_for(Duration::from_secs(30)).unwrap());
    wait_for(&path);
    let r = f(&path);
    stop.request_stop();
    assert_eq!(runner.join().unwrap(), StopReason::Requested);
    (r, path)
}

#[test]
fn the_file_is_readable_while_running_and_removed_after() {
    let ((), path) = with_running("file_live", |path| {
        let mode = std::fs::metadata(path).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
        let t0 = Instant::now();
        let stats = loop {
            let s = read_stats(path).unwrap();
            if s.nodes.iter().all(|n| n.ticks > 0) {
                break s;
            }
            assert!(t0.elapsed() < Duration::from_secs(10));
            std::thread::sleep(Duration::from_millis(10));
        };
        assert_eq!(stats.scheduler, "file_live");
        assert_eq!(stats.pid, std::process::id());
        assert_eq!(stats.nodes.len(), 2);
        assert_eq!(stats.nodes[0].name, "imu");
        assert_eq!(stats.nodes[0].target_hz, Some(200.0));
        assert_eq!(stats.nodes[1].class, ExecClass::Compute);
        assert!(stats.nodes[0].exec.samples > 0);
    });
    assert!(!path.exists(), "removed on a clean stop");
}

/// A consistent copy of a live file, in a scratch path.
fn valid_copy(test: &str) -> (Vec<u8>, PathBuf) {
    let (bytes, _) = with_running(test, |p| std::fs::read(p).unwrap());
    let mut bytes = bytes;
    // Quiesce the seqlocks (the copy may have caught a write in progress).
    bytes[104..112].copy_from_slice(&2_u64.to_le_bytes());
    bytes[256..264].copy_from_slice(&2_u64.to_le_bytes());
    let scratch = PathBuf::from(format!(
        "/dev/shm/horus.{}.scratch",
        crate::common::namespace(test)
    ));
    (bytes, scratch)
}

fn read_mutated(
    bytes: &[u8],
    path: &Path,
    f: impl FnOnce(&mut Vec<u8>),
) -> Result<(), ReadStatsError> {
    let mut b = bytes.to_vec();
    f(&mut b);
    std::fs::write(path, &b).unwrap();
    let r = read_stats(path).map(|_| ());
    std::fs::remove_file(path).unwrap();
    r
}

#[test]
fn garbage_files_are_typed_errors() {
    let (ok, p) = valid_copy("file_garbage");
    let put32 =
        |b: &mut Vec<u8>, off: usize, v: u32| b[off..off + 4].copy_from_slice(&v.to_le_bytes());
    let put64 =
        |b: &mut Vec<u8>, off: usize, v: u64| b[off..off + 8].copy_from_slice(&v.to_le_bytes());
    assert!(read_mutated(&ok, &p, |_| {}).is_ok());
    assert!(matches!(
        read_mutated(&ok, &p, |b| b[0] ^= 0xff),
        Err(ReadStatsError::BadMagic { .. })
    ));
    assert!(matches!(
        read_mutated(&ok, &p, |b| put32(b, 8, 99)),
        Err(ReadStatsError::UnsupportedVersion { found: 99, .. })
    ));
    assert!(matches!(
        read_mutated(&ok, &p, |b| put32(b, 16, 1000)),
        Err(ReadStatsError::BadHeader {
            what: "record_size",
            ..
        })
    ));
    assert!(matches!(
        read_mutated(&ok, &p, |b| put32(b, 20, u32::MAX)),
        Err(ReadStatsError::BadHeader {
            what: "capacity",
            ..
        })
    ));
    assert!(matches!(
        read_mutated(&ok, &p, |b| put32(b, 20, 40)),
        Err(ReadStatsError::TooSmall { .. })
    ));
    assert!(matches!(
        read_mutated(&ok, &p, |b| put32(b, 28, 3)),
        Err(ReadStatsError::BadHeader { what: "count", .. })
    ));
    assert!(matches!(
        read_mutated(&ok, &p, |b| put64(b, 104, 7)),
        Err(ReadStatsError::Torn { record: None })
    ));
    assert!(matches!(
        read_mutated(&ok, &p, |b| put64(b, 256, 9)),
        Err(ReadStatsError::Torn { record: Some(0) })
    ));
    assert!(matches!(
        read_mutated(&ok, &p, |b| put64(b, 264 + 9 * 8, 77)),
        Err(ReadStatsError::BadRecord {
            record: 0,
            field: "state"
        })
    ));
    assert!(matches!(
        read_mutated(&ok, &p, |b| b.truncate(100)),
        Err(ReadStatsError::TooSmall { size: 100, .. })
    ));
    assert!(matches!(read_stats(&p), Err(ReadStatsError::Io { .. })));
}

#[test]
fn a_stale_file_is_replaced_and_a_live_one_respected() {
    let (ok, _) = valid_copy("file_stale");
    // Same name as the scheduler below, written by "this process": in use.
    let (s, _) = scheduler("file_stale2");
    let mut s = s;
    s.add(node_fn("n", |_| Ok(())), NodeConfig::new()).unwrap();
    let path = s.stats_path();
    std::fs::write(&path, &ok).unwrap();
    match s.run_for(Duration::from_millis(50)) {
        Err(RunError::StatsFile(StatsFileError::InUse { pid, .. })) => {
            assert_eq!(pid, std::process::id())
        }
        other => panic!("{other:?}"),
    }
    assert!(path.exists(), "a live owner's file is left alone");
    // Now the owner is a process that has exited: the file is stale.
    let mut child = std::process::Command::new("true").spawn().unwrap();
    let dead = child.id();
    child.wait().unwrap();
    let mut stale = ok.clone();
    stale[24..28].copy_from_slice(&dead.to_le_bytes());
    // The owner word (horus-shm's pid + start time token) names it too.
    stale[32..40].copy_from_slice(&((u64::from(dead) << 32) | 1).to_le_bytes());
    std::fs::write(&path, &stale).unwrap();
    let (s, _) = scheduler("file_stale2");
    let mut s = s;
    s.add(node_fn("n", |_| Ok(())), NodeConfig::new()).unwrap();
    assert_eq!(
        s.run_for(Duration::from_millis(50)).unwrap(),
        StopReason::Elapsed
    );
    assert!(!path.exists());
}

/// Regression: another process truncating the live statistics file used to
/// kill the scheduler (and a reader) with SIGBUS at the next write.
#[test]
fn truncating_the_live_file_kills_neither_scheduler_nor_reader() {
    let (r, path) = with_running("file_truncated", |path| {
        std::fs::OpenOptions::new()
            .write(true)
            .open(path)
            .unwrap()
            .set_len(0)
            .unwrap();
        // Let the scheduler publish into the cut file a few times (every
        // 10 ms); each write lands on a private zero page.
        std::thread::sleep(Duration::from_millis(100));
        read_stats(path).map(|_| ())
    });
    assert!(matches!(r, Err(ReadStatsError::TooSmall { size: 0, .. })));
    assert!(!path.exists(), "removed on a clean stop");
}
