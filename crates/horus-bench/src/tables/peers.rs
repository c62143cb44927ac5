//! The side-by-side table of `peers`, its ratios, and where a peer beat horus.

use super::{opt, DASH};
use crate::harness::Mode;
use crate::markdown::Table;
use crate::report::{ns, size, Kind, Row};

/// The systems of the side-by-side table: (column, system, mode). Every column says
/// how its receivers wait: spin (the floor and references), busy-poll or blocking.
pub const PEER_COLUMNS: &[(&str, &str, Option<Mode>)] = &[
    ("floor: cache line (spin)", "floor:cacheline", None),
    ("ref: touch in place (spin)", "ref:touch", None),
    ("ref: 3 memcpys (spin)", "ref:copy", None),
    ("horus loan, busy-poll", "horus", Some(Mode::Loan)),
    ("horus copy, busy-poll", "horus", Some(Mode::Copy)),
    ("horus loan, blocking", "horus:futex", Some(Mode::Loan)),
    ("iceoryx2 loan, busy-poll", "iceoryx2", None),
    ("zenoh shm, blocking", "zenoh-shm", None),
    ("zenoh tcp, blocking", "zenoh", None),
    ("unix socket, blocking", "uds", None),
];

/// Whether a system's receivers busy-poll (`true`) or block (`false`); `None` for the
/// floor and references, which spin on a shared word.
pub fn busy_polls(system: &str) -> Option<bool> {
    match system {
        "horus" | "iceoryx2" => Some(true),
        "horus:futex" | "zenoh" | "zenoh-shm" | "uds" => Some(false),
        _ => None,
    }
}

/// The horus row a peer is compared with: the one that waits the same way
/// (busy-poll horus for a busy-polling peer, blocking horus for a blocking one).
pub fn horus_like(peer: &str) -> (&'static str, &'static str) {
    match busy_polls(peer) {
        Some(false) => ("horus:futex", "horus loan, blocking"),
        _ => ("horus", "horus loan, busy-poll"),
    }
}

/// Median RTT of `system` (and `mode`) at `bytes` (or its size-independent row).
pub fn median_of(rows: &[Row], system: &str, mode: Option<Mode>, bytes: usize) -> Option<u64> {
    rows.iter()
        .filter(|r| r.kind == Kind::RoundTrip && r.system == system && r.pinned)
        .filter(|r| mode.is_none_or(|m| r.mode == m))
        .find(|r| r.size.is_none_or(|s| s == bytes))
        .and_then(|r| r.rtt)
        .map(|s| s.median_ns)
}

/// Sizes present in peer rows, ascending.
pub fn peer_sizes(rows: &[Row]) -> Vec<usize> {
    let mut v: Vec<usize> = rows.iter().filter_map(|r| r.size).collect();
    v.sort_unstable();
    v.dedup();
    v
}

/// `peers`: median RTT of every system at every size, side by side.
pub fn peers_side_by_side(rows: &[Row], sizes: &[usize]) -> Table {
    let mut t = Table::new(std::iter::once("size").chain(PEER_COLUMNS.iter().map(|c| c.0)));
    for &s in sizes {
        let mut cells = vec![size(s)];
        for (_, system, mode) in PEER_COLUMNS {
            cells.push(opt(median_of(rows, system, *mode, s), ns));
        }
        t.row(cells);
    }
    t.note(
        "Median round trip, same run, two processes pinned to two CPUs (floor and references: \
         two threads). Every payload byte written by the sender and read by the receiver. \
         busy-poll = the receiver spins on try_recv; blocking = it sleeps until woken.",
    );
    t
}

/// The ratio table: (column, horus row, peer row); horus in loan mode, waiting the
/// way the peer waits.
const RATIO_PEERS: &[(&str, &str, &str)] = &[
    ("horus busy-poll ÷ iceoryx2 busy-poll", "horus", "iceoryx2"),
    ("horus blocking ÷ zenoh shm", "horus:futex", "zenoh-shm"),
    ("horus blocking ÷ zenoh tcp", "horus:futex", "zenoh"),
    ("horus blocking ÷ unix socket", "horus:futex", "uds"),
    ("horus busy-poll ÷ ref: touch", "horus", "ref:touch"),
    (
        "horus busy-poll ÷ floor: cache line",
        "horus",
        "floor:cacheline",
    ),
];

/// A ratio with three significant digits (`0.00251`, `0.251`, `2.51`, `251`).
pub fn ratio(v: f64) -> String {
    let digits = if v > 0.0 {
        (2 - v.log10().floor() as i32).clamp(0, 6) as usize
    } else {
        2
    };
    format!("{v:.digits$}")
}

