//! The rows and tables of the `multi_host` benchmark (topics and service calls between
//! two hosts, raw Zenoh beside horus through its bridge), with the sizes, rates and
//! impairments they are measured at. The systems, the host processes and the
//! `multi_host` binary are the crate `horus-bench-multi-host` (which re-exports this
//! one); these are a crate of their own so that the report (`horus-bench-report`)
//! reads and renders the rows without linking Zenoh.
#![warn(missing_docs)]

pub mod rows;
pub mod tables;

use std::sync::atomic::{AtomicU32, Ordering};

use serde::{Deserialize, Serialize};

/// Payloads of the channel table (one-way at a fixed rate).
pub const CHANNEL_SIZES: &[usize] = &[512, 1024, 2048, 8192, 65536, 1 << 20];
/// Topic counts of the channel table.
pub const TOPIC_COUNTS: &[usize] = &[1, 4, 8];
/// Payloads of the round-trip, throughput and service tables.
pub const SWEEP_SIZES: &[usize] = &[16, 512, 1024, 2048, 8192, 65536, 1 << 20];
/// Payloads of the impaired rows.
pub const IMPAIRED_SIZES: &[usize] = &[16, 1 << 20];
/// Publishing rate of every topic in the channel and impaired rows, Hz.
pub const RATE_HZ: u64 = 1000;
/// Packet loss of the impaired rows, percent of each host's packets on the link (default).
pub const DROP_PERCENT: u32 = 1;

/// The packet loss of this run's impaired rows: [`DROP_PERCENT`] unless `--loss-percent`
/// (to make a rare loss effect frequent) set another.
static DROP_PERCENT_NOW: AtomicU32 = AtomicU32::new(DROP_PERCENT);

/// This run's packet loss of the impaired rows, percent.
pub fn drop_percent() -> u32 {
    // Relaxed: set once, before any cell runs; nothing else is published through it.
    DROP_PERCENT_NOW.load(Ordering::Relaxed)
}

/// Sets this run's packet loss of the impaired rows (`--loss-percent`), before any cell.
pub fn set_drop_percent(percent: u32) {
    DROP_PERCENT_NOW.store(percent, Ordering::Relaxed);
}
/// Bandwidth cap of the impaired rows, Mbit/s on each host's end of the link.
pub const CAP_MBIT: u32 = 100;

/// Which system a row belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SystemName {
    /// Raw Zenoh sessions.
    Zenoh,
    /// horus through `horus_zenoh::Bridge` on each host.
    Horus,
}

impl SystemName {
    /// Every system, in table order.
    pub const ALL: [SystemName; 2] = [SystemName::Zenoh, SystemName::Horus];

    /// Name in tables and on the command line.
    pub fn name(self) -> &'static str {
        match self {
            SystemName::Zenoh => "zenoh",
            SystemName::Horus => "horus",
        }
    }

    /// Inverse of [`SystemName::name`].
    pub fn parse(s: &str) -> Result<Self, UnknownSystem> {
        Self::ALL
            .into_iter()
            .find(|x| x.name() == s)
            .ok_or_else(|| UnknownSystem(s.to_owned()))
    }
}

/// [`SystemName::parse`] was given a name that is none of [`SystemName::ALL`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown system {0:?} (zenoh, horus)")]
pub struct UnknownSystem(pub String);
