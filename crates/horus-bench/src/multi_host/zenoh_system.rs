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

use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::{anyhow, bail, ensure, Context};
use zenoh::pubsub::Publisher;
use zenoh::qos::{CongestionControl, Reliability};
use zenoh::query::{ConsolidationMode, Querier, Query, QueryTarget};
use zenoh::sample::Sample;
use zenoh::{Session, Wait};

use super::{
    wire, Channel, Exchange, Flood, HostArgs, HostSide, Published, Received, Side, Sunk, System,
    SystemName,
};
use crate::child::READY_TIMEOUT;
use crate::harness::STALL_TIMEOUT;
use crate::stats::Summary;
use crate::sysclock::{monotonic_ns, CpuMeter, CpuUse};
use crate::zenoh_peer;

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

impl System for ZenohSystem {
    fn name(&self) -> SystemName {
        SystemName::Zenoh
    }

    fn available(&self) -> anyhow::Result<()> {
        Ok(())
    }

    fn settings(&self) -> String {
        SETTINGS.to_owned()
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

/// The receiving state of a channel cell, shared by the topics' callbacks.
struct Inbox {
    size: usize,
    latency_ns: Vec<u64>,
    received: Vec<u64>,
    next: Vec<u64>,
    ended: usize,
    out_of_order: u64,
    meter: Option<CpuMeter>,
    cpu: Option<CpuUse>,
    done: Option<mpsc::Sender<anyhow::Result<()>>>,
}

impl Inbox {
    fn take(&mut self, topic: usize, now: u64, bytes: &[u8]) {
        let result = wire::read(bytes, self.size).map(|(seq, stamp)| {
            let meter = *self.meter.get_or_insert_with(CpuMeter::start);
            if seq == wire::END {
                self.ended += 1;
                if self.ended == self.received.len() {
                    self.cpu = Some(meter.stop());
                    return true;
                }
                return false;
            }
            if seq < self.next[topic] {
                self.out_of_order += 1;
                return false;
            }
            self.next[topic] = seq + 1;
            self.received[topic] += 1;
            self.latency_ns.push(now.saturating_sub(stamp));
            false
        });
        match result {
            Ok(false) => {}
            Ok(true) => self.finish(Ok(())),
            Err(e) => self.finish(Err(e)),
        }
    }

    fn finish(&mut self, r: anyhow::Result<()>) {
        if let Some(done) = self.done.take() {
            let _ = done.send(r);
        }
    }
}

impl HostSide for ZenohHost {
    fn publish(&mut self, c: &Channel) -> anyhow::Result<Published> {
        let pubs = (0..c.topics)
            .map(|i| self.publisher(format!("multi-host/{}/t{i}", c.id), true))
            .collect::<anyhow::Result<Vec<_>>>()?;
        let period = 1_000_000_000 / c.rate_hz.max(1);
        let meter = CpuMeter::start();
        let start_ns = monotonic_ns();
        let until = start_ns + c.duration_ms * 1_000_000;
        let (mut seq, mut next) = (0u64, start_ns);
        while monotonic_ns() < until {
            for p in &pubs {
                put(p, c.size, seq)?;
            }
            seq += 1;
            // A late tick delays the schedule instead of bursting to catch up.
            next = (next + period).max(monotonic_ns());
            let now = monotonic_ns();
            if next > now {
                std::thread::sleep(Duration::from_nanos(next - now));
            }
        }
        let end_ns = monotonic_ns();
        for p in &pubs {
            put(p, c.size, wire::END)?;
        }
        let cpu = meter.stop();
        for p in pubs {
            p.undeclare()
                .wait()
                .map_err(zerr("undeclaring a publisher"))?;
        }
        Ok(Published {
            sent: vec![seq; c.topics],
            start_ns,
            end_ns,
            cpu,
        })
    }

    fn subscribe(&mut self, c: &Channel) -> anyhow::Result<Received> {
        let (tx, done) = mpsc::channel();
        let expected = (c.rate_hz * c.duration_ms / 1000) as usize * c.topics;
        let inbox = Arc::new(Mutex::new(Inbox {
            size: c.size,
            latency_ns: Vec::with_capacity(expected + 16),
            received: vec![0; c.topics],
            next: vec![0; c.topics],
            ended: 0,
            out_of_order: 0,
            meter: None,
            cpu: None,
            done: Some(tx),
        }));
        let subs = (0..c.topics)
            .map(|i| {
                let inbox = Arc::clone(&inbox);
                self.session
                    .declare_subscriber(format!("multi-host/{}/t{i}", c.id))
                    .callback(move |s: Sample| {
                        let now = monotonic_ns();
                        let bytes = s.payload().to_bytes();
                        inbox
                            .lock()
                            .unwrap_or_else(|p| p.into_inner())
                            .take(i, now, &bytes);
                    })
                    .wait()
                    .map_err(zerr("declaring a subscriber"))
            })
            .collect::<anyhow::Result<Vec<_>>>()?;
        let progress = || {
            let g = inbox.lock().unwrap_or_else(|p| p.into_inner());
            g.received.iter().sum::<u64>() + g.ended as u64
        };
        let result = wait_done(&done, progress);
        for s in subs {
            s.undeclare()
                .wait()
                .map_err(zerr("undeclaring a subscriber"))?;
        }
        result?;
        let mut g = inbox.lock().unwrap_or_else(|p| p.into_inner());
        let samples = std::mem::take(&mut g.latency_ns);
        let wall = g.cpu.map_or(1, |c| c.wall_ns);
        Ok(Received {
            latency: Summary::from_samples(samples, wall),
            received: g.received.clone(),
            out_of_order: g.out_of_order,
            cpu: g.cpu,
        })
    }

    fn ping(&mut self, e: &Exchange) -> anyhow::Result<Summary> {
        let rx = self
            .session
            .declare_subscriber(format!("multi-host/{}/pong", e.id))
            .wait()
            .map_err(zerr("declaring a subscriber"))?;
        let tx = self.publisher(format!("multi-host/{}/ping", e.id), true)?;
        let recv = |timeout: Duration| -> anyhow::Result<Option<u64>> {
            match rx.recv_timeout(timeout) {
                Ok(Some(s)) => Ok(Some(wire::read(&s.payload().to_bytes(), e.size)?.0)),
                Ok(None) => Ok(None),
                Err(err) => bail!("zenoh recv: {err}"),
            }
        };
        // Hello until one comes back: B's echo publisher has then matched us.
        let deadline = Instant::now() + READY_TIMEOUT;
        loop {
            put(&tx, e.size, wire::HELLO)?;
            if recv(Duration::from_millis(20))? == Some(wire::HELLO) {
                break;
            }
            ensure!(Instant::now() < deadline, "no echo of the hello");
        }
        let total = e.warmup + e.iterations;
        let mut samples = Vec::with_capacity(e.iterations as usize);
        let wall_start = monotonic_ns();
        for seq in 0..total {
            let t0 = monotonic_ns();
            put(&tx, e.size, seq)?;
            loop {
                match recv(STALL_TIMEOUT)? {
                    Some(s) if s == seq => break,
                    Some(wire::HELLO) => {} // a late echo of a hello
                    Some(s) => bail!("echo {s} while waiting for {seq}"),
                    None => bail!("no echo within {STALL_TIMEOUT:?}"),
                }
            }
            if seq >= e.warmup {
                samples.push(monotonic_ns() - t0);
            }
        }
        let wall = monotonic_ns() - wall_start;
        put(&tx, e.size, wire::END)?;
        drop(rx);
        tx.undeclare()
            .wait()
            .map_err(zerr("undeclaring a publisher"))?;
        Summary::from_samples(samples, wall).context("no round trips")
    }

    fn echo(&mut self, e: &Exchange) -> anyhow::Result<u64> {
        let tx = Arc::new(
            self.session
                .declare_publisher(format!("multi-host/{}/pong", e.id))
                .congestion_control(CongestionControl::Block)
                .express(true)
                .wait()
                .map_err(zerr("declaring a publisher"))?,
        );
        let answered = Arc::new(Mutex::new(0u64));
        let (done_tx, done) = mpsc::channel::<anyhow::Result<()>>();
        let size = e.size;
        let echo = {
            let (tx, answered) = (Arc::clone(&tx), Arc::clone(&answered));
            let done_tx = Mutex::new(done_tx);
            move |s: Sample| {
                let r = wire::read(&s.payload().to_bytes(), size).and_then(|(seq, _)| {
                    if seq == wire::END {
                        return Ok(true);
                    }
                    put(&tx, size, seq)?;
                    if seq != wire::HELLO {
                        *answered.lock().unwrap_or_else(|p| p.into_inner()) += 1;
                    }
                    Ok(false)
                });
                match r {
                    Ok(false) => {}
                    Ok(true) => drop(done_tx.lock().map(|d| d.send(Ok(())))),
                    Err(e) => drop(done_tx.lock().map(|d| d.send(Err(e)))),
                }
            }
        };
        let sub = self
            .session
            .declare_subscriber(format!("multi-host/{}/ping", e.id))
            .callback(echo)
            .wait()
            .map_err(zerr("declaring a subscriber"))?;
        let count = || *answered.lock().unwrap_or_else(|p| p.into_inner());
        let result = wait_done(&done, count);
        sub.undeclare()
            .wait()
            .map_err(zerr("undeclaring a subscriber"))?;
        result.map(|()| count())
    }

    fn flood(&mut self, f: &Flood) -> anyhow::Result<u64> {
        let tx = self.publisher(format!("multi-host/{}/flood", f.id), false)?;
        let start = monotonic_ns();
        for seq in 0..f.count {
            put(&tx, f.size, seq)?;
        }
        put(&tx, f.size, wire::END)?;
        tx.undeclare()
            .wait()
            .map_err(zerr("undeclaring a publisher"))?;
        Ok(start)
    }

    fn sink(&mut self, f: &Flood) -> anyhow::Result<Sunk> {
        let state = Arc::new(Mutex::new(Sunk {
            received: 0,
            last_ns: 0,
        }));
        let (done_tx, done) = mpsc::channel::<anyhow::Result<()>>();
        let size = f.size;
        let count = {
            let state = Arc::clone(&state);
            let done_tx = Mutex::new(done_tx);
            move |s: Sample| {
                let now = monotonic_ns();
                match wire::read(&s.payload().to_bytes(), size) {
                    Ok((wire::END, _)) => drop(done_tx.lock().map(|d| d.send(Ok(())))),
                    Ok(_) => {
                        let mut g = state.lock().unwrap_or_else(|p| p.into_inner());
                        g.received += 1;
                        g.last_ns = now;
                    }
                    Err(e) => drop(done_tx.lock().map(|d| d.send(Err(e)))),
                }
            }
        };
        let sub = self
            .session
            .declare_subscriber(format!("multi-host/{}/flood", f.id))
            .callback(count)
            .wait()
            .map_err(zerr("declaring a subscriber"))?;
        let progress = || state.lock().unwrap_or_else(|p| p.into_inner()).received;
        let result = wait_done(&done, progress);
        sub.undeclare()
            .wait()
            .map_err(zerr("undeclaring a subscriber"))?;
        result?;
        let g = state.lock().unwrap_or_else(|p| p.into_inner());
        Ok(g.clone())
    }

    fn serve(&mut self, e: &Exchange) -> anyhow::Result<u64> {
        let answered = Arc::new(Mutex::new(0u64));
        let (done_tx, done) = mpsc::channel::<anyhow::Result<()>>();
        let size = e.size;
        let answer = {
            let answered = Arc::clone(&answered);
            let done_tx = Mutex::new(done_tx);
            move |q: Query| {
                let r = (|| {
                    let body = q.payload().context("query without payload")?.to_bytes();
                    let (seq, _) = wire::read(&body, size)?;
                    q.reply(q.key_expr().clone(), wire::message(size, seq))
                        .express(true)
                        .wait()
                        .map_err(zerr("reply"))?;
                    Ok(seq)
                })();
                match r {
                    Ok(wire::END) => drop(done_tx.lock().map(|d| d.send(Ok(())))),
                    Ok(_) => *answered.lock().unwrap_or_else(|p| p.into_inner()) += 1,
                    Err(e) => drop(done_tx.lock().map(|d| d.send(Err(e)))),
                }
            }
        };
        let queryable = self
            .session
            .declare_queryable(format!("multi-host/{}/service", e.id))
            .callback(answer)
            .wait()
            .map_err(zerr("declaring a queryable"))?;
        let count = || *answered.lock().unwrap_or_else(|p| p.into_inner());
        let result = wait_done(&done, count);
        queryable
            .undeclare()
            .wait()
            .map_err(zerr("undeclaring a queryable"))?;
        result.map(|()| count())
    }

    fn call(&mut self, e: &Exchange) -> anyhow::Result<Summary> {
        let querier = self
            .session
            .declare_querier(format!("multi-host/{}/service", e.id))
            .congestion_control(CongestionControl::Block)
            .express(true)
            .target(QueryTarget::BestMatching)
            .consolidation(ConsolidationMode::None)
            .timeout(STALL_TIMEOUT)
            .wait()
            .map_err(zerr("declaring a querier"))?;
        let deadline = Instant::now() + READY_TIMEOUT;
        while !querier
            .matching_status()
            .wait()
            .map_err(zerr("matching status"))?
            .matching()
        {
            ensure!(Instant::now() < deadline, "no zenoh queryable matched");
            std::thread::sleep(Duration::from_millis(2));
        }
        let call = |q: &Querier<'_>, seq: u64| -> anyhow::Result<()> {
            let replies = q
                .get()
                .payload(wire::message(e.size, seq))
                .wait()
                .map_err(zerr("get"))?;
            let reply = replies
                .recv()
                .map_err(|err| anyhow!("zenoh query ended without a reply: {err}"))?;
            let sample = reply
                .into_result()
                .map_err(|err| anyhow!("zenoh reply error: {err:?}"))?;
            let (got, _) = wire::read(&sample.payload().to_bytes(), e.size)?;
            ensure!(got == seq, "reply {got} to call {seq}");
            Ok(())
        };
        let mut samples = Vec::with_capacity(e.iterations as usize);
        let wall_start = monotonic_ns();
        for seq in 0..e.warmup + e.iterations {
            let t0 = monotonic_ns();
            call(&querier, seq)?;
            if seq >= e.warmup {
                samples.push(monotonic_ns() - t0);
            }
        }
        let wall = monotonic_ns() - wall_start;
        call(&querier, wire::END)?;
        querier
            .undeclare()
            .wait()
            .map_err(zerr("undeclaring a querier"))?;
        Summary::from_samples(samples, wall).context("no calls")
    }

    fn close(self: Box<Self>) -> anyhow::Result<()> {
        self.session
            .close()
            .wait()
            .map_err(zerr("closing the session"))
    }
}
