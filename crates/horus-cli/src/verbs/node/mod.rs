//! `horus node`: the nodes of every scheduler of a namespace, read from the
//! schedulers' statistics tables in `/dev/shm` (`horus.<ns>.sched.<name>`).
//!
//! Read-only: the tables are mapped read-only and only loaded from, so
//! running these verbs changes nothing a scheduler or its nodes observe.

mod info;
mod list;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Subcommand};
use horus::sched::{ExecClass, NodeState, NodeStats, Percentiles, RtMode};
use serde_json::{json, Value};

use crate::output::Output;

/// List nodes or show one, from the schedulers' statistics tables.
#[derive(Debug, Args)]
pub(crate) struct NodeCmd {
    #[command(subcommand)]
    verb: NodeVerb,
}

#[derive(Debug, Subcommand)]
enum NodeVerb {
    /// Every node of every scheduler of the namespace, one line each.
    List(list::List),
    /// Everything known about one node.
    Info(info::Info),
}

pub(crate) fn run(cmd: NodeCmd, out: &Output) -> anyhow::Result<ExitCode> {
    match cmd.verb {
        NodeVerb::List(args) => list::run(args, out),
        NodeVerb::Info(args) => info::run(args, out),
    }
}

/// One scheduler's statistics table, as read.
#[derive(Debug)]
pub(crate) struct SchedulerTable {
    pub(crate) path: PathBuf,
    /// The scheduler's name (from the table, else from the file name).
    pub(crate) scheduler: String,
    /// Its process (0 when the table could not be read).
    pub(crate) pid: u32,
    /// Whether that process is still running (pid + start time).
    pub(crate) alive: bool,
    /// Seconds it had been running when it last wrote the table.
    pub(crate) uptime_s: f64,
    pub(crate) nodes: Vec<NodeStats>,
    /// Why the table could not be read, if it could not.
    pub(crate) error: Option<String>,
}

/// Reads every statistics table of `namespace`, sorted by file name.
pub(crate) fn read_all(namespace: &str) -> anyhow::Result<Vec<SchedulerTable>> {
    let prefix = format!("horus.{namespace}.sched.");
    let dir = horus::sched::STATS_DIR;
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .map_err(|e| anyhow::anyhow!("cannot list {dir}: {e}"))?
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|n| n.starts_with(&prefix))
        .collect();
    names.sort();
    Ok(names
        .into_iter()
        .map(|file| {
            let path = PathBuf::from(dir).join(&file);
            let fallback = file[prefix.len()..].to_owned();
            read_one(path, fallback)
        })
        .collect())
}

fn read_one(path: PathBuf, fallback_name: String) -> SchedulerTable {
    let alive = horus::sched::stats_writer_alive(&path).unwrap_or(false);
    match horus::sched::read_stats(&path) {
        Ok(s) => SchedulerTable {
            path,
            scheduler: s.scheduler,
            pid: s.pid,
            alive,
            uptime_s: s.uptime.as_secs_f64(),
            nodes: s.nodes,
            error: None,
        },
        Err(e) => SchedulerTable {
            path,
            scheduler: fallback_name,
            pid: 0,
            alive,
            uptime_s: 0.0,
            nodes: Vec::new(),
            error: Some(e.to_string()),
        },
    }
}

pub(crate) fn class_text(c: ExecClass) -> String {
    match c {
        ExecClass::Main => "main".into(),
        ExecClass::RealTime { priority } => format!("realtime({priority})"),
        ExecClass::Compute => "compute".into(),
        ExecClass::Event => "event".into(),
    }
}

pub(crate) fn state_text(s: NodeState) -> &'static str {
    match s {
        NodeState::Created => "created",
        NodeState::Running => "running",
        NodeState::Restarting => "restarting",
        NodeState::Suspended => "suspended",
        NodeState::Failed => "failed",
        NodeState::ShutDown => "shut-down",
        NodeState::Hung => "hung",
    }
}

pub(crate) fn rt_text(m: RtMode) -> String {
    match m {
        RtMode::NotRequested => "none".into(),
        RtMode::Fifo { priority } => format!("SCHED_FIFO {priority}"),
        RtMode::Fallback { requested } => format!("refused (asked SCHED_FIFO {requested})"),
    }
}

/// A process as a table cell: `1234` or `1234 (dead)`.
pub(crate) fn process_text(t: &SchedulerTable) -> String {
    if t.alive {
        t.pid.to_string()
    } else {
        format!("{} (dead)", t.pid)
    }
}

fn micros(d: std::time::Duration) -> f64 {
    d.as_secs_f64() * 1e6
}

fn percentiles_json(p: &Percentiles) -> Value {
    json!({
        "samples": p.samples,
        "min_us": micros(p.min),
        "mean_us": micros(p.mean()),
        "p50_us": micros(p.p50),
        "p99_us": micros(p.p99),
        "p999_us": micros(p.p999),
        "max_us": micros(p.max),
    })
}

/// One node of one scheduler as JSON (the same object in `list` and `info`).
pub(crate) fn node_json(t: &SchedulerTable, n: &NodeStats) -> Value {
    json!({
        "name": n.name,
        "scheduler": t.scheduler,
        "pid": t.pid,
        "alive": t.alive,
        "state": state_text(n.state),
        "class": class_text(n.class),
        "rt_mode": rt_text(n.rt_mode),
        "core": n.core,
        "target_hz": n.target_hz,
        "rate_hz": finite(n.achieved_hz),
        "ticks": n.ticks,
        "window_ticks": n.window_ticks,
        "exec": percentiles_json(&n.exec),
        "jitter": percentiles_json(&n.jitter),
        "deadline_misses": n.deadline_misses,
        "window_deadline_misses": n.window_deadline_misses,
        "budget_overruns": n.budget_overruns,
        "failures": n.failures,
        "restarts": n.restarts,
        "skipped": n.skipped,
        "watchdog_expiries": n.watchdog_expiries,
    })
}

/// A table's own facts as JSON.
pub(crate) fn scheduler_json(t: &SchedulerTable) -> Value {
    json!({
        "scheduler": t.scheduler,
        "path": t.path.display().to_string(),
        "pid": t.pid,
        "alive": t.alive,
        "uptime_s": t.uptime_s,
        "nodes": t.nodes.len(),
        "error": t.error,
    })
}

/// `None` for NaN or infinite figures (JSON has no such numbers).
fn finite(v: f64) -> Option<f64> {
    v.is_finite().then_some(v)
}
