//! `horus service list`: one line per service, with its types, endpoints and counters.

use std::process::ExitCode;

use clap::Args;
use horus::{ClientStats, EndpointSnapshot, ServerStats, ServiceListing};
use serde_json::{json, Value};

use crate::output::Output;
use crate::table::Table;
use crate::verbs::ros2_side::{self, Kind};

/// List every service of the namespace, then the ROS 2 side's when a ROS 2 bridge
/// (`horus ros2`) runs for it (marked `ros2`, with their ROS 2 types).
#[derive(Debug, Args)]
pub(crate) struct List {
    /// Namespace (default: `HORUS_NAMESPACE`, else one per user).
    #[arg(long)]
    namespace: Option<String>,
}

pub(super) fn run(args: List, out: &Output) -> anyhow::Result<ExitCode> {
    let ns = args.namespace.unwrap_or_else(horus::namespace);
    let services = horus::list_services(&ns)?;
    let ros2 = ros2_side::read(&ns);
    if out.is_json() {
        let list: Vec<Value> = services.iter().map(listing_json).collect();
        let (ros2, ros2_error) = ros2_side::json_members(&ros2, Kind::Services);
        out.json_line(&json!({
            "namespace": ns, "services": list, "ros2": ros2, "ros2_error": ros2_error,
        }));
        return Ok(ExitCode::SUCCESS);
    }
    if services.is_empty() {
        println!("no services in namespace {ns}");
    } else {
        print_horus(&services);
    }
    ros2_side::print_listing(&ros2, Kind::Services);
    Ok(ExitCode::SUCCESS)
}

/// The horus services as a table, then the unreadable ones.
fn print_horus(services: &[ServiceListing]) {
    let mut t = Table::new(&[
        "service",
        "request",
        "response",
        ">servers",
        ">clients",
        ">calls",
        ">responses",
        ">failed",
        ">received",
        ">replied",
    ]);
    let mut unreadable = Vec::new();
    for l in services {
        let s = match &l.snapshot {
            Ok(s) => s,
            Err(e) => {
                unreadable.push(format!("{}: unreadable: {e}", l.path.display()));
                continue;
            }
        };
        let stats = s.stats();
        let (c, v) = (stats.clients_total(), stats.servers_total());
        t.row(vec![
            l.name.clone(),
            s.request_type.clone(),
            s.response_type.clone(),
            count_text(&s.servers),
            count_text(&s.clients),
            c.calls.to_string(),
            c.responses.to_string(),
            failed(&c).to_string(),
            v.received.to_string(),
            v.replied.to_string(),
        ]);
    }
    t.print();
    for line in unreadable {
        println!("{line}");
    }
}

/// `2`, or `2 (1 dead)` when some endpoints' processes are gone.
fn count_text<S>(v: &[EndpointSnapshot<S>]) -> String {
    let dead = v.iter().filter(|e| !e.alive).count();
    if dead == 0 {
        v.len().to_string()
    } else {
        format!("{} ({dead} dead)", v.len())
    }
}

/// Calls that ended in something other than a response.
fn failed(c: &ClientStats) -> u64 {
    c.no_server + c.server_died + c.busy + c.timed_out + c.unanswered + c.failed
}

fn client_json(c: &ClientStats) -> Value {
    json!({
        "calls": c.calls,
        "responses": c.responses,
        "no_server": c.no_server,
        "server_died": c.server_died,
        "busy": c.busy,
        "timed_out": c.timed_out,
        "cancelled": c.cancelled,
        "late": c.late,
        "unanswered": c.unanswered,
        "failed": c.failed,
        "malformed": c.malformed,
    })
}

fn server_json(s: &ServerStats) -> Value {
    json!({
        "received": s.received,
        "replied": s.replied,
        "unanswered": s.unanswered,
        "client_gone": s.client_gone,
        "malformed": s.malformed,
        "reply_failed": s.reply_failed,
    })
}

fn endpoint_json<S>(e: &EndpointSnapshot<S>, stats: impl Fn(&S) -> Value) -> Value {
    json!({ "place": e.place, "pid": e.pid, "alive": e.alive, "stats": stats(&e.stats) })
}

fn listing_json(l: &ServiceListing) -> Value {
    match &l.snapshot {
        Err(e) => json!({
            "name": l.name,
            "path": l.path.display().to_string(),
            "error": e.to_string(),
        }),
        Ok(s) => json!({
            "name": l.name,
            "path": l.path.display().to_string(),
            "request_type": s.request_type,
            "response_type": s.response_type,
            "request_schema": s.request_schema,
            "response_schema": s.response_schema,
            "depth": s.depth,
            "max_clients": s.max_clients,
            "max_servers": s.max_servers,
            "servers": s.servers.iter().map(|e| endpoint_json(e, server_json)).collect::<Vec<_>>(),
            "clients": s.clients.iter().map(|e| endpoint_json(e, client_json)).collect::<Vec<_>>(),
            "totals": {
                "clients": client_json(&s.stats().clients_total()),
                "servers": server_json(&s.stats().servers_total()),
            },
        }),
    }
}
