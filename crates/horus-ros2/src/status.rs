//! What a bridge reports: per topic and direction, what crossed, what was lost or refused,
//! and why a topic does not cross. Written to a small JSON file beside the namespace's
//! segments (`/dev/shm/horus.<namespace>.ros2`), which `horus ros2 --status` reads; removed
//! when the bridge stops (a killed bridge's file is replaced by the next bridge's).

use std::io::Read;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

/// Which way a topic crosses.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Direction {
    /// A horus publisher, a ROS 2 subscriber.
    ToRos,
    /// A ROS 2 publisher, a horus subscriber.
    FromRos,
}

/// A topic's counters at this bridge, in one direction, since the bridge started (they
/// survive the route closing and opening again).
///
/// To ROS 2: `messages` read from the horus topic and written to DDS; `lost`: messages
/// the horus ring overwrote before the bridge read them (the bridge's own loss, as for any
/// subscriber); `refused`: writes DDS refused (history full past the blocking time).
/// From ROS 2: `messages` taken from DDS and published into horus; `lost`: samples that
/// never reached the bridge (gaps in a writer's sequence numbers, sequence_gaps.rs; and
/// what a writer that left had announced beyond what the route's ack window accepted,
/// inbound.rs);
/// `replayed`: a writer's history sent again to a reopened reader (dropped); `malformed`: payloads
/// that are not little-endian CDR of the topic's type (dropped); `oversize`: larger than
/// the topic's chunks or the bridge's limit (dropped); `refused`: publishes the horus
/// topic refused (its overflow policy; also counted by the topic's publisher record);
/// `held_back`: DATA submessages the route's DDS reader withheld for its ack window (a
/// reliable reader into a `Block` topic; requested again once they fit: back-pressure on
/// a ROS 2 writer, not a loss; what a writer that left still had held back is counted
/// `lost` too, once per sample).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct RouteCounters {
    /// Messages carried.
    pub messages: u64,
    /// Their bytes (encapsulation header + CDR body).
    pub bytes: u64,
    /// Messages lost before the bridge read them.
    pub lost: u64,
    /// Messages the other side refused.
    pub refused: u64,
    /// Malformed messages dropped.
    pub malformed: u64,
    /// Messages too large, dropped.
    pub oversize: u64,
    /// Times the route opened (a DDS or horus endpoint appeared after none); from ROS 2
    /// also each time its DDS reader was replaced for other QoS (the horus side stays).
    pub opened: u64,
    /// From ROS 2: samples a reopened transient-local reader was sent again (a writer's
    /// history, already carried): dropped, not delivered twice (sequence_gaps.rs).
    pub replayed: u64,
    /// From ROS 2: DATA submessages this route's DDS readers withheld for their ack window
    /// (a sample sent again and withheld again is counted each time): the topic's share of
    /// [`BridgeStatus::dds_held_back`]. Not a loss. Zero in a status written before it
    /// existed.
    pub held_back: u64,
}

/// One topic in one direction.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TopicStatus {
    /// Which way.
    pub direction: Direction,
    /// The horus topic (`demo/scan`).
    pub horus_topic: String,
    /// The ROS 2 topic (`/demo/scan`).
    pub ros_topic: String,
    /// The ROS 2 type (`sensor_msgs/msg/LaserScan`).
    pub type_name: String,
    /// Whether messages cross now (both sides have an endpoint).
    pub active: bool,
    /// Why it does not cross although both sides have an endpoint (type or QoS mismatch),
    /// else `None`.
    pub refused: Option<String>,
    /// Times a mismatch was found (counted once per endpoint pair seen).
    pub refusals: u64,
    /// Its counters.
    pub counters: RouteCounters,
}

