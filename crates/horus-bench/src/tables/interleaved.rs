//! The table of the `interleaved` binary: per-round ratios of horus to each peer.

use crate::interleaved::{Comparison, Verdict, MIN_ROUNDS_FOR_VERDICT};
use crate::markdown::Table;
use crate::report::{ns, size};

/// One line per peer and size: the median and range of the per-round ratios
/// `horus median / peer median`, and what they allow us to say.
pub fn interleaved(comparisons: &[Comparison]) -> Table {
    let mut t = Table::new([
        "size",
        "horus",
        "peer",
        "rounds",
        "horus RTT",
        "peer RTT",
        "ratio median",
        "ratio min–max",
        "horus faster in",
        "verdict",
    ])
    .left(1)
    .left(2)
    .left(9);
    for c in comparisons {
        t.row([
            size(c.size),
            c.pair.horus_label.to_owned(),
            c.pair.peer_label.to_owned(),
            c.ratios.len().to_string(),
            ns(c.horus_median_ns.round() as u64),
            ns(c.peer_median_ns.round() as u64),
            format!("{:.3}", c.median),
            format!("{:.3}–{:.3}", c.min, c.max),
            format!("{} of {}", c.horus_faster, c.ratios.len()),
            match c.verdict {
                Verdict::TooFewRounds => format!("none (< {MIN_ROUNDS_FOR_VERDICT} rounds)"),
                Verdict::FasterEveryRound => "horus faster in every round".to_owned(),
                Verdict::SlowerEveryRound => "horus slower in every round".to_owned(),
                Verdict::Mixed => "mixed".to_owned(),
            },
        ]);
    }
    t.note(
        "Ratio = horus's median round trip ÷ the peer's, both measured back to back in the same \
         round at the same size; one ratio per round, summarised by its median and range. Below \
         1 horus was faster. horus RTT / peer RTT = median over rounds of each round's median. \
         Round trips between two processes pinned to two CPUs, every payload byte written and \
         read; horus in loan mode, waiting the way the peer waits.",
    );
    t
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::harness::Mode;
    use crate::interleaved::{compare, RoundRow};
    use crate::stats::Summary;

    #[test]
    fn one_line_per_pair_and_size() {
        let rows: Vec<RoundRow> = (0..5)
            .flat_map(|k| {
                ["horus", "iceoryx2"].map(|system| RoundRow {
                    round: k,
                    order: 0,
                    system: system.to_owned(),
                    size: 1480,
                    mode: Mode::Loan,
                    wait: "busy-poll".to_owned(),
                    pinned: true,
                    rtt: Summary::from_samples(vec![if system == "horus" { 100 } else { 400 }], 1)
                        .unwrap(),
                })
            })
            .collect();
        let t = interleaved(&compare(&rows));
        assert_eq!(t.rows.len(), 1);
        assert_eq!(t.rows[0][6], "0.250");
        assert_eq!(t.rows[0][8], "5 of 5");
        assert_eq!(t.rows[0][9], "horus faster in every round");
    }
}
