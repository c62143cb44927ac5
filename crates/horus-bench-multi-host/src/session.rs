//! The parent's side of one system on the two hosts: a child process per host,
//! driven cell by cell. Each cell sends both hosts their command and waits for
//! both replies; a failure anywhere makes the session unusable (drop it: both
//! children are killed) and the caller opens a new one.

use std::time::Duration;

use anyhow::{bail, Context};
use horus_netns::TwoHosts;

use super::{
    Channel, Cmd, Exchange, Flood, HostArgs, Published, Received, Reply, Side, Sunk, SystemName,
    HOST_ROLE,
};
use horus_bench_core::child::ChildProcess;
use horus_bench_core::stats::Summary;

/// Longest a cell may take beyond its planned duration.
const CELL_SLACK: Duration = Duration::from_secs(90);

/// Two host children of one system.
#[derive(Debug)]
pub struct Session {
    a: ChildProcess,
    b: ChildProcess,
    port: u16,
    /// horus: removes what the hosts left in `/dev/shm` once they are gone (dropped after
    /// them: fields drop in order).
    _cleanup: Option<super::horus_system::ShmCleanup>,
}

impl Session {
    /// Starts host A (listening on `port` at its address), then host B
    /// (connected to A); `cpus` pins A's and B's processes.
    pub fn open(
        system: SystemName,
        hosts: &TwoHosts,
        cpus: Option<[usize; 2]>,
        port: u16,
    ) -> anyhow::Result<Self> {
        let spawn = |side: Side| -> anyhow::Result<ChildProcess> {
            let (netns_side, cpu) = match side {
                Side::A => (horus_netns::Side::A, cpus.map(|c| c[0])),
                Side::B => (horus_netns::Side::B, cpus.map(|c| c[1])),
            };
            let args = HostArgs {
                system,
                side,
                netns: hosts.host(netns_side).name().to_owned(),
                cpu,
                addr_a: hosts.host(horus_netns::Side::A).addr(),
                port,
            };
            let mut child =
                ChildProcess::spawn_controlled(HOST_ROLE, &[serde_json::to_string(&args)?])?;
            child
                .wait_ready()
                .with_context(|| format!("host {side:?} of {}", system.name()))?;
            Ok(child)
        };
        // Before any host starts: a failed start is cleaned up too.
        let cleanup =
            (system == SystemName::Horus).then(|| super::horus_system::ShmCleanup::new(port));
        let a = spawn(Side::A)?;
        let b = spawn(Side::B)?;
        Ok(Self {
            a,
            b,
            port,
            _cleanup: cleanup,
        })
    }

    /// The port host A listens on (it names the hosts' horus namespaces).
    pub fn port(&self) -> u16 {
        self.port
    }

    fn send(child: &mut ChildProcess, cmd: &Cmd) -> anyhow::Result<()> {
        child.send_line(&serde_json::to_string(cmd)?)
    }

    /// Sends `first` to its host, then `second` to the other, and returns
    /// `(reply of A, reply of B)`.
    fn cell(&mut self, to_a: Cmd, to_b: Cmd, planned: Duration) -> anyhow::Result<(Reply, Reply)> {
        Self::send(&mut self.b, &to_b)?;
        Self::send(&mut self.a, &to_a)?;
        let timeout = planned + CELL_SLACK;
        let a = self.a.recv_result(timeout).context("host A")?;
        let b = self.b.recv_result(timeout).context("host B")?;
        Ok((a, b))
    }

    /// A publishes, B subscribes.
    pub fn channel(&mut self, c: &Channel) -> anyhow::Result<(Published, Received)> {
        let planned = Duration::from_millis(c.duration_ms);
        match self.cell(Cmd::Publish(c.clone()), Cmd::Subscribe(c.clone()), planned)? {
            (Reply::Published(p), Reply::Received(r)) => Ok((p, r)),
            other => bail!("unexpected replies {other:?}"),
        }
    }

    /// A pings, B echoes.
    pub fn round_trip(&mut self, e: &Exchange) -> anyhow::Result<Summary> {
        match self.cell(Cmd::Ping(e.clone()), Cmd::Echo(e.clone()), Duration::ZERO)? {
            (Reply::RoundTrips(s), Reply::Answered { .. }) => Ok(s),
            other => bail!("unexpected replies {other:?}"),
        }
    }

    /// A floods, B counts: `(start of the flood, what B saw)`.
    pub fn flood(&mut self, f: &Flood) -> anyhow::Result<(u64, Sunk)> {
        match self.cell(Cmd::Flood(f.clone()), Cmd::Sink(f.clone()), Duration::ZERO)? {
            (Reply::Flooded { start_ns }, Reply::Sunk(s)) => Ok((start_ns, s)),
            other => bail!("unexpected replies {other:?}"),
        }
    }

    /// A serves, B calls.
    pub fn call(&mut self, e: &Exchange) -> anyhow::Result<Summary> {
        match self.cell(Cmd::Serve(e.clone()), Cmd::Call(e.clone()), Duration::ZERO)? {
            (Reply::Answered { .. }, Reply::RoundTrips(s)) => Ok(s),
            other => bail!("unexpected replies {other:?}"),
        }
    }

    /// Asks both hosts to close and waits for them to exit.
    pub fn close(mut self) -> anyhow::Result<()> {
        for child in [&mut self.b, &mut self.a] {
            Self::send(child, &Cmd::Quit)?;
            match child.recv_result(CELL_SLACK)? {
                Reply::Bye => {}
                other => bail!("unexpected reply {other:?} to quit"),
            }
        }
        self.b.finish()?;
        self.a.finish()
    }
}
