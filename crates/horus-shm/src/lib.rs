//! horus-shm: the shared-memory substrate of horus.
#![cfg_attr(loom, allow(dead_code, unused_imports))]
//!
//! This crate knows nothing about messages, nodes or Python. It provides:
//!
//! * [`Segment`] — named POSIX shared memory, created `0600` and `O_EXCL`;
//! * [`Channel`] — a validated segment holding, per publisher place, a
//!   broadcast ring with per-slot sequence numbers and a chunk pool with
//!   generation-tagged references, plus participant records;
//! * [`PublisherPort`] / [`SubscriberPort`] — byte-level endpoints;
//! * waiting ([`wait`]: spin, yield, futex — for subscribers receiving
//!   and for `Block` publishers waiting for room), and dead-participant reclamation by
//!   pid + start time ([`ProcessId`]).
//!
//! Shared memory is untrusted input: headers are validated on open, every
//! index read from a slot is bounds-checked, and a crashed writer can leave a
//! slot half-written but never make a reader accept it.

#![warn(missing_docs)]

/// The atomics every lock-free protocol of horus uses (loom's under `cfg(loom)`), for
/// crates that build their own shared-memory structures on this substrate (horus-tf).
pub mod sync;

#[cfg(not(loom))]
mod channel;
#[cfg(all(test, not(loom)))]
mod channel_description_tests;
#[cfg(not(loom))]
mod clean;
#[cfg(not(loom))]
mod error;
#[cfg(not(loom))]
pub mod fault;
#[cfg(not(loom))]
pub mod futex;
#[cfg(not(loom))]
pub mod init;
#[cfg(not(loom))]
mod latency;
#[cfg(not(loom))]
pub mod layout;
#[cfg(not(loom))]
pub mod name;
#[cfg(not(loom))]
mod process;
#[cfg(not(loom))]
mod pub_port;
#[cfg(not(loom))]
mod pub_room;
#[cfg(not(loom))]
mod segment;
#[cfg(not(loom))]
mod snapshot;
#[cfg(not(loom))]
mod sub_port;

/// Crate internals for the `cargo fuzz` targets (`fuzz/`).
#[cfg(fuzzing)]
pub mod fuzz_api;

pub mod call;
pub mod place;
mod pool;
mod protocol;
mod records;
mod ring;
mod room;
/// Wait strategies (spin, yield, futex) behind one trait.
#[cfg(not(loom))]
pub mod wait;

#[cfg(not(loom))]
pub use channel::Channel;
#[cfg(not(loom))]
pub use clean::{
    channel_prefix, close_unused_channel, is_young, remove_stale_channels,
    remove_stale_channels_of_kind, segment_files, segment_prefix, sweep, CleanError, SegmentFate,
    SegmentReport, Unopened, Verdict, INIT_GRACE,
};
#[cfg(not(loom))]
pub use error::{JoinError, NameError, OpenError, PayloadError, RoomError, SegmentError};
#[cfg(not(loom))]
pub use latency::{bucket_of, bucket_range, LatencySnapshot, BUCKETS as LATENCY_BUCKETS};
#[cfg(not(loom))]
pub use layout::{ChannelConfig, Layout, SCHEMA_BYTES};
#[cfg(not(loom))]
pub use process::ProcessId;
#[cfg(not(loom))]
pub use pub_port::{ChunkLoan, PublisherPort};
#[cfg(not(loom))]
pub use pub_room::RoomPolicy;
#[cfg(not(loom))]
pub use segment::Segment;
#[cfg(not(loom))]
pub use snapshot::{ChannelSnapshot, PublisherSnapshot, SubscriberSnapshot};
#[cfg(not(loom))]
pub use sub_port::{Received, StartAt, SubPlace, SubscriberPort};

/// The lock-free protocols, exposed for the loom model tests only.
#[cfg(loom)]
pub mod model {
    pub use crate::pool::model::*;
    pub use crate::protocol::model::*;
    pub use crate::ring::heap::HeapSlotForTests;
    pub use crate::room::model::*;
}
