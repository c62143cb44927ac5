//! The `rpc` benchmark: request/response calls between two processes, for horus
//! services and, in the same run, iceoryx2's request/response, Zenoh queryables
//! and gRPC (tonic) over TCP loopback and a Unix socket.
//!
//! It reproduces the three "Rpc" tables of the reference report on this machine:
//! call latency versus payload (one call in flight), calls per second versus
//! payload (stress: a window of calls kept in flight), and latency versus calls in
//! flight at a fixed total call rate of 1 kHz.
//!
//! Every call is measured the same way ([`driver`]): the client writes every byte
//! of request `seq` ([`crate::payload`]), the server (a separate process) reads it
//! and copies it into its response, the client reads every byte of the response.
//! Each system implements [`Rpc`] and [`Caller`] (start a call, finish the oldest
//! one) on the client side and serves from a child process; one child serves one
//! system at one payload size for all three tables. Those traits, [`System`] and
//! the driver are `horus-bench-core`'s ([`horus_bench_core::rpc`], re-exported
//! here). Here:
//!
//! * [`horus_rpc`] — horus services (busy-poll and blocking);
//! * [`rows`] — the rows of the `--json` document and their aggregation over rounds;
//! * [`tables`], [`targets`] — the printed tables, ratios and the service latency targets.
//!
//! The other peers are crates of their own (iceoryx2 request/response, Zenoh
//! queryables, gRPC over TCP loopback and a Unix socket); the crate `horus-bench-rpc`
//! links all of them, maps each [`System`] to its implementation, plans a run and is
//! the `rpc` binary.

pub mod horus_rpc;
pub mod rows;
pub mod tables;
pub mod targets;

pub use horus_bench_core::rpc::*;
