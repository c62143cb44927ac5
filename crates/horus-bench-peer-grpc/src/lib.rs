//! gRPC (tonic unary calls) as a request/response peer of horus's benchmarks,
//! measured through the traits and loops of `horus-bench-core` exactly like horus's
//! services:
//!
//! * [`rpc`] — the client and server sides over TCP loopback or a Unix socket
//!   ([`rpc::Grpc`], a [`horus_bench_core::rpc::Rpc`]);
//! * [`service`] — the hand-written service, its messages and routes.
#![warn(missing_docs)]

pub mod rpc;
pub mod service;
