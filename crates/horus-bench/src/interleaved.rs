//! Interleaved rounds: horus and a peer measured back to back, round after round,
//! and the per-round ratio of their medians.
//!
//! One run on these VMs can differ from the next by 2–5× at 64 KiB, so a single
//! ratio of medians cannot say "horus is faster". The `interleaved` binary measures,
//! in each of R rounds and at each size, horus and every selected peer back to back
//! (the order alternates between rounds so neither side always goes first), and
//! records one [`RoundRow`] per measurement. [`compare`] pairs each peer with the
//! horus row that waits the same way *in the same round and size*, takes the ratio
//! `horus median / peer median` per round, and summarises those R ratios by their
//! median and range. A verdict ([`Verdict`]) is a fact about those R ratios and
//! nothing else: "faster in every round" only if the largest ratio is below 1.

use serde::{Deserialize, Serialize};

use crate::harness::Mode;
use crate::stats::{median, Summary};

/// Fewest rounds from which a verdict is drawn; fewer (a `--quick` run) report the
/// ratios but no verdict.
pub const MIN_ROUNDS_FOR_VERDICT: usize = 5;

/// A peer of the interleaved comparison and the horus row it is paired with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Pair {
    /// `--peers` name and the peer's `system` in the rows.
    pub peer: &'static str,
    /// How the peer is labelled in tables (with its wait).
    pub peer_label: &'static str,
    /// The horus row's `system`: `horus` (busy-poll) or `horus:futex` (blocking).
    pub horus: &'static str,
    /// How that horus row is labelled in tables.
    pub horus_label: &'static str,
}

/// Every peer the binary knows, each paired with the horus row that waits the
/// same way: busy-poll against busy-poll, blocking against blocking.
pub const PAIRS: &[Pair] = &[
    Pair {
        peer: "iceoryx2",
        peer_label: "iceoryx2 (loan, busy-poll)",
        horus: "horus",
        horus_label: "horus (loan, busy-poll)",
    },
    Pair {
        peer: "uds",
        peer_label: "unix socket (copy, blocking)",
        horus: "horus:futex",
        horus_label: "horus (loan, blocking)",
    },
    Pair {
        peer: "zenoh-shm",
        peer_label: "zenoh shm (loan, blocking)",
        horus: "horus:futex",
        horus_label: "horus (loan, blocking)",
    },
    Pair {
        peer: "zenoh",
        peer_label: "zenoh tcp (copy, blocking)",
        horus: "horus:futex",
        horus_label: "horus (loan, blocking)",
    },
];

/// The pair of a `--peers` name.
pub fn pair(peer: &str) -> Option<&'static Pair> {
    PAIRS.iter().find(|p| p.peer == peer)
}

/// One measurement of one system at one size in one round.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RoundRow {
    /// Round index, from 0.
    pub round: usize,
    /// Position of this measurement within its round and size (0 = measured first).
    pub order: usize,
    /// `horus`, `horus:futex`, `iceoryx2`, `uds`, `zenoh`, `zenoh-shm`.
    pub system: String,
    /// Payload bytes.
    pub size: usize,
    /// Copy or loan.
    pub mode: Mode,
    /// `busy-poll` or `blocking`.
    pub wait: String,
    /// Whether A and B were pinned to distinct CPUs.
    pub pinned: bool,
    /// The round trips of this measurement.
    pub rtt: Summary,
}

/// What the ratios of one pair at one size allow us to say.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Verdict {
    /// Fewer than [`MIN_ROUNDS_FOR_VERDICT`] rounds: no verdict.
    TooFewRounds,
    /// Every per-round ratio below 1.
    FasterEveryRound,
    /// Every per-round ratio above 1.
    SlowerEveryRound,
    /// Some rounds one way, some the other (or a tie).
    Mixed,
}

impl Verdict {
    /// From per-round ratios.
    pub fn of(ratios: &[f64]) -> Self {
        if ratios.len() < MIN_ROUNDS_FOR_VERDICT {
            Verdict::TooFewRounds
        } else if ratios.iter().all(|&r| r < 1.0) {
            Verdict::FasterEveryRound
        } else if ratios.iter().all(|&r| r > 1.0) {
            Verdict::SlowerEveryRound
        } else {
            Verdict::Mixed
        }
    }
}

