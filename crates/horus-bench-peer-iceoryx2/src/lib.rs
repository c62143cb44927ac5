//! iceoryx2 as a peer of horus's benchmarks, measured through the traits and loops
//! of `horus-bench-core` exactly like horus:
//!
//! * [`pubsub`] — publish/subscribe round trips and one-way bursts
//!   ([`pubsub::Iceoryx2PubSub`], a [`horus_bench_core::pubsub::PubSub`]);
//! * [`many`] — M publisher and K subscriber processes on one service (the
//!   `many_to_many` benchmark);
//! * [`rpc`] — request/response calls ([`rpc::Iceoryx2Rpc`], a
//!   [`horus_bench_core::rpc::Rpc`]).
//!
//! The far side of each measurement is a child role ([`pubsub::CHILD_ROLES`], and
//! the request/response server under `horus_bench_core::rpc::SERVE_ROLE`), run in
//! the benchmark binary that links this crate.
#![warn(missing_docs)]

pub mod many;
pub mod pubsub;
pub mod rpc;
