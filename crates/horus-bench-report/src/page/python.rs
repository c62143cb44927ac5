//! The Python section: `python/bench/python_latency.py` (horus from Python against
//! the Rust peer).

use super::results::Results;
use super::{section, Keys};
use horus_bench::tables;

/// `python.*`: the cases, the targets, the method.
pub(super) fn python_latency(r: &Results, keys: &mut Keys) {
    keys.insert(
        "python.table",
        section(&r.python, "python_latency", |v| {
            tables::python(v).to_markdown()
        }),
    );
    keys.insert(
        "python.targets",
        section(&r.python, "python_latency", |v| {
            tables::python_targets(v).to_markdown()
        }),
    );
    keys.insert(
        "python.method",
        section(&r.python, "python_latency", |v| {
            format!(
                "Method: {} (Python {}, {}{}).\n",
                v["meta"]["method"].as_str().unwrap_or("(not recorded)"),
                v["meta"]["python"].as_str().unwrap_or("?"),
                v["meta"]["machine"].as_str().unwrap_or("?"),
                if v["meta"]["quick"] == true {
                    ", quick mode"
                } else {
                    ""
                }
            )
        }),
    );
}
