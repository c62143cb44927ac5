//! Tables of issue 2's `pingpong` and issue 4's `determinism` / `scheduler_scaling`,
//! read from their JSON, and each issue's targets evaluated on this run.

use serde_json::Value;

use super::{opt, rate, DASH};
use crate::markdown::Table;
use crate::report::{ns, size, Kind, Row};

/// `pingpong` round-trip rows (issue 2's benchmark).
pub fn pingpong_rtt(rows: &[Row], pinned: bool) -> Table {
    let mut t = Table::new([
        "system", "size", "mode", "payload", "min", "median", "p99", "p99.9", "max", "msg/s",
    ])
    .left(2)
    .left(3);
    for r in rows
        .iter()
        .filter(|r| r.kind == Kind::RoundTrip && r.pinned == pinned)
    {
        let Some(s) = r.rtt else { continue };
        t.row([
            r.system.clone(),
            r.size.map_or_else(|| DASH.to_owned(), size),
            r.mode.label().to_owned(),
            r.payload.map_or(DASH, |p| p.label()).to_owned(),
            ns(s.min_ns),
            format!("**{}**", ns(s.median_ns)),
            ns(s.p99_ns),
            ns(s.p999_ns),
            ns(s.max_ns),
            rate(s.msgs_per_sec),
        ]);
    }
    t
}

/// `pingpong` one-way throughput rows.
pub fn pingpong_one_way(rows: &[Row]) -> Table {
    let mut t = Table::new(["system", "size", "pinned", "messages", "msg/s", "MB/s"]).left(2);
    for r in rows.iter().filter(|r| r.kind == Kind::OneWay) {
        let Some(o) = r.one_way else { continue };
        t.row([
            r.system.clone(),
            r.size.map_or_else(|| DASH.to_owned(), size),
            if r.pinned { "yes" } else { "no" }.to_owned(),
            o.messages.to_string(),
            rate(o.msgs_per_sec),
            format!("{:.1}", o.msgs_per_sec * r.size.unwrap_or(0) as f64 / 1e6),
        ]);
    }
    t
}

/// `pingpong` ratios (the `ratios` array of its JSON), one pass.
pub fn pingpong_ratios(ratios: &Value, pinned: bool) -> Table {
    let list = ratios.as_array().cloned().unwrap_or_default();
    let in_pass: Vec<&Value> = list.iter().filter(|r| r["pinned"] == pinned).collect();
    let mut sizes: Vec<u64> = in_pass.iter().filter_map(|r| r["size"].as_u64()).collect();
    sizes.sort_unstable();
    sizes.dedup();
    let mut t = Table::new(
        std::iter::once("ratio of medians".to_owned())
            .chain(sizes.iter().map(|&s| size(s as usize))),
    );
    let mut labels: Vec<&str> = in_pass.iter().filter_map(|r| r["label"].as_str()).collect();
    labels.dedup();
    for label in labels {
        let mut cells = vec![label.to_owned()];
        for &s in &sizes {
            let v = in_pass
                .iter()
                .find(|r| r["label"] == label && r["size"] == s)
                .and_then(|r| r["value"].as_f64());
            cells.push(opt(v, |v| format!("{v:.2}×")));
        }
        t.row(cells);
    }
    t
}

fn us(v: &Value) -> String {
    v.as_f64()
        .map_or_else(|| DASH.to_owned(), |v| format!("{v:.1} µs"))
}

/// `determinism` (issue 4).
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

/// `scheduler_scaling` (issue 4).
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

/// Median RTT (ns) of a pinned `pingpong` row.
fn pp_median(doc: &Value, system: &str, mode: Option<&str>, bytes: Option<u64>) -> Option<f64> {
    doc["rows"]
        .as_array()?
        .iter()
        .filter(|r| r["kind"] == "rtt" && r["pinned"] == true && r["system"] == system)
        .filter(|r| mode.is_none_or(|m| r["mode"] == m))
        .find(|r| bytes.is_none_or(|b| r["size"] == b))
        .and_then(|r| r["rtt"]["median_ns"].as_f64())
}

/// One-way msg/s of a pinned `pingpong` row.
fn pp_one_way(doc: &Value, system: &str, bytes: u64) -> Option<f64> {
    doc["rows"]
        .as_array()?
        .iter()
        .find(|r| {
            r["kind"] == "one-way"
                && r["pinned"] == true
                && r["system"] == system
                && r["size"] == bytes
        })
        .and_then(|r| r["one_way"]["msgs_per_sec"].as_f64())
}

fn met(ok: bool) -> String {
    if ok { "yes" } else { "no" }.to_owned()
}

