//! Publishes at a fixed rate for measuring the recorder (docs/recording.md).
//!
//! `rate_publisher cmd|cloud RATE_HZ SECONDS [DEPTH]` in `HORUS_NAMESPACE`: waits until an
//! observer (the recorder) is attached, publishes `CmdVel` (16 B) or `PointCloud` with a
//! 1 MiB tail at RATE_HZ (0: as fast as possible) for SECONDS, then prints one JSON line
//! with what was sent and the rate achieved.

use std::time::{Duration, Instant};

use horus::inspect::TopicView;
use horus::msgs::{CmdVel, PointCloud};
use horus::Topic;

const CLOUD_BYTES: usize = 1 << 20;

fn wait_for_observer(topic: &str) {
    let view = TopicView::open(&horus::namespace(), topic).expect("view the topic");
    let deadline = Instant::now() + Duration::from_secs(60);
    while !view.snapshot().subscribers.iter().any(|s| s.observer) {
        assert!(Instant::now() < deadline, "no recorder attached");
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// Calls `send(i)` at `rate` Hz (0: back to back) for `secs`; returns messages sent.
fn paced(rate: f64, secs: f64, mut send: impl FnMut(u64)) -> (u64, f64) {
    let start = Instant::now();
    let end = Duration::from_secs_f64(secs);
    let mut i = 0u64;
    loop {
        let now = start.elapsed();
        if now >= end {
            break;
        }
        if rate > 0.0 {
            let due = Duration::from_secs_f64(i as f64 / rate);
            if due > now {
                // Sleep when the next message is far enough away (leaving the CPU to the
                // recorder); spin for the last stretch, so that messages are evenly spaced
                // instead of bursting after a late wake-up.
                let wait = due - now;
                if wait > Duration::from_micros(150) {
                    std::thread::sleep(wait - Duration::from_micros(100));
                }
                continue;
            }
        }
        send(i);
        i += 1;
    }
    (i, start.elapsed().as_secs_f64())
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.len() < 4 {
        eprintln!("usage: rate_publisher cmd|cloud RATE_HZ SECONDS [DEPTH]");
        std::process::exit(2);
    }
    let rate: f64 = args[2].parse().expect("RATE_HZ");
    let secs: f64 = args[3].parse().expect("SECONDS");
    let depth: u32 = args.get(4).map_or(1024, |d| d.parse().expect("DEPTH"));
    let (sent, elapsed) = match args[1].as_str() {
        "cmd" => {
            let t = Topic::<CmdVel>::builder("bench/cmd")
                .depth(depth)
                .open()
                .expect("topic");
            wait_for_observer("bench/cmd");
            let mut p = t.publisher().expect("publisher");
            paced(rate, secs, |i| {
                let _ = p.send(CmdVel::new(i, 0.5, 0.1));
            })
        }
        "cloud" => {
            let t = Topic::<PointCloud>::builder("bench/cloud")
                .depth(depth)
                .max_tail_bytes(CLOUD_BYTES)
                .open()
                .expect("topic");
            wait_for_observer("bench/cloud");
            let mut p = t.publisher().expect("publisher");
            // Point data that compresses like a real scan would not: pseudo-random floats.
            let mut x = 0x2545_f491_4f6c_dd1du64;
            let points: Vec<u8> = (0..CLOUD_BYTES)
                .map(|_| {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    x as u8
                })
                .collect();
            let n = (CLOUD_BYTES / 16) as u32;
            paced(rate, secs, |i| {
                let mut h = PointCloud::new(n, true);
                h.seq = i as u32;
                let _ = p.send_with_tail(&h, &points);
            })
        }
        other => panic!("unknown kind {other}"),
    };
    println!(
        "{{\"sent\": {sent}, \"seconds\": {elapsed:.3}, \"rate_hz\": {:.1}}}",
        sent as f64 / elapsed
    );
}
