//! `horus topic list`: every topic of the namespace with its type, endpoints, QoS and rate.

use std::process::ExitCode;
use std::time::{Duration, Instant};

use clap::Args;
use horus::inspect::{list_topics, TopicView};
use serde_json::{json, Value};

use super::sampler::Sampler;
use super::{endpoint_counts, overflow_text, qos_json};
use crate::output::Output;
use crate::table::Table;
use crate::verbs::ros2_side::{self, Kind};

/// List every topic of the namespace, then the ROS 2 side's when a ROS 2 bridge
/// (`horus ros2`) runs for it (marked `ros2`, with their ROS 2 types).
#[derive(Debug, Args)]
pub(crate) struct List {
    /// Namespace (default: `HORUS_NAMESPACE`, else one per user).
    #[arg(long)]
    namespace: Option<String>,
    /// Seconds over which each topic's rate is measured (0: do not measure).
    #[arg(long, default_value_t = 0.5)]
    window: f64,
}

struct Row {
    name: String,
    view: Result<TopicView, String>,
}

pub(super) fn run(args: List, out: &Output) -> anyhow::Result<ExitCode> {
    let ns = args.namespace.unwrap_or_else(horus::namespace);
    let rows: Vec<Row> = list_topics(&ns)?
        .into_iter()
        .map(|name| Row {
            view: TopicView::open(&ns, &name).map_err(|e| e.to_string()),
            name,
        })
        .collect();
    let rates = measure_rates(&rows, args.window);
    let json_rows: Vec<Value> = rows
        .iter()
        .zip(&rates)
        .map(|(r, rate)| match &r.view {
            Ok(v) => {
                let s = v.snapshot();
                let (p, sub, obs) = endpoint_counts(&s);
                json!({
                    "name": r.name,
                    "type": v.schema().map(|s| s.name),
                    "schema": v.schema_text(),
                    "publishers": p,
                    "subscribers": sub,
                    "observers": obs,
                    "qos": qos_json(&v.qos()),
                    "rate_hz": rate,
                })
            }
            Err(e) => json!({ "name": r.name, "error": e }),
        })
        .collect();
    let ros2 = ros2_side::read(&ns);
    if out.is_json() {
        let (ros2, ros2_error) = ros2_side::json_members(&ros2, Kind::Topics);
        out.json_line(&json!({
            "namespace": ns, "topics": json_rows, "ros2": ros2, "ros2_error": ros2_error,
        }));
        return Ok(ExitCode::SUCCESS);
    }
    let mut t = Table::new(&["topic", "type", ">pub", ">sub", ">obs", "qos", ">rate (Hz)"]);
    for (r, rate) in rows.iter().zip(&rates) {
        match &r.view {
            Ok(v) => {
                let s = v.snapshot();
                let (p, sub, obs) = endpoint_counts(&s);
                let q = v.qos();
                t.row(vec![
                    r.name.clone(),
                    v.schema().map_or_else(|| v.schema_text(), |s| s.name),
                    p.to_string(),
                    sub.to_string(),
                    obs.to_string(),
                    format!("depth {} {}", q.depth, overflow_text(q.overflow)),
                    rate.map_or("-".into(), |r| format!("{r:.1}")),
                ]);
            }
            Err(e) => t.row(vec![r.name.clone(), format!("unreadable: {e}")]),
        }
    }
    if t.is_empty() {
        println!("no topics in namespace {ns}");
    } else {
        print!("{}", t.render());
    }
    ros2_side::print_listing(&ros2, Kind::Topics);
    Ok(ExitCode::SUCCESS)
}

/// Messages per second of each topic over `window` seconds, all measured at once.
fn measure_rates(rows: &[Row], window: f64) -> Vec<Option<f64>> {
    if !(window.is_finite() && window > 0.0) {
        return vec![None; rows.len()];
    }
    let start = Instant::now();
    let mut samplers: Vec<Option<Sampler>> = rows
        .iter()
        .map(|r| r.view.as_ref().ok().map(Sampler::new))
        .collect();
    std::thread::sleep(Duration::from_secs_f64(window));
    let elapsed = start.elapsed().as_secs_f64();
    samplers
        .iter_mut()
        .map(|s| {
            let s = s.as_mut()?;
            let m = s.poll(Instant::now()).map_or(0, |m| m.messages);
            Some(m as f64 / elapsed)
        })
        .collect()
}
