//! The table of the `many_to_many` binary: horus against iceoryx2, 4 publishers ×
//! 4 subscribers, per-round ratios.

use crate::interleaved::{Comparison, Verdict, MIN_ROUNDS_FOR_VERDICT};
use crate::markdown::Table;
use crate::report::{ns, size};

/// One line per message: both systems' round trips (median over rounds of each
/// round's median) and the median and range of the per-round ratios. Unpinned rows
/// (fewer CPUs than endpoints: the scheduler's time slices) get no verdict.
pub fn many_to_many(comparisons: &[(String, Comparison)], placement: &str, pinned: bool) -> Table {
    let mut t = Table::new([
        "message",
        "size",
        "rounds",
        "horus 4:4 RTT",
        "iceoryx2 4:4 RTT",
        "ratio median",
        "ratio min–max",
        "horus faster in",
        "verdict",
    ])
    .left(0)
    .left(8);
    for (message, c) in comparisons {
        t.row([
            message.clone(),
            size(c.size),
            c.ratios.len().to_string(),
            ns(c.horus_median_ns.round() as u64),
            ns(c.peer_median_ns.round() as u64),
            format!("{:.3}", c.median),
            format!("{:.3}–{:.3}", c.min, c.max),
            format!("{} of {}", c.horus_faster, c.ratios.len()),
            match c.verdict {
                _ if !pinned => "none (unpinned)".to_owned(),
                Verdict::TooFewRounds => format!("none (< {MIN_ROUNDS_FOR_VERDICT} rounds)"),
                Verdict::FasterEveryRound => "horus faster in every round".to_owned(),
                Verdict::SlowerEveryRound => "horus slower in every round".to_owned(),
                Verdict::Mixed => "mixed".to_owned(),
            },
        ]);
    }
    t.note(format!(
        "4 publisher and 4 subscriber processes on one topic (iceoryx2: one service), every \
         endpoint busy-polling, {placement}. RTT = one publisher's send until all 4 subscribers \
         have read the message and their acks are back; the 4 publishers run concurrently in \
         closed loops, samples pooled; median over rounds of each round's median. Ratio = \
         horus ÷ iceoryx2 per round (measured back to back), below 1 horus was faster. Not \
         comparable with the reference page's N:N figures, which are send-only."
    ));
    t
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::many_to_many::{compare, ManyRow};
    use crate::stats::Summary;

    #[test]
    fn an_unpinned_run_draws_no_verdict() {
        let rows: Vec<ManyRow> = (0..5)
            .flat_map(|k| {
                ["horus", "iceoryx2"].map(|system| ManyRow {
                    round: k,
                    order: 0,
                    system: system.to_owned(),
                    message: "CmdVel".to_owned(),
                    size: 16,
                    pubs: 4,
                    subs: 4,
                    wait: "busy-poll".to_owned(),
                    pinned: false,
                    cpus: Vec::new(),
                    rtt: Summary::from_samples(vec![if system == "horus" { 100 } else { 400 }], 1)
                        .unwrap(),
                })
            })
            .collect();
        let c = compare(&rows);
        assert_eq!(
            many_to_many(&c, "unpinned", false).rows[0][8],
            "none (unpinned)"
        );
        assert_eq!(
            many_to_many(&c, "pinned", true).rows[0][8],
            "horus faster in every round"
        );
    }
}
