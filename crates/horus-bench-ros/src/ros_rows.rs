//! The rows of the `ros_messages` benchmark, their per-round ratios, and the ROS 2
//! message targets judged from those ratios (never from one run).

use horus_bench::interleaved::MIN_ROUNDS_FOR_VERDICT;
use horus_bench::stats::{median, Summary};
use serde::{Deserialize, Serialize};

use crate::ros_build::BuildMethod;
use crate::ros_kinds::RosKind;
use crate::ros_peer::Path;

/// One measurement of `ros_messages`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "row", rename_all = "kebab-case")]
pub enum RosRow {
    /// A round trip between two processes.
    RoundTrip(RttRow),
    /// Building a message in a loan (one process).
    LoanBuild(BuildRow),
}

/// Round trips of one message along one path in one round.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RttRow {
    /// Round index, from 0.
    pub round: usize,
    /// Position within its round and message (0 = measured first).
    pub order: usize,
    /// The message.
    pub kind: RosKind,
    /// Its table name.
    pub message: String,
    /// ROS or the fixed-layout baseline.
    pub path: Path,
    /// Bytes of the CDR body (the baseline's tail has as many).
    pub body_bytes: usize,
    /// Whether A and B were pinned to two CPUs.
    pub pinned: bool,
    /// The round trips.
    pub rtt: Summary,
}

/// Loan builds of one message by one method in one round.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct BuildRow {
    /// Round index, from 0.
    pub round: usize,
    /// Position within its round (0 = measured first).
    pub order: usize,
    /// The message.
    pub kind: RosKind,
    /// How the body was written.
    pub method: BuildMethod,
    /// Bytes of the CDR body.
    pub body_bytes: usize,
    /// Messages per timed sample.
    pub batch: u32,
    /// Times of the samples (each `batch` messages).
    pub per_batch: Summary,
}

/// Median, smallest and largest of per-round ratios.
#[derive(Debug, Clone, Serialize)]
pub struct Ratios {
    /// One per round in which both sides were measured.
    pub each: Vec<f64>,
    /// Their median.
    pub median: f64,
    /// The smallest.
    pub min: f64,
    /// The largest.
    pub max: f64,
}

impl Ratios {
    fn of(each: Vec<f64>) -> Self {
        Ratios {
            median: median(&each),
            min: each.iter().copied().fold(f64::INFINITY, f64::min),
            max: each.iter().copied().fold(f64::NEG_INFINITY, f64::max),
            each,
        }
    }
}

/// ROS against the fixed-layout baseline for one message and pinning.
#[derive(Debug, Clone, Serialize)]
pub struct RttComparison {
    /// The message.
    pub kind: RosKind,
    /// Pinned or not.
    pub pinned: bool,
    /// Bytes of the CDR body.
    pub body_bytes: usize,
    /// Each round's median RTT of the ROS path, ns.
    pub ros_ns: Vec<u64>,
    /// Each round's median RTT of the baseline, ns.
    pub fixed_ns: Vec<u64>,
    /// Per round: ROS median / baseline median.
    pub ratios: Ratios,
}

fn rtts(rows: &[RosRow]) -> impl Iterator<Item = &RttRow> {
    rows.iter().filter_map(|r| match r {
        RosRow::RoundTrip(r) => Some(r),
        RosRow::LoanBuild(_) => None,
    })
}

fn builds(rows: &[RosRow]) -> impl Iterator<Item = &BuildRow> {
    rows.iter().filter_map(|r| match r {
        RosRow::LoanBuild(r) => Some(r),
        RosRow::RoundTrip(_) => None,
    })
}

fn rounds(rows: &[RosRow]) -> Vec<usize> {
    let mut v: Vec<usize> = rows
        .iter()
        .map(|r| match r {
            RosRow::RoundTrip(r) => r.round,
            RosRow::LoanBuild(r) => r.round,
        })
        .collect();
    v.sort_unstable();
    v.dedup();
    v
}