/// `peers`: horus (loan) median ÷ each peer's median, horus waiting the way the
/// peer waits (below 1 = horus faster in this run).
pub fn peers_ratios(rows: &[Row], sizes: &[usize]) -> Table {
    let mut t = Table::new(std::iter::once("size").chain(RATIO_PEERS.iter().map(|c| c.0)));
    for &s in sizes {
        let mut cells = vec![size(s)];
        for (_, horus, system) in RATIO_PEERS {
            let h = median_of(rows, horus, Some(Mode::Loan), s);
            let peer = median_of(rows, system, None, s);
            cells.push(match (h, peer) {
                (Some(h), Some(p)) => ratio(h as f64 / p.max(1) as f64),
                _ => DASH.to_owned(),
            });
        }
        t.row(cells);
    }
    t.note(
        "Ratio of medians from one run, horus in loan mode and waiting the way the peer waits \
         (busy-poll against iceoryx2 and the references, blocking against Zenoh and the \
         socket): below 1 horus was faster in this run, above 1 slower. One run is not a \
         verdict: see the interleaved rounds below.",
    );
    t
}

/// Sizes at which a middleware's median was below horus's in this run, horus waiting
/// the way that middleware waits (busy-poll: its better mode, copy or loan;
/// blocking: the loan row).
pub fn peers_losses(rows: &[Row], sizes: &[usize]) -> Vec<String> {
    let mut out = Vec::new();
    for &s in sizes {
        for (col, system, mode) in PEER_COLUMNS {
            if busy_polls(system).is_none() || system.starts_with("horus") {
                continue;
            }
            let (horus, horus_col) = horus_like(system);
            let modes: &[Mode] = if horus == "horus" {
                &[Mode::Loan, Mode::Copy]
            } else {
                &[Mode::Loan]
            };
            let best = modes
                .iter()
                .filter_map(|m| median_of(rows, horus, Some(*m), s))
                .min();
            let Some(h) = best else { continue };
            if let Some(p) = median_of(rows, system, *mode, s).filter(|&p| p < h) {
                out.push(format!(
                    "at {}: {col} {} < {horus_col} {} ({:.1} % lower)",
                    size(s),
                    ns(p),
                    ns(h),
                    100.0 * (h - p) as f64 / h as f64
                ));
            }
        }
    }
    out
}

/// Rows whose median came in below `floor:cacheline` in this run: none, if the floor
/// is the lower bound it claims to be (the report prints any it finds).
pub fn floor_violations(rows: &[Row], sizes: &[usize]) -> Vec<String> {
    let Some(floor) = sizes
        .first()
        .and_then(|&s| median_of(rows, "floor:cacheline", None, s))
    else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for &s in sizes {
        for (col, system, mode) in PEER_COLUMNS.iter().filter(|c| c.1 != "floor:cacheline") {
            if let Some(m) = median_of(rows, system, *mode, s).filter(|&m| m < floor) {
                out.push(format!(
                    "at {}: {col} {} < floor: cache line {}",
                    size(s),
                    ns(m),
                    ns(floor)
                ));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::payload::Touch;
    use crate::stats::Summary;

    fn row(system: &str, mode: Mode, size: Option<usize>, median: u64) -> Row {
        let s = Summary::from_samples(vec![median], median).unwrap();
        Row::round_trip(system, size, mode, Some(Touch::Full), true, s)
    }

    #[test]
    fn side_by_side_and_ratios() {
        let rows = vec![
            row("floor:cacheline", Mode::Reference, None, 100),
            row("horus", Mode::Loan, Some(16), 300),
            row("horus", Mode::Copy, Some(16), 280),
            row("iceoryx2", Mode::Loan, Some(16), 600),
            row("zenoh", Mode::Copy, Some(16), 250),
            row("horus:futex", Mode::Loan, Some(16), 200),
            row("uds", Mode::Copy, Some(16), 150),
        ];
        let sizes = peer_sizes(&rows);
        assert_eq!(sizes, [16]);
        let t = peers_side_by_side(&rows, &sizes);
        assert_eq!(t.rows[0][1], "100 ns");
        assert_eq!(t.rows[0][4], "300 ns");
        let r = peers_ratios(&rows, &sizes);
        assert_eq!(r.rows[0][1], "0.500");
        assert_eq!(r.rows[0][3], "0.800");
        assert_eq!(r.rows[0][6], "3.00");
        assert_eq!(ratio(0.002512), "0.00251");
        assert_eq!(ratio(251.2), "251");
        // Blocking peers are compared with blocking horus (200 ns): only the socket
        // (150 ns) was below it; zenoh (250 ns) was not, though below busy-poll horus.
        let losses = peers_losses(&rows, &sizes);
        assert_eq!(losses.len(), 1, "{losses:?}");
        assert!(losses[0].contains("unix socket, blocking"));
        assert!(floor_violations(&rows, &sizes).is_empty());
        let mut below = rows.clone();
        below.push(row("ref:touch", Mode::Reference, Some(16), 90));
        assert_eq!(floor_violations(&below, &sizes).len(), 1);
    }
}
