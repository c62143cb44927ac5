//! Service cells: a queryable on A answering from its callback, a querier on B.

use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::{anyhow, ensure, Context};
use zenoh::qos::CongestionControl;
use zenoh::query::{ConsolidationMode, Querier, Query, QueryTarget};
use zenoh::Wait;

use super::{wait_done, zerr, ZenohHost};
use crate::{wire, Exchange};
use horus_bench_core::child::READY_TIMEOUT;
use horus_bench_core::harness::STALL_TIMEOUT;
use horus_bench_core::stats::Summary;
use horus_bench_core::sysclock::monotonic_ns;

pub(super) fn serve(h: &ZenohHost, e: &Exchange) -> anyhow::Result<u64> {
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
    let queryable = h
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

pub(super) fn call(h: &ZenohHost, e: &Exchange) -> anyhow::Result<Summary> {
    let querier = h
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
