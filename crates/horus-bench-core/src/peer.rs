//! What every system under test is, whatever it is measured on.
//!
//! A peer is one transport or middleware measured by a benchmark. It has a name
//! (on the command line, in the JSON rows, in the tables) and a description of how
//! it is set up (the method text beside its tables). What it is asked to do depends
//! on the kind of benchmark, so each kind extends this trait:
//!
//! * [`crate::pubsub::PubSub`] — a ping-pong of topics between two processes;
//! * [`crate::rpc::Rpc`] — request/response calls between two processes;
//! * `horus_bench_multi_host::System` — topics and calls between two hosts.
//!
//! Each peer middleware is a crate of its own built on this one
//! (`horus-bench-peer-iceoryx2`, `horus-bench-peer-zenoh`, `horus-bench-peer-grpc`),
//! so a benchmark binary links only the peers it measures.

/// One system under test.
pub trait Peer {
    /// Name on the command line, in the JSON rows and in the tables.
    fn name(&self) -> &'static str;
    /// How it is set up (version, transport, how it waits), for the method text.
    fn settings(&self) -> String;
}
