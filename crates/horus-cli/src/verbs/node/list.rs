//! `horus node list`: one line per node of every scheduler of the namespace.

use std::process::ExitCode;

use clap::Args;
use serde_json::json;

use super::{node_json, process_text, read_all, scheduler_json, state_text};
use crate::output::Output;
use crate::table::{micros, Table};

/// List every node of every scheduler of the namespace.
#[derive(Debug, Args)]
pub(crate) struct List {
    /// Namespace (default: `HORUS_NAMESPACE`, else one per user).
    #[arg(long)]
    namespace: Option<String>,
}

pub(super) fn run(args: List, out: &Output) -> anyhow::Result<ExitCode> {
    let ns = args.namespace.unwrap_or_else(horus::namespace);
    let tables = read_all(&ns)?;
    if out.is_json() {
        let nodes: Vec<_> = tables
            .iter()
            .flat_map(|t| t.nodes.iter().map(move |n| node_json(t, n)))
            .collect();
        let schedulers: Vec<_> = tables.iter().map(scheduler_json).collect();
        out.json_line(&json!({
            "namespace": ns,
            "schedulers": schedulers,
            "nodes": nodes,
        }));
        return Ok(ExitCode::SUCCESS);
    }
    let mut t = Table::new(&[
        "node",
        "scheduler",
        "process",
        "state",
        ">target Hz",
        ">rate Hz",
        ">jitter p99 µs",
        ">exec mean µs",
        ">exec p99 µs",
        ">exec max µs",
        ">misses",
    ]);
    for s in &tables {
        for n in &s.nodes {
            t.row(vec![
                n.name.clone(),
                s.scheduler.clone(),
                process_text(s),
                state_text(n.state).into(),
                n.target_hz.map_or("-".into(), |hz| format!("{hz:.0}")),
                format!("{:.1}", n.achieved_hz),
                micros(n.jitter.p99),
                micros(n.exec.mean()),
                micros(n.exec.p99),
                micros(n.exec.max),
                n.deadline_misses.to_string(),
            ]);
        }
    }
    if t.is_empty() {
        println!("no nodes in namespace {ns} (no scheduler publishes statistics)");
    } else {
        t.print();
    }
    for s in tables.iter().filter(|s| s.error.is_some()) {
        println!(
            "scheduler table {}: unreadable: {}",
            s.path.display(),
            s.error.as_deref().unwrap_or_default()
        );
    }
    Ok(ExitCode::SUCCESS)
}
