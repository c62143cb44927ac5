//! `horus topic info`: one topic's type and fields, QoS, and every endpoint with its
//! process and counters.

use std::process::ExitCode;

use clap::Args;
use horus::msgs::{FieldKind, MessageDescription};
use serde_json::{json, Value};

use super::{endpoint_counts, overflow_text, process_alive, process_name, qos_json, TopicArg};
use crate::output::Output;
use crate::table::Table;

/// Show one topic.
#[derive(Debug, Args)]
pub(crate) struct Info {
    #[command(flatten)]
    topic: TopicArg,
}

pub(super) fn run(a: Info, out: &Output) -> anyhow::Result<ExitCode> {
    let view = a.topic.open()?;
    let snap = view.snapshot();
    let desc = view.description();
    let q = view.qos();
    let bridge = super::bridged::bridge_entry(&a.topic.namespace(), view.name());
    // The ROS 2 bridge's routes of this topic (counters: lost, refused, …); an unreadable
    // status file says nothing here (`horus ros2 --status` reports why).
    let ros2: Vec<Value> = crate::verbs::ros2_side::read(&a.topic.namespace())
        .ok()
        .flatten()
        .map(|side| side.routes_of_topic(view.name()))
        .unwrap_or_default();
    let publishers: Vec<Value> = snap
        .publishers
        .iter()
        .map(|p| {
            json!({
                "place": p.place, "pid": p.pid, "process": process_name(p.pid),
                "alive": process_alive(p.pid), "sent": p.sent, "bytes_sent": p.bytes_sent,
                "rejected": p.rejected, "timed_out": p.timed_out,
                "loan_failures": p.loan_failures, "undelivered": p.undelivered,
                "sequence": p.head,
            })
        })
        .collect();
    let subscribers: Vec<Value> = snap
        .subscribers
        .iter()
        .map(|s| {
            json!({
                "place": s.place, "pid": s.pid, "process": process_name(s.pid),
                "alive": process_alive(s.pid), "observer": s.observer,
                "received": s.received, "overrun": s.overrun, "skipped": s.skipped,
                "malformed": s.malformed, "backlog": s.backlog,
                "latency": latency_json(&s.latency),
            })
        })
        .collect();
    if out.is_json() {
        out.json_line(&json!({
            "name": view.name(),
            "type": view.schema().map(|s| s.name),
            "schema": view.schema_text(),
            "description": match &desc {
                Ok(d) => serde_json::to_value(d)?,
                Err(e) => json!({ "error": e.to_string() }),
            },
            "qos": qos_json(&q),
            "durability": durability_json(view.durability()),
            "publishers": publishers,
            "subscribers": subscribers,
            "bridge": bridge,
            "ros2": ros2,
        }));
        return Ok(ExitCode::SUCCESS);
    }
    let (np, ns, no) = endpoint_counts(&snap);
    println!("topic    {}", view.name());
    println!("type     {}", view.schema_text());
    println!(
        "qos      depth {}, {}, {} B inline, {} chunks of {} B per publisher, places {} pub / {} sub",
        q.depth,
        overflow_text(q.overflow),
        q.inline_bytes,
        q.chunks_per_publisher,
        q.chunk_bytes,
        q.max_publishers,
        q.max_subscribers
    );
    println!("durability {}", view.durability());
    println!("endpoints {np} publisher(s), {ns} subscriber(s), {no} observer(s)");
    match &desc {
        Ok(d) => {
            println!("fields");
            print_fields(d, &d.root().name, 1, 0);
        }
        Err(e) => println!("fields   unavailable: {e}"),
    }
    if let Some(b) = &bridge {
        super::bridged::print(b);
    }
    for r in &ros2 {
        crate::verbs::ros2_side::print_route(r);
    }
    if !snap.publishers.is_empty() {
        let mut t = Table::new(&[
            "publisher",
            ">pid",
            "process",
            ">sent",
            ">bytes",
            ">rejected",
            ">timed out",
            ">undelivered",
            ">seq",
        ]);
        for p in &snap.publishers {
            t.row(vec![
                format!("#{}", p.place),
                p.pid.to_string(),
                proc_text(p.pid),
                p.sent.to_string(),
                p.bytes_sent.to_string(),
                p.rejected.to_string(),
                p.timed_out.to_string(),
                p.undelivered.to_string(),
                p.head.to_string(),
            ]);
        }
        print!("\n{}", t.render());
    }
    if !snap.subscribers.is_empty() {
        let mut t = Table::new(&[
            "subscriber",
            ">pid",
            "process",
            "role",
            ">received",
            ">overrun",
            ">skipped",
            ">malformed",
            ">backlog",
            ">latency p50/p99/max µs (n)",
        ]);
        for s in &snap.subscribers {
            t.row(vec![
                format!("#{}", s.place),
                s.pid.to_string(),
                proc_text(s.pid),
                if s.observer { "observer" } else { "subscriber" }.into(),
                s.received.to_string(),
                s.overrun.to_string(),
                s.skipped.to_string(),
                s.malformed.to_string(),
                s.backlog.to_string(),
                latency_text(&s.latency),
            ]);
        }
        print!("\n{}", t.render());
    }
    Ok(ExitCode::SUCCESS)
}

