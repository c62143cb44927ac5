//! Paced traffic: one publisher process sends on T topics at a fixed rate to K
//! subscriber processes; one-way latency, loss and CPU use of every process.
//!
//! This is how a robot loads a middleware (sensors at a fixed rate, several
//! listeners, many topics), as opposed to the closed loops of the round-trip
//! benchmarks. Method:
//!
//! * The publisher process ticks at `hz` on an absolute schedule; each tick it
//!   loans a message on every topic in order, writes the payload, reads
//!   `CLOCK_MONOTONIC` ([`monotonic_ns`]), stores the stamp in bytes 8..16 and sends.
//! * Each subscriber process subscribes to every topic. It sleeps (futex `recv`)
//!   on topic 0, the first one published each tick; once woken it drains the
//!   other topics (busy-poll subscribers, so the publisher pays no wake-up for
//!   them) until it has this tick's message from each, or for at most 2 ms,
//!   yielding the CPU between sweeps (its wake-up may have preempted the
//!   publisher mid-tick).
//!   On receipt it reads `CLOCK_MONOTONIC` before touching the payload; latency =
//!   receipt − stamp. Both stamps come from the one system-wide clock, so this is a
//!   true one-way latency, not a send-only timing. It then reads the whole payload
//!   and checks the sequence number.
//! * QoS is the sensor default, `Overflow::DropOldest`, depth 16: a subscriber
//!   that falls behind loses messages instead of slowing the publisher, and the
//!   loss is counted (sequence gaps, horus's `overrun` counter, and messages that
//!   never arrived).
//! * CPU use is each process's user + system time over the run ([`CpuMeter`]),
//!   in percent of one CPU.
//! * The first 100 ms of messages are excluded from latency statistics (not from
//!   loss).

use std::time::Duration;

use anyhow::{ensure, Context};
use horus::{Overflow, Publisher, Subscriber, Topic, WaitMode};
use serde::{Deserialize, Serialize};

use crate::child::{self, ChildArgs, ChildProcess};
use crate::harness::unique_id;
use crate::horus_wire::{by_size, Wire};
use crate::payload::{self, Touch};
use crate::stats::Summary;
use crate::sysclock::{monotonic_ns, CpuMeter, CpuUse};

/// Child role of the publisher.
pub const PUB_ROLE: &str = "rate-pub";
/// Child role of a subscriber.
pub const SUB_ROLE: &str = "rate-sub";
/// Smallest payload: sequence, stamp, complement.
pub const MIN_SIZE: usize = 24;
/// Messages of the first 100 ms are not in the latency statistics.
const WARMUP: Duration = Duration::from_millis(100);
/// A subscriber stops after this long without a message.
const IDLE_END: Duration = Duration::from_millis(500);
/// Longest a subscriber drains other topics after waking on topic 0.
const DRAIN_LIMIT: Duration = Duration::from_millis(2);

/// One paced run.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RatePlan {
    /// Namespace of the run.
    pub ns: String,
    /// Topics (T).
    pub topics: usize,
    /// Subscriber processes (K), each on every topic.
    pub subs: usize,
    /// Messages per second per topic.
    pub hz: f64,
    /// Ticks to publish.
    pub ticks: u64,
    /// Payload bytes (>= [`MIN_SIZE`]).
    pub size: usize,
    /// How much of each payload is written and read.
    pub touch: Touch,
}

impl RatePlan {
    fn warmup_ticks(&self) -> u64 {
        (WARMUP.as_secs_f64() * self.hz) as u64
    }
}

/// What the publisher reports.
#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
pub struct PubReport {
    /// Messages sent (all topics).
    pub sent: u64,
    /// CPU use over the run.
    pub cpu: CpuUse,
}

/// What a subscriber reports.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SubReport {
    /// One-way latencies, ns (after the warm-up).
    pub latencies_ns: Vec<u64>,
    /// Messages received (all topics).
    pub received: u64,
    /// Messages overwritten before being read (horus `overrun`, all topics).
    pub overrun: u64,
    /// CPU use over the run.
    pub cpu: CpuUse,
}

