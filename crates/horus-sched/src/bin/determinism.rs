//! Benchmark: start jitter of a 1 kHz node, with an idle and with a busy
//! neighbour, on the main thread and as a real-time node.
//!
//! `determinism [--quick] [--seconds N] [--spin-us N] [--json FILE]`
//!
//! Method: one trivial node at 1 kHz. The scheduler measures each tick's
//! start time against its intended release `start + k·1 ms` (not against the
//! previous tick) and records it in its log-linear histogram (percentiles
//! within ±3.2 %; min and max exact). A deadline miss is a tick that ends
//! more than 1 ms after its release; "skipped" are releases dropped because
//! the node was more than a period late. "Busy neighbour" = one thread per
//! CPU spinning at normal priority, unpinned, for the whole run. The
//! real-time scenarios ask for SCHED_FIFO 80, pinning to the last CPU and
//! mlockall, and print what was actually granted.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use anyhow::{bail, Context};
use horus_sched::prelude::*;
use horus_sched::{MemoryLock, NodeStats, RtMode};
use serde_json::json;

struct Args {
    seconds: f64,
    spin_us: u64,
    json: Option<String>,
}

fn parse_args() -> anyhow::Result<Args> {
    let mut a = Args {
        seconds: 60.0,
        spin_us: 0,
        json: None,
    };
    let mut it = std::env::args().skip(1);
    while let Some(arg) = it.next() {
        match arg.as_str() {
            "--quick" => a.seconds = 3.0,
            "--seconds" => a.seconds = it.next().context("--seconds N")?.parse()?,
            "--spin-us" => a.spin_us = it.next().context("--spin-us N")?.parse()?,
            "--json" => a.json = Some(it.next().context("--json FILE")?),
            other => bail!("unknown argument {other}; usage: determinism [--quick] [--seconds N] [--spin-us N] [--json FILE]"),
        }
    }
    Ok(a)
}

/// Spins one thread per CPU until dropped.
struct BusyNeighbours {
    stop: Arc<AtomicBool>,
    threads: Vec<std::thread::JoinHandle<()>>,
}

impl BusyNeighbours {
    fn start() -> BusyNeighbours {
        let stop = Arc::new(AtomicBool::new(false));
        let n = std::thread::available_parallelism().map_or(1, |n| n.get());
        let threads = (0..n)
            .map(|_| {
                let stop = stop.clone();
                std::thread::spawn(move || {
                    let mut x = 1_u64;
                    while !stop.load(Ordering::Relaxed) {
                        for _ in 0..1000 {
                            x = std::hint::black_box(
                                x.wrapping_mul(6364136223846793005).wrapping_add(1),
                            );
                        }
                    }
                })
            })
            .collect();
        BusyNeighbours { stop, threads }
    }
}

impl Drop for BusyNeighbours {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        for t in self.threads.drain(..) {
            let _ = t.join();
        }
    }
}

fn run(realtime: bool, busy: bool, a: &Args) -> anyhow::Result<(NodeStats, MemoryLock)> {
    let last_cpu = std::thread::available_parallelism().map_or(1, |n| n.get()) - 1;
    let mut sched = Scheduler::new()
        .name(format!("determinism-{}", std::process::id()))
        .publish_stats(false)
        .on_event(|e| eprintln!("  event: {e}"));
    let mut cfg = NodeConfig::new()
        .rate(1000_u64.hz())
        .spin_window(Duration::from_micros(a.spin_us));
    if realtime {
        cfg = cfg.realtime(80).core(last_cpu);
    }
    let mut x = 0_u64;
    sched.add(
        node_fn("ticker", move |_| {
            x = std::hint::black_box(x + 1);
            Ok(())
        }),
        cfg,
    )?;
    let _neighbours = busy.then(BusyNeighbours::start);
    sched.run_for(Duration::from_secs_f64(a.seconds))?;
    let stats = sched.stats();
    Ok((stats.nodes[0].clone(), stats.memory_lock))
}

fn us(d: Duration) -> f64 {
    d.as_secs_f64() * 1e6
}

fn main() -> anyhow::Result<()> {
    let a = parse_args()?;
    println!(
        "determinism: start jitter of one 1 kHz node, {} s per scenario, final spin {} µs",
        a.seconds, a.spin_us
    );
    println!(
        "method: jitter = tick start − intended release (start + k·1 ms), from the scheduler's"
    );
    println!("  histogram (±3.2 %, min/max exact); miss = tick ended > 1 ms after release; busy");
    println!("  neighbour = one spinning thread per CPU at normal priority, unpinned.");
    println!();
    println!(
        "{:<34} {:>8} {:>9} {:>9} {:>9} {:>9} {:>9} {:>7} {:>7}  applied",
        "scenario",
        "ticks",
        "rate Hz",
        "p50 µs",
        "p99 µs",
        "p99.9 µs",
        "max µs",
        "misses",
        "skipped"
    );
    let mut rows = Vec::new();
    for (label, realtime, busy) in [
        ("main thread, idle neighbour", false, false),
        ("main thread, busy neighbour", false, true),
        ("real-time, idle neighbour", true, false),
        ("real-time, busy neighbour", true, true),
    ] {
        let (n, mem) = run(realtime, busy, &a)?;
        let applied = match n.rt_mode {
            RtMode::NotRequested => "normal priority".to_string(),
            RtMode::Fifo { priority } => {
                format!("SCHED_FIFO {priority}, cpu {:?}, memory {:?}", n.core, mem)
            }
            RtMode::Fallback { requested } => {
                format!("FIFO {requested} REFUSED → normal priority, memory {mem:?}")
            }
        };
        let j = &n.jitter;
        println!(
            "{label:<34} {:>8} {:>9.1} {:>9.1} {:>9.1} {:>9.1} {:>9.1} {:>7} {:>7}  {applied}",
            n.ticks,
            n.achieved_hz,
            us(j.p50),
            us(j.p99),
            us(j.p999),
            us(j.max),
            n.deadline_misses,
            n.skipped
        );
        rows.push(json!({
            "scenario": label,
            "realtime_requested": realtime,
            "busy_neighbour": busy,
            "applied": applied,
            "ticks": n.ticks,
            "achieved_hz": n.achieved_hz,
            "jitter_us": { "min": us(j.min), "p50": us(j.p50), "p99": us(j.p99),
                           "p999": us(j.p999), "max": us(j.max) },
            "exec_us": { "p50": us(n.exec.p50), "p99": us(n.exec.p99), "max": us(n.exec.max) },
            "deadline_misses": n.deadline_misses,
            "skipped": n.skipped,
        }));
    }
    if let Some(path) = a.json {
        let doc = json!({
            "benchmark": "determinism",
            "seconds_per_scenario": a.seconds,
            "spin_us": a.spin_us,
            "cpus": std::thread::available_parallelism().map_or(1, |n| n.get()),
            "method": "jitter = tick start - intended release (start + k*1ms) from the scheduler histogram (+-3.2%); miss = tick ended > 1 ms after release; busy neighbour = one spinning thread per CPU, normal priority, unpinned",
            "results": rows,
        });
        std::fs::write(&path, serde_json::to_string_pretty(&doc)?)?;
        println!("\nwrote {path}");
    }
    Ok(())
}
