//! The printed tables of `multi_host`, one set per pinning: every value is the
//! median over rounds, except "max", the largest latency of any round. A cell
//! whose measurement failed in every round shows "–" (the failures are listed
//! under the tables).

use horus_bench_core::markdown::Table;
use horus_bench_core::units::{ns, size};

use super::rows::{self, Impairment, Key, Kind, MhRow};
use super::{SystemName, CHANNEL_SIZES, IMPAIRED_SIZES, RATE_HZ, SWEEP_SIZES, TOPIC_COUNTS};

const DASH: &str = "–";

fn lat(v: Option<f64>) -> String {
    v.map_or_else(|| DASH.to_owned(), |v| ns(v as u64))
}

fn pct(v: Option<f64>, digits: usize) -> String {
    v.map_or_else(|| DASH.to_owned(), |v| format!("{v:.digits$} %"))
}

fn num(v: Option<f64>) -> String {
    match v {
        None => DASH.to_owned(),
        Some(v) if v >= 1e6 => format!("{:.2} M", v / 1e6),
        Some(v) if v >= 1e4 => format!("{:.0} k", v / 1e3),
        Some(v) if v >= 1e3 => format!("{:.1} k", v / 1e3),
        Some(v) => format!("{v:.0}"),
    }
}

fn key(
    pinned: bool,
    system: SystemName,
    kind: Kind,
    imp: Impairment,
    size: usize,
    topics: usize,
) -> Key {
    Key {
        pinned,
        system,
        kind,
        impairment: imp,
        size,
        topics,
    }
}

fn loss(r: &MhRow) -> Option<f64> {
    r.loss.map(|l| l * 100.0)
}

fn channel_rows(t: &mut Table, rows: &[MhRow], k: Key) {
    t.row([
        lat(rows::med(rows, k, rows::mean_ns)),
        lat(rows::most(rows, k, rows::max_ns)),
        pct(rows::med(rows, k, loss), 3),
        num(rows::med(rows, k, |r| r.rate_hz)),
        pct(rows::med(rows, k, |r| r.cpu_a_percent), 0),
        pct(rows::med(rows, k, |r| r.cpu_b_percent), 0),
    ]);
}

fn prefixed(t: &mut Table, prefix: Vec<String>) {
    let last = t.rows.last_mut().expect("a row was just added");
    let mut cells = prefix;
    cells.append(last);
    cells.truncate(t.header.len());
    *last = cells;
}

/// Every table of a run, titled, in the order of `pinnings` (the binary prints them, writes
/// them as Markdown, and the benchmark page renders them from the JSON).
pub fn sections(rows: &[MhRow], systems: &[SystemName], pinnings: &[bool]) -> Vec<(String, Table)> {
    let mut out = Vec::new();
    for &pinned in pinnings {
        let pin = if pinned { "pinned" } else { "unpinned" };
        out.extend([
            (
                format!("1. channels: one-way at {RATE_HZ} Hz per topic ({pin})"),
                channel(rows, systems, pinned),
            ),
            (
                format!("2. round trip and throughput versus payload ({pin})"),
                sweep(rows, systems, pinned),
            ),
            (
                format!("3. service calls versus payload ({pin})"),
                service(rows, systems, pinned),
            ),
            (
                format!("4. impaired link, one-way at {RATE_HZ} Hz ({pin})"),
                impaired(rows, systems, pinned),
            ),
        ]);
        if let Some(t) = ratios(rows, systems, pinned) {
            out.push((format!("5. horus ÷ raw Zenoh, targets ({pin})"), t));
        }
    }
    out
}

/// Table 1: one-way latency, loss and CPU versus payload and topics at 1 kHz.
pub fn channel(rows: &[MhRow], systems: &[SystemName], pinned: bool) -> Table {
    let mut t = Table::new([
        "system",
        "payload",
        "topics",
        "avg",
        "max",
        "loss",
        "rate/topic",
        "CPU A",
        "CPU B",
    ]);
    for &s in systems {
        for &topics in TOPIC_COUNTS {
            for &sz in CHANNEL_SIZES {
                let k = key(pinned, s, Kind::Channel, Impairment::None, sz, topics);
                channel_rows(&mut t, rows, k);
                prefixed(&mut t, vec![s.name().into(), size(sz), topics.to_string()]);
            }
        }
    }
    t.note("avg/max: one-way latency (publisher's CLOCK_MONOTONIC stamp to the subscriber's callback); loss: (sent − received) / sent; rate/topic: achieved publishing rate (target 1 kHz); CPU: utime + stime of each host's process over its window, % of one core");
    t
}

/// Table 2: round trip and throughput versus payload.
pub fn sweep(rows: &[MhRow], systems: &[SystemName], pinned: bool) -> Table {
    let mut t = Table::new([
        "system", "payload", "rtt p50", "rtt mean", "rtt p99", "rtt max", "msgs/s", "MB/s", "loss",
    ]);
    for &s in systems {
        for &sz in SWEEP_SIZES {
            let r = key(pinned, s, Kind::RoundTrip, Impairment::None, sz, 1);
            let th = key(pinned, s, Kind::Throughput, Impairment::None, sz, 1);
            t.row([
                s.name().to_owned(),
                size(sz),
                lat(rows::med(rows, r, rows::median_ns)),
                lat(rows::med(rows, r, rows::mean_ns)),
                lat(rows::med(rows, r, rows::p99_ns)),
                lat(rows::most(rows, r, rows::max_ns)),
                num(rows::med(rows, th, |r| r.msgs_per_sec)),
                rows::med(rows, th, |r| r.mb_per_sec)
                    .map_or_else(|| DASH.to_owned(), |v| format!("{v:.1}")),
                pct(rows::med(rows, th, loss), 3),
            ]);
        }
    }
    t.note("rtt: ping-pong A → B → A (B echoes a fresh message of the same size); throughput: A publishes as fast as Block allows, B counts; msgs/s = received ÷ (first send → last arrival); MB = 10^6 B of payload");
    t
}

