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
//! here); each peer middleware is a crate of its own, compiled in with its feature:
//!
//! * [`horus_rpc`] — horus services (busy-poll and blocking);
//! * [`iceoryx2_rpc`] — iceoryx2 request/response (busy-poll; crate
//!   `horus-bench-peer-iceoryx2`, feature `iceoryx2`);
//! * [`zenoh_rpc`] — Zenoh queryables queried with a querier (`get`; crate
//!   `horus-bench-peer-zenoh`, feature `zenoh`);
//! * [`grpc`], [`grpc_service`] — tonic unary calls, TCP loopback or Unix socket
//!   (crate `horus-bench-peer-grpc`, feature `grpc`);
//! * [`peer`] — which implementation serves a [`System`] in this binary;
//! * [`plan`] — what one run measures, in which order, with which counts;
//! * [`rows`] — the rows of the `--json` document and their aggregation over rounds;
//! * [`tables`], [`targets`] — the printed tables, ratios and the service latency targets.

pub mod horus_rpc;
pub mod plan;
pub mod rows;
pub mod tables;
pub mod targets;

pub use horus_bench_core::rpc::*;
#[cfg(feature = "grpc")]
pub use horus_bench_peer_grpc::{rpc as grpc, service as grpc_service};
#[cfg(feature = "iceoryx2")]
pub use horus_bench_peer_iceoryx2::rpc as iceoryx2_rpc;
#[cfg(feature = "zenoh")]
pub use horus_bench_peer_zenoh::rpc as zenoh_rpc;

use crate::pubsub::horus::Wait;

/// The implementation of `system` in this binary, or why it has none (its peer
/// crate's cargo feature is off).
pub fn peer(system: System) -> anyhow::Result<&'static dyn Rpc> {
    match system {
        System::Horus => Ok(&horus_rpc::HorusRpc { wait: Wait::Poll }),
        System::HorusBlocking => Ok(&horus_rpc::HorusRpc { wait: Wait::Futex }),
        #[cfg(feature = "iceoryx2")]
        System::Iceoryx2 => Ok(&iceoryx2_rpc::Iceoryx2Rpc),
        #[cfg(feature = "zenoh")]
        System::Zenoh => Ok(&zenoh_rpc::ZenohRpc),
        #[cfg(feature = "grpc")]
        System::GrpcTcp => Ok(&grpc::Grpc {
            transport: grpc::Transport::Tcp,
        }),
        #[cfg(feature = "grpc")]
        System::GrpcUds => Ok(&grpc::Grpc {
            transport: grpc::Transport::Uds,
        }),
        #[allow(unreachable_patterns)] // with every feature on
        other => anyhow::bail!(
            "{} is not compiled into this binary (cargo feature `{}` of horus-bench)",
            other.name(),
            feature(other)
        ),
    }
}

/// The cargo feature of horus-bench that compiles the implementation of `system`
/// in (`none` for horus).
pub fn feature(system: System) -> &'static str {
    match system {
        System::Horus | System::HorusBlocking => "none",
        System::Iceoryx2 => "iceoryx2",
        System::Zenoh => "zenoh",
        System::GrpcTcp | System::GrpcUds => "grpc",
    }
}

/// Child entry point of [`SERVE_ROLE`].
pub fn serve_child(mut args: crate::child::ChildArgs) -> anyhow::Result<()> {
    let a: ServeArgs = serde_json::from_str(&args.next::<String>("server json")?)?;
    peer(a.system)?.serve(&a)
}

/// One client session of `system` at `spec.size` (the server in its own process).
pub fn run(system: System, spec: &Spec, cpus: Option<[usize; 2]>) -> anyhow::Result<Measured> {
    peer(system)?.run(spec, cpus)
}
