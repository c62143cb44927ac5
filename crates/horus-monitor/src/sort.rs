//! The sortable columns of the two tables, and the order each one sorts in.

use std::cmp::Ordering;

use crate::model::{NodeRef, TopicRow};

/// A column of the topics table that can be sorted on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum TopicCol {
    Name,
    Type,
    Rate,
    Bandwidth,
    LatencyP50,
    LatencyP99,
    Losses,
    Endpoints,
}

impl TopicCol {
    pub(crate) const ALL: [TopicCol; 8] = [
        TopicCol::Name,
        TopicCol::Type,
        TopicCol::Rate,
        TopicCol::Bandwidth,
        TopicCol::LatencyP50,
        TopicCol::LatencyP99,
        TopicCol::Losses,
        TopicCol::Endpoints,
    ];

    pub(crate) fn label(self) -> &'static str {
        match self {
            TopicCol::Name => "topic",
            TopicCol::Type => "type",
            TopicCol::Rate => "rate",
            TopicCol::Bandwidth => "bandwidth",
            TopicCol::LatencyP50 => "latency p50",
            TopicCol::LatencyP99 => "latency p99",
            TopicCol::Losses => "losses",
            TopicCol::Endpoints => "endpoints",
        }
    }

    /// Names ascending; figures descending (the largest, usually the interesting, first).
    pub(crate) fn compare(self, a: &TopicRow, b: &TopicRow) -> Ordering {
        let lat = |t: &TopicRow, p99: bool| {
            t.shown_latency()
                .map_or(-1.0, |(p50, p99_us, _)| if p99 { p99_us } else { p50 })
        };
        let by = match self {
            TopicCol::Name => return a.name.cmp(&b.name),
            TopicCol::Type => return a.type_name.cmp(&b.type_name).then(a.name.cmp(&b.name)),
            TopicCol::Rate => b.rate_hz.total_cmp(&a.rate_hz),
            TopicCol::Bandwidth => b.bytes_per_s.total_cmp(&a.bytes_per_s),
            TopicCol::LatencyP50 => lat(b, false).total_cmp(&lat(a, false)),
            TopicCol::LatencyP99 => lat(b, true).total_cmp(&lat(a, true)),
            TopicCol::Losses => b.losses.total().cmp(&a.losses.total()),
            TopicCol::Endpoints => (b.publishers.len() + b.subscribers.len())
                .cmp(&(a.publishers.len() + a.subscribers.len())),
        };
        by.then(a.name.cmp(&b.name))
    }
}

/// A column of the nodes table that can be sorted on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum NodeCol {
    Name,
    Process,
    Rate,
    JitterP50,
    JitterP99,
    ExecP99,
    Misses,
    Restarts,
    State,
}

impl NodeCol {
    pub(crate) const ALL: [NodeCol; 9] = [
        NodeCol::Name,
        NodeCol::Process,
        NodeCol::Rate,
        NodeCol::JitterP50,
        NodeCol::JitterP99,
        NodeCol::ExecP99,
        NodeCol::Misses,
        NodeCol::Restarts,
        NodeCol::State,
    ];

    pub(crate) fn label(self) -> &'static str {
        match self {
            NodeCol::Name => "node",
            NodeCol::Process => "process",
            NodeCol::Rate => "rate",
            NodeCol::JitterP50 => "jitter p50",
            NodeCol::JitterP99 => "jitter p99",
            NodeCol::ExecP99 => "exec p99",
            NodeCol::Misses => "misses",
            NodeCol::Restarts => "restarts",
            NodeCol::State => "state",
        }
    }

    pub(crate) fn compare(self, a: &NodeRef<'_>, b: &NodeRef<'_>) -> Ordering {
        let by = match self {
            NodeCol::Name => return a.node.name.cmp(&b.node.name).then(a.key().cmp(&b.key())),
            NodeCol::Process => a.table.scheduler.cmp(&b.table.scheduler),
            NodeCol::Rate => b.rate_hz().total_cmp(&a.rate_hz()),
            NodeCol::JitterP50 => b.node.jitter.p50.cmp(&a.node.jitter.p50),
            NodeCol::JitterP99 => b.node.jitter.p99.cmp(&a.node.jitter.p99),
            NodeCol::ExecP99 => b.node.exec.p99.cmp(&a.node.exec.p99),
            NodeCol::Misses => b.node.deadline_misses.cmp(&a.node.deadline_misses),
            NodeCol::Restarts => b.node.restarts.cmp(&a.node.restarts),
            // Dead ones first: they are what needs looking at.
            NodeCol::State => a.alive().cmp(&b.alive()),
        };
        by.then(a.key().cmp(&b.key()))
    }
}
