//! horus between the two hosts: a horus publisher on A → `horus_zenoh::Bridge` on
//! A → Zenoh → `horus_zenoh::Bridge` on B → a horus subscriber on B (services: a
//! horus client on B, the bridges, a horus server on A).
//!
//! Each host child starts its bridge as a child process of its own (this binary
//! run again with [`BRIDGE_ROLE`]): a bridge ignores the endpoints of its own
//! process, so it cannot share one with the endpoints it serves. The bridge
//! inherits the host's network namespace and CPU affinity (pinned: the same CPU
//! as the host's endpoints). Each host has its own horus namespace (network
//! namespaces share `/dev/shm`), so nothing reaches the other host but through
//! the bridges. A's bridge listens on `tcp/<A's address>:<port>`, B's connects to
//! it and listens nowhere, multicast scouting off, as in [`super::zenoh_system`].
//!
//! Every topic is `Block` (reliable, congestion control `Block` on the wire) and
//! carries [`Blob`]: the [`super::wire`] message is its tail, written in place in
//! shared memory. Before a cell is timed its path is proven end to end: the
//! sender repeats a hello on each topic until the receiver acknowledges it on a
//! reverse topic (ping-pong: until the hello's echo comes back), the counterpart
//! of raw Zenoh's matching status. A sender keeps its endpoints open until the
//! next command, so a bridge never sees a topic vanish before its last message
//! has crossed.

mod bridge_proc;
mod channel;
mod diagnose;
mod link;
mod pingpong;
mod service;

use std::any::Any;

use anyhow::{bail, Context};

pub use bridge_proc::{bridge_main, BridgeSpec, BRIDGE_ROLE};
pub use diagnose::{bridge_counters, host_namespace, ShmCleanup};

use super::{
    Channel, Exchange, Flood, HostArgs, HostSide, Published, Received, Side, Sunk, System,
    SystemName,
};
use bridge_proc::BridgeProc;
use horus_bench_core::peer::Peer;
use horus_bench_core::stats::Summary;

/// horus through its Zenoh bridge.
#[derive(Debug)]
pub struct HorusSystem;

/// The exact settings, for the method text.
pub const SETTINGS: &str = "horus publisher → horus_zenoh::Bridge (A) → Zenoh → Bridge (B) → \
    horus subscriber (services: client on B → bridges → server on A); each bridge a separate \
    process started by its host's process (same network namespace, same CPU when pinned), \
    one horus namespace per host; bridge Zenoh sessions as the raw system's (peer mode, A \
    listens on tcp/<A's veth address>:<port>, B connects, multicast off, shared memory off; \
    the bridge leaves gossip on), scan interval 100 ms, Block topics → reliable, \
    CongestionControl::Block, express; messages: horus-bench/Blob with the payload as its \
    tail, written in place (loan), topics Block with max tail = payload, depth 64 (16 from 64 \
    KiB, 4 at 1 MiB); receivers: one thread per subscriber in recv_timeout; services: \
    Service<Blob, Blob>, call_with / reply_with in place; CPU A/B of horus rows = host process \
    + its bridge process (bridge: utime + stime from /proc/<pid>/stat, 10 ms ticks)";

impl Peer for HorusSystem {
    fn name(&self) -> &'static str {
        SystemName::Horus.name()
    }

    fn settings(&self) -> String {
        SETTINGS.to_owned()
    }
}

impl System for HorusSystem {
    fn available(&self) -> anyhow::Result<()> {
        Ok(())
    }

    fn open(&self, a: &HostArgs) -> anyhow::Result<Box<dyn HostSide>> {
        let endpoint = format!("tcp/{}:{}", a.addr_a, a.port);
        let letter = match a.side {
            Side::A => "a",
            Side::B => "b",
        };
        let namespace = host_namespace(std::os::unix::process::parent_id(), a.port, letter);
        let (listen, connect) = match a.side {
            Side::A => (vec![endpoint.clone()], Vec::new()),
            Side::B => (Vec::new(), vec![endpoint.clone()]),
        };
        let spec = BridgeSpec {
            namespace: namespace.clone(),
            domain: format!("mh{}", a.port),
            host: format!("host-{letter}"),
            listen,
            connect,
        };
        let bridge = BridgeProc::spawn(&spec)?;
        if a.side == Side::B {
            bridge
                .wait_status("host A's bridge seen", |s| {
                    s.peers.iter().any(|p| p.host == "host-a")
                })
                .with_context(|| format!("connecting to {endpoint}"))?;
        }
        Ok(Box::new(HorusHost {
            namespace,
            bridge: Some(bridge),
            linger: Vec::new(),
        }))
    }
}

/// One host's side: its namespace, its bridge, and what the last cell left open.
struct HorusHost {
    namespace: String,
    bridge: Option<BridgeProc>,
    /// The last cell's sending endpoints, closed when the next command comes.
    linger: Vec<Box<dyn Any>>,
}

impl HorusHost {
    fn bridge_pid(&self) -> u32 {
        self.bridge.as_ref().map_or(0, BridgeProc::pid)
    }

    /// Closes what the previous cell left open (the other host has answered it).
    fn next_cell(&mut self) -> anyhow::Result<()> {
        self.linger.clear();
        match self.bridge.as_mut() {
            Some(b) => b.check_alive(),
            None => bail!("the bridge is gone"),
        }
    }
}

impl HostSide for HorusHost {
    fn publish(&mut self, c: &Channel) -> anyhow::Result<Published> {
        self.next_cell()?;
        channel::publish(self, c)
    }

    fn subscribe(&mut self, c: &Channel) -> anyhow::Result<Received> {
        self.next_cell()?;
        channel::subscribe(self, c)
    }

    fn ping(&mut self, e: &Exchange) -> anyhow::Result<Summary> {
        self.next_cell()?;
        pingpong::ping(self, e)
    }

    fn echo(&mut self, e: &Exchange) -> anyhow::Result<u64> {
        self.next_cell()?;
        pingpong::echo(self, e)
    }

    fn flood(&mut self, f: &Flood) -> anyhow::Result<u64> {
        self.next_cell()?;
        pingpong::flood(self, f)
    }

    fn sink(&mut self, f: &Flood) -> anyhow::Result<Sunk> {
        self.next_cell()?;
        pingpong::sink(self, f)
    }

    fn serve(&mut self, e: &Exchange) -> anyhow::Result<u64> {
        self.next_cell()?;
        service::serve(self, e)
    }

    fn call(&mut self, e: &Exchange) -> anyhow::Result<Summary> {
        self.next_cell()?;
        service::call(self, e)
    }

    fn close(mut self: Box<Self>) -> anyhow::Result<()> {
        self.linger.clear();
        if let Some(b) = self.bridge.take() {
            b.stop()?;
        }
        link::check_clean(&self.namespace)
    }
}

impl Drop for HorusHost {
    fn drop(&mut self) {
        self.linger.clear();
        // The bridge process stops when its stdin closes (BridgeProc's drop).
        self.bridge.take();
    }
}
