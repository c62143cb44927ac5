//! The rows of the `multi_host` benchmark's `--json` document, and how a
//! statistic is summarised over rounds (median; the largest latency is the
//! largest of any round).

use horus_bench_core::stats::{median, Summary};
use serde::{Deserialize, Serialize};

use super::SystemName;

/// What a row measured.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Kind {
    /// One-way at a fixed rate per topic (channel table and impaired rows).
    Channel,
    /// Ping-pong round trips.
    RoundTrip,
    /// As many messages as the publisher is allowed to send.
    Throughput,
    /// Service call round trips.
    Service,
}

/// What was done to the link during a row.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Impairment {
    /// Nothing.
    None,
    /// [`super::drop_percent`] % of each host's packets dropped at random.
    Drop,
    /// Each host's sending capped at [`super::CAP_MBIT`] Mbit/s.
    Cap,
}

impl Impairment {
    /// Label in tables.
    pub fn label(self) -> String {
        match self {
            Impairment::None => "none".to_owned(),
            Impairment::Drop => format!("{} % loss", super::drop_percent()),
            Impairment::Cap => format!("{} Mbit/s", super::CAP_MBIT),
        }
    }
}

/// One measurement in one round.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct MhRow {
    /// Round index, from 0.
    pub round: usize,
    /// Whether A and B were pinned to two CPUs.
    pub pinned: bool,
    /// The system.
    pub system: SystemName,
    /// What was measured.
    pub kind: Kind,
    /// The link's impairment.
    pub impairment: Impairment,
    /// Payload bytes.
    pub size: usize,
    /// Topics (1 unless a channel row says otherwise).
    pub topics: usize,
    /// One-way latency (channel) or round trip (ping-pong, service).
    pub latency: Option<Summary>,
    /// Messages sent (channel: all topics).
    pub sent: Option<u64>,
    /// Messages received (channel: all topics).
    pub received: Option<u64>,
    /// `(sent − received) / sent`.
    pub loss: Option<f64>,
    /// Messages that arrived after a later one of their topic.
    pub out_of_order: Option<u64>,
    /// Achieved publishing rate per topic, Hz.
    pub rate_hz: Option<f64>,
    /// CPU of host A's process over its publishing window, % of one core.
    pub cpu_a_percent: Option<f64>,
    /// CPU of host B's process from first arrival to last end marker, % of one core.
    pub cpu_b_percent: Option<f64>,
    /// Throughput, messages per second.
    pub msgs_per_sec: Option<f64>,
    /// Throughput, payload MB (10^6 B) per second.
    pub mb_per_sec: Option<f64>,
}

impl MhRow {
    /// An empty row of this kind.
    pub fn new(round: usize, pinned: bool, system: SystemName, kind: Kind, size: usize) -> Self {
        Self {
            round,
            pinned,
            system,
            kind,
            impairment: Impairment::None,
            size,
            topics: 1,
            latency: None,
            sent: None,
            received: None,
            loss: None,
            out_of_order: None,
            rate_hz: None,
            cpu_a_percent: None,
            cpu_b_percent: None,
            msgs_per_sec: None,
            mb_per_sec: None,
        }
    }
}

/// Which rows to take: everything but the round.
#[derive(Debug, Clone, Copy)]
pub struct Key {
    /// Pinned or not.
    pub pinned: bool,
    /// System.
    pub system: SystemName,
    /// Kind.
    pub kind: Kind,
    /// Impairment.
    pub impairment: Impairment,
    /// Payload bytes.
    pub size: usize,
    /// Topics.
    pub topics: usize,
}

impl Key {
    fn matches(&self, r: &MhRow) -> bool {
        r.pinned == self.pinned
            && r.system == self.system
            && r.kind == self.kind
            && r.impairment == self.impairment
            && r.size == self.size
            && r.topics == self.topics
    }
}

/// `stat` of every round's matching row.
pub fn values(rows: &[MhRow], key: Key, stat: fn(&MhRow) -> Option<f64>) -> Vec<f64> {
    rows.iter()
        .filter(|r| key.matches(r))
        .filter_map(stat)
        .collect()
}

/// Median over rounds of `stat`.
pub fn med(rows: &[MhRow], key: Key, stat: fn(&MhRow) -> Option<f64>) -> Option<f64> {
    let v = values(rows, key, stat);
    (!v.is_empty()).then(|| median(&v))
}

/// Largest over rounds of `stat`.
pub fn most(rows: &[MhRow], key: Key, stat: fn(&MhRow) -> Option<f64>) -> Option<f64> {
    values(rows, key, stat).into_iter().reduce(f64::max)
}

/// Mean latency, ns.
pub fn mean_ns(r: &MhRow) -> Option<f64> {
    r.latency.map(|s| s.mean_ns)
}

/// Median latency, ns.
pub fn median_ns(r: &MhRow) -> Option<f64> {
    r.latency.map(|s| s.median_ns as f64)
}

/// p99 latency, ns.
pub fn p99_ns(r: &MhRow) -> Option<f64> {
    r.latency.map(|s| s.p99_ns as f64)
}

/// Largest latency, ns.
pub fn max_ns(r: &MhRow) -> Option<f64> {
    r.latency.map(|s| s.max_ns as f64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn median_and_largest_over_rounds() {
        let row = |round, max| {
            let mut r = MhRow::new(round, true, SystemName::Zenoh, Kind::Channel, 16);
            r.latency = Summary::from_samples(vec![1, max], 1);
            r
        };
        let rows = [row(0, 10), row(1, 30), row(2, 20)];
        let key = Key {
            pinned: true,
            system: SystemName::Zenoh,
            kind: Kind::Channel,
            impairment: Impairment::None,
            size: 16,
            topics: 1,
        };
        assert_eq!(med(&rows, key, max_ns), Some(20.0));
        assert_eq!(most(&rows, key, max_ns), Some(30.0));
        assert_eq!(med(&rows, Key { size: 32, ..key }, max_ns), None);
    }
}
