//! Real processes: a writer process streams transforms while this process
//! reads; the writer is killed with SIGKILL mid-stream (several times), a new
//! writer takes the lease over and goes on, and the readers never see a torn
//! sample. Every sample satisfies `y = 2x, z = 3x, yaw = x / 1000`; a sample
//! mixed from two writes would not, and interpolation between two whole
//! samples keeps all three relations exactly.

mod common;

use std::process::{Child, Command};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use common::*;
use horus_tf::{TfBuffer, Transform, LATEST};

const CHILD_ENV: &str = "HORUS_TF_TEST_WRITER_NS";
const CHILD_FRAME_ENV: &str = "HORUS_TF_TEST_WRITER_FRAME";
const MS: i64 = 1_000_000;
const BASE: i64 = 1_000 * S;

fn sample(k: i64) -> Transform {
    let x = k as f64;
    tf([x, 2.0 * x, 3.0 * x], yaw(x / 1000.0))
}

/// Checks the relations; returns x.
fn check(t: &Transform) -> f64 {
    let x = t.translation[0];
    assert!(
        (t.translation[1] - 2.0 * x).abs() < 1e-6 && (t.translation[2] - 3.0 * x).abs() < 1e-6,
        "torn translation {t:?}"
    );
    let q = yaw(x / 1000.0);
    let d: f64 = t.rotation.iter().zip(&q).map(|(a, b)| a * b).sum();
    assert!(
        (d.abs() - 1.0).abs() < 1e-9,
        "torn rotation {t:?} for x {x}"
    );
    x
}

/// The writer process: continues odom → base_link from the newest sample, forever.
#[test]
fn writer_process_entry() {
    let Ok(ns) = std::env::var(CHILD_ENV) else {
        return;
    };
    let child = std::env::var(CHILD_FRAME_ENV).unwrap_or_else(|_| "base_link".into());
    let b = TfBuffer::open(&ns).unwrap();
    let mut k = match b.lookup_transform("odom", &child, LATEST) {
        Ok(t) => check(&t.transform) as i64 + 1,
        Err(_) => 0,
    };
    loop {
        b.set("odom", &child, BASE + k * MS, &sample(k), false)
            .unwrap();
        k += 1;
    }
}

fn spawn_writer(ns: &str) -> Child {
    Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "writer_process_entry",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(CHILD_ENV, ns)
        .spawn()
        .unwrap()
}

fn newest_x(b: &TfBuffer) -> Option<f64> {
    b.lookup_transform("odom", "base_link", LATEST)
        .ok()
        .map(|t| check(&t.transform))
}

#[test]
fn writers_killed_mid_stream_never_tear_a_sample_and_are_taken_over() {
    let ns = unique_ns("kill");
    let b = TfBuffer::open(&ns).unwrap();
    let stop = Arc::new(AtomicBool::new(false));
    let reads = Arc::new(AtomicU64::new(0));
    // Readers: latest lookups and interpolated ones just behind the newest.
    let readers: Vec<_> = (0..2)
        .map(|r| {
            let (b, stop, reads) = (b.clone(), stop.clone(), reads.clone());
            std::thread::spawn(move || {
                let mut i = 0u64;
                while !stop.load(Ordering::Relaxed) {
                    i += 1;
                    let time = if (i + r).is_multiple_of(2) {
                        LATEST
                    } else {
                        match newest_x(&b) {
                            Some(x) if x > 10.0 => BASE + ((x - 3.5) * MS as f64) as i64,
                            _ => continue,
                        }
                    };
                    if let Ok(t) = b.lookup_transform("odom", "base_link", time) {
                        check(&t.transform);
                        reads.fetch_add(1, Ordering::Relaxed);
                    }
                }
            })
        })
        .collect();
    let mut last = -1.0;
    for round in 0..4 {
        let mut child = spawn_writer(&ns);
        // Let it write a while (behaviour, not time: until it has written 2000 more).
        loop {
            if let Some(x) = newest_x(&b) {
                if x > last + 2000.0 {
                    break;
                }
            }
            std::thread::sleep(Duration::from_millis(1));
        }
        child.kill().unwrap();
        child.wait().unwrap();
        let x = newest_x(&b).expect("the stream");
        assert!(
            x > last,
            "round {round}: newest went back from {last} to {x}"
        );
        // This process takes over (the child may have died holding the lease, and
        // with a half-written slot): the write succeeds and is seen whole.
        let k = x as i64 + 1;
        b.set("odom", "base_link", BASE + k * MS, &sample(k), false)
            .unwrap_or_else(|e| panic!("round {round}: takeover failed: {e}"));
        assert_eq!(newest_x(&b), Some(k as f64));
        last = k as f64;
    }
    stop.store(true, Ordering::Relaxed);
    for r in readers {
        r.join().expect("a reader saw a torn sample");
    }
    assert!(reads.load(Ordering::Relaxed) > 0);
    let frames = b.frames();
    assert_eq!(frames[1].writer_pid, Some(std::process::id()));
    drop(b);
    assert!(shm_leftovers(&ns).is_empty(), "{:?}", shm_leftovers(&ns));
}

#[test]
fn a_process_opened_later_sees_the_tree_and_the_last_one_out_removes_it() {
    let ns = unique_ns("late");
    let b = TfBuffer::open(&ns).unwrap();
    let mut child = spawn_writer(&ns);
    while newest_x(&b).is_none_or(|x| x < 100.0) {
        std::thread::sleep(Duration::from_millis(1));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    drop(b);
    // The killed writer's place is a dead process's: this was the last one out.
    assert!(shm_leftovers(&ns).is_empty(), "{:?}", shm_leftovers(&ns));
}

#[test]
fn two_writer_processes_share_the_lease_without_errors() {
    let ns = unique_ns("two");
    let b = TfBuffer::open(&ns).unwrap();
    let mut children: Vec<Child> = ["left", "right"]
        .iter()
        .map(|frame| {
            Command::new(std::env::current_exe().unwrap())
                .args([
                    "--exact",
                    "writer_process_entry",
                    "--nocapture",
                    "--test-threads=1",
                ])
                .env(CHILD_ENV, &ns)
                .env(CHILD_FRAME_ENV, frame)
                .spawn()
                .unwrap()
        })
        .collect();
    let newest = |frame: &str| {
        b.lookup_transform("odom", frame, LATEST)
            .ok()
            .map(|t| check(&t.transform))
    };
    while newest("left").is_none_or(|x| x < 3000.0) || newest("right").is_none_or(|x| x < 3000.0) {
        for c in &mut children {
            // A writer that got an error (WriterBusy, anything) panicked and exited.
            assert!(c.try_wait().unwrap().is_none(), "a writer process failed");
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    for mut c in children {
        assert!(c.try_wait().unwrap().is_none(), "a writer process failed");
        c.kill().unwrap();
        c.wait().unwrap();
    }
    drop(b);
    assert!(shm_leftovers(&ns).is_empty(), "{:?}", shm_leftovers(&ns));
}
