//! The service latency targets, checked against the run's own rows: the
//! median call round trip (pinned), each compared with its reference in the same
//! round, summarised over rounds. PASS when the median of the per-round ratios
//! meets the target.

use serde::Serialize;

use crate::markdown::Table;
use crate::payload::Touch;

use super::rows::{self, Key, Kind, RpcRow, Spread, TOPIC, WAKE};
use super::tables::{ns_spread, ratio_spread};
use super::System;

/// One target and what the run measured.
#[derive(Debug, Clone, Serialize)]
pub struct Target {
    /// What is compared with what.
    pub name: String,
    /// `ratio ≤ limit` or `ratio ≥ limit`.
    pub at_most: bool,
    /// The limit on the ratio.
    pub limit: f64,
    /// The measured side, median call round trip over rounds, ns.
    pub measured: Option<Spread>,
    /// The reference side, ns.
    pub reference: Option<Spread>,
    /// measured ÷ reference per round (or reference ÷ measured for "≥ N× faster").
    pub ratio: Option<Spread>,
}

impl Target {
    /// `PASS`, `MISS`, or `not measured`.
    pub fn verdict(&self) -> &'static str {
        match self.ratio {
            None => "not measured",
            Some(r)
                if (self.at_most && r.median <= self.limit)
                    || (!self.at_most && r.median >= self.limit) =>
            {
                "PASS"
            }
            Some(_) => "MISS",
        }
    }
}

fn key(kind: Kind, system: &str, size: usize, touch: Touch) -> Key<'_> {
    Key {
        pinned: true,
        kind,
        system,
        size,
        in_flight: 1,
        touch,
    }
}

fn target(
    rows: &[RpcRow],
    name: &str,
    a: Key<'_>,
    b: Key<'_>,
    at_most: bool,
    limit: f64,
) -> Target {
    let ratio = if at_most {
        rows::ratio(rows, a, b, rows::median_ns)
    } else {
        rows::ratio(rows, b, a, rows::median_ns)
    };
    Target {
        name: name.to_owned(),
        at_most,
        limit,
        measured: rows::spread(rows, a, rows::median_ns),
        reference: rows::spread(rows, b, rows::median_ns),
        ratio,
    }
}

/// The five service latency targets, from the pinned rows.
pub fn targets(rows: &[RpcRow]) -> Vec<Target> {
    let full = Touch::Full;
    let horus = key(Kind::Latency, System::Horus.name(), 64, full);
    vec![
        target(
            rows,
            "horus 64 B call ≤ 2 × horus 16 B topic round trip (busy-poll)",
            horus,
            key(Kind::Topic, TOPIC, 16, full),
            true,
            2.0,
        ),
        target(
            rows,
            "horus 64 B call ≤ 0.2 × iceoryx2 request/response (busy-poll)",
            horus,
            key(Kind::Latency, System::Iceoryx2.name(), 64, full),
            true,
            0.2,
        ),
        target(
            rows,
            "horus 64 B call ≥ 50 × faster than gRPC over TCP",
            horus,
            key(Kind::Latency, System::GrpcTcp.name(), 64, full),
            false,
            50.0,
        ),
        target(
            rows,
            "horus 64 B call ≥ 50 × faster than gRPC over a Unix socket",
            horus,
            key(Kind::Latency, System::GrpcUds.name(), 64, full),
            false,
            50.0,
        ),
        target(
            rows,
            "horus blocking 64 B call ≤ 1.2 × the futex wake reference (ref:wake); horus blocking spins 64 polls before its futex sleep",
            key(Kind::Latency, System::HorusBlocking.name(), 64, full),
            key(Kind::Wake, WAKE, 0, full),
            true,
            1.2,
        ),
        target(
            rows,
            "horus 1 MiB call by loan ≤ 2 × horus 64 B call, touch mode",
            key(Kind::Latency, System::Horus.name(), 1048576, Touch::Ends),
            key(Kind::Latency, System::Horus.name(), 64, Touch::Ends),
            true,
            2.0,
        ),
    ]
}

/// The targets as a table.
pub fn table(targets: &[Target]) -> Table {
    let mut t = Table::new([
        "target",
        "measured",
        "reference",
        "ratio",
        "limit",
        "verdict",
    ]);
    let cell = |s: Option<Spread>| s.map_or("—".to_owned(), ns_spread);
    for x in targets {
        t.row([
            x.name.clone(),
            cell(x.measured),
            cell(x.reference),
            x.ratio.map_or("—".to_owned(), ratio_spread),
            format!("{} {}", if x.at_most { "≤" } else { "≥" }, x.limit),
            x.verdict().to_owned(),
        ]);
    }
    t.note(
        "Pinned rows only. measured / reference: median call round trip, median [min–max] over \
         rounds; ratio = measured ÷ reference per round (for \"faster than\": reference ÷ \
         measured), median [min–max]; the verdict compares the median ratio with the limit. \
         Touch mode: only the first and last 8 bytes of each payload written and read.",
    );
    t
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::Summary;

    fn row(kind: Kind, system: &str, size: usize, touch: Touch, v: u64) -> RpcRow {
        RpcRow {
            round: 0,
            pinned: true,
            kind,
            system: system.to_owned(),
            size,
            in_flight: 1,
            touch,
            rtt: Summary::from_samples(vec![v], v),
            calls_per_sec: None,
        }
    }

    #[test]
    fn verdicts_follow_the_median_ratio_and_missing_is_not_a_pass() {
        let rows = vec![
            row(Kind::Latency, "horus", 64, Touch::Full, 1000),
            row(Kind::Topic, TOPIC, 16, Touch::Full, 400),
            row(Kind::Latency, "grpc-tcp", 64, Touch::Full, 60_000),
        ];
        let t = targets(&rows);
        assert_eq!(t[0].verdict(), "MISS"); // 2.5 > 2
        assert_eq!(t[2].verdict(), "PASS"); // 60 >= 50
        assert_eq!(t[1].verdict(), "not measured");
        assert_eq!(table(&t).rows.len(), 6);
    }
}
