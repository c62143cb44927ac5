//! `horus log`: print the log records of every process of a namespace (or one `--pid`),
//! also of processes that died (their segment stays until `--clean`), filtered by level,
//! node/target and a regular expression; `--follow` keeps printing new records.
//!
//! Records are formatted here, not in the writing process (see docs/logging.md). A
//! segment that is not a valid log segment is reported and skipped; a malformed record is
//! skipped and counted. Per process, the records the writer dropped (ring full) and the
//! ones this reader missed (overwritten before it read them) are printed.

use std::collections::{BTreeMap, BTreeSet};
use std::process::ExitCode;
use std::time::Duration;

use clap::Args;
use horus_log::{Level, LogRecord, LogSegment, Val};
use regex::Regex;
use serde_json::{json, Map, Value};

use crate::output::Output;
use horus_launch::signals;

/// Sleep between polls in `--follow`.
const POLL: Duration = Duration::from_millis(20);

/// Show the log records of the namespace's processes.
#[derive(Debug, Args)]
pub(crate) struct Log {
    /// Namespace (default: `HORUS_NAMESPACE`, else one per user).
    #[arg(long)]
    namespace: Option<String>,
    /// Only this process.
    #[arg(long)]
    pid: Option<u32>,
    /// Lowest level shown (trace, debug, info, warn, error).
    #[arg(long, default_value = "trace")]
    level: Level,
    /// Only records whose target starts with this, or of processes of this name.
    #[arg(long)]
    node: Option<String>,
    /// Only records whose message (with its fields) matches this regular expression.
    #[arg(long)]
    grep: Option<String>,
    /// Print only the last N records of each process (default: all in the ring).
    #[arg(long, short = 'n')]
    tail: Option<usize>,
    /// Keep printing new records (and processes that appear) until Ctrl-C.
    #[arg(long, short = 'f')]
    follow: bool,
    /// Remove the log segments of dead processes instead of printing.
    #[arg(long)]
    clean: bool,
}

/// One segment being followed.
struct Followed {
    seg: LogSegment,
    next: u64,
    malformed: u64,
    missed: u64,
    /// The writer's loss counters (dropped, abandoned, unreadable) last shown.
    losses_shown: (u64, u64, u64),
}

struct Filter {
    level: Level,
    node: Option<String>,
    grep: Option<Regex>,
}

impl Filter {
    fn keep(&self, r: &LogRecord) -> bool {
        r.level >= self.level
            && self
                .node
                .as_ref()
                .is_none_or(|n| r.target.starts_with(n.as_str()) || r.process == *n)
            && self
                .grep
                .as_ref()
                .is_none_or(|g| g.is_match(&r.message_with_fields()))
    }
}

pub(crate) fn run(a: Log, out: &Output) -> anyhow::Result<ExitCode> {
    let ns = a.namespace.clone().unwrap_or_else(horus::namespace);
    if a.clean {
        let removed = horus_log::remove_dead(&ns)?;
        if out.is_json() {
            out.json_line(&json!({ "namespace": ns, "removed": removed }));
        } else {
            for r in &removed {
                println!("removed {r}");
            }
            println!("namespace {ns}: removed {} log segment(s)", removed.len());
        }
        return Ok(ExitCode::SUCCESS);
    }
    let filter = Filter {
        level: a.level,
        node: a.node.clone(),
        grep: a.grep.as_deref().map(Regex::new).transpose()?,
    };
    if a.follow {
        signals::install()?;
    }
    let mut open: BTreeMap<u32, Followed> = BTreeMap::new();
    let mut skipped: BTreeSet<String> = BTreeSet::new();
    let mut first = true;
    loop {
        discover(&ns, a.pid, &mut open, &mut skipped, out)?;
        for f in open.values_mut() {
            // Wait at a record still being written only while its writer can finish it.
            let batch = f.seg.read_from(f.next, a.follow && f.seg.is_alive());
            f.next = batch.next;
            f.malformed += batch.malformed;
            f.missed += batch.missed_cells;
            let mut kept: Vec<&LogRecord> =
                batch.records.iter().filter(|r| filter.keep(r)).collect();
            if first {
                if let Some(n) = a.tail {
                    kept = kept.split_off(kept.len().saturating_sub(n));
                }
            }
            for r in kept {
                print_record(r, out);
            }
            let c = f.seg.counters();
            let losses = (c.dropped, c.abandoned, c.unreadable);
            if losses != f.losses_shown || (first && !a.follow) {
                status(f, losses, out);
                f.losses_shown = losses;
            }
        }
        first = false;
        if !a.follow || signals::count() > 0 {
            break;
        }
        std::thread::sleep(POLL);
    }
    if open.is_empty() && a.pid.is_some() {
        anyhow::bail!(
            "no log segment of pid {} in namespace {ns}",
            a.pid.unwrap_or(0)
        );
    }
    Ok(ExitCode::SUCCESS)
}

