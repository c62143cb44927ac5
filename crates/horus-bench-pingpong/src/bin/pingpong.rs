//! `pingpong`: round-trip latency of horus next to the hardware floor, references, a Unix-socket
//! baseline and iceoryx2, in one run, on pinned and unpinned cores.
//!
//! ```text
//! cargo run --release -p horus-bench-pingpong --bin pingpong -- --quick --json /tmp/pp.json
//! ```
//!
//! Adding a system is one function with the [`SizeFn`] signature plus one entry in
//! [`SYSTEMS`]; see [`run_horus`].

use anyhow::Context;
use horus_bench::cli::{self, Options};
use horus_bench::clock::Clock;
use horus_bench::harness::{Config, Mode};
use horus_bench::pubsub::horus::{self as horus_peer, Wait};
use horus_bench::pubsub::uds;
use horus_bench::report::{self, Machine, Report, Row};
use horus_bench::{floors, ratios};
use horus_bench_peer_iceoryx2::pubsub as iceoryx2_peer;
use std::process::ExitCode;

fn main() -> ExitCode {
    // Child roles (`--child …`) dispatch through the suite's shared entry point.
    horus_bench::suite::main_with(&[iceoryx2_peer::CHILD_ROLES], run)
}

/// Measures one system at one message size in one pass (`pinned` or not).
type SizeFn = fn(&Config, usize, bool) -> anyhow::Result<Vec<Row>>;
/// Measures something once per pass (size-independent, or its own sizes).
type PassFn = fn(&Options, bool) -> anyhow::Result<Vec<Row>>;

/// A benchmarked system.
struct System {
    /// `--only` group.
    group: &'static str,
    /// Runs once per pass, before the sizes.
    per_pass: Option<PassFn>,
    /// Runs once per pass and size.
    per_size: Option<SizeFn>,
}

/// Everything a pass runs, in order.
const SYSTEMS: &[System] = &[
    System {
        group: "ref",
        per_pass: Some(run_fixed_floors),
        per_size: Some(run_sized_floors),
    },
    System {
        group: "uds",
        per_pass: None,
        per_size: Some(run_uds),
    },
    System {
        group: "iceoryx2",
        per_pass: Some(run_iceoryx2_one_way),
        per_size: Some(run_iceoryx2),
    },
    System {
        group: "horus",
        per_pass: Some(run_horus_per_pass),
        per_size: Some(run_horus_all_modes),
    },
];

/// horus round trips of `size` bytes in `mode` (copy or loan), busy-polling.
fn run_horus(cfg: &Config, size: usize, mode: Mode, pinned: bool) -> anyhow::Result<Vec<Row>> {
    let s = horus_peer::round_trip(cfg, size, mode, Wait::Poll, cfg.cpus_if(pinned))?;
    Ok(vec![Row::round_trip(
        "horus",
        Some(size),
        mode,
        Some(cfg.touch),
        pinned,
        s,
    )])
}

fn run_horus_all_modes(cfg: &Config, size: usize, pinned: bool) -> anyhow::Result<Vec<Row>> {
    let mut rows = run_horus(cfg, size, Mode::Copy, pinned)?;
    rows.extend(run_horus(cfg, size, Mode::Loan, pinned)?);
    Ok(rows)
}

/// Once per pass: the blocking (futex) subscriber at 16 B, compared with the
/// futex wake reference, and the one-way throughput.
fn run_horus_per_pass(opts: &Options, pinned: bool) -> anyhow::Result<Vec<Row>> {
    let cfg = &opts.config;
    let futex = horus_peer::round_trip(cfg, 16, Mode::Copy, Wait::Futex, cfg.cpus_if(pinned))
        .context("futex round trip")?;
    let mut rows = vec![Row::round_trip(
        "horus:futex",
        Some(16),
        Mode::Copy,
        Some(cfg.touch),
        pinned,
        futex,
    )];
    for &size in &opts.one_way_sizes {
        let t = horus_peer::one_way(cfg, size, cfg.cpus_if(pinned))
            .with_context(|| format!("one-way {size} B"))?;
        rows.push(Row::one_way(
            "horus",
            size,
            Mode::Loan,
            cfg.touch,
            pinned,
            t,
        ));
    }
    Ok(rows)
}

