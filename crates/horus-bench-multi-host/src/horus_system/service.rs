//! Service cells: a horus server on A (behind A's bridge), a horus client on B
//! (B's bridge stands in for the server there); requests and responses written in
//! place as a [`Blob`]'s tail.

use std::time::{Duration, Instant};

use anyhow::{anyhow, ensure, Context};
use horus::{CallError, Service};

use super::link::{self, Patience, POLL};
use super::HorusHost;
use crate::wire::{self, HEADER};
use crate::Exchange;
use horus_bench_core::child::READY_TIMEOUT;
use horus_bench_core::harness::STALL_TIMEOUT;
use horus_bench_core::stats::Summary;
use horus_bench_core::sysclock::monotonic_ns;
use horus_bench_wire::Blob;

fn open(h: &HorusHost, e: &Exchange) -> anyhow::Result<Service<Blob, Blob>> {
    let tail = e.size.max(HEADER);
    Service::<Blob, Blob>::builder(&link::name(&e.id, "service"))
        .namespace(&h.namespace)
        .max_request_tail(tail)
        .max_response_tail(tail)
        .open()
        .context("opening the service")
}

pub(super) fn serve(h: &mut HorusHost, e: &Exchange) -> anyhow::Result<u64> {
    let service = open(h, e)?;
    let mut server = service.server()?;
    let size = e.size.max(HEADER);
    let mut answered = 0u64;
    let mut patience = Patience::new();
    loop {
        let Some(req) = server.recv_timeout(POLL) else {
            patience.check("service")?;
            continue;
        };
        patience.progress();
        let (seq, _) = wire::read(req.tail(), e.size)?;
        req.reply_with(size, |r, tail| {
            r.len = size as u64;
            wire::write(tail, seq);
        })
        .map_err(|err| anyhow!("reply: {err}"))?;
        if seq == wire::END {
            h.linger.push(Box::new((server, service)));
            return Ok(answered);
        }
        answered += 1;
    }
}

pub(super) fn call(h: &mut HorusHost, e: &Exchange) -> anyhow::Result<Summary> {
    let service = open(h, e)?;
    let mut client = service.client()?;
    let size = e.size.max(HEADER);
    // The bridge stands in for A's server once it has seen it.
    let deadline = Instant::now() + READY_TIMEOUT;
    while client.servers() == 0 {
        ensure!(
            Instant::now() < deadline,
            "no server within {READY_TIMEOUT:?}"
        );
        std::thread::sleep(Duration::from_millis(2));
    }
    let mut call = |seq: u64| -> Result<anyhow::Result<()>, CallError> {
        let reply = client.call_with(
            size,
            |r, tail| {
                r.len = size as u64;
                wire::write(tail, seq);
            },
            STALL_TIMEOUT,
        )?;
        Ok(wire::read(reply.tail(), e.size).and_then(|(got, _)| {
            ensure!(got == seq, "reply {got} to call {seq}");
            Ok(())
        }))
    };
    // The first call may find the stand-in not yet connected to A: retry it.
    loop {
        match call(0) {
            Ok(r) => {
                r?;
                break;
            }
            Err(CallError::NoServer(_)) if Instant::now() < deadline => {
                std::thread::sleep(Duration::from_millis(20));
            }
            Err(err) => return Err(anyhow!("call 0: {err}")),
        }
    }
    let mut samples = Vec::with_capacity(e.iterations as usize);
    let wall_start = monotonic_ns();
    for seq in 1..e.warmup + e.iterations {
        let t0 = monotonic_ns();
        call(seq).map_err(|err| anyhow!("call {seq}: {err}"))??;
        if seq >= e.warmup {
            samples.push(monotonic_ns() - t0);
        }
    }
    let wall = monotonic_ns() - wall_start;
    call(wire::END).map_err(|err| anyhow!("end call: {err}"))??;
    Summary::from_samples(samples, wall).context("no calls")
}
