//! Benchmark: scheduler overhead per node per tick for 10–500 trivial nodes.
//!
//! `scheduler_scaling [--quick] [--seconds N] [--rate HZ] [--json FILE]`
//!
//! Method: N trivial nodes (each increments a counter) on the main thread,
//! all at the same rate (default 1 kHz), so every round serves all N. The
//! scheduler times each round from wake-up to the next sleep (the release
//! scan, per-node lock, policy checks, two clock reads per tick, statistics
//! recording, next-wake-up computation, and the nodes' own work) and each
//! node's tick (execution time). Then
//!   overhead per node per tick = (Σ round time − Σ node execution time) / Σ ticks,
//! and as an upper bound that counts the trivial ticks too, Σ round time / Σ ticks.
//! The execution time is measured between the two clock reads, so the cost
//! of building the tick context and `catch_unwind` lands in "execution"; the
//! upper bound includes it. No statistics file, no other nodes.

use std::time::Duration;

use anyhow::{bail, Context};
use horus_sched::prelude::*;
use serde_json::json;

fn main() -> anyhow::Result<()> {
    let mut seconds = 5.0;
    let mut rate = 1000.0;
    let mut json_path = None;
    let mut it = std::env::args().skip(1);
    while let Some(arg) = it.next() {
        match arg.as_str() {
            "--quick" => seconds = 1.0,
            "--seconds" => seconds = it.next().context("--seconds N")?.parse()?,
            "--rate" => rate = it.next().context("--rate HZ")?.parse()?,
            "--json" => json_path = Some(it.next().context("--json FILE")?),
            other => bail!("unknown argument {other}; usage: scheduler_scaling [--quick] [--seconds N] [--rate HZ] [--json FILE]"),
        }
    }
    println!("scheduler_scaling: N trivial main-thread nodes at {rate} Hz, {seconds} s each");
    println!("method: overhead/node/tick = (Σ round time − Σ node exec time) / Σ ticks;");
    println!("  upper bound = Σ round time / Σ ticks (includes the trivial ticks themselves).");
    println!();
    println!(
        "{:>5} {:>8} {:>10} {:>14} {:>14} {:>12} {:>12} {:>8}",
        "nodes",
        "rounds",
        "ticks",
        "overhead ns",
        "upper bd ns",
        "round p50 µs",
        "round p99 µs",
        "skipped"
    );
    let mut rows = Vec::new();
    for n in [10_usize, 50, 100, 200, 500] {
        let mut sched = Scheduler::new()
            .name(format!("scaling-{}-{n}", std::process::id()))
            .publish_stats(false)
            .on_event(|_| {});
        for i in 0..n {
            let mut x = 0_u64;
            sched.add(
                node_fn(format!("n{i}"), move |_| {
                    x = std::hint::black_box(x + 1);
                    Ok(())
                }),
                NodeConfig::new().rate(horus_sched::Frequency::try_from_hz(rate)?),
            )?;
        }
        sched.run_for(Duration::from_secs_f64(seconds))?;
        let st = sched.stats();
        let round = st.main_loop.round;
        let ticks: u64 = st.nodes.iter().map(|s| s.ticks).sum();
        let exec: u128 = st.nodes.iter().map(|s| s.exec.total.as_nanos()).sum();
        let skipped: u64 = st.nodes.iter().map(|s| s.skipped).sum();
        let busy = round.total.as_nanos();
        let overhead = busy.saturating_sub(exec) as f64 / ticks.max(1) as f64;
        let upper = busy as f64 / ticks.max(1) as f64;
        let us = |d: Duration| d.as_secs_f64() * 1e6;
        println!(
            "{n:>5} {:>8} {ticks:>10} {overhead:>14.1} {upper:>14.1} {:>12.1} {:>12.1} {skipped:>8}",
            round.samples,
            us(round.p50),
            us(round.p99)
        );
        rows.push(json!({
            "nodes": n, "rounds": round.samples, "ticks": ticks,
            "overhead_ns_per_node_tick": overhead, "upper_bound_ns_per_node_tick": upper,
            "round_us": { "p50": us(round.p50), "p99": us(round.p99), "max": us(round.max) },
            "skipped_releases": skipped,
        }));
    }
    if let Some(path) = json_path {
        let doc = json!({
            "benchmark": "scheduler_scaling",
            "rate_hz": rate, "seconds_per_size": seconds,
            "cpus": std::thread::available_parallelism().map_or(1, |n| n.get()),
            "method": "N trivial main-thread nodes at one rate; overhead = (sum round time - sum node exec time) / sum ticks; upper bound = sum round time / sum ticks",
            "results": rows,
        });
        std::fs::write(&path, serde_json::to_string_pretty(&doc)?)?;
        println!("\nwrote {path}");
    }
    Ok(())
}
