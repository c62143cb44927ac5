//! The `multi_host` benchmark: topics and service calls between two hosts — two
//! network namespaces joined by a veth pair ([`horus_netns::TwoHosts`]) — for raw
//! Zenoh and horus through `horus_zenoh::Bridge`.
//!
//! The parent (the benchmark binary, in the root namespace) creates the two hosts
//! and, for each system, round and pinning, starts one child process per host
//! (its own binary, re-executed; the child enters its namespace with `setns`
//! before it starts any thread, so everything it opens is on that host). It then
//! drives both children cell by cell over their stdin ([`Cmd`]) and reads each
//! side's result ([`Reply`]) from their stdout ([`horus_bench_core::child`]). The
//! parent opens no socket itself.
//!
//! A system is one implementation of [`System`] (what the parent asks of it) and
//! [`HostSide`] (what one host does for each command, inside its namespace):
//!
//! * [`zenoh_system`] — raw `zenoh` sessions, peer mode, B connects to A;
//! * [`horus_system`] — horus publisher → bridge A → Zenoh → bridge B → horus
//!   subscriber, each bridge a process of its own started by its host's child.
//!
//! The rest: [`wire`] (what a message carries: sequence number and a
//! `CLOCK_MONOTONIC` stamp, shared by both namespaces), [`host`] (the child
//! process: command loop), [`session`] (the parent's side of two children),
//! [`plan`] (what a run measures and in which order); the rows and tables the report
//! reads are the crate `horus-bench-multi-host-rows`'s (re-exported here: [`rows`],
//! [`tables`]). Built on the measuring library (`horus-bench-core`) and horus's
//! message types (`horus-bench-wire`) alone: no other benchmark is compiled with it.

#![warn(missing_docs)]

pub mod horus_system;
pub mod host;
pub mod plan;
pub mod session;
pub mod wire;
pub mod zenoh_system;

pub use horus_bench_multi_host_rows::{
    drop_percent, rows, set_drop_percent, tables, SystemName, CAP_MBIT, CHANNEL_SIZES,
    DROP_PERCENT, IMPAIRED_SIZES, RATE_HZ, SWEEP_SIZES, TOPIC_COUNTS,
};

use std::net::Ipv4Addr;

use horus_bench_core::peer::Peer;
use horus_bench_core::stats::Summary;
use horus_bench_core::sysclock::CpuUse;
use serde::{Deserialize, Serialize};

/// Child role of a host process.
pub const HOST_ROLE: &str = "multi-host";

/// The child role of a host process ([`host::host_child`]), for
/// [`horus_bench_core::suite::main_with`].
pub const CHILD_ROLES: &[horus_bench_core::peer::ChildRole] =
    &[horus_bench_core::peer::ChildRole {
        role: HOST_ROLE,
        run: host::host_child,
    }];

/// The implementation of `name`.
pub fn system(name: SystemName) -> &'static dyn System {
    match name {
        SystemName::Zenoh => &zenoh_system::ZenohSystem,
        SystemName::Horus => &horus_system::HorusSystem,
    }
}

/// Which host a child is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Side {
    /// Publisher, ping side, service server.
    A,
    /// Subscriber, echo side, service client.
    B,
}

/// What a host child needs to open its side (JSON argument of [`HOST_ROLE`]).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct HostArgs {
    /// The system.
    pub system: SystemName,
    /// Which host.
    pub side: Side,
    /// Network namespace to enter.
    pub netns: String,
    /// CPU to pin the whole process to (before any thread starts), if pinned.
    pub cpu: Option<usize>,
    /// Host A's address on the link.
    pub addr_a: Ipv4Addr,
    /// Port A listens on (B connects to it).
    pub port: u16,
}

/// A one-way channel cell: `topics` topics of `size` bytes, each published at
/// `rate_hz` for `duration_ms`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Channel {
    /// Unique per cell (key expressions, topic names).
    pub id: String,
    /// Payload bytes.
    pub size: usize,
    /// Topics, each with its own publisher and subscriber.
    pub topics: usize,
    /// Per topic, Hz.
    pub rate_hz: u64,
    /// How long A publishes.
    pub duration_ms: u64,
}

/// A ping-pong or service cell.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Exchange {
    /// Unique per cell.
    pub id: String,
    /// Payload bytes (request and response alike).
    pub size: usize,
    /// Untimed exchanges first.
    pub warmup: u64,
    /// Timed exchanges.
    pub iterations: u64,
}

/// A throughput cell: `count` messages as fast as the publisher is allowed.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Flood {
    /// Unique per cell.
    pub id: String,
    /// Payload bytes.
    pub size: usize,
    /// Messages.
    pub count: u64,
}