/// The outcome of a run.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RateResult {
    /// Topics (T).
    pub topics: usize,
    /// Subscriber processes (K).
    pub subs: usize,
    /// Rate per topic, Hz.
    pub hz: f64,
    /// Payload bytes.
    pub size: usize,
    /// One-way latency over all subscribers and topics.
    pub latency: Summary,
    /// Messages the publisher sent.
    pub sent: u64,
    /// Messages that should have arrived (sent × K).
    pub expected: u64,
    /// Messages that arrived.
    pub received: u64,
    /// `expected − received`.
    pub lost: u64,
    /// Publisher CPU, % of one CPU.
    pub publisher_cpu_percent: f64,
    /// Each subscriber's CPU, % of one CPU.
    pub subscriber_cpu_percent: Vec<f64>,
}

/// Runs `topics` topics at `hz` for `seconds` to `subs` subscriber processes.
pub fn run(
    topics: usize,
    subs: usize,
    hz: f64,
    seconds: f64,
    size: usize,
    touch: Touch,
) -> anyhow::Result<RateResult> {
    ensure!(
        size >= MIN_SIZE,
        "paced runs need payloads of at least {MIN_SIZE} B"
    );
    ensure!(
        topics >= 1 && (1..32).contains(&subs),
        "need 1..=31 subscribers, >= 1 topic"
    );
    let plan = RatePlan {
        ns: unique_id(),
        topics,
        subs,
        hz,
        ticks: (seconds * hz).ceil().max(1.0) as u64,
        size,
        touch,
    };
    let arg = [serde_json::to_string(&plan)?];
    // The publisher creates the topics; subscribers join before anything is sent.
    let mut publisher = ChildProcess::spawn_controlled(PUB_ROLE, &arg)?;
    publisher.wait_ready()?;
    let mut subscribers = (0..subs)
        .map(|_| {
            let mut c = ChildProcess::spawn_controlled(SUB_ROLE, &arg)?;
            c.wait_ready()?;
            Ok(c)
        })
        .collect::<anyhow::Result<Vec<_>>>()?;
    for c in subscribers.iter_mut() {
        c.send_line("GO")?;
    }
    publisher.send_line("GO")?;
    let timeout = Duration::from_secs_f64(seconds * 4.0 + 60.0);
    let p: PubReport = publisher.recv_result(timeout)?;
    let reports = subscribers
        .iter_mut()
        .map(|c| c.recv_result::<SubReport>(timeout))
        .collect::<anyhow::Result<Vec<_>>>()?;
    publisher.finish()?;
    for c in subscribers {
        c.finish()?;
    }
    let received: u64 = reports.iter().map(|r| r.received).sum();
    let expected = p.sent * subs as u64;
    let subscriber_cpu_percent = reports.iter().map(|r| r.cpu.percent).collect();
    let latencies: Vec<u64> = reports.into_iter().flat_map(|r| r.latencies_ns).collect();
    let wall = (plan.ticks as f64 / hz * 1e9) as u64;
    Ok(RateResult {
        topics,
        subs,
        hz,
        size,
        latency: Summary::from_samples(latencies, wall).context("no message arrived")?,
        sent: p.sent,
        expected,
        received,
        lost: expected.saturating_sub(received),
        publisher_cpu_percent: p.cpu.percent,
        subscriber_cpu_percent,
    })
}

/// Child entry point for [`PUB_ROLE`] and [`SUB_ROLE`]: one JSON [`RatePlan`].
pub fn child_main(role: &str, mut args: ChildArgs) -> anyhow::Result<()> {
    let plan: RatePlan = serde_json::from_str(&args.next::<String>("plan json")?)?;
    if role == PUB_ROLE {
        child::send_result(&by_size!(plan.size, publish_as(&plan))?)
    } else {
        child::send_result(&by_size!(plan.size, subscribe_as(&plan))?)
    }
}

fn topic<T: Wire>(plan: &RatePlan, k: usize) -> anyhow::Result<Topic<T>> {
    Ok(Topic::<T>::builder(&format!("rate/{k}"))
        .namespace(&plan.ns)
        .depth(16)
        .overflow(Overflow::DropOldest)
        .max_publishers(1)
        .max_subscribers(plan.subs as u32)
        .max_tail_bytes(if T::HAS_TAIL { plan.size } else { 0 })
        .open()?)
}

