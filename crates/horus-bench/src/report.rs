//! Result rows, the printed tables and the `--json` document.

use crate::harness::{Config, Mode};
use crate::payload::Touch;
use crate::ratios::Ratio;
use crate::stats::{Summary, Throughput};
use anyhow::Context;
/// Where a run happened (`horus-bench-core`'s, in every `--json` document).
pub use horus_bench_core::machine::Machine;
/// How sizes and times are written in tables (`horus-bench-core`'s).
pub use horus_bench_core::units::{ns, size};
use serde::Serialize;
use std::fmt::Write as _;
use std::path::Path;

/// What a row measured.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize)]
pub enum Kind {
    /// Ping-pong round trips; `rtt` holds the distribution.
    #[serde(rename = "rtt")]
    RoundTrip,
    /// A one-way burst; `one_way` holds the throughput.
    #[serde(rename = "one-way")]
    OneWay,
}

impl Kind {
    /// Label used in progress lines (same as the JSON value).
    pub fn label(self) -> &'static str {
        match self {
            Kind::RoundTrip => "rtt",
            Kind::OneWay => "one-way",
        }
    }
}

/// One measurement of one system at one size in one pass.
#[derive(Debug, Clone, Serialize, serde::Deserialize)]
pub struct Row {
    /// System name, e.g. `floor:cacheline`, `uds`, `iceoryx2`, `horus`.
    pub system: String,
    /// Round trip or one-way burst.
    pub kind: Kind,
    /// Message size in bytes; `None` for size-independent references.
    pub size: Option<usize>,
    /// How the payload travels.
    pub mode: Mode,
    /// How much of the payload the application touched; `None` if no payload.
    pub payload: Option<Touch>,
    /// Whether A and B were pinned to distinct CPUs.
    pub pinned: bool,
    /// Round-trip distribution (for [`Kind::RoundTrip`]).
    pub rtt: Option<Summary>,
    /// Throughput (for [`Kind::OneWay`]).
    pub one_way: Option<Throughput>,
}

impl Row {
    /// A round-trip row.
    pub fn round_trip(
        system: &str,
        size: Option<usize>,
        mode: Mode,
        payload: Option<Touch>,
        pinned: bool,
        summary: Summary,
    ) -> Self {
        Self {
            system: system.to_owned(),
            kind: Kind::RoundTrip,
            size,
            mode,
            payload,
            pinned,
            rtt: Some(summary),
            one_way: None,
        }
    }

    /// A one-way throughput row.
    pub fn one_way(
        system: &str,
        size: usize,
        mode: Mode,
        payload: Touch,
        pinned: bool,
        throughput: Throughput,
    ) -> Self {
        Self {
            system: system.to_owned(),
            kind: Kind::OneWay,
            size: Some(size),
            mode,
            payload: Some(payload),
            pinned,
            rtt: None,
            one_way: Some(throughput),
        }
    }
}

/// Everything `--json` writes.
#[derive(Debug, Serialize)]
pub struct Report<'a> {
    /// Where it ran.
    pub machine: &'a Machine,
    /// How it was measured, one statement per line.
    pub method: &'a [String],
    /// Run parameters.
    pub config: &'a Config,
    /// All measurements.
    pub rows: &'a [Row],
    /// Ratios derived from the rows.
    pub ratios: &'a [Ratio],
    /// Systems that failed, with their error.
    pub errors: &'a [String],
}

impl Report<'_> {
    /// Writes the report as pretty-printed JSON.
    pub fn write_json(&self, path: &Path) -> anyhow::Result<()> {
        let json = serde_json::to_string_pretty(self)?;
        std::fs::write(path, json + "\n").with_context(|| format!("writing {}", path.display()))
    }
}

/// Renders the round-trip table and, if any, the one-way table.
pub fn render_tables(rows: &[Row]) -> String {
    let mut out = String::new();
    let header = format!(
        "{:<18} {:>6} {:<9} {:<7} {:<6} {:>9} {:>9} {:>9} {:>9} {:>9} {:>11}",
        "system",
        "size",
        "mode",
        "payload",
        "pinned",
        "min",
        "median",
        "p99",
        "p99.9",
        "max",
        "msg/s"
    );
    let _ = writeln!(
        out,
        "round trips (RTT: A sends, B echoes, A receives)\n{header}"
    );
    for r in rows.iter().filter(|r| r.kind == Kind::RoundTrip) {
        let Some(s) = r.rtt else { continue };
        let _ = writeln!(
            out,
            "{} {:>9} {:>9} {:>9} {:>9} {:>9} {:>11}",
            prefix(r),
            ns(s.min_ns),
            ns(s.median_ns),
            ns(s.p99_ns),
            ns(s.p999_ns),
            ns(s.max_ns),
            rate(s.msgs_per_sec)
        );
    }
    let one_way: Vec<_> = rows.iter().filter(|r| r.kind == Kind::OneWay).collect();
    if !one_way.is_empty() {
        let _ = writeln!(
            out,
            "\none-way throughput (no loss; messages / time to receiver's confirmation)\n\
             {:<18} {:>6} {:<9} {:<7} {:<6} {:>9} {:>11} {:>11}",
            "system", "size", "mode", "payload", "pinned", "messages", "msg/s", "MB/s"
        );
        for r in one_way {
            let Some(t) = r.one_way else { continue };
            // Bytes moved per second only means something if every byte was touched.
            let mbps = match r.payload {
                Some(Touch::Full) => {
                    format!("{:.1}", t.msgs_per_sec * r.size.unwrap_or(0) as f64 / 1e6)
                }
                _ => "-".to_owned(),
            };
            let _ = writeln!(
                out,
                "{} {:>9} {:>11} {:>11}",
                prefix(r),
                t.messages,
                rate(t.msgs_per_sec),
                mbps
            );
        }
    }
    out
}

fn prefix(r: &Row) -> String {
    format!(
        "{:<18} {:>6} {:<9} {:<7} {:<6}",
        r.system,
        r.size.map_or_else(|| "-".to_owned(), size),
        r.mode.label(),
        r.payload.map_or("-", Touch::label),
        if r.pinned { "yes" } else { "no" }
    )
}

fn rate(v: f64) -> String {
    match v {
        v if v >= 1e6 => format!("{:.2} M", v / 1e6),
        v if v >= 1e3 => format!("{:.1} k", v / 1e3),
        v => format!("{v:.0}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_lists_every_row() {
        let s = Summary::from_samples(vec![100, 200, 300], 600).unwrap();
        let rows = [
            Row::round_trip("floor:cacheline", None, Mode::Reference, None, true, s),
            Row::one_way(
                "iceoryx2",
                16,
                Mode::Loan,
                Touch::Full,
                false,
                Throughput::new(10, 10),
            ),
        ];
        let t = render_tables(&rows);
        assert!(t.contains("floor:cacheline") && t.contains("iceoryx2"));
    }
}
