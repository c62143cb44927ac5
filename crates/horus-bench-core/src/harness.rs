//! The measurement loop shared by every system, and the run configuration.
//!
//! Every system is measured the same way: side A runs `warmup` untimed round trips,
//! then `iterations` round trips each bracketed by two [`Clock::now`] reads. A round
//! trip is "A writes message `seq`, B receives it and answers, A receives the answer
//! and reads it" — never a send alone. Busy waits go through [`spin_until`], which
//! adds the same per-spin cost (a poll, a counter, `spin_loop`) to every system.

use crate::clock::Clock;
use crate::payload::Touch;
use crate::stats::{Summary, Throughput};
use anyhow::{bail, Context};
use serde::Serialize;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// Parameters shared by every system in one run.
#[derive(Debug, Clone, Serialize, serde::Deserialize)]
pub struct Config {
    /// Untimed round trips before the measured ones.
    pub warmup: u64,
    /// Timed round trips.
    pub iterations: u64,
    /// How much of each payload the sides write and read.
    pub touch: Touch,
    /// Messages per one-way throughput burst (after `warmup` untimed messages).
    pub one_way_messages: u64,
    /// CPUs for side A and side B in a pinned pass.
    pub cpus: [usize; 2],
}

impl Config {
    /// Warm-up plus measured round trips: what the echo side must serve.
    pub fn rounds(&self) -> u64 {
        self.warmup + self.iterations
    }

    /// The `[A, B]` CPUs if this pass is pinned, else `None`.
    pub fn cpus_if(&self, pinned: bool) -> Option<[usize; 2]> {
        pinned.then_some(self.cpus)
    }
}

/// How a system moves the payload between the processes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    /// The payload is copied into and out of the transport.
    Copy,
    /// The payload is written in place into loaned shared memory.
    Loan,
    /// A reference measurement (the hardware floor or a reference), not a transport.
    Reference,
}

impl Mode {
    /// Label used in tables.
    pub fn label(self) -> &'static str {
        match self {
            Mode::Copy => "copy",
            Mode::Loan => "loan",
            Mode::Reference => "reference",
        }
    }
}

/// Runs `cfg.warmup` untimed then `cfg.iterations` timed calls of `round_trip(seq)`
/// (`seq` counts from 0 across both phases) and summarises the timed ones.
pub fn measure_round_trips<F>(cfg: &Config, round_trip: F) -> anyhow::Result<Summary>
where
    F: FnMut(u64) -> anyhow::Result<()>,
{
    let samples = measure_round_trip_samples(cfg, round_trip)?;
    samples.summary()
}

/// The raw outcome of one measured loop: per-round-trip nanoseconds (in loop
/// order) and the wall time of the whole loop. Kept raw where several loops
/// (several publishers) are merged into one distribution.
#[derive(Debug, Clone, Default, PartialEq, Serialize, serde::Deserialize)]
pub struct Samples {
    /// One entry per measured round trip, ns.
    pub ns: Vec<u64>,
    /// Wall time of the measured loop, ns.
    pub wall_ns: u64,
}

impl Samples {
    /// Summarises these samples.
    pub fn summary(self) -> anyhow::Result<Summary> {
        Summary::from_samples(self.ns, self.wall_ns).context("no measured iterations (--iters 0?)")
    }

    /// Pools loops that ran concurrently: all samples, and the longest wall time
    /// (so `msgs_per_sec` of the summary is the aggregate rate).
    pub fn merge(parts: impl IntoIterator<Item = Samples>) -> Samples {
        parts.into_iter().fold(Samples::default(), |mut acc, s| {
            acc.ns.extend(s.ns);
            acc.wall_ns = acc.wall_ns.max(s.wall_ns);
            acc
        })
    }
}

/// [`measure_round_trips`] without the summary: the same loop, the raw samples.
pub fn measure_round_trip_samples<F>(cfg: &Config, mut round_trip: F) -> anyhow::Result<Samples>
where
    F: FnMut(u64) -> anyhow::Result<()>,
{
    Clock::calibrate();
    for seq in 0..cfg.warmup {
        round_trip(seq).with_context(|| format!("warm-up round trip {seq}"))?;
    }
    // Pre-faulted so that no page fault lands between two samples.
    let mut samples = vec![0u64; cfg.iterations as usize];
    let wall_start = Clock::now();
    for (k, slot) in samples.iter_mut().enumerate() {
        let seq = cfg.warmup + k as u64;
        let t0 = Clock::now();
        round_trip(seq).with_context(|| format!("round trip {seq}"))?;
        let t1 = Clock::now();
        *slot = Clock::elapsed_ns(t0, t1);
    }
    let wall_ns = Clock::elapsed_ns(wall_start, Clock::now());
    Ok(Samples {
        ns: samples,
        wall_ns,
    })
}