/// What the parent asks a host to do next (one JSON line on the child's stdin).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "cmd", rename_all = "kebab-case")]
pub enum Cmd {
    /// A: publish the channel cell.
    Publish(Channel),
    /// B: receive the channel cell until every topic's end marker.
    Subscribe(Channel),
    /// A: timed round trips.
    Ping(Exchange),
    /// B: answer every ping until the end marker.
    Echo(Exchange),
    /// A: publish the flood.
    Flood(Flood),
    /// B: count the flood until its end marker.
    Sink(Flood),
    /// A: serve calls until the end call.
    Serve(Exchange),
    /// B: timed calls, then the end call.
    Call(Exchange),
    /// Close the session and exit.
    Quit,
}

/// What the publishing side of a channel cell reports.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Published {
    /// Messages sent per topic (end markers excluded).
    pub sent: Vec<u64>,
    /// `CLOCK_MONOTONIC` at the first and after the last send.
    pub start_ns: u64,
    /// See `start_ns`.
    pub end_ns: u64,
    /// The process's CPU over the publishing window.
    pub cpu: CpuUse,
}

/// What the receiving side of a channel cell reports.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Received {
    /// One-way latency of every message received (stamp to arrival in the callback).
    pub latency: Option<Summary>,
    /// Messages received per topic (duplicates excluded).
    pub received: Vec<u64>,
    /// Messages that arrived with a sequence number lower than one already seen.
    pub out_of_order: u64,
    /// The process's CPU from the first arrival to the last end marker.
    pub cpu: Option<CpuUse>,
}

/// What the receiving side of a flood reports.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Sunk {
    /// Messages received (end marker excluded).
    pub received: u64,
    /// `CLOCK_MONOTONIC` at the arrival of the last message.
    pub last_ns: u64,
}

/// A host's answer to one [`Cmd`] (one result line on its stdout).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "reply", rename_all = "kebab-case")]
pub enum Reply {
    /// To [`Cmd::Publish`].
    Published(Published),
    /// To [`Cmd::Subscribe`].
    Received(Received),
    /// To [`Cmd::Ping`] and [`Cmd::Call`]: round trips.
    RoundTrips(Summary),
    /// To [`Cmd::Flood`]: `CLOCK_MONOTONIC` at the first send.
    Flooded {
        /// Start of the flood.
        start_ns: u64,
    },
    /// To [`Cmd::Sink`].
    Sunk(Sunk),
    /// To [`Cmd::Echo`] and [`Cmd::Serve`]: exchanges answered.
    Answered {
        /// Pings or calls answered (warm-up included, end marker excluded).
        count: u64,
    },
    /// To [`Cmd::Quit`].
    Bye,
}

/// One host's side of a system, inside its namespace (in the host child process).
/// A method runs one cell from start to end; the parent has sent the matching
/// command to the other host at the same time.
pub trait HostSide {
    /// A: declare `c.topics` publishers, wait until each has a subscriber, publish
    /// at `c.rate_hz` for `c.duration_ms`, then an end marker on each topic.
    fn publish(&mut self, c: &Channel) -> anyhow::Result<Published>;
    /// B: declare the subscribers, receive until every topic's end marker.
    fn subscribe(&mut self, c: &Channel) -> anyhow::Result<Received>;
    /// A: `warmup + iterations` round trips, the timed ones summarised; then the end marker.
    fn ping(&mut self, e: &Exchange) -> anyhow::Result<Summary>;
    /// B: echo every ping until the end marker.
    fn echo(&mut self, e: &Exchange) -> anyhow::Result<u64>;
    /// A: publish `f.count` messages as fast as allowed, then the end marker;
    /// returns `CLOCK_MONOTONIC` at the first send.
    fn flood(&mut self, f: &Flood) -> anyhow::Result<u64>;
    /// B: count the flood until its end marker.
    fn sink(&mut self, f: &Flood) -> anyhow::Result<Sunk>;
    /// A: serve calls until the end call.
    fn serve(&mut self, e: &Exchange) -> anyhow::Result<u64>;
    /// B: timed calls, then the end call.
    fn call(&mut self, e: &Exchange) -> anyhow::Result<Summary>;
    /// Closes everything.
    fn close(self: Box<Self>) -> anyhow::Result<()>;
}

/// A system under test between two hosts ([`Peer::name`] is its
/// [`SystemName::name`]).
pub trait System: Peer + Sync {
    /// Checked by the parent before any child starts: why it cannot run, if so.
    fn available(&self) -> anyhow::Result<()>;
    /// Host child: opens this host's side (A listens, B connects and returns
    /// only once connected).
    fn open(&self, args: &HostArgs) -> anyhow::Result<Box<dyn HostSide>>;
}
