//! The tables of the `pingpong` binary, read from its JSON: round trips, one-way
//! throughput, the ratios to the floor and references, and its targets evaluated
//! on this run.

use serde_json::Value;

use super::{met, opt, rate, DASH};
use crate::markdown::Table;
use crate::report::{ns, size, Kind, Row};

/// `pingpong` round-trip rows.
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

/// Runs `f`: a place for `?` on the rows a target needs.
fn attempt<T>(f: impl FnOnce() -> Option<T>) -> Option<T> {
    f()
}

/// The `pingpong` targets, evaluated on this run's pinned `pingpong` rows (and the
/// `--touch` run for the 1 MiB-vs-16 B target). Each row says how it was measured
/// (round trip or one-way, pinned, busy-poll or blocking, copy or loan); every
/// verdict is computed from the rows and holds for this one run only.
pub fn pingpong_targets(pp: &Value, touch: Option<&Value>) -> Table {
    let mut t = Table::new([
        "target",
        "measured as",
        "this run (medians)",
        "met in this run",
    ])
    .left(1)
    .left(2)
    .left(3);
    let mut add = |target: &str, how: &str, result: Option<(String, bool)>| {
        let (text, verdict) = match result {
            Some((text, ok)) => (text, met(ok)),
            None => ("not measured".to_owned(), DASH.to_owned()),
        };
        t.row([target.to_owned(), how.to_owned(), text, verdict]);
    };
    const MI: u64 = 1 << 20;
    let nsf = |v: f64| ns(v.round() as u64);
    let loan16 = pp_median(pp, "horus", Some("loan"), Some(16));
    add(
        "16 B RTT ≤ 1.5 × hardware floor",
        "round trip, pinned, busy-poll, copy and loan, vs `floor:cacheline` (two threads)",
        attempt(|| {
            let f = pp_median(pp, "floor:cacheline", None, None)?;
            let c = pp_median(pp, "horus", Some("copy"), Some(16))?;
            let l = loan16?;
            Some((
                format!(
                    "copy {:.2}×, loan {:.2}× (floor {}, horus {} / {})",
                    c / f,
                    l / f,
                    nsf(f),
                    nsf(c),
                    nsf(l)
                ),
                c / f <= 1.5 && l / f <= 1.5,
            ))
        }),
    );
    add(
        "16 B one-way throughput ≥ 5 × iceoryx2",
        "one-way lossless burst, pinned, busy-poll, loan (both)",
        attempt(|| {
            let h = pp_one_way(pp, "horus", 16)?;
            let i = pp_one_way(pp, "iceoryx2", 16)?;
            Some((
                format!("{} vs {} msg/s: {:.1}×", rate(h), rate(i), h / i),
                h / i >= 5.0,
            ))
        }),
    );
    add(
        "1 MiB loan, `--touch`, ≤ 2 × horus's 16 B RTT",
        "round trip, pinned, busy-poll, loan, only the first and last 8 bytes touched \
         (`pingpong --touch` run)",
        touch.and_then(|d| {
            let big = pp_median(d, "horus", Some("loan"), Some(MI))?;
            let small = pp_median(d, "horus", Some("loan"), Some(16))?;
            Some((
                format!("{} / {} = {:.2}×", nsf(big), nsf(small), big / small),
                big / small <= 2.0,
            ))
        }),
    );
    add(
        "1 MiB loan, full payload, ≤ 1.2 × write+read in place + 16 B RTT",
        "round trip, pinned, busy-poll, loan, vs `ref:touch` (two threads, written and read \
         in place)",
        attempt(|| {
            let h = pp_median(pp, "horus", Some("loan"), Some(MI))?;
            let f = pp_median(pp, "ref:touch", None, Some(MI))?;
            let l = loan16?;
            let bound = 1.2 * f + l;
            Some((
                format!(
                    "{} vs 1.2 × {} (ref:touch) + {} = {}: {:.2} × ref:touch",
                    nsf(h),
                    nsf(f),
                    nsf(l),
                    nsf(bound),
                    h / f
                ),
                h <= bound,
            ))
        }),
    );
    add(
        "1 MiB copy ≤ 1.2 × the copy reference",
        "round trip, pinned, busy-poll, copy, vs `ref:copy` (two threads, three memcpys)",
        attempt(|| {
            let h = pp_median(pp, "horus", Some("copy"), Some(MI))?;
            let f = pp_median(pp, "ref:copy", None, Some(MI))?;
            Some((
                format!("{} vs {}: {:.2}×", nsf(h), nsf(f), h / f),
                h / f <= 1.2,
            ))
        }),
    );
    let futex = pp_median(pp, "horus:futex", None, Some(16));
    add(
        "blocking ≤ 1.2 × the futex wake reference",
        "round trip, pinned, blocking (futex, no spinning), copy, 16 B, vs `ref:wake` (two \
         threads)",
        attempt(|| {
            let h = futex?;
            let f = pp_median(pp, "ref:wake", None, None)?;
            Some((
                format!("{} vs {}: {:.2}×", nsf(h), nsf(f), h / f),
                h / f <= 1.2,
            ))
        }),
    );
    add(
        "blocking no slower than the Unix socket",
        "round trip, pinned, blocking (futex), copy, 16 B, vs the socket (blocking read, copy)",
        attempt(|| {
            let h = futex?;
            let u = pp_median(pp, "uds", None, Some(16))?;
            Some((
                format!("{} vs {}: {:.2}× the socket", nsf(h), nsf(u), h / u),
                h <= u,
            ))
        }),
    );
    t
}
