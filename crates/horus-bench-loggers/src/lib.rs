//! The loggers under test, set up once per process, and the measurement of one system
//! at one size: a warm-up, an untimed pass (wall time / calls), a timed pass (every
//! call between two timer reads) and a batch pass ([`BATCH_CALLS`] calls between two timer
//! reads, reported per call — the per-call-in-batch value — so that the timer does not
//! dominate a call of a few ns).
//!
//! Every system writes the same message (`info` level, the message as the one `{}`
//! argument) to `/dev/null` through its normal path: horus-log into its shared-memory
//! ring, formatted by its drain thread; `tracing` formatted on the calling thread by
//! `tracing_subscriber::fmt` and handed to `tracing-appender`'s non-blocking writer
//! (a channel to a worker thread doing the write); `env_logger` formatting and writing on
//! the calling thread.
//!
//! `horus-bench`'s `logging` binary runs it (feature `logging`); the rows, tables and
//! targets are `horus_bench::logging`'s.
#![warn(missing_docs)]

use std::fs::File;
use std::time::Duration;

use anyhow::Context;

use horus_bench_core::clock::Clock;
use horus_bench_core::stats::Summary;

/// Calls timed together in the batch pass (one timer pair per batch, divided by this):
/// the rows' own constant, which the tables divide by.
pub use horus_bench::logging::BATCH_CALLS;

/// horus-log's ring for the benchmark: 16 MiB (2048 records of 8 KiB).
pub const HORUS_RING: usize = 16 << 20;

/// Which logger.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum System {
    /// horus-log macros.
    Horus,
    /// `tracing` + `tracing-subscriber` fmt + `tracing-appender` non-blocking.
    Tracing,
    /// `log` + `env_logger`.
    EnvLogger,
}

impl System {
    /// All, in the order of round 0.
    pub const ALL: [System; 3] = [System::Horus, System::Tracing, System::EnvLogger];

    /// Name in tables and JSON.
    pub fn name(self) -> &'static str {
        match self {
            System::Horus => "horus",
            System::Tracing => "tracing",
            System::EnvLogger => "env_logger",
        }
    }
}

/// The loggers, installed once.
pub struct Loggers {
    _horus: horus_log::LogGuard,
    tracing: tracing::Dispatch,
    tracing_errors: tracing_appender::non_blocking::ErrorCounter,
    _tracing_guard: tracing_appender::non_blocking::WorkerGuard,
}

fn dev_null() -> anyhow::Result<File> {
    File::options()
        .write(true)
        .open("/dev/null")
        .context("opening /dev/null")
}

impl Loggers {
    /// Installs all three (before any thread is pinned: their background threads must not
    /// inherit the measuring thread's CPU).
    pub fn install(namespace: &str) -> anyhow::Result<Loggers> {
        let horus = horus_log::Builder::new()
            .namespace(namespace)
            .ring_bytes(HORUS_RING)
            .console(horus_log::Console::Writer(Box::new(dev_null()?)))
            .name("bench-logging")
            .init()?;
        let (nb, guard) = tracing_appender::non_blocking(dev_null()?);
        let tracing_errors = nb.error_counter();
        let sub = tracing_subscriber::fmt()
            .with_writer(nb)
            .with_max_level(tracing::Level::INFO)
            .finish();
        let env = env_logger::Builder::new()
            .filter_level(log::LevelFilter::Info)
            .target(env_logger::Target::Pipe(Box::new(dev_null()?)))
            .build();
        log::set_boxed_logger(Box::new(env)).context("installing env_logger")?;
        log::set_max_level(log::LevelFilter::Info);
        Ok(Loggers {
            _horus: horus,
            tracing: tracing::Dispatch::new(sub),
            tracing_errors,
            _tracing_guard: guard,
        })
    }

    fn dropped(&self, s: System) -> Option<u64> {
        match s {
            System::Horus => Some(horus_log::dropped()),
            System::Tracing => Some(self.tracing_errors.dropped_lines() as u64),
            System::EnvLogger => None,
        }
    }