/// Every (message, pinning) measured along both paths in at least one round: pinned
/// first, messages in [`RosKind::ALL`] order.
pub fn compare_rtt(rows: &[RosRow]) -> Vec<RttComparison> {
    let mut out = Vec::new();
    for pinned in [true, false] {
        for kind in RosKind::ALL {
            let at = |path: Path, round: usize| {
                rtts(rows)
                    .find(|r| {
                        r.kind == kind && r.pinned == pinned && r.path == path && r.round == round
                    })
                    .map(|r| (r.rtt.median_ns, r.body_bytes))
            };
            let both: Vec<((u64, usize), (u64, usize))> = rounds(rows)
                .into_iter()
                .filter_map(|k| Some((at(Path::Ros, k)?, at(Path::Fixed, k)?)))
                .collect();
            let Some(&((_, body_bytes), _)) = both.first() else {
                continue;
            };
            out.push(RttComparison {
                kind,
                pinned,
                body_bytes,
                ros_ns: both.iter().map(|b| b.0 .0).collect(),
                fixed_ns: both.iter().map(|b| b.1 .0).collect(),
                ratios: Ratios::of(
                    both.iter()
                        .map(|b| b.0 .0 as f64 / b.1 .0.max(1) as f64)
                        .collect(),
                ),
            });
        }
    }
    out
}

/// One build method against the memcpy into a loan, for one message.
#[derive(Debug, Clone, Serialize)]
pub struct BuildComparison {
    /// The message.
    pub kind: RosKind,
    /// The method.
    pub method: BuildMethod,
    /// Bytes of the CDR body.
    pub body_bytes: usize,
    /// Each round's median time per message, ns.
    pub ns_per_msg: Vec<f64>,
    /// Per round: this method's median / the memcpy-into-a-loan median.
    pub ratios: Ratios,
}

/// Every (message, method) with a memcpy measured in the same rounds.
pub fn compare_build(rows: &[RosRow]) -> Vec<BuildComparison> {
    let mut out = Vec::new();
    for kind in RosKind::ALL {
        for method in BuildMethod::ALL {
            let at = |m: BuildMethod, round: usize| {
                builds(rows)
                    .find(|r| r.kind == kind && r.method == m && r.round == round)
                    .map(|r| {
                        (
                            r.per_batch.median_ns as f64 / f64::from(r.batch),
                            r.body_bytes,
                        )
                    })
            };
            let both: Vec<((f64, usize), (f64, usize))> = rounds(rows)
                .into_iter()
                .filter_map(|k| Some((at(method, k)?, at(BuildMethod::Memcpy, k)?)))
                .collect();
            let Some(&((_, body_bytes), _)) = both.first() else {
                continue;
            };
            out.push(BuildComparison {
                kind,
                method,
                body_bytes,
                ns_per_msg: both.iter().map(|b| b.0 .0).collect(),
                ratios: Ratios::of(both.iter().map(|b| b.0 .0 / b.1 .0.max(1e-9)).collect()),
            });
        }
    }
    out
}

/// What the per-round ratios say about a target `ratio <= limit`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum TargetVerdict {
    /// Fewer than [`MIN_ROUNDS_FOR_VERDICT`] rounds.
    TooFewRounds,
    /// At or under the limit in every round.
    MetEveryRound,
    /// Over the limit in every round.
    MissedEveryRound,
    /// Under in some rounds, over in others.
    Mixed,
}

/// A ROS 2 message target and what was measured against it.
#[derive(Debug, Clone, Serialize)]
pub struct Target {
    /// What is compared to what.
    pub what: String,
    /// The largest ratio allowed.
    pub limit: f64,
    /// The measured per-round ratios.
    pub ratios: Ratios,
    /// What they say.
    pub verdict: TargetVerdict,
}

impl Target {
    fn new(what: String, limit: f64, ratios: &Ratios) -> Self {
        let verdict = if ratios.each.len() < MIN_ROUNDS_FOR_VERDICT {
            TargetVerdict::TooFewRounds
        } else if ratios.max <= limit {
            TargetVerdict::MetEveryRound
        } else if ratios.min > limit {
            TargetVerdict::MissedEveryRound
        } else {
            TargetVerdict::Mixed
        };
        Target {
            what,
            limit,
            ratios: ratios.clone(),
            verdict,
        }
    }