/// A subscriber's own delivery-latency histogram (publish stamp to receive, for a type that
/// carries a stamp): `count` measured, percentiles and maximum in ns (`null` while none),
/// stamps that were not publish times.
fn latency_json(h: &horus::LatencySnapshot) -> Value {
    json!({
        "count": h.count,
        "p50_ns": h.quantile_ns(0.5),
        "p99_ns": h.quantile_ns(0.99),
        "max_ns": (h.total() > 0).then_some(h.max_ns),
        "mean_ns": (h.count > 0).then(|| h.sum_ns / h.count),
        "implausible_stamps": h.implausible,
    })
}

/// `p50/p99/max (n)` in µs, `-` while none was measured.
fn latency_text(h: &horus::LatencySnapshot) -> String {
    let us = |ns: u64| {
        let v = ns as f64 / 1e3;
        if v < 100.0 {
            format!("{v:.1}")
        } else {
            format!("{v:.0}")
        }
    };
    match (h.quantile_ns(0.5), h.quantile_ns(0.99)) {
        (Some(p50), Some(p99)) => {
            format!("{}/{}/{} ({})", us(p50), us(p99), us(h.max_ns), h.count)
        }
        _ => "-".into(),
    }
}

/// `{"kind": "volatile"}` or `{"kind": "transient_local", "depth": N}` (N: messages each
/// publisher keeps for late joiners).
fn durability_json(d: horus::Durability) -> Value {
    match d {
        horus::Durability::Volatile => json!({ "kind": "volatile" }),
        horus::Durability::TransientLocal { depth } => {
            json!({ "kind": "transient_local", "depth": depth })
        }
    }
}

fn proc_text(pid: u32) -> String {
    let name = process_name(pid).unwrap_or_else(|| "?".into());
    if super::process_alive(pid) {
        name
    } else {
        format!("{name} (dead)")
    }
}

/// Prints the fields of `ty`, nested types indented (bounded: descriptions are validated).
fn print_fields(d: &MessageDescription, ty: &str, indent: usize, depth: usize) {
    let Some(t) = d.get(ty) else { return };
    for f in &t.fields {
        println!(
            "{}{:<24} {:<16} @{} ({} B)",
            "  ".repeat(indent),
            f.name,
            f.ty,
            f.offset,
            f.size
        );
        if let FieldKind::Message(inner) = &f.kind {
            if depth < 8 {
                print_fields(d, inner, indent + 1, depth + 1);
            }
        }
    }
    if t.has_tail && depth == 0 {
        println!("{}(variable-size tail)", "  ".repeat(indent));
    }
}
