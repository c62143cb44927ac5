//! Ping-pong (A pings and waits in `recv_timeout`, B echoes each ping as it
//! receives it) and the flood (A publishes as fast as `Block` allows, B counts).

use std::time::{Duration, Instant};

use anyhow::{bail, ensure, Context};

use super::link::{self, Patience, POLL};
use super::HorusHost;
use crate::wire::{self, HEADER};
use crate::{Exchange, Flood, Sunk};
use horus_bench_core::child::READY_TIMEOUT;
use horus_bench_core::harness::STALL_TIMEOUT;
use horus_bench_core::stats::Summary;
use horus_bench_core::sysclock::monotonic_ns;

pub(super) fn ping(h: &mut HorusHost, e: &Exchange) -> anyhow::Result<Summary> {
    let pong = link::topic(&h.namespace, &link::name(&e.id, "pong"), e.size)?;
    let mut rx = pong.subscriber()?;
    let ping = link::topic(&h.namespace, &link::name(&e.id, "ping"), e.size)?;
    let mut tx = ping.publisher()?;
    // Hello until one comes back: both paths are up.
    let deadline = Instant::now() + READY_TIMEOUT;
    'hello: loop {
        link::send(&mut tx, e.size, wire::HELLO)?;
        let until = Instant::now() + Duration::from_millis(20);
        while let Some(left) = until.checked_duration_since(Instant::now()) {
            match link::recv(&mut rx, e.size, left)? {
                Some((wire::HELLO, _, _)) => break 'hello,
                Some(_) => {}
                None => break,
            }
        }
        ensure!(Instant::now() < deadline, "no echo of the hello");
    }
    let total = e.warmup + e.iterations;
    let mut samples = Vec::with_capacity(e.iterations as usize);
    let wall_start = monotonic_ns();
    for seq in 0..total {
        let t0 = monotonic_ns();
        link::send(&mut tx, e.size, seq)?;
        loop {
            match link::recv(&mut rx, e.size, STALL_TIMEOUT)? {
                Some((s, _, _)) if s == seq => break,
                Some((wire::HELLO, _, _)) => {} // a late echo of a hello
                Some((s, _, _)) => bail!("echo {s} while waiting for {seq}"),
                None => bail!("no echo within {STALL_TIMEOUT:?}"),
            }
        }
        if seq >= e.warmup {
            samples.push(monotonic_ns() - t0);
        }
    }
    let wall = monotonic_ns() - wall_start;
    link::send(&mut tx, e.size, wire::END)?;
    h.linger.push(Box::new((tx, ping, rx, pong)));
    Summary::from_samples(samples, wall).context("no round trips")
}

pub(super) fn echo(h: &mut HorusHost, e: &Exchange) -> anyhow::Result<u64> {
    let ping = link::topic(&h.namespace, &link::name(&e.id, "ping"), e.size)?;
    let mut rx = ping.subscriber()?;
    let pong = link::topic(&h.namespace, &link::name(&e.id, "pong"), e.size)?;
    let mut tx = pong.publisher()?;
    let mut answered = 0u64;
    let mut patience = Patience::new();
    loop {
        let Some((seq, _, _)) = link::recv(&mut rx, e.size, POLL)? else {
            patience.check("ping")?;
            continue;
        };
        patience.progress();
        if seq == wire::END {
            return Ok(answered);
        }
        link::send(&mut tx, e.size, seq)?;
        if seq != wire::HELLO {
            answered += 1;
        }
    }
}

pub(super) fn flood(h: &mut HorusHost, f: &Flood) -> anyhow::Result<u64> {
    let topic = link::topic(&h.namespace, &link::name(&f.id, "flood"), f.size)?;
    let mut tx = vec![topic.publisher()?];
    let ack = link::ack_topic(&h.namespace, &f.id)?;
    let mut ack_sub = ack.subscriber()?;
    link::prove_paths(&mut tx, &mut ack_sub, f.size)?;
    let p = &mut tx[0];
    let start = monotonic_ns();
    for seq in 0..f.count {
        link::send(p, f.size, seq)?;
    }
    link::send(p, f.size, wire::END)?;
    h.linger.push(Box::new((tx, topic, ack_sub, ack)));
    Ok(start)
}

pub(super) fn sink(h: &mut HorusHost, f: &Flood) -> anyhow::Result<Sunk> {
    let topic = link::topic(&h.namespace, &link::name(&f.id, "flood"), f.size)?;
    let mut rx = topic.subscriber()?;
    let ack = link::ack_topic(&h.namespace, &f.id)?;
    let mut ack_tx = ack.publisher()?;
    let mut sunk = Sunk {
        received: 0,
        last_ns: 0,
    };
    let mut patience = Patience::new();
    loop {
        let Some((seq, _, now)) = link::recv(&mut rx, f.size, POLL)? else {
            patience.check("flood")?;
            continue;
        };
        patience.progress();
        match seq {
            wire::HELLO => link::send(&mut ack_tx, HEADER, 0)?,
            wire::END => return Ok(sunk),
            _ => {
                sunk.received += 1;
                sunk.last_ns = now;
            }
        }
    }
}
