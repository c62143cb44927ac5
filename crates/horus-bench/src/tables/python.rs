//! The Python benchmark (`python/bench/python_latency.py --json`): its cases and
//! the Python binding's latency targets, computed from its JSON (`{"meta": …, "results": [{case, n,
//! min, p50, p99, p999, max} | {case, skipped}]}`, times in µs).

use serde_json::Value;

use super::DASH;
use crate::markdown::Table;

fn us(v: f64) -> String {
    if v >= 1000.0 {
        format!("{:.2} ms", v / 1000.0)
    } else {
        format!("{v:.2} µs")
    }
}

/// How a case's receivers wait, from its name.
fn wait(case: &str) -> &'static str {
    if case.contains("spin=0") {
        "blocking, sleeps at once (spin 0)"
    } else if case.contains(" busy") {
        "busy-poll"
    } else if case.contains(" block") {
        "blocking"
    } else {
        "?"
    }
}

/// What of the payload a case's processes write and read, from its name.
fn touched(case: &str) -> &'static str {
    if case.contains("tensor") && case.contains("py-rust") && case.contains("touch1") {
        "1 MiB tensor by descriptor; ONE element written by the Python ping, not read by the \
         Rust pong"
    } else if case.contains("tensor") && case.contains("touch1") {
        "1 MiB tensor by descriptor; ONE element written and read"
    } else if case.contains("tensor") && case.contains("py-rust") {
        "1 MiB tensor by descriptor; every byte written and read by the Python ping only"
    } else if case.contains("tensor") {
        "1 MiB tensor by descriptor; every byte written and read on both sides"
    } else {
        "16 B message, whole message"
    }
}

fn results(doc: &Value) -> impl Iterator<Item = &Value> {
    doc["results"].as_array().into_iter().flatten()
}

/// The p50 (µs) of a measured case.
fn p50(doc: &Value, case: &str) -> Option<f64> {
    results(doc)
        .find(|r| r["case"] == case)
        .and_then(|r| r["p50"].as_f64())
}

/// Every case: round trip between two pinned processes.
pub fn python(doc: &Value) -> Table {
    let mut t = Table::new([
        "case", "wait", "payload", "n", "min", "p50", "p99", "p99.9", "max",
    ])
    .left(1)
    .left(2);
    for r in results(doc) {
        let case = r["case"].as_str().unwrap_or("?");
        let cell = |k: &str| r[k].as_f64().map_or_else(|| DASH.to_owned(), us);
        if let Some(why) = r["skipped"].as_str() {
            t.row([
                case.to_owned(),
                wait(case).to_owned(),
                format!("not measured: {why}"),
                DASH.to_owned(),
                DASH.to_owned(),
                DASH.to_owned(),
                DASH.to_owned(),
                DASH.to_owned(),
                DASH.to_owned(),
            ]);
            continue;
        }
        t.row([
            case.to_owned(),
            wait(case).to_owned(),
            touched(case).to_owned(),
            r["n"].to_string(),
            cell("min"),
            cell("p50"),
            cell("p99"),
            cell("p999"),
            cell("max"),
        ]);
    }
    t.note(
        "Round trip (ping sends, pong echoes, ping has the echo), two processes pinned to two \
         CPUs, perf_counter_ns around the whole exchange; py-py = Python on both sides, py-rust \
         = Python ping, Rust pong (horus-py-peer).",
    );
    t
}

/// The Python binding's latency targets, each computed from the cases it names (p50s of one run).
pub fn python_targets(doc: &Value) -> Table {
    let mut t = Table::new(["target", "measured as", "this run (p50)", "met in this run"])
        .left(1)
        .left(2)
        .left(3);
    let mut add = |target: &str, how: &str, num: &str, den: &str, limit: f64| {
        let (text, verdict) = match (p50(doc, num), p50(doc, den)) {
            (Some(a), Some(b)) => (
                format!("{} / {} = {:.2}×", us(a), us(b), a / b),
                if a / b <= limit { "yes" } else { "no" }.to_owned(),
            ),
            _ => ("not measured".to_owned(), DASH.to_owned()),
        };
        t.row([target.to_owned(), how.to_owned(), text, verdict]);
    };
    add(
        "busy-poll CmdVel ≤ 0.5 × iceoryx2-Python",
        "round trip, py-py, pinned, busy-poll: `horus py-py cmdvel busy` ÷ `iceoryx2 py-py 16B \
         busy`",
        "horus py-py cmdvel busy",
        "iceoryx2 py-py 16B busy",
        0.5,
    );
    add(
        "blocking CmdVel ≤ 0.2 × pyzmq",
        "round trip, py-py, pinned, blocking (default receive: poll, then futex) ÷ pyzmq \
         `ipc://` (blocking)",
        "horus py-py cmdvel block",
        "pyzmq ipc:// 16B block",
        0.2,
    );
    add(
        "… with a receive that sleeps at once",
        "round trip, py-py, pinned, blocking with spin 0 (futex only) ÷ pyzmq `ipc://`",
        "horus py-py cmdvel block spin=0",
        "pyzmq ipc:// 16B block",
        0.2,
    );
    add(
        "1 MiB tensor by descriptor ≤ 2 × the CmdVel round trip",
        "round trip, py-py, pinned, busy-poll; the hand-over only (ONE element written and \
         read) ÷ `horus py-py cmdvel busy`",
        "horus py-py tensor 1MiB touch1 busy",
        "horus py-py cmdvel busy",
        2.0,
    );
    t
}

/// Cases that failed (not merely skipped because a package is not installed).
pub fn python_failures(doc: &Value) -> Vec<String> {
    results(doc)
        .filter_map(|r| {
            let why = r["skipped"].as_str()?;
            why.starts_with("failed")
                .then(|| format!("{}: {why}", r["case"].as_str().unwrap_or("?")))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn targets_are_computed_from_the_cases() {
        let doc = serde_json::json!({"results": [
            {"case": "horus py-py cmdvel busy", "n": 10, "min": 1.0, "p50": 4.0, "p99": 5.0,
             "p999": 6.0, "max": 7.0},
            {"case": "iceoryx2 py-py 16B busy", "n": 10, "min": 1.0, "p50": 16.0, "p99": 20.0,
             "p999": 21.0, "max": 22.0},
            {"case": "horus py-py tensor 1MiB touch1 busy", "n": 10, "min": 1.0, "p50": 9.0,
             "p99": 10.0, "p999": 11.0, "max": 12.0},
            {"case": "pyzmq ipc:// 16B block", "skipped": "zmq not installed"},
            {"case": "horus py-py tensor 1MiB full busy", "skipped": "failed: boom"},
        ]});
        let t = python_targets(&doc);
        assert_eq!(t.rows[0][2], "4.00 µs / 16.00 µs = 0.25×");
        assert_eq!(t.rows[0][3], "yes");
        assert_eq!(t.rows[1][2], "not measured");
        assert_eq!(t.rows[3][3], "no");
        let table = python(&doc);
        assert_eq!(table.rows.len(), 5);
        assert!(table.rows[2][2].contains("ONE element"));
        assert_eq!(python_failures(&doc).len(), 1);
    }
}
