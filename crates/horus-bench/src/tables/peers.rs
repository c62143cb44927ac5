//! The side-by-side table of `peers`, its ratios, and where a peer beat horus.

use super::{opt, DASH};
use crate::harness::Mode;
use crate::markdown::Table;
use crate::report::{ns, size, Kind, Row};

/// The systems of the side-by-side table: (column, system, mode).
pub const PEER_COLUMNS: &[(&str, &str, Option<Mode>)] = &[
    ("floor: cache line", "floor:cacheline", None),
    ("floor: touch", "floor:touch", None),
    ("floor: copy", "floor:copy", None),
    ("horus (loan)", "horus", Some(Mode::Loan)),
    ("horus (copy)", "horus", Some(Mode::Copy)),
    ("iceoryx2", "iceoryx2", None),
    ("zenoh (shm)", "zenoh-shm", None),
    ("zenoh (tcp)", "zenoh", None),
    ("unix socket", "uds", None),
];

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
        "Median round trip, same run, two processes pinned to two CPUs (floors: two threads). \
         Every payload byte written by the sender and read by the receiver.",
    );
    t
}

/// Peers in the ratio table: (column, system, mode).
const RATIO_PEERS: &[(&str, &str, Option<Mode>)] = &[
    ("horus ÷ iceoryx2", "iceoryx2", None),
    ("horus ÷ zenoh (shm)", "zenoh-shm", None),
    ("horus ÷ zenoh (tcp)", "zenoh", None),
    ("horus ÷ unix socket", "uds", None),
    ("horus ÷ floor: touch", "floor:touch", None),
    ("horus ÷ floor: cache line", "floor:cacheline", None),
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

/// `peers`: horus (loan) median ÷ each peer's median (below 1 = horus faster).
pub fn peers_ratios(rows: &[Row], sizes: &[usize]) -> Table {
    let mut t = Table::new(std::iter::once("size").chain(RATIO_PEERS.iter().map(|c| c.0)));
    for &s in sizes {
        let horus = median_of(rows, "horus", Some(Mode::Loan), s);
        let mut cells = vec![size(s)];
        for (_, system, mode) in RATIO_PEERS {
            let peer = median_of(rows, system, *mode, s);
            cells.push(match (horus, peer) {
                (Some(h), Some(p)) => ratio(h as f64 / p.max(1) as f64),
                _ => DASH.to_owned(),
            });
        }
        t.row(cells);
    }
    t.note(
        "Ratio of medians, horus in loan mode: below 1 horus is faster than that peer, above 1 \
         slower.",
    );
    t
}

/// Sizes at which some middleware beat horus (either mode), for the text.
pub fn peers_losses(rows: &[Row], sizes: &[usize]) -> Vec<String> {
    let mut out = Vec::new();
    for &s in sizes {
        let best = [Mode::Loan, Mode::Copy]
            .iter()
            .filter_map(|m| median_of(rows, "horus", Some(*m), s))
            .min();
        let Some(h) = best else { continue };
        for (col, system, mode) in PEER_COLUMNS.iter().filter(|c| !c.1.starts_with("floor")) {
            if *system == "horus" {
                continue;
            }
            if let Some(p) = median_of(rows, system, *mode, s).filter(|&p| p < h) {
                out.push(format!(
                    "at {}: {col} {} < horus {} ({:.1} % lower)",
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
        ];
        let sizes = peer_sizes(&rows);
        assert_eq!(sizes, [16]);
        let t = peers_side_by_side(&rows, &sizes);
        assert_eq!(t.rows[0][1], "100 ns");
        assert_eq!(t.rows[0][4], "300 ns");
        let r = peers_ratios(&rows, &sizes);
        assert_eq!(r.rows[0][1], "0.500");
        assert_eq!(r.rows[0][6], "3.00");
        assert_eq!(ratio(0.002512), "0.00251");
        assert_eq!(ratio(251.2), "251");
        let losses = peers_losses(&rows, &sizes);
        assert_eq!(losses.len(), 1);
        assert!(losses[0].contains("zenoh (tcp)"));
    }
}
