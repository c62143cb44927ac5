//! The three measurement loops, the same for every system (through [`Caller`]).
//!
//! * latency — one call in flight: `start(seq)`, `finish(seq)`, timed together
//!   ([`measure_round_trips`], the loop of every other benchmark);
//! * stress — [`STRESS_WINDOW`] calls kept in flight: the next call starts as soon
//!   as the oldest one finishes; calls per second = calls ÷ the time from the first
//!   start to the last finish;
//! * paced — `k` calls in flight at a total rate of [`CALL_RATE_HZ`]: every `k`
//!   periods of `1 / CALL_RATE_HZ` the client starts `k` calls back to back, then
//!   finishes them in order; each call's latency runs from just before its own
//!   start to just after its own finish. Between bursts the client sleeps.

use std::time::{Duration, Instant};

use anyhow::Context;

use super::{Caller, Measured, Spec, CALL_RATE_HZ, END, IN_FLIGHT, STRESS_WINDOW};
use crate::clock::Clock;
use crate::harness::{measure_round_trips, Config};
use crate::stats::Summary;

/// Runs every measurement `spec` asks for, in one session with one server
/// (sequence numbers run on across the measurements), then the [`END`] call
/// that tells the server to exit.
pub fn measure_all<C: Caller + ?Sized>(caller: &mut C, spec: &Spec) -> anyhow::Result<Measured> {
    let mut seq = 0;
    let out = measure(caller, spec, &mut seq)?;
    caller.start(END)?;
    caller.finish(END).context("the end call")?;
    Ok(out)
}

fn measure<C: Caller + ?Sized>(
    caller: &mut C,
    spec: &Spec,
    seq: &mut u64,
) -> anyhow::Result<Measured> {
    let mut out = Measured::default();
    let cfg = Config {
        warmup: spec.warmup,
        iterations: spec.calls,
        touch: spec.touch,
        one_way_messages: 0,
        cpus: [0, 1],
    };
    let base = *seq;
    out.latency = Some(
        measure_round_trips(&cfg, |k| {
            caller.start(base + k)?;
            caller.finish(base + k)
        })
        .context("latency, one call in flight")?,
    );
    *seq += cfg.rounds();
    if spec.stress_calls > 0 {
        pipelined(caller, seq, spec.warmup, STRESS_WINDOW).context("stress warm-up")?;
        let start = Clock::now();
        pipelined(caller, seq, spec.stress_calls, STRESS_WINDOW).context("stress")?;
        let ns = Clock::elapsed_ns(start, Clock::now()).max(1);
        out.stress = Some(spec.stress_calls as f64 * 1e9 / ns as f64);
    }
    if spec.paced_calls > 0 {
        for &k in IN_FLIGHT {
            let warm = (spec.warmup / 10).max(2) as usize;
            paced(caller, seq, k, warm).with_context(|| format!("{k} in flight, warm-up"))?;
            let bursts = (spec.paced_calls as usize / k).max(1);
            let s = paced(caller, seq, k, bursts).with_context(|| format!("{k} in flight"))?;
            out.paced.push((k, s));
        }
    }
    Ok(out)
}

/// `calls` calls with up to `window` in flight.
fn pipelined<C: Caller + ?Sized>(
    caller: &mut C,
    seq: &mut u64,
    calls: u64,
    window: usize,
) -> anyhow::Result<()> {
    let first = *seq;
    let end = first + calls;
    let mut next = first;
    while next < end && next - first < window as u64 {
        caller.start(next)?;
        next += 1;
    }
    for k in first..end {
        caller.finish(k)?;
        if next < end {
            caller.start(next)?;
            next += 1;
        }
    }
    *seq = end;
    Ok(())
}

