//! The transport sections: `peers` (one run, side by side), the interleaved rounds
//! (the only source of "faster" verdicts) and `pingpong` (floors, references and
//! horus, pinned and not).

use anyhow::Context;

use super::results::Results;
use super::{bullets, section, Keys};
use horus_bench::interleaved;
use horus_bench::report::Row;
use horus_bench::tables;

/// Sizes of the headline table at the top of the page.
const HEADLINE: &[usize] = &[16, 1480, 65536, 1048576];

/// `peers.*`: the headline and full side-by-side tables, the ratios, where a peer
/// or the floor came in below horus, the method.
pub(super) fn peers(r: &Results, keys: &mut Keys) {
    keys.insert(
        "peers.headline",
        section(&r.peers, "peers", |d| {
            let sizes: Vec<usize> = tables::peer_sizes(&d.rows)
                .into_iter()
                .filter(|s| HEADLINE.contains(s))
                .collect();
            tables::peers_side_by_side(&d.rows, &sizes).to_markdown()
        }),
    );
    keys.insert(
        "peers.side_by_side",
        section(&r.peers, "peers", |d| {
            tables::peers_side_by_side(&d.rows, &tables::peer_sizes(&d.rows)).to_markdown()
        }),
    );
    keys.insert(
        "peers.ratios",
        section(&r.peers, "peers", |d| {
            tables::peers_ratios(&d.rows, &tables::peer_sizes(&d.rows)).to_markdown()
        }),
    );
    keys.insert(
        "peers.losses",
        section(&r.peers, "peers", |d| {
            let sizes = tables::peer_sizes(&d.rows);
            let violations = tables::floor_violations(&d.rows, &sizes);
            let floor = if violations.is_empty() {
                "No median in this run came in below `floor: cache line`, the one lower bound \
                 on the page.\n\n"
                    .to_owned()
            } else {
                format!(
                    "**`floor: cache line` was not a lower bound in this run** (medians below \
                     it):\n\n{}\n",
                    bullets(&violations)
                )
            };
            let losses = tables::peers_losses(&d.rows, &sizes);
            let single_run = if losses.is_empty() {
                "In this one run, no middleware's median was below horus's (horus waiting the \
                 way each peer waits). One run is not a verdict; the verdicts are in the \
                 interleaved rounds below.\n"
                    .to_owned()
            } else {
                format!(
                    "Where a middleware's median was below horus's in this one run (horus \
                     waiting the way that peer waits; one run is not a verdict, see the \
                     interleaved rounds below):\n\n{}",
                    bullets(&losses)
                )
            };
            floor + &single_run
        }),
    );
    keys.insert(
        "peers.method",
        section(&r.peers, "peers", |d| bullets(&d.method)),
    );
}

/// `interleaved.*`: the per-round ratio table, the verdicts drawn from it, the method.
pub(super) fn interleaved_rounds(r: &Results, keys: &mut Keys) {
    keys.insert(
        "interleaved.table",
        section(&r.interleaved, "interleaved", |d| {
            tables::interleaved(&interleaved::compare(&d.rows)).to_markdown()
        }),
    );
    keys.insert(
        "interleaved.claims",
        section(&r.interleaved, "interleaved", |d| {
            let claims = interleaved::claims(&interleaved::compare(&d.rows));
            if claims.is_empty() {
                "*No pair of horus and a peer was measured in the same round.*\n".to_owned()
            } else {
                bullets(&claims)
            }
        }),
    );
    keys.insert(
        "interleaved.method",
        section(&r.interleaved, "interleaved", |d| bullets(&d.method)),
    );
}

/// `pingpong.*`: round trips pinned and unpinned, one-way throughput, ratios to the
/// floor and references, its targets, the method.
pub(super) fn pingpong(r: &Results, keys: &mut Keys) -> anyhow::Result<()> {
    let pp_rows: Option<Vec<Row>> = match &r.pingpong {
        Some(v) => Some(serde_json::from_value(v["rows"].clone()).context("pingpong rows")?),
        None => None,
    };
    keys.insert(
        "pingpong.method",
        section(&r.pingpong, "pingpong", |v| {
            let lines: Vec<String> = v["method"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|l| l.as_str().map(str::to_owned))
                .collect();
            bullets(&lines)
        }),
    );
    keys.insert(
        "pingpong.targets",
        section(&r.pingpong, "pingpong", |v| {
            tables::pingpong_targets(v, r.pingpong_touch.as_ref()).to_markdown()
        }),
    );
    keys.insert(
        "pingpong.rtt_pinned",
        section(&pp_rows, "pingpong", |rows| {
            tables::pingpong_rtt(rows, true).to_markdown()
        }),
    );
    keys.insert(
        "pingpong.rtt_unpinned",
        section(&pp_rows, "pingpong", |rows| {
            tables::pingpong_rtt(rows, false).to_markdown()
        }),
    );
    keys.insert(
        "pingpong.one_way",
        section(&pp_rows, "pingpong", |rows| {
            tables::pingpong_one_way(rows).to_markdown()
        }),
    );
    for (key, pinned) in [
        ("pingpong.ratios_pinned", true),
        ("pingpong.ratios_unpinned", false),
    ] {
        keys.insert(
            key,
            section(&r.pingpong, "pingpong", |v| {
                tables::pingpong_ratios(&v["ratios"], pinned).to_markdown()
            }),
        );
    }
    Ok(())
}