fn run_fixed_floors(opts: &Options, pinned: bool) -> anyhow::Result<Vec<Row>> {
    let cfg = &opts.config;
    let cpus = cfg.cpus_if(pinned);
    let row = |system, s| Row::round_trip(system, None, Mode::Reference, None, pinned, s);
    Ok(vec![
        row("floor:cacheline", floors::cacheline(cfg, cpus)?),
        row("ref:wake", floors::wake(cfg, cpus)?),
    ])
}

fn run_sized_floors(cfg: &Config, size: usize, pinned: bool) -> anyhow::Result<Vec<Row>> {
    let cpus = cfg.cpus_if(pinned);
    let full = Some(horus_bench::payload::Touch::Full);
    let copy = floors::copy(cfg, size, cpus)?;
    let touch = floors::touch(cfg, size, cpus)?;
    Ok(vec![
        Row::round_trip("ref:copy", Some(size), Mode::Reference, full, pinned, copy),
        Row::round_trip(
            "ref:touch",
            Some(size),
            Mode::Reference,
            Some(cfg.touch),
            pinned,
            touch,
        ),
    ])
}

fn run_uds(cfg: &Config, size: usize, pinned: bool) -> anyhow::Result<Vec<Row>> {
    let s = uds::round_trip(cfg, size, cfg.cpus_if(pinned))?;
    Ok(vec![Row::round_trip(
        "uds",
        Some(size),
        Mode::Copy,
        Some(cfg.touch),
        pinned,
        s,
    )])
}

fn run_iceoryx2(cfg: &Config, size: usize, pinned: bool) -> anyhow::Result<Vec<Row>> {
    let s = iceoryx2_peer::round_trip(cfg, size, cfg.cpus_if(pinned))?;
    Ok(vec![Row::round_trip(
        "iceoryx2",
        Some(size),
        Mode::Loan,
        Some(cfg.touch),
        pinned,
        s,
    )])
}

fn run_iceoryx2_one_way(opts: &Options, pinned: bool) -> anyhow::Result<Vec<Row>> {
    let cfg = &opts.config;
    let mut rows = Vec::new();
    for &size in &opts.one_way_sizes {
        let t = iceoryx2_peer::one_way(cfg, size, cfg.cpus_if(pinned))
            .with_context(|| format!("one-way {size} B"))?;
        rows.push(Row::one_way(
            "iceoryx2",
            size,
            Mode::Loan,
            cfg.touch,
            pinned,
            t,
        ));
    }
    Ok(rows)
}

