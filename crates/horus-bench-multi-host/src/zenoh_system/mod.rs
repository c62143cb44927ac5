//! Raw Zenoh between the two hosts: one session per host, peer mode; A listens on
//! `tcp/<A's address>:<port>`, B connects to exactly that endpoint and listens
//! nowhere; multicast and gossip scouting off (nothing is discovered, nothing but
//! A's address on the link is contacted); shared memory off, so every byte crosses
//! the veth link.
//!
//! Publishers are reliable with `CongestionControl::Block` (nothing is dropped
//! for lack of room) and `express(true)` (no batching: the latency setting), but
//! the flood publisher leaves batching on (`express(false)`: the throughput
//! setting, as Zenoh's `z_pub_thr`). Receivers take each message in the
//! subscriber's callback on Zenoh's receiving thread (the arrival instant is read
//! first thing there); the ping side waits in a blocking `recv` on the default
//! FIFO handler, and the echo answers from its callback (as `z_ping`/`z_pong`).
//! Services: a querier (`Block`, express, `BestMatching`, no consolidation) and a
//! queryable answering from its callback with an express reply.

mod channel;
mod pingpong;
mod service;

use std::sync::mpsc;
use std::time::{Duration, Instant};

use anyhow::{anyhow, bail, ensure, Context};
use zenoh::pubsub::Publisher;
use zenoh::qos::{CongestionControl, Reliability};
use zenoh::{Session, Wait};

use super::{
    wire, Channel, Exchange, Flood, HostArgs, HostSide, Published, Received, Side, Sunk, System,
    SystemName,
};
use horus_bench_core::child::READY_TIMEOUT;
use horus_bench_core::harness::STALL_TIMEOUT;
use horus_bench_core::peer::Peer;
use horus_bench_core::stats::Summary;
use horus_bench_peer_zenoh::pubsub as zenoh_peer;

/// The raw Zenoh system.
#[derive(Debug)]
pub struct ZenohSystem;

/// The exact settings, for the method text.
pub const SETTINGS: &str = "zenoh 1.10 (crate, transport_tcp only): one session per host, peer \
    mode; A listens on tcp/<A's veth address>:<port>, B connects to it and listens nowhere; \
    multicast and gossip scouting off; shared memory off (every byte crosses the veth link); \
    publishers reliable, CongestionControl::Block, express(true) (the flood publisher: \
    express(false), batching on); receivers: subscriber callbacks on Zenoh's thread; ping: \
    blocking recv on the FIFO handler, echo from the callback; services: querier (Block, \
    express, BestMatching, no consolidation) and queryable replying from its callback";

impl Peer for ZenohSystem {
    fn name(&self) -> &'static str {
        SystemName::Zenoh.name()
    }

    fn settings(&self) -> String {
        SETTINGS.to_owned()
    }
}

impl System for ZenohSystem {
    fn available(&self) -> anyhow::Result<()> {
        Ok(())
    }

    fn open(&self, a: &HostArgs) -> anyhow::Result<Box<dyn HostSide>> {
        let endpoint = format!("tcp/{}:{}", a.addr_a, a.port);
        let session = match a.side {
            Side::A => zenoh_peer::open(Some(&endpoint), None, false)?,
            Side::B => {
                let s = zenoh_peer::open(None, Some(&endpoint), false)?;
                wait_connected(&s).with_context(|| format!("connecting to {endpoint}"))?;
                s
            }
        };
        Ok(Box::new(ZenohHost { session }))
    }
}

fn wait_connected(session: &Session) -> anyhow::Result<()> {
    let deadline = Instant::now() + READY_TIMEOUT;
    while session.info().peers_zid().wait().next().is_none() {
        ensure!(
            Instant::now() < deadline,
            "no zenoh peer within {READY_TIMEOUT:?}"
        );
        std::thread::sleep(Duration::from_millis(5));
    }
    Ok(())
}

struct ZenohHost {
    session: Session,
}

fn zerr(what: &'static str) -> impl Fn(zenoh::Error) -> anyhow::Error {
    move |e| anyhow!("zenoh {what}: {e}")
}

impl ZenohHost {
    fn publisher(&self, key: String, express: bool) -> anyhow::Result<Publisher<'static>> {
        let p = self
            .session
            .declare_publisher(key)
            .congestion_control(CongestionControl::Block)
            .reliability(Reliability::Reliable)
            .express(express)
            .wait()
            .map_err(zerr("declaring a publisher"))?;
        let deadline = Instant::now() + READY_TIMEOUT;
        while !p
            .matching_status()
            .wait()
            .map_err(zerr("matching status"))?
            .matching()
        {
            ensure!(Instant::now() < deadline, "no zenoh subscriber matched");
            std::thread::sleep(Duration::from_millis(2));
        }
        Ok(p)
    }
}

fn put(p: &Publisher<'_>, size: usize, seq: u64) -> anyhow::Result<()> {
    p.put(wire::message(size, seq)).wait().map_err(zerr("put"))
}

/// Waits for `done`, failing if `progress` stops moving for [`STALL_TIMEOUT`].
fn wait_done<T>(
    done: &mpsc::Receiver<anyhow::Result<T>>,
    progress: impl Fn() -> u64,
) -> anyhow::Result<T> {
    let mut seen = progress();
    loop {
        match done.recv_timeout(STALL_TIMEOUT) {
            Ok(r) => return r,
            Err(mpsc::RecvTimeoutError::Timeout) => {
                let now = progress();
                ensure!(now != seen, "no zenoh message for {STALL_TIMEOUT:?}");
                seen = now;
            }
            Err(mpsc::RecvTimeoutError::Disconnected) => bail!("zenoh dropped the receiver"),
        }
    }
}

impl HostSide for ZenohHost {
    fn publish(&mut self, c: &Channel) -> anyhow::Result<Published> {
        channel::publish(self, c)
    }

    fn subscribe(&mut self, c: &Channel) -> anyhow::Result<Received> {
        channel::subscribe(self, c)
    }

    fn ping(&mut self, e: &Exchange) -> anyhow::Result<Summary> {
        pingpong::ping(self, e)
    }

    fn echo(&mut self, e: &Exchange) -> anyhow::Result<u64> {
        pingpong::echo(self, e)
    }

    fn flood(&mut self, f: &Flood) -> anyhow::Result<u64> {
        pingpong::flood(self, f)
    }

    fn sink(&mut self, f: &Flood) -> anyhow::Result<Sunk> {
        pingpong::sink(self, f)
    }

    fn serve(&mut self, e: &Exchange) -> anyhow::Result<u64> {
        service::serve(self, e)
    }

    fn call(&mut self, e: &Exchange) -> anyhow::Result<Summary> {
        service::call(self, e)
    }

    fn close(self: Box<Self>) -> anyhow::Result<()> {
        self.session
            .close()
            .wait()
            .map_err(zerr("closing the session"))
    }
}
