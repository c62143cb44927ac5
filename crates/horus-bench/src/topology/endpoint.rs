//! One endpoint of a run: the topics, a publisher's closed loop or burst, a
//! subscriber's checks and acks, and the same-thread loopback.

use anyhow::{ensure, Context};
use horus::{Overflow, Publisher, Subscriber, Topic, WaitMode};

use super::{tag, untag, Job, Outcomes, PubOutcome, Role, SubOutcome};
use crate::clock::Clock;
use crate::harness::{measure_round_trip_samples, spin_until, Config, Samples, STALL_TIMEOUT};
use crate::horus_wire::{Bytes16, Wire};
use crate::payload::{self, Touch};
use crate::pubsub::horus::Wait;
use crate::sysclock::monotonic_ns;

fn data_topic<T: Wire>(r: &Role) -> anyhow::Result<Topic<T>> {
    let burst = matches!(r.job, Job::Burst { .. });
    let depth = match (r.job, T::HAS_TAIL || size_of::<T>() > horus::INLINE_MAX) {
        // Every publisher's whole timed burst fits: a send-only send never waits.
        (Job::SendOnly { burst, .. }, _) => (burst * r.pubs as u64).max(16) as u32,
        _ if !burst => 16,
        (_, false) => 32,
        (_, true) => 8,
    };
    Ok(Topic::<T>::builder("data")
        .namespace(&r.ns)
        .depth(depth)
        .overflow(Overflow::Block {
            timeout: STALL_TIMEOUT,
        })
        .max_publishers(r.pubs as u32)
        .max_subscribers(r.subs as u32)
        .max_tail_bytes(if T::HAS_TAIL { r.spec.payload_len() } else { 0 })
        .open()?)
}

fn ack_topic(r: &Role, publisher: usize) -> anyhow::Result<Topic<Bytes16>> {
    Ok(Topic::<Bytes16>::builder(&format!("ack/{publisher}"))
        .namespace(&r.ns)
        .depth(16)
        .overflow(Overflow::Block {
            timeout: STALL_TIMEOUT,
        })
        .max_publishers(r.subs as u32)
        .max_subscribers(1)
        .open()?)
}

fn subscriber<T: Wire>(topic: &Topic<T>, wait: Wait) -> anyhow::Result<Subscriber<T>> {
    Ok(match wait {
        Wait::Poll => topic.subscriber_with(WaitMode::BusyPoll)?,
        Wait::Futex => {
            let mut s = topic.subscriber()?;
            s.set_spin(0);
            s
        }
    })
}

fn receive<T: Wire>(rx: &mut Subscriber<T>, wait: Wait) -> anyhow::Result<horus::Sample<T>> {
    match wait {
        Wait::Poll => spin_until(|| Ok(rx.try_recv()), || Ok(())),
        Wait::Futex => rx
            .recv_timeout(STALL_TIMEOUT)
            .context("no message within the stall timeout"),
    }
}

/// Loans a message, writes payload `tag` in place and sends it to `subscribers`.
fn send<T: Wire>(
    tx: &mut Publisher<T>,
    len: usize,
    tag: u64,
    touch: Touch,
    subscribers: usize,
) -> anyhow::Result<()> {
    let mut s = T::loan(tx, len)?;
    payload::write(T::payload_mut(&mut s), tag, touch);
    let d = s
        .send()
        .map_err(|e| anyhow::anyhow!("send failed: {}", e.map(drop)))?;
    ensure!(
        d.subscribers as usize == subscribers,
        "send reached {} subscribers, expected {subscribers}",
        d.subscribers
    );
    Ok(())
}

