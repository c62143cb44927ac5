//! `block_wake`: how a publisher under `Overflow::Block` waits for room.
//!
//! ```text
//! cargo run --release -p horus-bench --bin block_wake -- --quick [--json PATH]
//! ```
//!
//! Method. One topic of depth 1, `Block { timeout: 5 s }`, a publisher thread and a
//! subscriber thread (futex subscriber), pinned to two CPUs when the machine has them.
//! The subscriber leaves the ring full, so each send of the publisher waits.
//!
//! * **Wake-up latency**: the publisher starts a send on the full ring; the subscriber waits
//!   `--gap-ms` (default 2 ms, so the publisher is asleep), takes `t0`, frees the slot (one
//!   receive); the publisher takes `t1` as its send returns. `t1 - t0` per round, min / median
//!   / p99 / max over `--rounds` rounds (both timestamps from one monotonic clock).
//! * **CPU while waiting**: the publisher's thread CPU time (`CLOCK_THREAD_CPUTIME_ID`) over
//!   a send that waits 1 s for room, `--cpu-rounds` times; reported as CPU ms per wall s.

use std::process::ExitCode;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use horus::prelude::*;
use horus_bench::block_wake::{self, BlockWakeDoc, WakeNs, SLOW_NS};

horus::message! {
    /// The message the publisher sends: its round number.
    pub struct Round: "horus-bench/BlockWakeRound", version 1 {
        /// Round number.
        pub n: u64,
    }
}

fn thread_cpu_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec for the call.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// Pins the calling thread to `cpu` where the machine has it; whether it is pinned.
fn pin(cpu: usize) -> bool {
    horus_bench::affinity::available_cpus() > cpu
        && horus_bench::affinity::pin_current_thread(cpu).is_ok()
}

struct Args {
    quick: bool,
    rounds: usize,
    cpu_rounds: usize,
    gap: Duration,
    json: Option<String>,
}

fn parse() -> anyhow::Result<Args> {
    let mut a = Args {
        quick: false,
        rounds: 2000,
        cpu_rounds: 3,
        gap: Duration::from_millis(2),
        json: None,
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let mut value = || {
            it.next()
                .ok_or_else(|| anyhow::anyhow!("{flag} needs a value"))
        };
        match flag.as_str() {
            "--quick" => {
                a.quick = true;
                a.rounds = 500;
                a.cpu_rounds = 2;
            }
            "--rounds" => a.rounds = value()?.parse()?,
            "--cpu-rounds" => a.cpu_rounds = value()?.parse()?,
            "--gap-ms" => a.gap = Duration::from_millis(value()?.parse()?),
            "--json" => a.json = Some(value()?),
            "-h" | "--help" => {
                println!("block_wake [--quick] [--rounds N] [--cpu-rounds N] [--gap-ms MS] [--json PATH]");
                std::process::exit(0);
            }
            other => anyhow::bail!("unknown argument {other}"),
        }
    }
    Ok(a)
}

fn percentile(sorted: &[u64], p: f64) -> u64 {
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i.min(sorted.len() - 1)]
}

fn main() -> ExitCode {
    match run() {
        Ok(code) => code,
        Err(e) => {
            eprintln!("block_wake: {e:#}");
            ExitCode::FAILURE
        }
    }
}

/// What was measured before the end or a failure.
#[derive(Default)]
struct Measured {
    wake_ns: Vec<u64>,
    cpu_ms_per_s: Vec<f64>,
    /// Whether both threads were pinned; `None` when the measurement failed before the
    /// threads ran, or the subscriber thread panicked.
    pinned: Option<bool>,
}