fn run(argv: Vec<String>) -> anyhow::Result<ExitCode> {
    let Some(opts) = cli::parse(argv)? else {
        print!("{}", cli::USAGE);
        return Ok(ExitCode::SUCCESS);
    };
    Clock::calibrate();
    let machine = Machine::detect();
    let method = method_lines(&opts);
    println!(
        "machine: {} | {} CPUs ({} usable) | {}",
        machine.cpu_model, machine.cores, machine.usable_cpus, machine.kernel
    );
    for line in &method {
        println!("method: {line}");
    }
    println!();

    let mut rows = Vec::new();
    let mut errors = Vec::new();
    let passes = [(true, opts.pinned_pass), (false, opts.unpinned_pass)];
    for pinned in passes.iter().filter(|p| p.1).map(|p| p.0) {
        let pass = if pinned { "pinned" } else { "unpinned" };
        for system in SYSTEMS.iter().filter(|s| opts.runs(s.group)) {
            let mut record = |what: String, result: anyhow::Result<Vec<Row>>| match result {
                Ok(new) => {
                    for r in &new {
                        let median = r.rtt.map(|s| report::ns(s.median_ns));
                        let rate = r.one_way.map(|t| format!("{:.0} msg/s", t.msgs_per_sec));
                        let shown = median.or(rate).unwrap_or_default();
                        let size = r.size.map_or_else(|| "-".to_owned(), report::size);
                        eprintln!("[{pass}] {} {} {size}: {shown}", r.system, r.kind.label());
                    }
                    rows.extend(new);
                }
                Err(e) => {
                    let msg = format!("[{pass}] {} {what}: {e:#}", system.group);
                    eprintln!("FAILED {msg}");
                    errors.push(msg);
                }
            };
            if let Some(f) = system.per_pass {
                record("per-pass".to_owned(), f(&opts, pinned));
            }
            if let Some(f) = system.per_size {
                for &size in &opts.sizes {
                    record(format!("{size} B"), f(&opts.config, size, pinned));
                }
            }
        }
    }

    let ratios = ratios::compute(&rows);
    println!("{}", report::render_tables(&rows));
    print!("{}", ratios::render(&ratios));
    if let Some(path) = &opts.json {
        let report = Report {
            machine: &machine,
            method: &method,
            config: &opts.config,
            rows: &rows,
            ratios: &ratios,
            errors: &errors,
        };
        report.write_json(path)?;
        println!("wrote {}", path.display());
    }
    if errors.is_empty() {
        Ok(ExitCode::SUCCESS)
    } else {
        eprintln!("{} system(s) failed:", errors.len());
        for e in &errors {
            eprintln!("  {e}");
        }
        Ok(ExitCode::FAILURE)
    }
}

fn method_lines(opts: &Options) -> Vec<String> {
    let cfg = &opts.config;
    let [a, b] = cfg.cpus;
    vec![
        "RTT = one round trip: A writes message seq, B receives it and answers, A receives \
         and reads the answer (never a send alone)"
            .to_owned(),
        format!(
            "payload {}: {}",
            cfg.touch.label(),
            match cfg.touch {
                horus_bench::payload::Touch::Full =>
                    "the sender writes every byte, the receiver reads every byte (checksum)",
                horus_bench::payload::Touch::Ends =>
                    "only the first and last 8 bytes are written and read",
            }
        ),
        format!("timer: {}", Clock::describe()),
        format!(
            "{} untimed warm-up round trips, then {} timed; each sample bracketed by two \
             timestamps on A; percentiles nearest-rank over all samples, none discarded; \
             RTT msg/s = round trips / wall time of the measured loop",
            cfg.warmup, cfg.iterations
        ),
        format!(
            "pinned pass: A on CPU {a}, B on CPU {b} (sched_setaffinity); unpinned pass: \
             scheduler's choice"
        ),
        "hardware floor and references (two threads, one process): floor:cacheline = one \
         64-byte line handed back and forth (a true lower bound: two line transfers); the \
         references are not lower bounds (a transport can beat them): ref:copy = same + A \
         writes the message in a local buffer, memcpy local->shared, shared->shared (B), \
         shared->local, A reads it (the work of a copy-mode row); ref:touch = same + payload \
         written and read in place; ref:wake = FUTEX_WAIT/FUTEX_WAKE (non-private) ping-pong, \
         no spinning"
            .to_owned(),
        "peers: B is a separate process (re-exec of this binary), busy-polling unless noted; \
         uds = AF_UNIX SOCK_STREAM, blocking write_all/read_exact of the full message"
            .to_owned(),
        format!("iceoryx2 0.10: {}", iceoryx2_peer::SETTINGS),
        format!(
            "one-way: A sends {} untimed then {} timed messages with no loss (backpressure); \
             B checks every sequence number and confirms its count; msg/s = messages / (first \
             send -> B's confirmation received)",
            cfg.warmup, cfg.one_way_messages
        ),
        format!("horus: {}", horus_peer::SETTINGS),
    ]
}