/// The one-way protocol every system uses: `send(seq)` for `cfg.warmup`
/// untimed messages, then for `cfg.one_way_messages` timed ones, each burst
/// followed by `await_ack()`, which returns the count the receiver confirms
/// (it must equal the burst: nothing lost). The time runs from before the
/// first send of the timed burst to the arrival of its confirmation.
pub fn one_way_bursts<S, A>(
    cfg: &Config,
    mut send: S,
    mut await_ack: A,
) -> anyhow::Result<Throughput>
where
    S: FnMut(u64) -> anyhow::Result<()>,
    A: FnMut() -> anyhow::Result<u64>,
{
    let mut burst = |first: u64, count: u64| -> anyhow::Result<()> {
        for seq in first..first + count {
            send(seq)?;
        }
        let received = await_ack()?;
        anyhow::ensure!(
            received == count,
            "sink confirmed {received} of {count} messages"
        );
        Ok(())
    };
    let (warmup, messages) = (cfg.warmup, cfg.one_way_messages);
    burst(0, warmup).context("one-way warm-up")?;
    let start = Clock::now();
    burst(warmup, messages).context("one-way burst")?;
    Ok(Throughput::new(
        messages,
        Clock::elapsed_ns(start, Clock::now()),
    ))
}

/// Arguments of a one-way sink child: `<id> <size> <warmup> <messages>
/// <full|touch> <cpu|->`.
pub fn one_way_child_args(
    id: String,
    size: usize,
    cfg: &Config,
    cpu: Option<usize>,
) -> [String; 6] {
    [
        id,
        size.to_string(),
        cfg.warmup.to_string(),
        cfg.one_way_messages.to_string(),
        cfg.touch.label().to_owned(),
        crate::child::cpu_arg(cpu),
    ]
}

/// A name no other run on this machine uses concurrently: `horus-bench-<pid>-<n>`,
/// `n` counting calls in this process. Used for sockets and service names.
pub fn unique_id() -> String {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    format!("horus-bench-{}-{n}", std::process::id())
}

/// How long a busy wait may go without progress before it is declared stuck.
pub const STALL_TIMEOUT: Duration = Duration::from_secs(20);

/// Spins between progress checks (`alive` and the stall timeout).
const CHECK_EVERY: u32 = 1 << 16;

/// Busy-polls `poll` until it yields a value.
///
/// Every [`CHECK_EVERY`] spins it calls `alive` (e.g. "has the peer process exited?")
/// and fails once [`STALL_TIMEOUT`] has passed, so a dead peer is an error rather
/// than a hang. The check is off the fast path: a poll that succeeds within 65 k
/// spins never reads the wall clock.
#[inline]
pub fn spin_until<T, P, A>(mut poll: P, mut alive: A) -> anyhow::Result<T>
where
    P: FnMut() -> anyhow::Result<Option<T>>,
    A: FnMut() -> anyhow::Result<()>,
{
    let mut spins: u32 = 0;
    let mut started: Option<Instant> = None;
    loop {
        if let Some(value) = poll()? {
            return Ok(value);
        }
        spins = spins.wrapping_add(1);
        if spins.is_multiple_of(CHECK_EVERY) {
            alive()?;
            let started = *started.get_or_insert_with(Instant::now);
            if started.elapsed() > STALL_TIMEOUT {
                bail!("no progress for {STALL_TIMEOUT:?} while busy-waiting");
            }
        }
        std::hint::spin_loop();
    }
}

/// A free TCP port on 127.0.0.1 (bound, read, released), for a peer that listens on
/// loopback.
pub fn free_port() -> anyhow::Result<u16> {
    use anyhow::Context;
    let l = std::net::TcpListener::bind("127.0.0.1:0").context("finding a free loopback port")?;
    Ok(l.local_addr()?.port())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg(warmup: u64, iterations: u64) -> Config {
        Config {
            warmup,
            iterations,
            touch: Touch::Full,
            one_way_messages: 10,
            cpus: [0, 1],
        }
    }

    #[test]
    fn unique_ids_differ() {
        assert_ne!(unique_id(), unique_id());
    }

    #[test]
    fn measure_sees_every_sequence_number_once() {
        let mut seen = Vec::new();
        let s = measure_round_trips(&cfg(3, 5), |seq| {
            seen.push(seq);
            Ok(())
        })
        .unwrap();
        assert_eq!(seen, (0..8).collect::<Vec<_>>());
        assert_eq!(s.iterations, 5);
    }

    #[test]
    fn measure_propagates_errors() {
        let r = measure_round_trips(&cfg(0, 5), |seq| {
            anyhow::ensure!(seq < 2, "boom");
            Ok(())
        });
        assert!(r.is_err());
    }

    #[test]
    fn spin_until_returns_when_ready_and_fails_when_peer_dies() {
        let mut n = 0;
        let v = spin_until(
            || {
                n += 1;
                Ok((n == 3).then_some(n))
            },
            || Ok(()),
        )
        .unwrap();
        assert_eq!(v, 3);
        let dead = spin_until(|| Ok(None::<()>), || bail!("peer exited"));
        assert!(dead.is_err());
    }
}