/// `bursts` bursts of `k` calls, one burst every `k / CALL_RATE_HZ` seconds.
fn paced<C: Caller + ?Sized>(
    caller: &mut C,
    seq: &mut u64,
    k: usize,
    bursts: usize,
) -> anyhow::Result<Summary> {
    let period = Duration::from_nanos(k as u64 * 1_000_000_000 / CALL_RATE_HZ);
    let mut samples = Vec::with_capacity(bursts * k);
    let mut started = vec![0u64; k];
    let wall = Clock::now();
    let mut tick = Instant::now();
    for _ in 0..bursts {
        let now = Instant::now();
        if tick > now {
            std::thread::sleep(tick - now);
        }
        // A burst that overran its period starts the next one at once, without
        // catching up on the missed ticks.
        tick = (tick + period).max(Instant::now());
        let first = *seq;
        for (i, t) in started.iter_mut().enumerate() {
            *t = Clock::now();
            caller.start(first + i as u64)?;
        }
        for (i, t) in started.iter().enumerate() {
            caller.finish(first + i as u64)?;
            samples.push(Clock::elapsed_ns(*t, Clock::now()));
        }
        *seq += k as u64;
    }
    Summary::from_samples(samples, Clock::elapsed_ns(wall, Clock::now())).context("no paced calls")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::payload::Touch;
    use std::collections::VecDeque;

    /// A caller answering in-process: records what it saw.
    #[derive(Default)]
    struct Echo {
        flight: VecDeque<u64>,
        max_flight: usize,
        finished: Vec<u64>,
    }

    impl Caller for Echo {
        fn start(&mut self, seq: u64) -> anyhow::Result<()> {
            self.flight.push_back(seq);
            self.max_flight = self.max_flight.max(self.flight.len());
            Ok(())
        }
        fn finish(&mut self, seq: u64) -> anyhow::Result<()> {
            let got = self.flight.pop_front().context("nothing in flight")?;
            anyhow::ensure!(got == seq, "finished {seq}, oldest is {got}");
            self.finished.push(seq);
            Ok(())
        }
    }

    fn spec(stress: u64, paced: u64) -> Spec {
        Spec {
            size: 64,
            touch: Touch::Full,
            warmup: 3,
            calls: 10,
            stress_calls: stress,
            paced_calls: paced,
        }
    }

    #[test]
    fn a_session_ends_with_the_end_call() {
        let mut c = Echo::default();
        measure_all(&mut c, &spec(0, 0)).unwrap();
        assert_eq!(c.finished.last(), Some(&END));
        assert!(c.flight.is_empty());
    }

    #[test]
    fn latency_has_one_call_in_flight() {
        let mut c = Echo::default();
        let mut seq = 0;
        let m = measure(&mut c, &spec(0, 0), &mut seq).unwrap();
        assert_eq!(m.latency.unwrap().iterations, 10);
        assert_eq!(c.max_flight, 1);
        assert_eq!(seq, 13);
        assert!(m.stress.is_none() && m.paced.is_empty());
    }

    #[test]
    fn stress_keeps_the_window_in_flight_and_finishes_every_call_in_order() {
        let mut c = Echo::default();
        let mut seq = 0;
        let m = measure(&mut c, &spec(40, 0), &mut seq).unwrap();
        assert!(m.stress.unwrap() > 0.0);
        assert_eq!(c.max_flight, STRESS_WINDOW);
        assert_eq!(c.finished, (0..seq).collect::<Vec<_>>());
        assert!(c.flight.is_empty());
    }

    #[test]
    fn paced_bursts_put_k_calls_in_flight() {
        let mut c = Echo::default();
        let mut seq = 0;
        let m = measure(&mut c, &spec(0, 16), &mut seq).unwrap();
        let ks: Vec<usize> = m.paced.iter().map(|(k, _)| *k).collect();
        assert_eq!(ks, IN_FLIGHT);
        for (k, s) in &m.paced {
            assert_eq!(s.iterations as usize, (16 / k) * k);
        }
        assert_eq!(c.max_flight, *IN_FLIGHT.last().unwrap());
        assert_eq!(c.finished, (0..seq).collect::<Vec<_>>());
    }
}