/// The per-round ratios of one pair at one size and their summary.
#[derive(Debug, Clone, Serialize)]
pub struct Comparison {
    /// The pair.
    #[serde(skip)]
    pub pair: Pair,
    /// Payload bytes.
    pub size: usize,
    /// `horus median / peer median`, one per round in which both were measured.
    pub ratios: Vec<f64>,
    /// Median of `ratios` (mean of the middle two for an even count).
    pub median: f64,
    /// Smallest ratio.
    pub min: f64,
    /// Largest ratio.
    pub max: f64,
    /// Rounds in which horus was faster (ratio below 1).
    pub horus_faster: usize,
    /// Median over rounds of horus's median RTT, ns.
    pub horus_median_ns: f64,
    /// Median over rounds of the peer's median RTT, ns.
    pub peer_median_ns: f64,
    /// What the ratios allow us to say.
    pub verdict: Verdict,
}

fn median_in(rows: &[RoundRow], system: &str, size: usize, round: usize) -> Option<u64> {
    rows.iter()
        .find(|r| r.system == system && r.size == size && r.round == round)
        .map(|r| r.rtt.median_ns)
}

/// Sizes present in `rows`, ascending.
pub fn sizes(rows: &[RoundRow]) -> Vec<usize> {
    let mut v: Vec<usize> = rows.iter().map(|r| r.size).collect();
    v.sort_unstable();
    v.dedup();
    v
}

/// Every (pair, size) with at least one round in which both were measured, in
/// [`PAIRS`] order, then size order.
pub fn compare(rows: &[RoundRow]) -> Vec<Comparison> {
    let mut rounds: Vec<usize> = rows.iter().map(|r| r.round).collect();
    rounds.sort_unstable();
    rounds.dedup();
    let mut out = Vec::new();
    for pair in PAIRS {
        for size in sizes(rows) {
            let both: Vec<(u64, u64)> = rounds
                .iter()
                .filter_map(|&k| {
                    Some((
                        median_in(rows, pair.horus, size, k)?,
                        median_in(rows, pair.peer, size, k)?,
                    ))
                })
                .collect();
            if both.is_empty() {
                continue;
            }
            let ratios: Vec<f64> = both
                .iter()
                .map(|&(h, p)| h as f64 / p.max(1) as f64)
                .collect();
            let of = |f: fn(&(u64, u64)) -> u64| {
                median(&both.iter().map(|x| f(x) as f64).collect::<Vec<_>>())
            };
            out.push(Comparison {
                pair: *pair,
                size,
                median: median(&ratios),
                min: ratios.iter().copied().fold(f64::INFINITY, f64::min),
                max: ratios.iter().copied().fold(f64::NEG_INFINITY, f64::max),
                horus_faster: ratios.iter().filter(|&&r| r < 1.0).count(),
                horus_median_ns: of(|x| x.0),
                peer_median_ns: of(|x| x.1),
                verdict: Verdict::of(&ratios),
                ratios,
            });
        }
    }
    out
}

/// One sentence per peer: whether horus was faster in every round at every size
/// measured, computed from [`compare`] (never typed by hand).
pub fn claims(comparisons: &[Comparison]) -> Vec<String> {
    let mut out = Vec::new();
    for pair in PAIRS {
        let of: Vec<&Comparison> = comparisons.iter().filter(|c| c.pair == *pair).collect();
        if of.is_empty() {
            continue;
        }
        let sizes: Vec<String> = of.iter().map(|c| bytes(c.size)).collect();
        let head = format!(
            "{} against {} ({} at {})",
            pair.horus_label,
            pair.peer_label,
            plural(
                of.iter().map(|c| c.ratios.len()).min().unwrap_or(0),
                "round"
            ),
            sizes.join(", ")
        );
        let line = if of.iter().any(|c| c.verdict == Verdict::TooFewRounds) {
            format!("{head}: fewer than {MIN_ROUNDS_FOR_VERDICT} rounds, so no verdict is drawn.")
        } else if of.iter().all(|c| c.verdict == Verdict::FasterEveryRound) {
            format!("{head}: **horus was faster in every round at every size measured.**")
        } else {
            let not: Vec<String> = of
                .iter()
                .filter(|c| c.verdict != Verdict::FasterEveryRound)
                .map(|c| {
                    format!(
                        "at {} horus was faster in {} of {} rounds (ratio median {:.3}, range \
                         {:.3}–{:.3})",
                        bytes(c.size),
                        c.horus_faster,
                        c.ratios.len(),
                        c.median,
                        c.min,
                        c.max
                    )
                })
                .collect();
            format!(
                "{head}: horus was **not** faster in every round at every size: {}.",
                not.join("; ")
            )
        };
        out.push(line);
    }
    out
}

