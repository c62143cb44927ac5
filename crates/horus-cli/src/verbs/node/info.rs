//! `horus node info NAME`: every figure of one node (of each scheduler that
//! has a node of that name).

use std::process::ExitCode;

use clap::Args;
use horus::sched::Percentiles;
use serde_json::json;

use super::{class_text, node_json, process_text, read_all, rt_text, state_text};
use crate::output::Output;
use crate::table::{micros, Table};

/// Show everything known about one node.
#[derive(Debug, Args)]
pub(crate) struct Info {
    /// The node's name.
    name: String,
    /// Only the node of this scheduler.
    #[arg(long)]
    scheduler: Option<String>,
    /// Namespace (default: `HORUS_NAMESPACE`, else one per user).
    #[arg(long)]
    namespace: Option<String>,
}

pub(super) fn run(args: Info, out: &Output) -> anyhow::Result<ExitCode> {
    let ns = args.namespace.unwrap_or_else(horus::namespace);
    let tables = read_all(&ns)?;
    let found: Vec<_> = tables
        .iter()
        .filter(|t| args.scheduler.as_ref().is_none_or(|s| *s == t.scheduler))
        .flat_map(|t| {
            t.nodes
                .iter()
                .filter(|n| n.name == args.name)
                .map(move |n| (t, n))
        })
        .collect();
    if found.is_empty() {
        anyhow::bail!("no node named {:?} in namespace {ns}", args.name);
    }
    if out.is_json() {
        let nodes: Vec<_> = found.iter().map(|(t, n)| node_json(t, n)).collect();
        out.json_line(&json!({ "namespace": ns, "nodes": nodes }));
        return Ok(ExitCode::SUCCESS);
    }
    for (i, (t, n)) in found.iter().enumerate() {
        if i > 0 {
            println!();
        }
        println!("node        {}", n.name);
        println!("scheduler   {} (uptime {:.1} s)", t.scheduler, t.uptime_s);
        println!("process     {}", process_text(t));
        println!("state       {}", state_text(n.state));
        println!("class       {}", class_text(n.class));
        println!("real-time   {}", rt_text(n.rt_mode));
        if let Some(core) = n.core {
            println!("core        {core}");
        }
        let target = n
            .target_hz
            .map_or("none (event-driven)".into(), |hz| format!("{hz} Hz"));
        println!("target      {target}");
        println!(
            "rate        {:.1} Hz over the run, {} ticks in the last second",
            n.achieved_hz, n.window_ticks
        );
        println!("ticks       {}", n.ticks);
        println!(
            "misses      {} deadline ({} in the last second), {} budget overruns, {} skipped",
            n.deadline_misses, n.window_deadline_misses, n.budget_overruns, n.skipped
        );
        println!(
            "failures    {} ({} restarts, {} watchdog expiries)",
            n.failures, n.restarts, n.watchdog_expiries
        );
        let mut tbl = Table::new(&[
            "µs", ">samples", ">min", ">mean", ">p50", ">p99", ">p99.9", ">max",
        ]);
        let row = |what: &str, p: &Percentiles| {
            vec![
                what.to_owned(),
                p.samples.to_string(),
                micros(p.min),
                micros(p.mean()),
                micros(p.p50),
                micros(p.p99),
                micros(p.p999),
                micros(p.max),
            ]
        };
        tbl.row(row("exec", &n.exec));
        tbl.row(row("jitter", &n.jitter));
        tbl.print();
    }
    Ok(ExitCode::SUCCESS)
}
