//! Zenoh as a peer of horus's benchmarks, measured through the traits and loops of
//! `horus-bench-core` exactly like horus:
//!
//! * [`pubsub`] — publish/subscribe round trips over TCP loopback or Zenoh's shared
//!   memory ([`pubsub::ZenohPubSub`], a [`horus_bench_core::pubsub::PubSub`]); its
//!   sessions ([`pubsub::open`], [`pubsub::loopback_config`]) also serve the
//!   two-host benchmark;
//! * [`rpc`] — queryables queried with a querier ([`rpc::ZenohRpc`], a
//!   [`horus_bench_core::rpc::Rpc`]).
#![warn(missing_docs)]

pub mod pubsub;
pub mod rpc;