/// Opens segments that appeared since the last look (and reports the invalid ones once:
/// `skipped` remembers them).
fn discover(
    ns: &str,
    pid: Option<u32>,
    open: &mut BTreeMap<u32, Followed>,
    skipped: &mut BTreeSet<String>,
    out: &Output,
) -> anyhow::Result<()> {
    for e in horus_log::segments(ns)? {
        if pid.is_some_and(|p| p != e.pid) || open.contains_key(&e.pid) || skipped.contains(&e.name)
        {
            continue;
        }
        match LogSegment::open(&e.name) {
            Ok(seg) => {
                open.insert(
                    e.pid,
                    Followed {
                        seg,
                        next: 0,
                        malformed: 0,
                        missed: 0,
                        losses_shown: (0, 0, 0),
                    },
                );
            }
            Err(err) => {
                let msg = format!("skipped {}: {err}", e.name);
                if out.is_json() {
                    out.json_line(
                        &json!({ "pid": e.pid, "skipped": e.name, "error": err.to_string() }),
                    );
                } else {
                    eprintln!("horus log: {msg}");
                }
                skipped.insert(e.name);
            }
        }
    }
    Ok(())
}

fn val_json(v: &Val) -> Value {
    match v {
        Val::I64(x) => json!(x),
        Val::U64(x) => json!(x),
        Val::F64(x) => json!(x),
        Val::F32(x) => json!(x),
        Val::Bool(x) => json!(x),
        Val::Char(c) => json!(c.to_string()),
        Val::Str(s) | Val::Text(s, _) => json!(s),
    }
}

fn print_record(r: &LogRecord, out: &Output) {
    if out.is_json() {
        let fields: Map<String, Value> = r
            .fields
            .iter()
            .map(|(k, v)| (k.clone(), val_json(v)))
            .collect();
        out.json_line(&json!({
            "time": horus_log::format_time(r.unix_ns),
            "unix_ns": r.unix_ns,
            "level": r.level.name(),
            "pid": r.pid,
            "process": r.process,
            "tid": r.tid,
            "target": r.target,
            "file": r.file,
            "line": r.line,
            "message": r.message,
            "fields": fields,
        }));
    } else {
        println!("{}", r.human());
    }
}

/// One line per process: its state and every count of what was lost — by its writer (ring
/// full), by its drain (reservations never committed, records it could not format) and by
/// this reader (malformed records, cells overwritten before they were read).
fn status(f: &Followed, (dropped, abandoned, unreadable): (u64, u64, u64), out: &Output) {
    let alive = f.seg.is_alive();
    let state = if alive {
        "running"
    } else if f.seg.exited_cleanly() {
        "exited"
    } else {
        "dead (last records kept)"
    };
    if out.is_json() {
        out.json_line(&json!({
            "status": {
                "pid": f.seg.pid(),
                "process": f.seg.process(),
                "state": state,
                "dropped": dropped,
                "abandoned": abandoned,
                "unreadable": unreadable,
                "malformed": f.malformed,
                "missed_cells": f.missed,
            }
        }));
    } else {
        println!(
            "-- {}[{}] {state}: {dropped} dropped (ring full), {abandoned} abandoned \
             (never committed), {unreadable} unreadable, {} malformed skipped, {} cells missed",
            f.seg.process(),
            f.seg.pid(),
            f.malformed,
            f.missed
        );
    }
}
