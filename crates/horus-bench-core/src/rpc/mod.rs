//! What a request/response peer is and how its calls are measured, the same for
//! every system: the client side ([`Caller`]) started and finished by the
//! [`driver`], the server a child process ([`SERVE_ROLE`]) told what to serve by
//! [`ServeArgs`], and the sequence numbers that end a session ([`END`], [`EXIT`]).
//!
//! Every call is measured the same way ([`driver`]): the client writes every byte
//! of request `seq` ([`crate::payload`]), the server (a separate process) reads it
//! and copies it into its response, the client reads every byte of the response.
//! Each system implements [`Rpc`] (the peer) and [`Caller`] (start a call, finish
//! the oldest one) on the client side; one server child serves one system at one
//! payload size for every measurement of its session.
//!
//! The peers themselves live in crates of their own (`horus-bench-peer-*`, and
//! horus's in `horus-bench`); [`System`] only names them.

pub mod driver;

use serde::{Deserialize, Serialize};

use crate::payload::Touch;
use crate::peer::Peer;

/// Payload sizes of the latency and stress tables (request and response alike).
pub const SIZES: &[usize] = &[64, 512, 1024, 2048, 4096, 65536, 1048576];
/// Calls in flight of the latency-versus-in-flight table.
pub const IN_FLIGHT: &[usize] = &[1, 2, 4, 8];
/// Payload of the latency-versus-in-flight table.
pub const IN_FLIGHT_SIZE: usize = 64;
/// Total call rate of the latency-versus-in-flight table, calls per second.
pub const CALL_RATE_HZ: u64 = 1000;
/// Calls kept in flight in stress mode.
pub const STRESS_WINDOW: usize = 8;
/// Sequence number of the last call of a child's session: the server answers it
/// and exits.
pub const END: u64 = u64::MAX - 1;

/// The client side of one system: calls complete in the order they were started
/// (one server answering in order).
pub trait Caller {
    /// Starts call `seq`: writes its request payload and sends it.
    fn start(&mut self, seq: u64) -> anyhow::Result<()>;
    /// Waits for the oldest call in flight, which must be call `seq`, and reads
    /// its response.
    fn finish(&mut self, seq: u64) -> anyhow::Result<()>;
}

/// A request/response peer: the client side measured in the calling process, the
/// server a child process of the same binary ([`SERVE_ROLE`]).
pub trait Rpc: Peer + Sync {
    /// One client session at `spec.size`: starts the server, runs what `spec`
    /// asks for through [`driver::measure_all`], ends the server.
    fn run(&self, spec: &Spec, cpus: Option<[usize; 2]>) -> anyhow::Result<Measured>;
    /// The server child: answers every call until the [`END`] call, then waits
    /// for [`release`].
    fn serve(&self, args: &ServeArgs) -> anyhow::Result<()>;
}

/// The systems of the benchmark, in table order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum System {
    /// horus services, both sides busy-polling.
    Horus,
    /// horus services, both sides blocking (futex).
    HorusBlocking,
    /// iceoryx2 request/response, both sides busy-polling.
    Iceoryx2,
    /// Zenoh querier and queryable over TCP loopback.
    Zenoh,
    /// gRPC (tonic) over TCP loopback.
    GrpcTcp,
    /// gRPC (tonic) over a Unix-domain socket.
    GrpcUds,
}

impl System {
    /// Every system, in table order.
    pub const ALL: [System; 6] = [
        System::Horus,
        System::HorusBlocking,
        System::Iceoryx2,
        System::Zenoh,
        System::GrpcTcp,
        System::GrpcUds,
    ];

