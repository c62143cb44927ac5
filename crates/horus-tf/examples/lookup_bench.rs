//! Lookup cost of the tf buffer: a 5-deep chain (map → f1 → … → f5), every
//! transform dynamic at 100 Hz over the 10 s window (1000 samples each, so
//! each frame's history is searched), looked up at random times between
//! samples (interpolation + slerp at each of the 5 frames), and "latest".
//!
//! Method: rounds of 64 lookups timed together (the clock costs about as much
//! as a lookup); per-lookup figures are round time / 64; min, median, p99 and
//! max over the rounds. Shared buffer and per-process fallback side by side.
//!
//! Run: `cargo run --release -p horus-tf --example lookup_bench [-- --json] [--rounds N]`

use std::hint::black_box;
use std::time::Instant;

use horus_tf::{TfBuffer, Transform, LATEST};

const S: i64 = 1_000_000_000;
const BATCH: usize = 64;

fn fill(b: &TfBuffer) -> (i64, i64) {
    let frames = ["map", "f1", "f2", "f3", "f4", "f5"];
    let start = 1_000 * S;
    let n = 1000;
    for k in 0..n {
        let t = start + k * S / 100;
        for (d, pair) in frames.windows(2).enumerate() {
            let a = 0.001 * k as f64 + d as f64;
            let tf = Transform {
                translation: [1.0 + 0.01 * k as f64, 0.1 * d as f64, 0.0],
                rotation: [
                    0.0,
                    (a / 2.0).sin() * 0.6,
                    (a / 2.0).sin() * 0.8,
                    (a / 2.0).cos(),
                ],
            };
            b.set(pair[0], pair[1], t, &tf, false).unwrap();
        }
    }
    (start, start + (n - 1) * S / 100)
}

struct Stats {
    min: f64,
    median: f64,
    p99: f64,
    max: f64,
}

fn run(b: &TfBuffer, span: (i64, i64), rounds: usize, latest: bool) -> Stats {
    let mut rng = 0x2545_f491_4f6c_dd1du64;
    let mut times = Vec::with_capacity(BATCH);
    let mut per = Vec::with_capacity(rounds);
    for _ in 0..rounds {
        times.clear();
        for _ in 0..BATCH {
            rng ^= rng << 13;
            rng ^= rng >> 7;
            rng ^= rng << 17;
            let t = if latest {
                LATEST
            } else {
                span.0 + (rng % (span.1 - span.0) as u64) as i64
            };
            times.push(t);
        }
        let t0 = Instant::now();
        for &t in &times {
            black_box(
                b.lookup_transform(black_box("map"), black_box("f5"), t)
                    .unwrap(),
            );
        }
        per.push(t0.elapsed().as_nanos() as f64 / BATCH as f64);
    }
    per.sort_by(f64::total_cmp);
    let q = |p: f64| per[((per.len() - 1) as f64 * p).round() as usize];
    Stats {
        min: per[0],
        median: q(0.5),
        p99: q(0.99),
        max: per[per.len() - 1],
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let json = args.iter().any(|a| a == "--json");
    let rounds = args
        .iter()
        .position(|a| a == "--rounds")
        .and_then(|i| args.get(i + 1)?.parse().ok())
        .unwrap_or(20_000);
    let ns = format!("tf-bench-{}", std::process::id());
    let shared = TfBuffer::open(&ns).expect("shared buffer");
    let local = TfBuffer::in_process();
    let span = fill(&shared);
    fill(&local);
    let mut rows = Vec::new();
    for (name, b) in [("shared", &shared), ("in_process", &local)] {
        // Warm up.
        run(b, span, rounds / 10 + 1, false);
        for (kind, latest) in [("interpolated", false), ("latest", true)] {
            let s = run(b, span, rounds, latest);
            rows.push((name, kind, s));
        }
    }
    if json {
        let items: Vec<String> = rows
            .iter()
            .map(|(b, k, s)| {
                format!(
                    "{{\"buffer\":\"{b}\",\"lookup\":\"{k}\",\"chain\":5,\"min_ns\":{:.1},\"median_ns\":{:.1},\"p99_ns\":{:.1},\"max_ns\":{:.1}}}",
                    s.min, s.median, s.p99, s.max
                )
            })
            .collect();
        println!("[{}]", items.join(","));
    } else {
        println!("tf lookup, 5-deep chain, 1000 samples per frame, {rounds} rounds of {BATCH}");
        println!(
            "{:<11} {:<13} {:>8} {:>8} {:>8} {:>8}",
            "buffer", "lookup", "min", "median", "p99", "max"
        );
        for (b, k, s) in &rows {
            println!(
                "{b:<11} {k:<13} {:>6.0}ns {:>6.0}ns {:>6.0}ns {:>6.0}ns",
                s.min, s.median, s.p99, s.max
            );
        }
    }
}
