//! The schedulers' statistics tables of a namespace (`/dev/shm/horus.<ns>.sched.<name>`), as
//! `horus node` and the monitor read them, and their nodes as text and JSON.
//!
//! Read-only: the tables are mapped read-only and only loaded from, so reading them changes
//! nothing a scheduler or its nodes observe.

use std::path::PathBuf;

use horus::sched::{ExecClass, NodeState, NodeStats, Percentiles, RtMode};
use serde_json::{json, Value};

/// One scheduler's statistics table, as read.
#[derive(Debug)]
pub struct SchedulerTable {
    /// The table's file.
    pub path: PathBuf,
    /// The scheduler's name (from the table, else from the file name).
    pub scheduler: String,
    /// Its process (0 when the table could not be read).
    pub pid: u32,
    /// Whether that process is still running (pid + start time).
    pub alive: bool,
    /// Seconds it had been running when it last wrote the table.
    pub uptime_s: f64,
    /// Its nodes, in the scheduler's order.
    pub nodes: Vec<NodeStats>,
    /// Why the table could not be read, if it could not.
    pub error: Option<String>,
}

/// Why [`read_all`] could not read the tables.
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    /// The directory of the tables cannot be listed.
    #[error("cannot list {dir}: {source}")]
    List {
        /// The directory (`/dev/shm`).
        dir: &'static str,
        /// Why.
        source: std::io::Error,
    },
}

/// Reads every statistics table of `namespace`, sorted by file name (a table that cannot be
/// read is in the list with its [`SchedulerTable::error`]).
pub fn read_all(namespace: &str) -> Result<Vec<SchedulerTable>, ReadError> {
    let prefix = format!("horus.{namespace}.sched.");
    let dir = horus::sched::STATS_DIR;
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .map_err(|source| ReadError::List { dir, source })?
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

/// An execution class as text: `main`, `realtime(80)`, `compute`, `event`.
pub fn class_text(c: ExecClass) -> String {
    match c {
        ExecClass::Main => "main".into(),
        ExecClass::RealTime { priority } => format!("realtime({priority})"),
        ExecClass::Compute => "compute".into(),
        ExecClass::Event => "event".into(),
    }
}

/// A node's state as text: `running`, `shut-down`, ...
pub fn state_text(s: NodeState) -> &'static str {
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

/// A real-time mode as text: `none`, `SCHED_FIFO 80`, `refused (asked SCHED_FIFO 80)`.
pub fn rt_text(m: RtMode) -> String {
    match m {
        RtMode::NotRequested => "none".into(),
        RtMode::Fifo { priority } => format!("SCHED_FIFO {priority}"),
        RtMode::Fallback { requested } => format!("refused (asked SCHED_FIFO {requested})"),
    }
}

/// A process as a table cell: `1234` or `1234 (dead)`.
pub fn process_text(t: &SchedulerTable) -> String {
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
pub fn node_json(t: &SchedulerTable, n: &NodeStats) -> Value {
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
pub fn scheduler_json(t: &SchedulerTable) -> Value {
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