pub(super) fn publisher_as<T: Wire>(
    r: &Role,
    start: &dyn Fn() -> anyhow::Result<()>,
) -> anyhow::Result<PubOutcome> {
    let mut tx = data_topic::<T>(r)?.publisher()?;
    let mut acks = subscriber(&ack_topic(r, r.index)?, r.wait)?;
    let len = r.spec.payload_len();
    start()?;
    match r.job {
        Job::Rtt { warmup, iters } => {
            let cfg = Config {
                warmup,
                iterations: iters,
                touch: r.touch,
                one_way_messages: 0,
                cpus: [0, 1],
            };
            let samples = measure_round_trip_samples(&cfg, |seq| {
                let t = tag(r.index, seq);
                send(&mut tx, len, t, r.touch, r.subs)?;
                for _ in 0..r.subs {
                    let ack = receive(&mut acks, r.wait)?;
                    let got = payload::read(&ack.data, Touch::Ends)?;
                    ensure!(got == t, "ack for {got:#x}, expected {t:#x}");
                }
                Ok(())
            })?;
            Ok(PubOutcome::Rtt(samples))
        }
        Job::SendOnly {
            warmup,
            bursts,
            burst,
        } => {
            let samples = send_only_bursts(
                warmup,
                bursts,
                burst,
                |seq| send(&mut tx, len, tag(r.index, seq), r.touch, r.subs),
                |last| {
                    for _ in 0..r.subs {
                        let ack = receive(&mut acks, r.wait)?;
                        let got = payload::read(&ack.data, Touch::Ends)?;
                        let want = tag(r.index, last);
                        ensure!(got == want, "burst ack for {got:#x}, expected {want:#x}");
                    }
                    Ok(())
                },
            )?;
            Ok(PubOutcome::SendOnly(samples))
        }
        Job::Burst { warmup, count } => {
            let mut start_ns = monotonic_ns();
            for seq in 0..warmup + count {
                if seq == warmup {
                    start_ns = monotonic_ns();
                }
                send(&mut tx, len, tag(r.index, seq), r.touch, r.subs)?;
            }
            for _ in 0..r.subs {
                let ack = receive(&mut acks, r.wait)?;
                let got = payload::read(&ack.data, Touch::Ends)?;
                ensure!(
                    got == warmup + count,
                    "a subscriber confirmed {got} messages"
                );
            }
            Ok(PubOutcome::Burst { start_ns })
        }
    }
}

pub(super) fn subscriber_as<T: Wire>(
    r: &Role,
    start: &dyn Fn() -> anyhow::Result<()>,
) -> anyhow::Result<SubOutcome> {
    let mut rx = subscriber(&data_topic::<T>(r)?, r.wait)?;
    let mut acks = (0..r.pubs)
        .map(|i| Ok(ack_topic(r, i)?.publisher()?))
        .collect::<anyhow::Result<Vec<Publisher<Bytes16>>>>()?;
    let len = r.spec.payload_len();
    let per_publisher = r.job.per_publisher();
    let mut next = vec![0u64; r.pubs];
    start()?;
    for _ in 0..per_publisher * r.pubs as u64 {
        let (origin, seq) = {
            let msg = receive(&mut rx, r.wait)?;
            T::check(&msg)?;
            let bytes = T::payload(&msg);
            ensure!(
                bytes.len() == len,
                "message of {} B, expected {len}",
                bytes.len()
            );
            untag(payload::read(bytes, r.touch)?)
        }; // the sample (and its chunk) is released here, before the ack
        ensure!(origin < r.pubs, "message from unknown publisher {origin}");
        ensure!(
            seq == next[origin],
            "lost or reordered: publisher {origin} sent {seq}, expected {}",
            next[origin]
        );
        next[origin] += 1;
        match r.job {
            Job::Rtt { .. } => send(&mut acks[origin], 16, tag(origin, seq), Touch::Ends, 1)?,
            Job::SendOnly { burst, .. } if next[origin].is_multiple_of(burst) => {
                send(&mut acks[origin], 16, tag(origin, seq), Touch::Ends, 1)?
            }
            Job::SendOnly { .. } => {}
            Job::Burst { .. } if next[origin] == per_publisher => {
                send(&mut acks[origin], 16, per_publisher, Touch::Ends, 1)?
            }
            Job::Burst { .. } => {}
        }
    }
    let end_ns = monotonic_ns();
    let overrun = rx.stats().overrun;
    ensure!(overrun == 0, "subscriber counted {overrun} overruns");
    Ok(SubOutcome {
        received: per_publisher * r.pubs as u64,
        end_ns,
    })
}

