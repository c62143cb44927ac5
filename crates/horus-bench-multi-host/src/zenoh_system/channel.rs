//! Channel cells: A publishes `topics` topics at a fixed rate, B receives them in
//! subscriber callbacks, stamping arrivals and counting gaps per topic.

use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use zenoh::sample::Sample;
use zenoh::Wait;

use super::{put, wait_done, zerr, ZenohHost};
use crate::{wire, Channel, Published, Received};
use horus_bench_core::stats::Summary;
use horus_bench_core::sysclock::{monotonic_ns, CpuMeter, CpuUse};

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

pub(super) fn publish(h: &ZenohHost, c: &Channel) -> anyhow::Result<Published> {
    let pubs = (0..c.topics)
        .map(|i| h.publisher(format!("multi-host/{}/t{i}", c.id), true))
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

pub(super) fn subscribe(h: &ZenohHost, c: &Channel) -> anyhow::Result<Received> {
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
            h.session
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