/// Table 3: service call round trip versus payload.
pub fn service(rows: &[MhRow], systems: &[SystemName], pinned: bool) -> Table {
    let mut t = Table::new(["system", "payload", "p50", "mean", "p99", "max", "calls/s"]);
    for &s in systems {
        for &sz in SWEEP_SIZES {
            let k = key(pinned, s, Kind::Service, Impairment::None, sz, 1);
            t.row([
                s.name().to_owned(),
                size(sz),
                lat(rows::med(rows, k, rows::median_ns)),
                lat(rows::med(rows, k, rows::mean_ns)),
                lat(rows::med(rows, k, rows::p99_ns)),
                lat(rows::most(rows, k, rows::max_ns)),
                num(rows::med(rows, k, |r| r.latency.map(|l| l.msgs_per_sec))),
            ]);
        }
    }
    t.note(
        "client on B, server on A; one call in flight; request and response of the payload size",
    );
    t
}

/// Table 4: one-way at 1 kHz on an impaired link.
pub fn impaired(rows: &[MhRow], systems: &[SystemName], pinned: bool) -> Table {
    let mut t = Table::new([
        "system",
        "payload",
        "link",
        "avg",
        "max",
        "loss",
        "rate/topic",
        "CPU A",
        "CPU B",
    ]);
    for &s in systems {
        for imp in [Impairment::Drop, Impairment::Cap] {
            for &sz in IMPAIRED_SIZES {
                let k = key(pinned, s, Kind::Channel, imp, sz, 1);
                channel_rows(&mut t, rows, k);
                prefixed(&mut t, vec![s.name().into(), size(sz), imp.label()]);
            }
        }
    }
    t.note("1 topic at 1 kHz; the impairment applies to what each host sends on the link (loss: nftables numgen random on both hosts; cap: tc tbf on both veth ends); loss here is messages lost by the middleware, not packets");
    t
}

/// A ratio horus ÷ zenoh of `stat` over rounds' medians, with whether it meets
/// its target (`at_most`: latency ≤ target; otherwise throughput ≥ target).
fn ratio(
    rows: &[MhRow],
    k: Key,
    stat: fn(&MhRow) -> Option<f64>,
    target: f64,
    at_most: bool,
) -> (String, Option<bool>) {
    let h = rows::med(
        rows,
        Key {
            system: SystemName::Horus,
            ..k
        },
        stat,
    );
    let z = rows::med(
        rows,
        Key {
            system: SystemName::Zenoh,
            ..k
        },
        stat,
    );
    match (h, z) {
        (Some(h), Some(z)) if z > 0.0 => {
            let r = h / z;
            let met = if at_most { r <= target } else { r >= target };
            (format!("{r:.2}{}", if met { "" } else { " ✗" }), Some(met))
        }
        _ => (DASH.to_owned(), None),
    }
}

/// Ratios horus ÷ raw Zenoh against the targets (latency ≤ 1.1 ×, throughput
/// ≥ 0.9 ×), per payload; `None` unless both systems ran.
pub fn ratios(rows: &[MhRow], systems: &[SystemName], pinned: bool) -> Option<Table> {
    if !(systems.contains(&SystemName::Horus) && systems.contains(&SystemName::Zenoh)) {
        return None;
    }
    const LAT: f64 = 1.1;
    const THR: f64 = 0.9;
    let mut t = Table::new([
        "payload",
        "one-way avg",
        "rtt p50",
        "rtt mean",
        "msgs/s",
        "call p50",
        "call mean",
        "targets",
    ]);
    for &sz in SWEEP_SIZES {
        let ch = key(
            pinned,
            SystemName::Horus,
            Kind::Channel,
            Impairment::None,
            sz,
            1,
        );
        let rt = key(
            pinned,
            SystemName::Horus,
            Kind::RoundTrip,
            Impairment::None,
            sz,
            1,
        );
        let th = key(
            pinned,
            SystemName::Horus,
            Kind::Throughput,
            Impairment::None,
            sz,
            1,
        );
        let sv = key(
            pinned,
            SystemName::Horus,
            Kind::Service,
            Impairment::None,
            sz,
            1,
        );
        let cells = [
            ratio(rows, ch, rows::mean_ns, LAT, true),
            ratio(rows, rt, rows::median_ns, LAT, true),
            ratio(rows, rt, rows::mean_ns, LAT, true),
            ratio(rows, th, |r| r.msgs_per_sec, THR, false),
            ratio(rows, sv, rows::median_ns, LAT, true),
            ratio(rows, sv, rows::mean_ns, LAT, true),
        ];
        let verdict = if cells.iter().all(|(_, m)| m.is_none()) {
            DASH.to_owned()
        } else if cells.iter().all(|(_, m)| *m != Some(false)) {
            "met".to_owned()
        } else {
            "missed".to_owned()
        };
        let mut row = vec![size(sz)];
        row.extend(cells.into_iter().map(|(s, _)| s));
        row.push(verdict);
        t.row(row);
    }
    t.note("horus ÷ raw Zenoh of the medians over rounds (one-way: the channel table's 1-topic rows at 1 kHz; msgs/s: the throughput column); targets: latency ≤ 1.1, throughput ≥ 0.9; ✗ marks a ratio that misses its target; \"–\" where a cell was not measured (16 B has no channel row)");
    Some(t)
}
