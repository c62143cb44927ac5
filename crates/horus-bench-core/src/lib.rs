//! The measuring library of horus's benchmarks: what every benchmark times with and
//! how, independent of any system under test (no middleware, not even horus, is a
//! dependency). `horus-bench` builds its peers and benchmark binaries on it and
//! re-exports each module under the same name (`horus_bench::clock`, …;
//! `horus_bench::suite` adds horus's own child roles to the dispatch).
//!
//! * [`clock`], [`sysclock`] — the per-sample timer (rdtsc, calibrated per process) and
//!   the cross-process clock (`CLOCK_MONOTONIC`) with CPU accounting;
//! * [`stats`] — percentiles and throughput of the samples, the median over rounds;
//! * [`harness`] — the one measurement loop every system goes through (round trips,
//!   one-way bursts, bounded busy waits);
//! * [`payload`] — how messages are written and read (whole payload or its ends);
//! * [`affinity`] — pinning a thread to a CPU;
//! * [`child`] — the echo side as a separate process and the line protocol to it;
//! * [`suite`], [`machine`] — what every suite binary shares (common flags, child-role
//!   dispatch, the `--json` document and the machine it records);
//! * [`markdown`], [`units`] — tables printed as text and as Markdown, and how sizes and
//!   times are written in them;
//! * [`peer`], [`pubsub`], [`rpc`] — what a system under test is (one trait, extended
//!   by kind of benchmark) and the protocol of a request/response peer, which every
//!   peer crate (`horus-bench-peer-*`) implements.
#![warn(missing_docs)]

pub mod affinity;
pub mod child;
pub mod clock;
pub mod harness;
pub mod machine;
pub mod markdown;
pub mod payload;
pub mod peer;
pub mod pubsub;
pub mod rpc;
pub mod stats;
pub mod suite;
pub mod sysclock;
pub mod units;
