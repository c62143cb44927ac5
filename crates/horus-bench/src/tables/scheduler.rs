//! The tables of the scheduler benchmarks (`determinism`, `scheduler_scaling`,
//! from crates/horus-sched), read from their JSON, and their targets evaluated on
//! this run.

use serde_json::Value;

use super::{met, DASH};
use crate::markdown::Table;

fn us(v: &Value) -> String {
    v.as_f64()
        .map_or_else(|| DASH.to_owned(), |v| format!("{v:.1} µs"))
}

/// `determinism`: tick jitter and misses per scenario.
pub fn determinism(doc: &Value) -> Table {
    let mut t = Table::new([
        "scenario", "ticks", "rate", "p50", "p99", "p99.9", "max", "misses", "skipped", "applied",
    ])
    .left(9);
    for r in doc["results"].as_array().into_iter().flatten() {
        let j = &r["jitter_us"];
        t.row([
            r["scenario"].as_str().unwrap_or("?").to_owned(),
            r["ticks"].to_string(),
            r["achieved_hz"]
                .as_f64()
                .map_or_else(|| DASH.to_owned(), |v| format!("{v:.1} Hz")),
            us(&j["p50"]),
            us(&j["p99"]),
            us(&j["p999"]),
            us(&j["max"]),
            r["deadline_misses"].to_string(),
            r["skipped"].to_string(),
            r["applied"].as_str().unwrap_or("").to_owned(),
        ]);
    }
    t
}

/// `scheduler_scaling`: round time against the number of nodes.
pub fn scheduler_scaling(doc: &Value) -> Table {
    let mut t = Table::new([
        "nodes",
        "rounds",
        "ticks",
        "overhead / node / tick",
        "upper bound",
        "round p50",
        "round p99",
        "skipped",
    ]);
    let nsf = |v: &Value| {
        v.as_f64()
            .map_or_else(|| DASH.to_owned(), |v| format!("{v:.1} ns"))
    };
    for r in doc["results"].as_array().into_iter().flatten() {
        t.row([
            r["nodes"].to_string(),
            r["rounds"].to_string(),
            r["ticks"].to_string(),
            nsf(&r["overhead_ns_per_node_tick"]),
            nsf(&r["upper_bound_ns_per_node_tick"]),
            us(&r["round_us"]["p50"]),
            us(&r["round_us"]["p99"]),
            r["skipped_releases"].to_string(),
        ]);
    }
    t
}

/// The scheduler targets on this run's `determinism` and `scheduler_scaling` JSON.
pub fn scheduler_targets(det: Option<&Value>, scaling: Option<&Value>) -> Table {
    let mut t = Table::new(["target", "this run", "met in this run"])
        .left(1)
        .left(2);
    let scenario = |d: &Value, name: &str| -> Option<Value> {
        d["results"]
            .as_array()?
            .iter()
            .find(|r| r["scenario"] == name)
            .cloned()
    };
    let idle = ["main thread, idle neighbour", "real-time, idle neighbour"];
    if let Some(d) = det {
        let rows: Vec<Value> = idle.iter().filter_map(|n| scenario(d, n)).collect();
        if rows.len() == 2 {
            let p99: Vec<f64> = rows
                .iter()
                .map(|r| r["jitter_us"]["p99"].as_f64().unwrap_or(f64::NAN))
                .collect();
            let misses: Vec<u64> = rows
                .iter()
                .map(|r| r["deadline_misses"].as_u64().unwrap_or(u64::MAX))
                .collect();
            let secs = d["seconds_per_scenario"].as_f64().unwrap_or(0.0);
            t.row([
                "1 kHz node, idle neighbour: p99 start jitter ≤ 50 µs".to_owned(),
                format!(
                    "{:.1} µs on the main thread, {:.1} µs as a real-time node",
                    p99[0], p99[1]
                ),
                met(p99.iter().all(|&p| p <= 50.0)),
            ]);
            t.row([
                format!("… and no deadline misses over {secs} s"),
                format!("{} and {} misses", misses[0], misses[1]),
                met(misses.iter().all(|&m| m == 0)),
            ]);
        }
    }
    if let Some(s) = scaling {
        let upto200: Vec<f64> = s["results"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|r| r["nodes"].as_u64().is_some_and(|n| n <= 200))
            .filter_map(|r| r["overhead_ns_per_node_tick"].as_f64())
            .collect();
        if let Some(worst) = upto200.iter().copied().reduce(f64::max) {
            let best = upto200.iter().copied().fold(f64::MAX, f64::min);
            t.row([
                "scheduler overhead ≤ 1 µs per node per tick up to 200 nodes".to_owned(),
                format!("{best:.0}–{worst:.0} ns per node per tick at 10–200 nodes"),
                met(worst <= 1000.0),
            ]);
        }
    }
    t
}
