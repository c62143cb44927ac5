//! `ros2`: the reference report's ROS 2 ping-pong (64 B to 1 MiB of
//! `std_msgs/msg/UInt8MultiArray`) between rclpy nodes on Fast DDS, horus Python and horus
//! Rust processes, and horus ↔ rclpy through the `horus ros2` bridge in both directions.
//!
//! Every end is its own process: Python ends run [`endpoint.py`](endpoint.py) (rclpy through
//! `scripts/ros2-python`, horus Python through the repository's `.venv`), Rust ends and the
//! bridge are this binary re-executed with [`CHILD_FLAG`]. All of them run in a network
//! namespace of their own with only `lo` up ([`netns`]), so no DDS packet leaves the host.

#![warn(missing_docs)]

pub mod bridge_child;
pub mod discovery;
pub mod netns;
pub mod rust_end;
pub mod session;

pub use horus_bench_ros2_rows::{system, table, targets, System, GAVE_UP};

/// First argument that turns the `ros2` binary into one of its child processes.
pub const CHILD_FLAG: &str = "--ros2-child";
/// Child role: a horus Rust ping or pong.
pub const RUST_END_ROLE: &str = "rust-end";
/// Child role: the bridge.
pub const BRIDGE_ROLE: &str = "bridge";
/// Prefix of the line carrying a ping's result.
pub const RESULT_PREFIX: &str = "RESULT ";
/// Prefix of the line carrying the bridge's drop counters when it stops.
pub const BRIDGE_PREFIX: &str = "BRIDGE ";
/// Line a pong (or the bridge) prints once its endpoints exist.
pub const READY: &str = "READY";
/// Largest data length the benchmark sends (the horus topics' largest CDR body is twice it).
pub const MAX_SIZE: usize = 1 << 20;
/// Losses in a row after which a ping gives up (the path is broken; the rest is not sent).
pub const MAX_LOST_IN_A_ROW: u32 = 5;
/// History depth of the horus topics (rclpy: keep-last 10).
pub const HORUS_DEPTH: u32 = 16;

/// What a ping reports (one line of JSON after [`RESULT_PREFIX`]).
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct PingResult {
    /// Round-trip times of the timed round trips that completed, ns.
    pub samples_ns: Vec<u64>,
    /// Wall time of the timed loop, ns.
    pub wall_ns: u64,
    /// Timed round trips whose answer never came (within the timeout).
    pub lost: u64,
    /// Answers to an earlier timed message that came after its timeout.
    pub stale: u64,
    /// Whether ping gave up after [`MAX_LOST_IN_A_ROW`] losses in a row.
    #[serde(default)]
    pub aborted: bool,
}

/// The bridge's drop counters summed over its topic routes, when it stopped.
#[derive(Debug, Clone, Copy, Default, serde::Serialize, serde::Deserialize)]
pub struct BridgeDrops {
    /// Messages lost before the bridge read them.
    pub lost: u64,
    /// Messages the other side refused.
    pub refused: u64,
    /// Malformed messages dropped.
    pub malformed: u64,
    /// Messages too large, dropped.
    pub oversize: u64,
    /// Messages the bridge carried.
    pub messages: u64,
}

impl BridgeDrops {
    /// Every message the bridge dropped.
    pub fn dropped(&self) -> u64 {
        self.lost + self.refused + self.malformed + self.oversize
    }
}