fn run() -> anyhow::Result<ExitCode> {
    let args = parse()?;
    let mut m = Measured::default();
    // A failure is recorded in the document (written all the same) and the run exits
    // non-zero; the figures hold what was measured before it.
    let mut errors = Vec::new();
    if let Err(e) = measure(&args, &mut m) {
        eprintln!("block_wake: {e:#}");
        errors.push(format!("{e:#}"));
    }
    let mut wake_ns = m.wake_ns;
    wake_ns.sort_unstable();
    let doc = BlockWakeDoc {
        rounds: wake_ns.len(),
        wake_ns: WakeNs {
            min: wake_ns.first().copied().unwrap_or(0),
            p50: if wake_ns.is_empty() {
                0
            } else {
                percentile(&wake_ns, 0.5)
            },
            p99: if wake_ns.is_empty() {
                0
            } else {
                percentile(&wake_ns, 0.99)
            },
            max: wake_ns.last().copied().unwrap_or(0),
        },
        cpu_ms_per_s: m.cpu_ms_per_s.iter().sum::<f64>() / m.cpu_ms_per_s.len().max(1) as f64,
        cpu_ms_per_s_each: m.cpu_ms_per_s,
        gap_ms: Some(args.gap.as_millis() as u64),
        slow_rounds: Some(wake_ns.iter().filter(|&&n| n > SLOW_NS).count()),
        pinned: m.pinned,
        quick: args.quick,
        errors,
    };
    for t in block_wake::tables(&doc) {
        println!("{}", t.to_text());
    }
    print!("{}", block_wake::method(&doc));
    if let Some(path) = &args.json {
        std::fs::write(path, serde_json::to_vec_pretty(&doc)?)?;
    }
    Ok(if doc.errors.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

/// Measures into `m`; an error ends the measurement (what `m` holds stays).
fn measure(args: &Args, m: &mut Measured) -> anyhow::Result<()> {
    let ns = format!("bw{}", std::process::id());
    let topic = Topic::<Round>::builder("block_wake")
        .namespace(&ns)
        .depth(1)
        .overflow(Overflow::Block {
            timeout: Duration::from_secs(5),
        })
        .open()?;
    let mut publisher = topic.publisher()?;
    let mut subscriber = topic.subscriber()?;
    // The ring (depth 1) is full from here on: every send waits for a receive.
    publisher
        .send(Round { n: 0 })
        .map_err(|_| anyhow::anyhow!("first send"))?;

    let (go_tx, go_rx) = mpsc::channel::<Duration>();
    let (t0_tx, t0_rx) = mpsc::channel::<Instant>();
    // The subscriber: whether it pinned, and how it ended.
    let sub = std::thread::spawn(move || (pin(1), free_slots(&mut subscriber, &go_rx, &t0_tx)));
    let pinned = pin(0);
    // The subscriber gone: its error (if it has one) says why; it is chained below.
    let gone = |what: String| anyhow::anyhow!("{what}: the subscriber thread has stopped");
    let mut waits = || -> anyhow::Result<()> {
        for i in 0..args.rounds {
            let round = format!("wake-up round {}", i + 1);
            go_tx.send(args.gap).map_err(|_| gone(round.clone()))?;
            publisher
                .send(Round { n: i as u64 + 1 })
                .map_err(|e| anyhow::anyhow!("{round}: send: {e}"))?;
            let t1 = Instant::now();
            let t0 = t0_rx.recv().map_err(|_| gone(format!("{round}: no t0")))?;
            m.wake_ns
                .push(t1.saturating_duration_since(t0).as_nanos() as u64);
        }
        for i in 0..args.cpu_rounds {
            let wait = format!("CPU wait {}", i + 1);
            go_tx
                .send(Duration::from_secs(1))
                .map_err(|_| gone(wait.clone()))?;
            let (c0, w0) = (thread_cpu_ns(), Instant::now());
            publisher
                .send(Round { n: i as u64 })
                .map_err(|e| anyhow::anyhow!("{wait}: send: {e}"))?;
            let (c1, w1) = (thread_cpu_ns(), Instant::now());
            t0_rx.recv().map_err(|_| gone(format!("{wait}: no t0")))?;
            m.cpu_ms_per_s
                .push((c1 - c0) as f64 / 1e6 / w1.duration_since(w0).as_secs_f64());
        }
        Ok(())
    };
    let measured = waits();
    drop(go_tx);
    let (sub_pinned, sub_ended) = sub
        .join()
        .map_err(|_| anyhow::anyhow!("subscriber thread panicked"))?;
    m.pinned = Some(pinned && sub_pinned);
    outcome(measured, sub_ended)
}

/// The subscriber thread's loop: at each signal from the publisher's thread, waits the gap
/// it was sent, takes `t0` and frees the slot (one receive), then sends `t0` back; until the
/// signals end. An error: it found the ring empty (naming the signal it failed at).
fn free_slots(
    subscriber: &mut Subscriber<Round>,
    go: &mpsc::Receiver<Duration>,
    t0_tx: &mpsc::Sender<Instant>,
) -> anyhow::Result<()> {
    let mut signals = 0;
    while let Ok(gap) = go.recv() {
        signals += 1;
        std::thread::sleep(gap);
        let t0 = Instant::now();
        if subscriber.try_recv().is_none() {
            anyhow::bail!("the subscriber found the ring empty (its wait {signals})");
        }
        if t0_tx.send(t0).is_err() {
            anyhow::bail!("the subscriber's t0 channel closed (its wait {signals})");
        }
    }
    Ok(())
}

/// How the measurement ended, from the publisher's side (`measured`) and the subscriber's
/// (`sub`): the subscriber's error is the cause of the publisher's when both failed (it
/// stopped, so the publisher's send or receive failed), and is chained under it.
fn outcome(measured: anyhow::Result<()>, sub: anyhow::Result<()>) -> anyhow::Result<()> {
    match (measured, sub) {
        (Ok(()), Ok(())) => Ok(()),
        (Err(e), Ok(())) | (Ok(()), Err(e)) => Err(e),
        (Err(publisher), Err(subscriber)) => Err(subscriber.context(format!("{publisher:#}"))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_subscribers_error_is_chained_under_the_publishers() {
        let e = outcome(
            Err(anyhow::anyhow!(
                "wake-up round 7: no t0: the subscriber thread has stopped"
            )),
            Err(anyhow::anyhow!(
                "the subscriber found the ring empty (its wait 7)"
            )),
        )
        .unwrap_err();
        assert_eq!(
            format!("{e:#}"),
            "wake-up round 7: no t0: the subscriber thread has stopped: the subscriber found \
             the ring empty (its wait 7)"
        );
        let e = outcome(Err(anyhow::anyhow!("CPU wait 1: send: timed out")), Ok(())).unwrap_err();
        assert_eq!(format!("{e:#}"), "CPU wait 1: send: timed out");
        let e = outcome(Ok(()), Err(anyhow::anyhow!("ring empty"))).unwrap_err();
        assert_eq!(format!("{e:#}"), "ring empty");
        assert!(outcome(Ok(()), Ok(())).is_ok());
    }
}