    /// Name on the command line and in the JSON.
    pub fn name(self) -> &'static str {
        match self {
            System::Horus => "horus",
            System::HorusBlocking => "horus-blocking",
            System::Iceoryx2 => "iceoryx2",
            System::Zenoh => "zenoh",
            System::GrpcTcp => "grpc-tcp",
            System::GrpcUds => "grpc-uds",
        }
    }

    /// Inverse of [`System::name`].
    pub fn parse(s: &str) -> anyhow::Result<System> {
        System::ALL
            .into_iter()
            .find(|x| x.name() == s)
            .ok_or_else(|| anyhow::anyhow!("unknown system {s:?}"))
    }

    /// Column header: the system and how it waits and moves the payload.
    pub fn label(self) -> &'static str {
        match self {
            System::Horus => "horus (busy-poll)",
            System::HorusBlocking => "horus (blocking)",
            System::Iceoryx2 => "iceoryx2 (busy-poll)",
            System::Zenoh => "zenoh tcp (blocking)",
            System::GrpcTcp => "gRPC tcp (blocking)",
            System::GrpcUds => "gRPC uds (blocking)",
        }
    }

    /// Whether the system busy-polls (else it blocks in the kernel while waiting).
    pub fn busy_poll(self) -> bool {
        matches!(self, System::Horus | System::Iceoryx2)
    }

    /// The horus row a peer is compared with: the one that waits the same way.
    pub fn horus_pair(self) -> System {
        if self.busy_poll() {
            System::Horus
        } else {
            System::HorusBlocking
        }
    }
}

/// What one client session measures at one payload size.
#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
pub struct Spec {
    /// Request and response payload, bytes.
    pub size: usize,
    /// How much of each payload the sides write and read.
    pub touch: Touch,
    /// Untimed calls before each measurement.
    pub warmup: u64,
    /// Timed calls of the latency table (one in flight).
    pub calls: u64,
    /// Calls of the stress measurement (0: not measured).
    pub stress_calls: u64,
    /// Calls per point of the in-flight table (0: not measured).
    pub paced_calls: u64,
}

/// What one client session measured.
#[derive(Debug, Clone, Default)]
pub struct Measured {
    /// Latency, one call in flight.
    pub latency: Option<crate::stats::Summary>,
    /// Stress mode, calls per second.
    pub stress: Option<f64>,
    /// Latency at each number of calls in flight, at the fixed call rate.
    pub paced: Vec<(usize, crate::stats::Summary)>,
}

/// Child role of every system's server.
pub const SERVE_ROLE: &str = "rpc-server";

/// What a server child is told (one JSON argument).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ServeArgs {
    /// Which server to run.
    pub system: System,
    /// Where to meet the client: a namespace, service name, endpoint or socket path.
    pub id: String,
    /// Payload bytes.
    pub size: usize,
    /// How much of each payload is read and written.
    pub touch: Touch,
    /// The server's CPU, if pinned.
    pub cpu: Option<usize>,
}

impl ServeArgs {
    /// The server of `system` for `spec`, on `cpus[1]` if pinned.
    pub fn new(system: System, id: String, spec: &Spec, cpus: Option<[usize; 2]>) -> Self {
        ServeArgs {
            system,
            id,
            size: spec.size,
            touch: spec.touch,
            cpu: cpus.map(|c| c[1]),
        }
    }

    /// Starts the server process and waits until it serves.
    pub fn spawn(&self) -> anyhow::Result<crate::child::ChildProcess> {
        let mut child = crate::child::ChildProcess::spawn_controlled(
            SERVE_ROLE,
            &[serde_json::to_string(self)?],
        )?;
        child.wait_ready()?;
        Ok(child)
    }
}

/// What the client tells a server once it has the answer to the [`END`] call.
pub const EXIT: &str = "exit";

/// Client side, after the [`END`] call: lets the server go and waits for it to
/// exit cleanly. A server leaves only when told, never right after answering
/// the END call, so that its leaving can never race with the client reading
/// that answer.
pub fn release(mut child: crate::child::ChildProcess) -> anyhow::Result<()> {
    child.send_line(EXIT)?;
    child.finish()
}

/// Server side, after answering the [`END`] call: waits for [`release`].
pub fn await_release() -> anyhow::Result<()> {
    crate::child::wait_for_parent(EXIT)
}
