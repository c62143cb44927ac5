//! Ping-pong (A pings and waits in a blocking `recv`, B echoes from its callback)
//! and the flood (A publishes as fast as `Block` allows, B counts).

use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::{bail, ensure, Context};
use zenoh::qos::CongestionControl;
use zenoh::sample::Sample;
use zenoh::Wait;

use super::{put, wait_done, zerr, ZenohHost};
use crate::{wire, Exchange, Flood, Sunk};
use horus_bench_core::child::READY_TIMEOUT;
use horus_bench_core::harness::STALL_TIMEOUT;
use horus_bench_core::stats::Summary;
use horus_bench_core::sysclock::monotonic_ns;

pub(super) fn ping(h: &ZenohHost, e: &Exchange) -> anyhow::Result<Summary> {
    let rx = h
        .session
        .declare_subscriber(format!("multi-host/{}/pong", e.id))
        .wait()
        .map_err(zerr("declaring a subscriber"))?;
    let tx = h.publisher(format!("multi-host/{}/ping", e.id), true)?;
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

pub(super) fn echo(h: &ZenohHost, e: &Exchange) -> anyhow::Result<u64> {
    let tx = Arc::new(
        h.session
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
    let sub = h
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

pub(super) fn flood(h: &ZenohHost, f: &Flood) -> anyhow::Result<u64> {
    let tx = h.publisher(format!("multi-host/{}/flood", f.id), false)?;
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

pub(super) fn sink(h: &ZenohHost, f: &Flood) -> anyhow::Result<Sunk> {
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
    let sub = h
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
