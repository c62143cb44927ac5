//! The tables of the `rpc` benchmark, printed by the binary and rendered into
//! `docs/benchmarks.md` by `report`: every value is the median over rounds with
//! its [min–max] range over rounds.

use crate::markdown::Table;
use crate::payload::Touch;
use crate::report::{ns, size};

use super::rows::{self, Key, Kind, RpcRow, Spread};
use super::{System, CALL_RATE_HZ, IN_FLIGHT, STRESS_WINDOW};

fn key(pinned: bool, kind: Kind, system: &str, bytes: usize, in_flight: usize) -> Key<'_> {
    Key {
        pinned,
        kind,
        system,
        size: bytes,
        in_flight,
        touch: Touch::Full,
    }
}

/// `12.3 µs [11.9–13.0]`.
pub fn ns_spread(s: Spread) -> String {
    format!(
        "{} [{}–{}]",
        ns(s.median.round() as u64),
        ns(s.min.round() as u64),
        ns(s.max.round() as u64)
    )
}

fn rate(v: f64) -> String {
    match v {
        v if v >= 1e6 => format!("{:.2} M", v / 1e6),
        v if v >= 1e3 => format!("{:.1} k", v / 1e3),
        v => format!("{v:.0}"),
    }
}

fn rate_spread(s: Spread) -> String {
    format!("{} [{}–{}]", rate(s.median), rate(s.min), rate(s.max))
}

/// `0.123 [0.100–0.150]`.
pub fn ratio_spread(s: Spread) -> String {
    let f = |v: f64| {
        if v >= 10.0 {
            format!("{v:.0}")
        } else if v >= 1.0 {
            format!("{v:.2}")
        } else {
            format!("{v:.3}")
        }
    };
    format!("{} [{}–{}]", f(s.median), f(s.min), f(s.max))
}

/// Systems present in `rows` (in table order), and sizes present, ascending.
pub fn present(rows: &[RpcRow]) -> (Vec<System>, Vec<usize>) {
    let systems = System::ALL
        .into_iter()
        .filter(|s| rows.iter().any(|r| r.system == s.name()))
        .collect();
    let mut sizes: Vec<usize> = rows
        .iter()
        .filter(|r| r.kind == Kind::Latency)
        .map(|r| r.size)
        .collect();
    sizes.sort_unstable();
    sizes.dedup();
    (systems, sizes)
}

/// Why a cell is empty: `failed` if a measurement of the system failed, else `—`.
fn missing(system: System, errors: &[String]) -> String {
    let tag = format!(" {} ", system.name());
    if errors.iter().any(|e| e.contains(&tag)) {
        "failed".to_owned()
    } else {
        "—".to_owned()
    }
}

/// Table 1: average, p99 and max call latency versus payload, one call in flight.
pub fn latency(rows: &[RpcRow], systems: &[System], errors: &[String], pinned: bool) -> Table {
    let (_, sizes) = present(rows);
    let mut t = Table::new(["payload", "system", "average", "p99", "max", "median"]).left(1);
    for &bytes in &sizes {
        for &s in systems {
            let k = key(pinned, Kind::Latency, s.name(), bytes, 1);
            match rows::spread(rows, k, rows::mean) {
                Some(avg) => {
                    let cell = |f| rows::spread(rows, k, f).map_or("—".to_owned(), ns_spread);
                    t.row([
                        size(bytes),
                        s.label().to_owned(),
                        ns_spread(avg),
                        cell(rows::p99),
                        cell(rows::max),
                        cell(rows::median_ns),
                    ]);
                }
                None => t.row([size(bytes), s.label().to_owned(), missing(s, errors)]),
            }
        }
    }
    t.note(format!(
        "Call round trip (request and response of the payload size, every byte written and \
         read), one call in flight, {}; each value the median over rounds of that round's \
         statistic, [min–max] over rounds.",
        if pinned {
            "client and server pinned to two CPUs"
        } else {
            "unpinned"
        }
    ));
    t
}

/// Table 2: calls per second versus payload, stress mode.
pub fn stress(rows: &[RpcRow], systems: &[System], errors: &[String], pinned: bool) -> Table {
    let (_, sizes) = present(rows);
    let mut header = vec!["payload".to_owned()];
    header.extend(systems.iter().map(|s| s.label().to_owned()));
    let mut t = Table::new(header);
    for &bytes in &sizes {
        let mut cells = vec![size(bytes)];
        for &s in systems {
            let k = key(pinned, Kind::Stress, s.name(), bytes, STRESS_WINDOW);
            cells.push(
                rows::spread(rows, k, rows::rate).map_or_else(|| missing(s, errors), rate_spread),
            );
        }
        t.row(cells);
    }
    t.note(format!(
        "Calls per second in stress mode: one client keeps {STRESS_WINDOW} calls in flight (the \
         next call starts as soon as the oldest completes), one server answers; calls ÷ time \
         from the first start to the last completion; median [min–max] over rounds."
    ));
    t
}

