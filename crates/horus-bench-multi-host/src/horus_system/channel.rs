//! Channel cells: A publishes `topics` topics at a fixed rate, B receives each in
//! a thread of its own, stamping arrivals and counting gaps per topic.

use std::sync::Mutex;
use std::time::Duration;

use anyhow::Context;
use horus::Publisher;

use super::link::{self, HostCpu, Patience, POLL};
use super::{bridge_counters, HorusHost};
use crate::wire::{self, HEADER};
use crate::{Channel, Published, Received};
use horus_bench_core::stats::Summary;
use horus_bench_core::sysclock::{monotonic_ns, CpuUse};
use horus_bench_wire::Blob;

pub(super) fn publish(h: &mut HorusHost, c: &Channel) -> anyhow::Result<Published> {
    let topics = (0..c.topics)
        .map(|i| link::topic(&h.namespace, &link::name(&c.id, &format!("t{i}")), c.size))
        .collect::<anyhow::Result<Vec<_>>>()?;
    let mut pubs = topics
        .iter()
        .map(|t| t.publisher().context("publisher"))
        .collect::<anyhow::Result<Vec<_>>>()?;
    let ack = link::ack_topic(&h.namespace, &c.id)?;
    let mut ack_sub = ack.subscriber()?;
    link::prove_paths(&mut pubs, &mut ack_sub, c.size)?;
    let period = 1_000_000_000 / c.rate_hz.max(1);
    let meter = HostCpu::start(h.bridge_pid());
    let start_ns = monotonic_ns();
    let until = start_ns + c.duration_ms * 1_000_000;
    let (mut seq, mut next) = (0u64, start_ns);
    while monotonic_ns() < until {
        for p in &mut pubs {
            link::send(p, c.size, seq)?;
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
    for p in &mut pubs {
        link::send(p, c.size, wire::END)?;
    }
    let cpu = meter.stop();
    h.linger.push(Box::new((pubs, topics, ack_sub, ack)));
    Ok(Published {
        sent: vec![seq; c.topics],
        start_ns,
        end_ns,
        cpu,
    })
}

/// The receiving state of a channel cell, shared by the topics' threads.
struct Inbox {
    latency_ns: Vec<u64>,
    received: Vec<u64>,
    next: Vec<u64>,
    ended: usize,
    out_of_order: u64,
    meter: Option<HostCpu>,
    cpu: Option<CpuUse>,
}

impl Inbox {
    /// Takes a data message or an end marker of `topic`.
    fn take(&mut self, bridge_pid: u32, topic: usize, now: u64, seq: u64, stamp: u64) {
        let meter = *self.meter.get_or_insert_with(|| HostCpu::start(bridge_pid));
        if seq == wire::END {
            self.ended += 1;
            if self.ended == self.received.len() {
                self.cpu = Some(meter.stop());
            }
            return;
        }
        if seq < self.next[topic] {
            self.out_of_order += 1;
            return;
        }
        self.next[topic] = seq + 1;
        self.received[topic] += 1;
        self.latency_ns.push(now.saturating_sub(stamp));
    }
}

/// One topic's receiving thread: acknowledges hellos, feeds the inbox until the end marker.
fn receive(
    (namespace, cell): (&str, &str),
    i: usize,
    sub: &mut horus::Subscriber<Blob>,
    size: usize,
    ack: &Mutex<Publisher<Blob>>,
    inbox: &Mutex<Inbox>,
    bridge_pid: u32,
) -> anyhow::Result<()> {
    let mut patience = Patience::new();
    loop {
        let Some((seq, stamp, now)) = link::recv(sub, size, POLL)? else {
            // What this host's bridge counted, for whoever reads the failure.
            patience
                .check(&format!("topic {i}"))
                .map_err(|e| e.context(bridge_counters(namespace, "host B's", cell)))?;
            continue;
        };
        patience.progress();
        if seq == wire::HELLO {
            // Every hello: an acknowledgement may be sent before its own path is up.
            let mut p = ack.lock().unwrap_or_else(|p| p.into_inner());
            link::send(&mut p, HEADER, i as u64)?;
            continue;
        }
        inbox
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .take(bridge_pid, i, now, seq, stamp);
        if seq == wire::END {
            return Ok(());
        }
    }
}

pub(super) fn subscribe(h: &mut HorusHost, c: &Channel) -> anyhow::Result<Received> {
    let topics = (0..c.topics)
        .map(|i| link::topic(&h.namespace, &link::name(&c.id, &format!("t{i}")), c.size))
        .collect::<anyhow::Result<Vec<_>>>()?;
    let subs = topics
        .iter()
        .map(|t| t.subscriber().context("subscriber"))
        .collect::<anyhow::Result<Vec<_>>>()?;
    let ack_topic = link::ack_topic(&h.namespace, &c.id)?;
    let ack = Mutex::new(ack_topic.publisher()?);
    let expected = (c.rate_hz * c.duration_ms / 1000) as usize * c.topics;
    let inbox = Mutex::new(Inbox {
        latency_ns: Vec::with_capacity(expected + 16),
        received: vec![0; c.topics],
        next: vec![0; c.topics],
        ended: 0,
        out_of_order: 0,
        meter: None,
        cpu: None,
    });
    let bridge_pid = h.bridge_pid();
    let results: Vec<anyhow::Result<()>> = std::thread::scope(|scope| {
        let handles: Vec<_> = subs
            .into_iter()
            .enumerate()
            .map(|(i, mut sub)| {
                let (ack, inbox) = (&ack, &inbox);
                let ns = (h.namespace.as_str(), c.id.as_str());
                scope.spawn(move || receive(ns, i, &mut sub, c.size, ack, inbox, bridge_pid))
            })
            .collect();
        handles
            .into_iter()
            .map(|t| {
                t.join()
                    .unwrap_or_else(|_| Err(anyhow::anyhow!("receiver panicked")))
            })
            .collect()
    });
    for r in results {
        r?;
    }
    drop(topics);
    let g = inbox.into_inner().unwrap_or_else(|p| p.into_inner());
    let wall = g.cpu.map_or(1, |c| c.wall_ns);
    Ok(Received {
        latency: Summary::from_samples(g.latency_ns, wall),
        received: g.received,
        out_of_order: g.out_of_order,
        cpu: g.cpu,
    })
}
