//! The rows of the `rpc` benchmark's `--json` document, and how a statistic is
//! summarised over rounds: its median and its range, never one round's value.

use serde::{Deserialize, Serialize};

use crate::payload::Touch;
use crate::stats::median;
use crate::stats::Summary;

/// What a row measured.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Kind {
    /// Call latency, one call in flight (table 1).
    Latency,
    /// Calls per second with a window of calls in flight (table 2).
    Stress,
    /// Call latency with `in_flight` calls in flight at the fixed call rate (table 3).
    InFlight,
    /// horus topic round trip, 16 B, busy-poll (a target's reference).
    Topic,
    /// The futex wake reference `ref:wake` (a target's reference).
    Wake,
}

/// System name of the [`Kind::Topic`] rows.
pub const TOPIC: &str = "horus-topic";
/// System name of the [`Kind::Wake`] rows.
pub const WAKE: &str = "ref:wake";

/// One measurement in one round.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RpcRow {
    /// Round index, from 0.
    pub round: usize,
    /// Whether client and server were pinned to two CPUs.
    pub pinned: bool,
    /// What was measured.
    pub kind: Kind,
    /// A [`super::System`] name, [`TOPIC`] or [`WAKE`].
    pub system: String,
    /// Payload bytes (request and response each).
    pub size: usize,
    /// Calls in flight.
    pub in_flight: usize,
    /// Whether every payload byte was written and read (`full`) or only the ends.
    pub touch: Touch,
    /// Per-call latency (round trip), for latency-like kinds.
    pub rtt: Option<Summary>,
    /// Calls per second, for [`Kind::Stress`].
    pub calls_per_sec: Option<f64>,
}

/// Which rows to take: everything but the round.
#[derive(Debug, Clone, Copy)]
pub struct Key<'a> {
    /// Pinned or not.
    pub pinned: bool,
    /// Kind.
    pub kind: Kind,
    /// System name.
    pub system: &'a str,
    /// Payload bytes.
    pub size: usize,
    /// Calls in flight.
    pub in_flight: usize,
    /// Touch mode.
    pub touch: Touch,
}

impl Key<'_> {
    fn matches(&self, r: &RpcRow) -> bool {
        r.pinned == self.pinned
            && r.kind == self.kind
            && r.system == self.system
            && r.size == self.size
            && r.in_flight == self.in_flight
            && r.touch == self.touch
    }
}

/// A statistic over rounds.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Spread {
    /// Median over rounds.
    pub median: f64,
    /// Smallest round.
    pub min: f64,
    /// Largest round.
    pub max: f64,
    /// Rounds.
    pub rounds: usize,
}

impl Spread {
    /// From one value per round; `None` if there is none.
    pub fn of(values: &[f64]) -> Option<Spread> {
        if values.is_empty() {
            return None;
        }
        Some(Spread {
            median: median(values),
            min: values.iter().copied().fold(f64::INFINITY, f64::min),
            max: values.iter().copied().fold(f64::NEG_INFINITY, f64::max),
            rounds: values.len(),
        })
    }
}

/// `stat` of each round's row matching `key`, by round.
pub fn per_round(
    rows: &[RpcRow],
    key: Key<'_>,
    stat: fn(&RpcRow) -> Option<f64>,
) -> Vec<(usize, f64)> {
    rows.iter()
        .filter(|r| key.matches(r))
        .filter_map(|r| Some((r.round, stat(r)?)))
        .collect()
}

/// `stat` over rounds.
pub fn spread(rows: &[RpcRow], key: Key<'_>, stat: fn(&RpcRow) -> Option<f64>) -> Option<Spread> {
    let v: Vec<f64> = per_round(rows, key, stat)
        .into_iter()
        .map(|x| x.1)
        .collect();
    Spread::of(&v)
}

/// `stat(a) / stat(b)` per round in which both were measured, over rounds.
pub fn ratio(
    rows: &[RpcRow],
    a: Key<'_>,
    b: Key<'_>,
    stat: fn(&RpcRow) -> Option<f64>,
) -> Option<Spread> {
    let bs = per_round(rows, b, stat);
    let v: Vec<f64> = per_round(rows, a, stat)
        .into_iter()
        .filter_map(|(k, x)| {
            let y = bs.iter().find(|(j, _)| *j == k)?.1;
            (y > 0.0).then_some(x / y)
        })
        .collect();
    Spread::of(&v)
}

/// Mean call latency, ns.
pub fn mean(r: &RpcRow) -> Option<f64> {
    r.rtt.map(|s| s.mean_ns)
}

/// Median call latency, ns.
pub fn median_ns(r: &RpcRow) -> Option<f64> {
    r.rtt.map(|s| s.median_ns as f64)
}

/// p99 call latency, ns.
pub fn p99(r: &RpcRow) -> Option<f64> {
    r.rtt.map(|s| s.p99_ns as f64)
}

/// Largest call latency, ns.
pub fn max(r: &RpcRow) -> Option<f64> {
    r.rtt.map(|s| s.max_ns as f64)
}

/// Calls per second.
pub fn rate(r: &RpcRow) -> Option<f64> {
    r.calls_per_sec
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(round: usize, system: &str, median: u64) -> RpcRow {
        RpcRow {
            round,
            pinned: true,
            kind: Kind::Latency,
            system: system.to_owned(),
            size: 64,
            in_flight: 1,
            touch: Touch::Full,
            rtt: Summary::from_samples(vec![median], median),
            calls_per_sec: None,
        }
    }

    fn key(system: &str) -> Key<'_> {
        Key {
            pinned: true,
            kind: Kind::Latency,
            system,
            size: 64,
            in_flight: 1,
            touch: Touch::Full,
        }
    }

    #[test]
    fn spread_is_median_and_range_over_rounds() {
        let rows = [row(0, "a", 10), row(1, "a", 30), row(2, "a", 20)];
        let s = spread(&rows, key("a"), median_ns).unwrap();
        assert_eq!((s.median, s.min, s.max, s.rounds), (20.0, 10.0, 30.0, 3));
        assert!(spread(&rows, key("b"), median_ns).is_none());
    }

    #[test]
    fn ratios_pair_rows_of_the_same_round_only() {
        let rows = [
            row(0, "a", 10),
            row(0, "b", 100),
            row(1, "a", 40),
            row(1, "b", 100),
            row(2, "a", 1),
        ];
        let r = ratio(&rows, key("a"), key("b"), median_ns).unwrap();
        assert_eq!((r.rounds, r.min, r.max), (2, 0.1, 0.4));
    }
}