/// `16 B`, `1480 B`, `64 KiB`, `1 MiB`: sizes as a sentence names them.
fn bytes(n: usize) -> String {
    match n {
        n if n >= 1 << 20 && n % (1 << 20) == 0 => format!("{} MiB", n >> 20),
        n if n >= 1 << 10 && n % (1 << 10) == 0 => format!("{} KiB", n >> 10),
        n => format!("{n} B"),
    }
}

fn plural(n: usize, what: &str) -> String {
    format!("{n} {what}{}", if n == 1 { "" } else { "s" })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(round: usize, system: &str, size: usize, median: u64) -> RoundRow {
        RoundRow {
            round,
            order: 0,
            system: system.to_owned(),
            size,
            mode: Mode::Loan,
            wait: "busy-poll".to_owned(),
            pinned: true,
            rtt: Summary::from_samples(vec![median], median).unwrap(),
        }
    }

    fn rounds(n: usize, horus: &[u64], peer: &[u64]) -> Vec<RoundRow> {
        (0..n)
            .flat_map(|k| {
                [
                    row(k, "horus", 16, horus[k]),
                    row(k, "iceoryx2", 16, peer[k]),
                ]
            })
            .collect()
    }

    #[test]
    fn ratios_are_paired_within_a_round() {
        let rows = rounds(5, &[100, 200, 300, 400, 900], &[200, 400, 600, 800, 1000]);
        let c = compare(&rows);
        assert_eq!(c.len(), 1);
        assert_eq!(c[0].ratios, [0.5, 0.5, 0.5, 0.5, 0.9]);
        assert_eq!((c[0].median, c[0].min, c[0].max), (0.5, 0.5, 0.9));
        assert_eq!(c[0].horus_faster, 5);
        assert_eq!(c[0].verdict, Verdict::FasterEveryRound);
        assert_eq!(c[0].horus_median_ns, 300.0);
        assert!(claims(&c)[0].contains("faster in every round at every size"));
        assert!(claims(&c)[0].contains("(5 rounds at 16 B)"));
        assert_eq!(
            [bytes(1480), bytes(65536), bytes(1 << 20)],
            ["1480 B", "64 KiB", "1 MiB"]
        );
    }

    #[test]
    fn one_slower_round_is_no_claim() {
        let rows = rounds(5, &[100, 100, 100, 100, 300], &[200; 5]);
        let c = compare(&rows);
        assert_eq!(c[0].verdict, Verdict::Mixed);
        assert_eq!(c[0].horus_faster, 4);
        let claim = &claims(&c)[0];
        assert!(
            claim.contains("**not**") && claim.contains("4 of 5"),
            "{claim}"
        );
    }

    #[test]
    fn too_few_rounds_give_no_verdict() {
        let c = compare(&rounds(2, &[100, 100], &[200, 200]));
        assert_eq!(c[0].verdict, Verdict::TooFewRounds);
        assert_eq!(c[0].median, 0.5);
        assert!(claims(&c)[0].contains("no verdict"));
        assert_eq!(Verdict::of(&[2.0; 5]), Verdict::SlowerEveryRound);
    }

    #[test]
    fn blocking_peers_pair_with_blocking_horus() {
        assert_eq!(pair("uds").unwrap().horus, "horus:futex");
        assert_eq!(pair("iceoryx2").unwrap().horus, "horus");
        assert!(pair("nope").is_none());
    }
}