/// Everything a bridge reports.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct BridgeStatus {
    /// The horus namespace.
    pub namespace: String,
    /// The ROS 2 domain.
    pub domain_id: u16,
    /// The bridge's process.
    pub pid: u32,
    /// Topics crossing, or refused, here.
    pub topics: Vec<TopicStatus>,
    /// Services crossing here (filled by the services part; empty until it exists).
    #[serde(default)]
    pub services: Vec<serde_json::Value>,
    /// The ROS 2 side's topics and services as discovered (for `horus topic list` /
    /// `horus service list`); empty in a status written before it existed.
    #[serde(default)]
    pub ros_graph: crate::ros_graph::RosGraph,
    /// DATA_FRAGs the DDS participant refused before reassembly (too large a sample, no
    /// room in a reader's or the process's reassembly budget, an unmatched writer, too many
    /// fragments, not fitting the sample); zero
    /// in a status written before it existed.
    #[serde(default)]
    pub dds_fragments_refused: crate::fragment_refusals::DdsFragmentRefusals,
    /// Discovery announcements the DDS participant refused or gave up (participants past
    /// its cap, leases clamped, endpoints past their caps or forgotten, topic records); zero
    /// in a status written before it existed.
    #[serde(default)]
    pub dds_discovery_refused: crate::discovery_refusals::DdsDiscoveryRefusals,
    /// DATA submessages the bridge's reliable DDS readers into `Block` topics held back
    /// (withheld) for their ack window since the bridge started: dropped unacknowledged and
    /// requested again once they fit, so back-pressure reached a ROS 2 writer. Not a loss
    /// (a sample held back and sent again is counted each time). Zero in a status written
    /// before it existed.
    #[serde(default)]
    pub dds_held_back: u64,
}

/// Where `namespace`'s ROS 2 bridge writes its status.
pub fn status_file_path(namespace: &str) -> PathBuf {
    PathBuf::from(format!("/dev/shm/horus.{namespace}.ros2"))
}

/// Why the status file could not be read.
#[derive(Debug, thiserror::Error)]
pub enum StatusReadError {
    /// It could not be read.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: String,
        /// Why.
        source: std::io::Error,
    },
    /// It is not a ROS 2 bridge status (or larger than 16 MiB).
    #[error("{path}: not a ROS 2 bridge status: {reason}")]
    Format {
        /// The file.
        path: String,
        /// Why.
        reason: String,
    },
}

/// Largest status file read.
const MAX_STATUS_BYTES: u64 = 16 << 20;

/// The status of `namespace`'s running bridge: `Ok(None)` when there is none (no file, or
/// its process is gone).
pub fn read_status_file(namespace: &str) -> Result<Option<BridgeStatus>, StatusReadError> {
    let path = status_file_path(namespace);
    let shown = path.display().to_string();
    let file = match std::fs::File::open(&path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(source) => {
            return Err(StatusReadError::Io {
                path: shown,
                source,
            })
        }
    };
    let mut text = Vec::new();
    file.take(MAX_STATUS_BYTES + 1)
        .read_to_end(&mut text)
        .map_err(|source| StatusReadError::Io {
            path: shown.clone(),
            source,
        })?;
    if text.len() as u64 > MAX_STATUS_BYTES {
        return Err(StatusReadError::Format {
            path: shown,
            reason: "larger than 16 MiB".into(),
        });
    }
    let status: BridgeStatus =
        serde_json::from_slice(&text).map_err(|e| StatusReadError::Format {
            path: shown,
            reason: e.to_string(),
        })?;
    Ok(crate::local::alive(status.pid).then_some(status))
}

/// Writes the status atomically (a temporary file renamed over the old one), mode 0600.
pub(crate) fn write_status_file(status: &BridgeStatus) -> std::io::Result<()> {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    let path = status_file_path(&status.namespace);
    let tmp = path.with_extension(format!("ros2.{}.tmp", status.pid));
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(&tmp)?;
    f.write_all(&serde_json::to_vec(status).map_err(std::io::Error::other)?)?;
    drop(f);
    std::fs::rename(&tmp, &path)
}

/// Removes the status file if it is still `pid`'s.
pub(crate) fn remove_status_file(namespace: &str, pid: u32) {
    let path = status_file_path(namespace);
    let mine = std::fs::read(&path)
        .ok()
        .and_then(|t| serde_json::from_slice::<BridgeStatus>(&t).ok())
        .is_some_and(|s| s.pid == pid);
    if mine {
        let _ = std::fs::remove_file(path);
    }
}