/// Table 3: latency versus calls in flight at the fixed call rate.
pub fn in_flight(rows: &[RpcRow], systems: &[System], errors: &[String], pinned: bool) -> Table {
    let mut t = Table::new(["in flight", "system", "average", "p99", "max", "median"]).left(1);
    for &k in IN_FLIGHT {
        for &s in systems {
            let key = key(pinned, Kind::InFlight, s.name(), super::IN_FLIGHT_SIZE, k);
            match rows::spread(rows, key, rows::mean) {
                Some(avg) => {
                    let cell = |f| rows::spread(rows, key, f).map_or("—".to_owned(), ns_spread);
                    t.row([
                        k.to_string(),
                        s.label().to_owned(),
                        ns_spread(avg),
                        cell(rows::p99),
                        cell(rows::max),
                        cell(rows::median_ns),
                    ]);
                }
                None => t.row([k.to_string(), s.label().to_owned(), missing(s, errors)]),
            }
        }
    }
    t.note(format!(
        "{} B calls at a total rate of {CALL_RATE_HZ} calls/s: every k ms the client starts k \
         calls back to back, then completes them in order; latency = from just before a call's \
         start to its completion; median [min–max] over rounds.",
        super::IN_FLIGHT_SIZE
    ));
    t
}

/// horus ÷ each peer, per round, of the median latency (table 1; the average is
/// dominated by the VM's millisecond outliers) and of calls per second (table
/// 2); each peer against the horus row that waits the same way.
pub fn ratios(rows: &[RpcRow], systems: &[System], pinned: bool) -> Table {
    let (_, sizes) = present(rows);
    let peers: Vec<System> = systems
        .iter()
        .copied()
        .filter(|s| !matches!(s, System::Horus | System::HorusBlocking))
        .collect();
    let mut header = vec!["payload".to_owned()];
    for p in &peers {
        header.push(format!(
            "median latency {} ÷ {}",
            p.horus_pair().label(),
            p.label()
        ));
    }
    for p in &peers {
        header.push(format!("calls/s {} ÷ {}", p.horus_pair().name(), p.name()));
    }
    let mut t = Table::new(header);
    for &bytes in &sizes {
        let mut cells = vec![size(bytes)];
        for (kind, f, n) in [
            (
                Kind::Latency,
                rows::median_ns as fn(&RpcRow) -> Option<f64>,
                1,
            ),
            (Kind::Stress, rows::rate, STRESS_WINDOW),
        ] {
            for p in &peers {
                let h = key(pinned, kind, p.horus_pair().name(), bytes, n);
                let q = key(pinned, kind, p.name(), bytes, n);
                cells.push(rows::ratio(rows, h, q, f).map_or("—".to_owned(), ratio_spread));
            }
        }
        t.row(cells);
    }
    t.note(
        "horus ÷ peer per round (same round, same size), median [min–max] over rounds; each \
         peer against the horus row that waits the way it does (iceoryx2 against busy-poll \
         horus; Zenoh and gRPC, which block, against blocking horus). Median latency of one \
         call in flight: below 1 horus was faster; calls/s: above 1 horus made more calls \
         per second.",
    );
    t
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::Summary;

    fn row(round: usize, system: System, kind: Kind, n: usize, v: u64) -> RpcRow {
        RpcRow {
            round,
            pinned: true,
            kind,
            system: system.name().to_owned(),
            size: 64,
            in_flight: n,
            touch: Touch::Full,
            rtt: Summary::from_samples(vec![v], v),
            calls_per_sec: (kind == Kind::Stress).then_some(v as f64),
        }
    }

    #[test]
    fn a_failed_system_is_marked_not_omitted() {
        let rows = vec![row(0, System::Horus, Kind::Latency, 1, 1000)];
        let systems = [System::Horus, System::GrpcTcp];
        let errors = vec!["pinned round 0 grpc-tcp 64: connection refused".to_owned()];
        let t = latency(&rows, &systems, &errors, true);
        assert_eq!(t.rows.len(), 2);
        assert_eq!(t.rows[1][2], "failed");
        assert_eq!(t.rows[0][2], "1.00 µs [1.00 µs–1.00 µs]");
    }

    #[test]
    fn ratios_pair_each_peer_with_the_horus_row_that_waits_alike() {
        let rows = vec![
            row(0, System::Horus, Kind::Latency, 1, 100),
            row(0, System::HorusBlocking, Kind::Latency, 1, 1000),
            row(0, System::Iceoryx2, Kind::Latency, 1, 400),
            row(0, System::GrpcTcp, Kind::Latency, 1, 100_000),
        ];
        let systems = [
            System::Horus,
            System::HorusBlocking,
            System::Iceoryx2,
            System::GrpcTcp,
        ];
        let t = ratios(&rows, &systems, true);
        assert_eq!(t.rows[0][1], "0.250 [0.250–0.250]");
        assert_eq!(t.rows[0][2], "0.010 [0.010–0.010]");
        assert!(t.header[2].contains("horus (blocking)"));
    }
}