/// 1:1 in the calling thread: send, receive, ack, receive the ack — a loopback.
pub(super) fn same_thread_as<T: Wire>(r: &Role) -> anyhow::Result<Outcomes> {
    let data = data_topic::<T>(r)?;
    let mut tx = data.publisher()?;
    let mut rx = data.subscriber_with(WaitMode::BusyPoll)?;
    let ack = ack_topic(r, 0)?;
    let mut atx = ack.publisher()?;
    let mut arx = ack.subscriber_with(WaitMode::BusyPoll)?;
    let len = r.spec.payload_len();
    let mut take = |seq: u64| -> anyhow::Result<()> {
        let msg = rx.try_recv().context("sent message not receivable")?;
        T::check(&msg)?;
        ensure!(
            payload::read(T::payload(&msg), r.touch)? == seq,
            "wrong message"
        );
        Ok(())
    };
    match r.job {
        Job::Rtt { warmup, iters } => {
            let cfg = Config {
                warmup,
                iterations: iters,
                touch: r.touch,
                one_way_messages: 0,
                cpus: [0, 1],
            };
            let samples = measure_round_trip_samples(&cfg, |seq| {
                send(&mut tx, len, seq, r.touch, 1)?;
                take(seq)?;
                send(&mut atx, 16, seq, Touch::Ends, 1)?;
                let a = arx.try_recv().context("ack not receivable")?;
                ensure!(payload::read(&a.data, Touch::Ends)? == seq, "wrong ack");
                Ok(())
            })?;
            Ok((vec![PubOutcome::Rtt(samples)], Vec::new()))
        }
        Job::SendOnly {
            warmup,
            bursts,
            burst,
        } => {
            let samples = send_only_bursts(
                warmup,
                bursts,
                burst,
                |seq| send(&mut tx, len, seq, r.touch, 1),
                |last| {
                    for seq in last + 1 - burst..=last {
                        take(seq)?;
                    }
                    Ok(())
                },
            )?;
            Ok((vec![PubOutcome::SendOnly(samples)], Vec::new()))
        }
        Job::Burst { warmup, count } => {
            let mut start_ns = monotonic_ns();
            for seq in 0..warmup + count {
                if seq == warmup {
                    start_ns = monotonic_ns();
                }
                send(&mut tx, len, seq, r.touch, 1)?;
                take(seq)?;
            }
            let end_ns = monotonic_ns();
            let sub = SubOutcome {
                received: warmup + count,
                end_ns,
            };
            Ok((vec![PubOutcome::Burst { start_ns }], vec![sub]))
        }
    }
}

/// The publisher side of [`super::send_only`]: `warmup + bursts` bursts of `burst`
/// calls of `send(seq)` (seq counting from 0 across bursts), each followed by
/// `settle(last seq of the burst)` (untimed: receive the acknowledgements). One
/// sample per timed burst: its time on [`Clock`] divided by `burst`.
fn send_only_bursts(
    warmup: u64,
    bursts: u64,
    burst: u64,
    mut send: impl FnMut(u64) -> anyhow::Result<()>,
    mut settle: impl FnMut(u64) -> anyhow::Result<()>,
) -> anyhow::Result<Samples> {
    ensure!(burst > 0, "a send-only burst needs at least one send");
    Clock::calibrate();
    let mut samples = vec![0u64; bursts as usize];
    let mut seq = 0;
    let mut one = |seq: &mut u64| -> anyhow::Result<u64> {
        let t0 = Clock::now();
        for _ in 0..burst {
            send(*seq)?;
            *seq += 1;
        }
        let t1 = Clock::now();
        settle(*seq - 1)?;
        Ok(Clock::elapsed_ns(t0, t1))
    };
    for _ in 0..warmup {
        one(&mut seq)?;
    }
    let wall_start = Clock::now();
    for slot in samples.iter_mut() {
        *slot = one(&mut seq)? / burst;
    }
    Ok(Samples {
        ns: samples,
        wall_ns: Clock::elapsed_ns(wall_start, Clock::now()),
    })
}
