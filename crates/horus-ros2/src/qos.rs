//! horus delivery settings ↔ DDS QoS (the table in docs/ros2-bridge.md).
//!
//! - Writers the bridge creates (horus → ROS 2) are always RELIABLE: a reliable writer
//!   matches both reliable and best-effort readers. Durability follows the horus topic:
//!   latched ↔ TRANSIENT_LOCAL, else VOLATILE. History: KEEP_LAST of the topic's depth
//!   (latched: its `latched` depth, what a late subscriber gets).
//! - Readers the bridge creates (ROS 2 → horus) ask for no more than every writer on the
//!   topic offers, so that all of them match: RELIABLE only if all writers are,
//!   TRANSIENT_LOCAL only if all writers are. History: KEEP_LAST of the horus topic's depth.
//!   Into a `Block` horus topic a reliable reader has an ack window of that depth (the
//!   patched RustDDS's reader-side flow control, HORUS-PATCH.md item 17): it takes and
//!   acknowledges at most that many samples beyond what the route has taken, so a reliable
//!   KEEP_ALL ROS 2 writer is held back while the horus subscriber is.

use horus::Durability as HorusDurability;
use rustdds::policy::{Durability, History, Reliability};
use rustdds::{QosPolicies, QosPolicyBuilder};

use crate::discovery::RemoteEndpoint;

/// How long one reliable write may wait for room in the writer's send window before it
/// fails with `WouldBlock`, for a horus topic that does not block (`DropOldest`, `Reject`):
/// not at all. The route counts the message refused and goes on with the newest.
const NO_WAIT_MS: i64 = 0;

/// The same for a `Block` horus topic: one wait's slice. The route retries until the write
/// fits (back-pressure reaches the horus publisher through the ring) or the route closes;
/// the slice bounds how long closing waits for it.
const BLOCK_SLICE_MS: i64 = 100;

/// The QoS of the bridge's writer for a horus topic of `durability` and `depth`; `block`:
/// the horus topic's overflow policy is `Block` (writes wait for a reliable reader).
pub(crate) fn writer_qos(durability: HorusDurability, depth: u32, block: bool) -> QosPolicies {
    let latched = durability.latched();
    let (d, depth) = if latched > 0 {
        (Durability::TransientLocal, latched)
    } else {
        (Durability::Volatile, depth)
    };
    let wait = if block { BLOCK_SLICE_MS } else { NO_WAIT_MS };
    QosPolicyBuilder::new()
        .reliability(Reliability::Reliable {
            max_blocking_time: rustdds::Duration::from_millis(wait),
        })
        .durability(d)
        .history(History::KeepLast {
            depth: i32::try_from(depth.max(1)).unwrap_or(i32::MAX),
        })
        .build()
}

/// What the bridge's reader must ask for to match every one of `writers`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct ReaderKind {
    /// Reliable (every writer is).
    pub(crate) reliable: bool,
    /// Transient-local (every writer is).
    pub(crate) transient_local: bool,
}

impl ReaderKind {
    /// The strongest request all of `writers` satisfy.
    pub(crate) fn of(writers: &[&RemoteEndpoint]) -> ReaderKind {
        ReaderKind {
            reliable: writers.iter().all(|w| w.reliable),
            transient_local: writers.iter().all(|w| w.transient_local),
        }
    }

    /// The reader's QoS, keeping the last `depth` messages; `block`: the horus topic's
    /// overflow policy is `Block` (a reliable reader then acknowledges at most `depth`
    /// samples beyond what the route has taken: back-pressure reaches the writers).
    pub(crate) fn qos(self, depth: u32, block: bool) -> QosPolicies {
        let reliability = if self.reliable {
            Reliability::Reliable {
                max_blocking_time: rustdds::Duration::from_millis(NO_WAIT_MS),
            }
        } else {
            Reliability::BestEffort
        };
        let qos = QosPolicyBuilder::new()
            .reliability(reliability)
            .durability(if self.transient_local {
                Durability::TransientLocal
            } else {
                Durability::Volatile
            })
            .history(History::KeepLast {
                depth: i32::try_from(depth.max(1)).unwrap_or(i32::MAX),
            })
            .build();
        if block && self.reliable {
            // At most the history's depth: what the reader holds never overflows it.
            qos.with_horus_ack_window(depth.max(1))
        } else {
            qos
        }
    }
}

/// Whether a writer of `durability` serves a reader asking for transient-local.
pub(crate) fn serves(durability: HorusDurability, reader: &RemoteEndpoint) -> bool {
    !reader.transient_local || durability.latched() > 0
}
