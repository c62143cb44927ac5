//! `horus monitor`: a live terminal view of every topic (type, rate, bandwidth, one-way
//! latency from publish stamps, losses by kind, endpoints) and every node (process, rate,
//! jitter, execution time, misses, restarts, alive or dead), sortable, with a detail view of
//! one topic or node and the latest log lines. `--once` prints one snapshot (JSON with
//! `--json`) for scripts. An observer: attaching it changes nothing the robot observes.

use std::io::IsTerminal;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use clap::Args;
use horus_launch::signals;
use horus_monitor::{run_tui, Sampler, Snapshot};

use crate::output::Output;
use crate::table::Table;

/// Live view of topics and nodes.
#[derive(Debug, Args)]
pub(crate) struct Monitor {
    /// Namespace (default: `HORUS_NAMESPACE`, else one per user).
    #[arg(long)]
    namespace: Option<String>,
    /// Print one snapshot measured over `--window` seconds and exit (JSON with `--json`).
    #[arg(long)]
    once: bool,
    /// Seconds over which rates and latencies are measured.
    #[arg(long, default_value_t = 1.0)]
    window: f64,
}

pub(super) fn run(a: Monitor, out: &Output) -> anyhow::Result<ExitCode> {
    anyhow::ensure!(
        a.window.is_finite() && (0.05..=3600.0).contains(&a.window),
        "--window must be between 0.05 and 3600 seconds"
    );
    let window = Duration::from_secs_f64(a.window);
    let ns = a.namespace.unwrap_or_else(horus::namespace);
    signals::install()?;
    if !a.once {
        anyhow::ensure!(
            std::io::stdout().is_terminal() && !out.is_json(),
            "horus monitor draws on a terminal; for scripts use `horus monitor --once [--json]`"
        );
        let sampler = Sampler::start(&ns)?;
        run_tui(&sampler, window, || signals::count() != 0)?;
        return Ok(ExitCode::SUCCESS);
    }
    let sampler = Sampler::start(&ns)?;
    let end = Instant::now() + window;
    while signals::count() == 0 && Instant::now() < end {
        std::thread::sleep(Duration::from_millis(10));
    }
    let snap = sampler.snapshot(window);
    drop(sampler);
    if out.is_json() {
        out.json_line(&snap.to_json());
    } else {
        print_text(&snap);
    }
    Ok(ExitCode::SUCCESS)
}

/// One snapshot as two text tables.
fn print_text(s: &Snapshot) {
    let us = |v: Option<f64>| v.map_or("-".into(), |v| format!("{v:.1}"));
    let mut t = Table::new(&[
        "topic",
        "type",
        ">rate Hz",
        ">bytes/s",
        ">lat p50 µs",
        ">lat p99 µs",
        ">pub",
        ">sub",
        ">overrun",
        ">rejected",
        ">timed out",
        ">undelivered",
        ">malformed",
    ]);
    for x in &s.topics {
        let l = &x.losses;
        t.row(vec![
            x.name.clone(),
            x.type_name.clone().unwrap_or_else(|| x.schema.clone()),
            format!("{:.1}", x.rate_hz),
            format!("{:.0}", x.bytes_per_s),
            us(x.latency.as_ref().map(|l| l.p50_us)),
            us(x.latency.as_ref().map(|l| l.p99_us)),
            x.publishers.len().to_string(),
            x.subscriber_count().to_string(),
            l.overrun.to_string(),
            l.rejected.to_string(),
            l.timed_out.to_string(),
            l.undelivered.to_string(),
            l.malformed.to_string(),
        ]);
    }
    for (n, e) in &s.unreadable {
        t.row(vec![n.clone(), format!("unreadable: {e}")]);
    }
    if t.is_empty() {
        println!("no topics in namespace {}", s.namespace);
    } else {
        t.print();
    }
    let mut t = Table::new(&[
        "node",
        "scheduler",
        ">pid",
        "state",
        ">target Hz",
        ">rate Hz",
        ">jitter p50 µs",
        ">jitter p99 µs",
        ">exec p99 µs",
        ">misses",
        ">restarts",
    ]);
    for n in s.nodes() {
        let st = n.node;
        let micros = |d: Duration| format!("{:.1}", d.as_secs_f64() * 1e6);
        t.row(vec![
            st.name.clone(),
            n.table.scheduler.clone(),
            n.table.pid.to_string(),
            if n.table.alive {
                horus_monitor::schedulers::state_text(st.state).into()
            } else {
                "dead".into()
            },
            st.target_hz.map_or("-".into(), |h| format!("{h:.0}")),
            format!("{:.1}", n.rate_hz()),
            micros(st.jitter.p50),
            micros(st.jitter.p99),
            micros(st.exec.p99),
            st.deadline_misses.to_string(),
            st.restarts.to_string(),
        ]);
    }
    println!();
    if t.is_empty() {
        println!("no nodes in namespace {}", s.namespace);
    } else {
        t.print();
    }
}