    /// Writes 32 MiB through horus's ring once, so its pages are mapped before timing.
    pub fn prefault(&self) {
        let msg = "p".repeat(8000);
        for _ in 0..(2 * HORUS_RING / 8192) {
            horus_log::info!("{}", msg.as_str());
        }
        std::thread::sleep(Duration::from_millis(200));
    }
}

/// One system at one size, measured.
#[derive(Debug, Clone)]
pub struct Measured {
    /// Untimed pass: wall time / calls, ns.
    pub avg_ns: f64,
    /// Timed pass: every call between two timer reads.
    pub per_call: Summary,
    /// Batch pass: per-call time of each batch of [`BATCH_CALLS`] calls, its median, ns.
    pub batch_median_ns: f64,
    /// Batch pass: the 99th percentile over batches, per call, ns.
    pub batch_p99_ns: f64,
    /// Batch pass: the slowest batch, per call, ns.
    pub batch_max_ns: f64,
    /// Records dropped during the passes (`None`: the system does not count them).
    pub dropped: Option<u64>,
}

/// One measurement of `calls` calls per pass.
pub fn measure(l: &Loggers, s: System, msg: &str, warmup: u64, calls: u64) -> Measured {
    let before = l.dropped(s);
    let run = |f: &dyn Fn(&str)| {
        for _ in 0..warmup {
            f(msg);
        }
        let t0 = Clock::now();
        for _ in 0..calls {
            f(std::hint::black_box(msg));
        }
        let avg = Clock::elapsed_ns(t0, Clock::now()) as f64 / calls as f64;
        let mut samples = Vec::with_capacity(calls as usize);
        let w0 = Clock::now();
        for _ in 0..calls {
            let a = Clock::now();
            f(std::hint::black_box(msg));
            let b = Clock::now();
            samples.push(b.wrapping_sub(a));
        }
        let wall = Clock::elapsed_ns(w0, Clock::now());
        let ns: Vec<u64> = samples
            .into_iter()
            .map(|t| Clock::elapsed_ns(0, t))
            .collect();
        // The same number of calls again, BATCH_CALLS between two timer reads.
        let batches = (calls / BATCH_CALLS).max(1);
        let mut batch_ticks = Vec::with_capacity(batches as usize);
        for _ in 0..batches {
            let a = Clock::now();
            for _ in 0..BATCH_CALLS {
                f(std::hint::black_box(msg));
            }
            let b = Clock::now();
            batch_ticks.push(b.wrapping_sub(a));
        }
        let mut per_call: Vec<f64> = batch_ticks
            .into_iter()
            .map(|t| Clock::elapsed_ns(0, t) as f64 / BATCH_CALLS as f64)
            .collect();
        per_call.sort_by(f64::total_cmp);
        let at = |q: f64| per_call[((per_call.len() - 1) as f64 * q).round() as usize];
        (
            avg,
            Summary::from_samples(ns, wall).expect("calls > 0"),
            (at(0.5), at(0.99), at(1.0)),
        )
    };
    let (avg, summary, (batch_median_ns, batch_p99_ns, batch_max_ns)) = match s {
        System::Horus => run(&|m| horus_log::info!("{}", m)),
        System::Tracing => {
            tracing::dispatcher::with_default(&l.tracing, || run(&|m| tracing::info!("{}", m)))
        }
        System::EnvLogger => run(&|m| log::info!("{}", m)),
    };
    let dropped = match (before, l.dropped(s)) {
        (Some(a), Some(b)) => Some(b.saturating_sub(a)),
        _ => None,
    };
    // Let the background threads catch up before the next system runs.
    std::thread::sleep(Duration::from_millis(50));
    Measured {
        avg_ns: avg,
        per_call: summary,
        batch_median_ns,
        batch_p99_ns,
        batch_max_ns,
        dropped,
    }
}
