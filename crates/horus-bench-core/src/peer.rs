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
//! What every kind shares, beyond the name and settings: the far side of a
//! measurement (the echo, the server, a host) runs in a child process, the
//! benchmark's own executable re-started as `--child <role>`; each peer crate
//! lists its roles as [`ChildRole`]s and a binary dispatches the roles of the
//! peers it links ([`crate::suite::main_with`]; `horus_bench::suite::main_with`
//! adds horus's own), pub/sub, rpc and multi-host alike.
//!
//! What a peer is asked to measure is not shared, on purpose: a pub/sub peer
//! returns a round-trip [`Summary`](crate::stats::Summary) for a payload size, an
//! rpc peer a client session's latency, stress and in-flight samples for a
//! [`Spec`](crate::rpc::Spec), and a two-host system does not measure at all (it
//! opens one host's side inside a network namespace; the parent drives both
//! hosts cell by cell). One `measure` method would need associated spec and
//! result types, which rules out the `dyn` lists the binaries select peers from
//! (`by_name`, `horus_bench_rpc::peer`, `horus_bench_multi_host::system`), or
//! enums of every spec and result that each implementation matches on and
//! mostly refuses at run time — more code, and type errors moved from the
//! compiler to the run.
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

/// A child role of a peer: the far side of its measurement, run in the
/// benchmark's own executable re-started as `--child <role>` ([`crate::child`]).
#[derive(Debug, Clone, Copy)]
pub struct ChildRole {
    /// The role name on the child's command line.
    pub role: &'static str,
    /// Its entry point.
    pub run: fn(crate::child::ChildArgs) -> anyhow::Result<()>,
}
