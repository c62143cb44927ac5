//! The `rpc` benchmark: request/response calls between two processes, horus services
//! beside iceoryx2's request/response, Zenoh queryables and gRPC (tonic) over TCP
//! loopback and a Unix socket, in the same run (the rows, tables and targets are
//! `horus_bench::rpc`'s, where the report reads them).
//!
//! This crate links exactly those peer crates; [`peer`] maps each [`System`] to the
//! implementation of [`Rpc`] that serves it (every one is compiled in), [`run`] is one
//! client session, [`serve_child`] the server process, and [`plan`] what one run
//! measures, in which order.
#![warn(missing_docs)]

pub mod plan;

use horus_bench::peer::ChildRole;
use horus_bench::pubsub::horus::Wait;
use horus_bench::rpc::horus_rpc::HorusRpc;
use horus_bench::rpc::{Measured, Rpc, ServeArgs, Spec, System};
/// gRPC (tonic) unary calls and their service definition (`horus-bench-peer-grpc`).
pub use horus_bench_peer_grpc::{rpc as grpc, service as grpc_service};
/// iceoryx2 request/response (`horus-bench-peer-iceoryx2`).
pub use horus_bench_peer_iceoryx2::rpc as iceoryx2_rpc;
/// Zenoh queryables queried with a querier (`horus-bench-peer-zenoh`).
pub use horus_bench_peer_zenoh::rpc as zenoh_rpc;

/// The child role of this benchmark's servers ([`serve_child`]), for
/// [`horus_bench::suite::main_with`].
pub const CHILD_ROLES: &[ChildRole] = &[ChildRole {
    role: horus_bench::rpc::SERVE_ROLE,
    run: serve_child,
}];

/// The implementation of `system`.
pub fn peer(system: System) -> &'static dyn Rpc {
    match system {
        System::Horus => &HorusRpc { wait: Wait::Poll },
        System::HorusBlocking => &HorusRpc { wait: Wait::Futex },
        System::Iceoryx2 => &iceoryx2_rpc::Iceoryx2Rpc,
        System::Zenoh => &zenoh_rpc::ZenohRpc,
        System::GrpcTcp => &grpc::Grpc {
            transport: grpc::Transport::Tcp,
        },
        System::GrpcUds => &grpc::Grpc {
            transport: grpc::Transport::Uds,
        },
    }
}

/// Child entry point of [`horus_bench::rpc::SERVE_ROLE`]: serves the system its JSON
/// argument names.
pub fn serve_child(mut args: horus_bench::child::ChildArgs) -> anyhow::Result<()> {
    let a: ServeArgs = serde_json::from_str(&args.next::<String>("server json")?)?;
    peer(a.system).serve(&a)
}

/// One client session of `system` at `spec.size` (the server in its own process).
pub fn run(system: System, spec: &Spec, cpus: Option<[usize; 2]>) -> anyhow::Result<Measured> {
    peer(system).run(spec, cpus)
}
