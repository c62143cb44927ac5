//! The scheduler sections: `determinism` and `scheduler_scaling` (crates/horus-sched)
//! and their targets.

use serde_json::Value;

use super::results::Results;
use super::{missing, section, Keys};
use horus_bench::tables;

/// `determinism.*`, `scheduler_scaling.*`, `scheduler.targets`.
pub(super) fn scheduler(r: &Results, keys: &mut Keys) {
    keys.insert(
        "determinism.table",
        section(&r.determinism, "determinism", |v| {
            tables::determinism(v).to_markdown()
        }),
    );
    keys.insert(
        "determinism.method",
        section(&r.determinism, "determinism", method_of),
    );
    keys.insert(
        "scheduler_scaling.table",
        section(&r.scheduler_scaling, "scheduler_scaling", |v| {
            tables::scheduler_scaling(v).to_markdown()
        }),
    );
    keys.insert(
        "scheduler_scaling.method",
        section(&r.scheduler_scaling, "scheduler_scaling", method_of),
    );
    keys.insert(
        "scheduler.targets",
        if r.determinism.is_none() && r.scheduler_scaling.is_none() {
            missing("determinism / scheduler_scaling")
        } else {
            tables::scheduler_targets(r.determinism.as_ref(), r.scheduler_scaling.as_ref())
                .to_markdown()
        },
    );
}

/// The method statement of a scheduler benchmark's JSON (a string), as a paragraph.
fn method_of(v: &Value) -> String {
    let mut s = String::from("Method: ");
    s.push_str(v["method"].as_str().unwrap_or("(not recorded)"));
    if let Some(secs) = v["seconds_per_scenario"]
        .as_f64()
        .or(v["seconds_per_size"].as_f64())
    {
        s.push_str(&format!("; {secs} s per row"));
    }
    if let Some(spin) = v["spin_us"].as_u64() {
        s.push_str(&format!("; final spin {spin} µs"));
    }
    if let Some(cpus) = v["cpus"].as_u64() {
        s.push_str(&format!("; {cpus} CPUs"));
    }
    s.push_str(".\n");
    s
}