    /// One sentence: the target, the ratios, the verdict.
    pub fn sentence(&self) -> String {
        let r = &self.ratios;
        let verdict = match self.verdict {
            TargetVerdict::TooFewRounds => {
                format!("no verdict (fewer than {MIN_ROUNDS_FOR_VERDICT} rounds)")
            }
            TargetVerdict::MetEveryRound => "**met** in every round".to_owned(),
            TargetVerdict::MissedEveryRound => format!(
                "**missed** in every round (by {:.0}–{:.0} %)",
                (r.min / self.limit - 1.0) * 100.0,
                (r.max / self.limit - 1.0) * 100.0
            ),
            TargetVerdict::Mixed => format!(
                "**not met in every round** ({} of {} rounds over)",
                r.each.iter().filter(|&&x| x > self.limit).count(),
                r.each.len()
            ),
        };
        format!(
            "{} ≤ {}×: ratio median {:.3}, range {:.3}–{:.3} over {} rounds — {verdict}.",
            self.what,
            self.limit,
            r.median,
            r.min,
            r.max,
            r.each.len()
        )
    }
}

/// The two Rust ROS 2 message targets, where measured.
pub fn targets(rtt: &[RttComparison], build: &[BuildComparison]) -> Vec<Target> {
    let mut out = Vec::new();
    for c in rtt.iter().filter(|c| c.kind == RosKind::Cloud1MiB) {
        out.push(Target::new(
            format!(
                "PointCloud2 of 1 MiB round trip ({}) ÷ the same bytes through the fixed-layout \
                 chunk path",
                if c.pinned { "pinned" } else { "unpinned" }
            ),
            1.2,
            &c.ratios,
        ));
    }
    for c in build
        .iter()
        .filter(|c| c.kind == RosKind::Scan1080 && c.method == BuildMethod::Publish)
    {
        out.push(Target::new(
            "LaserScan of 1,080 ranges built in a loan (as publish builds it) ÷ a memcpy of its \
             bytes into a loan"
                .to_owned(),
            1.3,
            &c.ratios,
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rtt(round: usize, path: Path, median: u64) -> RosRow {
        RosRow::RoundTrip(RttRow {
            round,
            order: 0,
            kind: RosKind::Cloud1MiB,
            message: RosKind::Cloud1MiB.name().to_owned(),
            path,
            body_bytes: 1 << 20,
            pinned: true,
            rtt: Summary::from_samples(vec![median], median).unwrap(),
        })
    }

    #[test]
    fn ratios_pair_paths_within_a_round_and_judge_the_target() {
        let mut rows = Vec::new();
        for (k, (ros, fixed)) in [(110, 100), (120, 100), (100, 100), (90, 100), (115, 100)]
            .into_iter()
            .enumerate()
        {
            rows.push(rtt(k, Path::Ros, ros));
            rows.push(rtt(k, Path::Fixed, fixed));
        }
        let c = compare_rtt(&rows);
        assert_eq!(c.len(), 1);
        assert_eq!(c[0].ratios.each, [1.1, 1.2, 1.0, 0.9, 1.15]);
        assert_eq!((c[0].ratios.min, c[0].ratios.max), (0.9, 1.2));
        let t = targets(&c, &[]);
        assert_eq!(t[0].verdict, TargetVerdict::MetEveryRound);
        rows.push(rtt(5, Path::Ros, 130));
        rows.push(rtt(5, Path::Fixed, 100));
        let t = targets(&compare_rtt(&rows), &[]);
        assert_eq!(t[0].verdict, TargetVerdict::Mixed);
        assert!(
            t[0].sentence().contains("1 of 6 rounds over"),
            "{}",
            t[0].sentence()
        );
        let few = targets(&compare_rtt(&rows[..4]), &[]);
        assert_eq!(few[0].verdict, TargetVerdict::TooFewRounds);
    }

    #[test]
    fn a_row_round_trips_through_json() {
        let row = rtt(0, Path::Ros, 5);
        let json = serde_json::to_string(&row).unwrap();
        assert!(json.contains("\"row\":\"round-trip\""), "{json}");
        let back: RosRow = serde_json::from_str(&json).unwrap();
        assert!(matches!(back, RosRow::RoundTrip(r) if r.path == Path::Ros));
    }
}
