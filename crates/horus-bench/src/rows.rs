//! The rows each suite binary writes to its `--json` document (and the `report`
//! binary reads back). The peers benchmark reuses [`crate::report::Row`].

use serde::{Deserialize, Serialize};

use crate::harness::Mode;
use crate::pubsub::horus::Wait;
use crate::rate::RateResult;
use crate::robotics::MsgKind;
use crate::stats::{Summary, Throughput};
use crate::topology::Placement;

/// One message type of `robotics_messages`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RoboticsRow {
    /// The message type.
    pub kind: MsgKind,
    /// Its name in tables.
    pub message: String,
    /// Bytes on the wire (header + tail).
    pub wire_bytes: usize,
    /// Typical rate on a robot, Hz.
    pub typical_hz: f64,
    /// Cross-process 1:1 round trips (busy-poll, pinned).
    pub rtt_1to1: Option<Summary>,
    /// Cross-process 4:4 round trips (futex, unpinned), pooled over publishers.
    pub rtt_nn: Option<Summary>,
    /// Cross-process 1:1 lossless one-way throughput (busy-poll, pinned).
    pub throughput_1to1: Option<Throughput>,
    /// Cross-process 4:4 lossless throughput (futex, unpinned): messages published
    /// per second, each delivered to all 4 subscribers.
    pub throughput_nn: Option<Throughput>,
    /// `throughput_1to1 / typical_hz`.
    pub headroom: Option<f64>,
}

/// One size and mode of `payload_sweep`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SweepRow {
    /// Payload bytes.
    pub size: usize,
    /// Copy or loan.
    pub mode: Mode,
    /// Round trips.
    pub rtt: Summary,
    /// Round trips per second (the report's "message throughput").
    pub msgs_per_sec: f64,
    /// `size × msgs_per_sec / 2^20` (the report's "bandwidth", MiB/s).
    pub bandwidth_mib_s: f64,
}

/// One route of `all_paths`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct PathRow {
    /// e.g. `cross-process 4:4`.
    pub route: String,
    /// Where the endpoints ran.
    pub placement: Placement,
    /// Publishers.
    pub pubs: usize,
    /// Subscribers.
    pub subs: usize,
    /// How receivers waited.
    pub wait: Wait,
    /// Whether the pair was pinned.
    pub pinned: bool,
    /// Payload bytes.
    pub size: usize,
    /// Round trips pooled over publishers.
    pub rtt: Summary,
    /// Send-only: ns per `send` on the publisher alone, one sample per timed burst
    /// of sends into a ring with room for the whole burst (the reference report's
    /// "send-only" figure; never a latency). `None` in documents from before it
    /// was measured.
    #[serde(default)]
    pub send_only: Option<Summary>,
}

/// Which sweep of `scalability` a row belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ScaleSweep {
    /// 1 topic, K subscriber processes.
    Fanout,
    /// T topics, 1 subscriber process.
    Topics,
}

/// One point of `scalability`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ScaleRow {
    /// Fan-out or topics.
    pub sweep: ScaleSweep,
    /// The run.
    pub result: RateResult,
}