/// Issue 2's targets, evaluated on this run's pinned `pingpong` rows (and the
/// `--touch` run for the 1 MiB-vs-16 B target).
pub fn pingpong_targets(pp: &Value, touch: Option<&Value>) -> Table {
    let mut t = Table::new(["target", "this run (pinned, medians)", "met"])
        .left(1)
        .left(2);
    const MI: u64 = 1 << 20;
    let nsf = |v: f64| ns(v.round() as u64);
    let floor = pp_median(pp, "floor:cacheline", None, None);
    let copy16 = pp_median(pp, "horus", Some("copy"), Some(16));
    let loan16 = pp_median(pp, "horus", Some("loan"), Some(16));
    match (floor, copy16, loan16) {
        (Some(f), Some(c), Some(l)) => t.row([
            "16 B RTT ≤ 1.5 × hardware floor".to_owned(),
            format!(
                "copy {:.2}×, loan {:.2}× (floor {}, horus {} / {})",
                c / f,
                l / f,
                nsf(f),
                nsf(c),
                nsf(l)
            ),
            met(c / f <= 1.5 && l / f <= 1.5),
        ]),
        _ => t.row(["16 B RTT ≤ 1.5 × hardware floor", DASH, DASH]),
    }
    match (pp_one_way(pp, "horus", 16), pp_one_way(pp, "iceoryx2", 16)) {
        (Some(h), Some(i)) => t.row([
            "16 B one-way throughput ≥ 5 × iceoryx2".to_owned(),
            format!("{} vs {} msg/s: {:.1}×", rate(h), rate(i), h / i),
            met(h / i >= 5.0),
        ]),
        _ => t.row(["16 B one-way throughput ≥ 5 × iceoryx2", DASH, DASH]),
    }
    let touch_pair = touch.and_then(|d| {
        Some((
            pp_median(d, "horus", Some("loan"), Some(MI))?,
            pp_median(d, "horus", Some("loan"), Some(16))?,
        ))
    });
    match touch_pair {
        Some((big, small)) => t.row([
            "1 MiB loan, `--touch`, ≤ 2 × horus's 16 B RTT".to_owned(),
            format!("{} / {} = {:.2}×", nsf(big), nsf(small), big / small),
            met(big / small <= 2.0),
        ]),
        None => t.row([
            "1 MiB loan, `--touch`, ≤ 2 × horus's 16 B RTT",
            "not measured (pingpong_touch.json missing)",
            DASH,
        ]),
    }
    let touch_floor = pp_median(pp, "floor:touch", None, Some(MI));
    match (
        pp_median(pp, "horus", Some("loan"), Some(MI)),
        touch_floor,
        loan16,
    ) {
        (Some(h), Some(f), Some(l)) => {
            let bound = 1.2 * f + l;
            t.row([
                "1 MiB loan, full payload, ≤ 1.2 × write+read in place + 16 B RTT".to_owned(),
                format!(
                    "{} vs 1.2 × {} (floor:touch) + {} = {}: {:.2} × floor:touch",
                    nsf(h),
                    nsf(f),
                    nsf(l),
                    nsf(bound),
                    h / f
                ),
                met(h <= bound),
            ]);
        }
        _ => t.row([
            "1 MiB loan, full payload, ≤ 1.2 × write+read in place + 16 B RTT",
            DASH,
            DASH,
        ]),
    }
    match (
        pp_median(pp, "horus", Some("copy"), Some(MI)),
        pp_median(pp, "floor:copy", None, Some(MI)),
    ) {
        (Some(h), Some(f)) => t.row([
            "1 MiB copy ≤ 1.2 × copy floor".to_owned(),
            format!("{} vs {}: {:.2}×", nsf(h), nsf(f), h / f),
            met(h / f <= 1.2),
        ]),
        _ => t.row(["1 MiB copy ≤ 1.2 × copy floor", DASH, DASH]),
    }
    let futex = pp_median(pp, "horus:futex", None, Some(16));
    match (futex, pp_median(pp, "floor:wake", None, None)) {
        (Some(h), Some(f)) => t.row([
            "blocking (futex) ≤ 1.2 × wake floor".to_owned(),
            format!("{} vs {}: {:.2}×", nsf(h), nsf(f), h / f),
            met(h / f <= 1.2),
        ]),
        _ => t.row(["blocking (futex) ≤ 1.2 × wake floor", DASH, DASH]),
    }
    match (futex, pp_median(pp, "uds", None, Some(16))) {
        (Some(h), Some(u)) => t.row([
            "blocking (futex) no slower than the Unix socket".to_owned(),
            format!("{} vs {}: {:.2}× the socket", nsf(h), nsf(u), h / u),
            met(h <= u),
        ]),
        _ => t.row([
            "blocking (futex) no slower than the Unix socket",
            DASH,
            DASH,
        ]),
    }
    t
}

/// Issue 4's targets on this run's `determinism` and `scheduler_scaling` JSON.
pub fn scheduler_targets(det: Option<&Value>, scaling: Option<&Value>) -> Table {
    let mut t = Table::new(["target", "this run", "met"]).left(1).left(2);
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