fn start() -> anyhow::Result<()> {
    child::signal_ready()?;
    child::wait_for_parent("GO")
}

fn publish_as<T: Wire>(plan: &RatePlan) -> anyhow::Result<PubReport> {
    let mut txs = (0..plan.topics)
        .map(|k| Ok(topic::<T>(plan, k)?.publisher()?))
        .collect::<anyhow::Result<Vec<Publisher<T>>>>()?;
    start()?;
    let period_ns = (1e9 / plan.hz) as u64;
    let meter = CpuMeter::start();
    let t0 = monotonic_ns() + period_ns;
    for tick in 0..plan.ticks {
        let release = t0 + tick * period_ns;
        let now = monotonic_ns();
        if release > now {
            std::thread::sleep(Duration::from_nanos(release - now));
        }
        for tx in txs.iter_mut() {
            let mut s = T::loan(tx, plan.size)?;
            let bytes = T::payload_mut(&mut s);
            payload::write(bytes, tick, plan.touch);
            bytes[8..16].copy_from_slice(&monotonic_ns().to_le_bytes());
            s.send()
                .map_err(|e| anyhow::anyhow!("send failed: {}", e.map(drop)))?;
        }
    }
    Ok(PubReport {
        sent: plan.ticks * plan.topics as u64,
        cpu: meter.stop(),
    })
}

/// Per-topic bookkeeping of a subscriber.
struct Seen {
    received: u64,
    /// Next sequence number expected (gaps are loss, counted at the end).
    next: u64,
}

fn subscribe_as<T: Wire>(plan: &RatePlan) -> anyhow::Result<SubReport> {
    let mut rxs = (0..plan.topics)
        .map(|k| {
            let t = topic::<T>(plan, k)?;
            Ok(if k == 0 {
                t.subscriber()?
            } else {
                t.subscriber_with(WaitMode::BusyPoll)?
            })
        })
        .collect::<anyhow::Result<Vec<Subscriber<T>>>>()?;
    let mut seen: Vec<Seen> = (0..plan.topics)
        .map(|_| Seen {
            received: 0,
            next: 0,
        })
        .collect();
    let mut latencies = Vec::with_capacity((plan.ticks * plan.topics as u64) as usize);
    let warmup = plan.warmup_ticks();
    let last = plan.ticks - 1;
    start()?;
    let meter = CpuMeter::start();
    let mut take = |k: usize, msg: horus::Sample<T>, at: u64, seen: &mut [Seen]| {
        let bytes = T::payload(&msg);
        ensure!(bytes.len() == plan.size, "message of {} B", bytes.len());
        let stamp = u64::from_le_bytes(bytes[8..16].try_into().expect("8 bytes"));
        let seq = payload::read(bytes, plan.touch)?;
        ensure!(
            seq >= seen[k].next,
            "topic {k}: message {seq} after {}",
            seen[k].next
        );
        seen[k].received += 1;
        seen[k].next = seq + 1;
        if seq >= warmup {
            latencies.push(at.saturating_sub(stamp));
        }
        Ok(seq)
    };
    loop {
        let Ok(first) = rxs[0].recv_timeout(IDLE_END) else {
            break; // the publisher is done (or lost the tail of topic 0)
        };
        let tick = take(0, first, monotonic_ns(), &mut seen)?;
        let deadline = monotonic_ns() + DRAIN_LIMIT.as_nanos() as u64;
        loop {
            let mut behind = false;
            for k in 1..plan.topics {
                while let Some(m) = rxs[k].try_recv() {
                    take(k, m, monotonic_ns(), &mut seen)?;
                }
                behind |= seen[k].next <= tick;
            }
            if !behind || monotonic_ns() > deadline {
                break;
            }
            // The wake-up may have preempted the publisher on this CPU, mid-tick:
            // yield so it can publish the rest instead of spinning against it.
            std::thread::yield_now();
        }
        if seen.iter().all(|s| s.next > last) {
            break;
        }
    }
    let cpu = meter.stop();
    Ok(SubReport {
        latencies_ns: latencies,
        received: seen.iter().map(|s| s.received).sum(),
        overrun: rxs.iter().map(|r| r.stats().overrun).sum(),
        cpu,
    })
}
