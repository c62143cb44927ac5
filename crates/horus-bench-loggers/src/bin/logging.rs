//! `logging`: the cost of one log call on the calling thread — horus-log beside `tracing`
//! (non-blocking appender) and `log` + `env_logger` — at 32 B … 8 KiB messages, in
//! interleaved rounds, per call (each call timed) and per call in batches of 32 calls timed
//! together; the per-call cost targets at 32 B with PASS/MISS.
//!
//! ```text
//! cargo run --release -p horus-bench-loggers --bin logging -- --quick --json /tmp/logging.json
//! cargo run --release -p horus-bench-loggers --bin logging -- --rounds 5
//! ```

use std::process::ExitCode;

use horus_bench::affinity;
use horus_bench::logging::{self, LogRow, BATCH_CALLS, SIZES};
use horus_bench::suite::{self, number, Common, Run, COMMON_USAGE};
use horus_bench_loggers::{self as systems, Loggers, System};

const ROUNDS: usize = 5;
const QUICK_ROUNDS: usize = 1;

fn main() -> ExitCode {
    suite::main(run)
}

fn usage() {
    println!(
        "logging — cost of one log call: horus-log beside tracing (non-blocking) and env_logger\n\n\
         USAGE: logging [OPTIONS]\n\n{COMMON_USAGE}  \
         --rounds N         rounds (default {ROUNDS}; --quick: {QUICK_ROUNDS})\n"
    );
}

fn method(rounds: usize, calls: u64, warmup: u64, cpu: usize) -> Vec<String> {
    // As `measure` runs it: whole batches only (2,000 calls: 62 batches, 1,984 calls).
    let batches = (calls / BATCH_CALLS).max(1);
    let batch_pass = batches * BATCH_CALLS;
    let mut m = vec![
        format!(
            "one thread pinned to CPU {cpu} calls the logger with an `info` record whose one \
             argument is a message of N bytes (N = {SIZES:?}); the loggers' background \
             threads (horus's drain, tracing-appender's worker) were started before pinning \
             and run on the other CPUs"
        ),
        format!(
            "per system and size: {warmup} warm-up calls, then an untimed pass of {calls} calls \
             (average = wall time / calls, the reference report's metric), then a timed pass \
             of {calls} calls, each between two timer reads (median, p99, max include one \
             timer pair), then a batch pass of {batch_pass} calls: {batches} batches of \
             {BATCH_CALLS} consecutive calls, each batch between two timer reads; per-call-in-\
             batch = time of a batch / {BATCH_CALLS} (1/{BATCH_CALLS} of a timer pair inside; \
             one slow call shows at 1/{BATCH_CALLS} of its cost), its median, p99 and max over \
             the batches"
        ),
        format!(
            "interleaved rounds: {rounds}; in each round every size, and at each size every \
             system (order rotated each round); every value is the median over rounds with \
             its [min–max]; 50 ms pause after each measurement for background threads"
        ),
        format!(
            "horus: horus_log::info!(\"{{}}\", msg) — call-site id + the message copied into \
             the process's shared-memory ring ({} MiB), no formatting on the calling thread; \
             the drain thread formats to /dev/null; a full ring drops (counted)",
            systems::HORUS_RING >> 20
        ),
        "tracing 0.1: tracing::info!(\"{}\", msg) with tracing_subscriber::fmt (formats on the \
         calling thread) writing into tracing_appender::non_blocking(/dev/null) (a bounded \
         channel to a worker thread; lossy: drops counted by its error counter)"
            .to_owned(),
        "log 0.4 + env_logger: log::info!(\"{}\", msg), formatted and written to /dev/null on \
         the calling thread (synchronous)"
            .to_owned(),
        "spdlog-rs: not measured (not tried in this session: its dependency tree was not \
         added to keep the cold build light)"
            .to_owned(),
    ];
    m.push(format!("timer: {}", horus_bench::clock::Clock::describe()));
    m
}

fn run(argv: Vec<String>) -> anyhow::Result<ExitCode> {
    let mut rounds = None;
    let Some(common) = Common::parse(argv, |flag, value| {
        Ok(match flag {
            "--rounds" => {
                rounds = Some(number::<usize>(&value()?)?);
                true
            }
            _ => false,
        })
    })?
    else {
        usage();
        return Ok(ExitCode::SUCCESS);
    };
    let rounds = rounds.unwrap_or(if common.quick { QUICK_ROUNDS } else { ROUNDS });
    anyhow::ensure!(rounds >= 1, "--rounds must be at least 1");
    let calls = common.iters(20_000, 2_000);
    let warmup = common.warmup(2_000, 200);
    let cpu = common.cpus[0];
    let ns = format!("bench-logging-{}", std::process::id());
    let loggers = Loggers::install(&ns)?;
    let mut run = Run::<LogRow>::start("logging", &common, method(rounds, calls, warmup, cpu));
    if let Err(e) = affinity::pin_current_thread(cpu) {
        eprintln!("  (not pinned to CPU {cpu}: {e})");
    }
    loggers.prefault();
    for round in 0..rounds {
        for size in SIZES {
            let msg: String = (0..size).map(|i| (b'a' + (i % 26) as u8) as char).collect();
            let mut order = System::ALL.to_vec();
            order.rotate_left(round % System::ALL.len());
            for s in order {
                let what = format!("round {round} {} {size} B", s.name());
                let row = run.measure(&what, || {
                    let m = systems::measure(&loggers, s, &msg, warmup, calls);
                    Ok(LogRow {
                        system: s.name().to_owned(),
                        size,
                        round,
                        calls,
                        avg_ns: m.avg_ns,
                        median_ns: m.per_call.median_ns,
                        p99_ns: m.per_call.p99_ns,
                        max_ns: m.per_call.max_ns,
                        batch_median_ns: Some(m.batch_median_ns),
                        batch_p99_ns: Some(m.batch_p99_ns),
                        batch_max_ns: Some(m.batch_max_ns),
                        batch_calls: BATCH_CALLS,
                        timer_pair_ns: horus_bench::clock::Clock::read_overhead_ns(),
                        dropped: m.dropped,
                    })
                });
                if let Some(r) = row {
                    run.push(r);
                }
            }
        }
    }
    let mut text = String::new();
    for (title, t) in logging::tables(run.rows()) {
        text.push_str(&format!("\n{title}\n{}", t.to_text()));
    }
    text.push_str(&format!(
        "\nper-call cost targets (horus, 32 B, median over rounds)\n{}",
        logging::targets(run.rows()).to_text()
    ));
    drop(loggers);
    // The logger's segment is removed by its guard; nothing is left in /dev/shm.
    run.finish(&text)
}
