//! `horus ros2`: this host's bridge to ROS 2 (library: `horus-ros2`). One per host and
//! namespace; ROS 2-typed topics cross between horus shared memory and DDS. Runs until
//! Ctrl-C or SIGTERM, printing what starts and stops crossing and what is refused;
//! `--status` prints a running bridge's status instead.
//!
//! Built only with the `ros2` feature (on by default; `make demo` leaves it out).

use std::collections::BTreeMap;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use anyhow::Context as _;
use clap::Args;
use serde_json::json;

use super::bridge_status;
use crate::output::Output;
use horus_launch::signals;
use horus_ros2::{BridgeStatus, Direction, Filter, TopicStatus};

/// Bridge this host's ROS 2-typed topics to ROS 2 nodes (DDS).
#[derive(Debug, Args)]
pub(crate) struct Ros2Args {
    /// The ROS 2 domain (default: `ROS_DOMAIN_ID`, else 0).
    #[arg(long)]
    domain: Option<String>,
    /// Only these horus topics go to ROS 2 (patterns over horus names: `*` one part, `**` any;
    /// repeatable).
    #[arg(long, value_name = "PAT")]
    allow_to_ros: Vec<String>,
    /// These horus topics never go to ROS 2.
    #[arg(long, value_name = "PAT")]
    deny_to_ros: Vec<String>,
    /// Only these ROS 2 topics come into horus (patterns over the horus name: `/demo/scan`
    /// is `demo/scan`).
    #[arg(long, value_name = "PAT")]
    allow_from_ros: Vec<String>,
    /// These ROS 2 topics never come into horus.
    #[arg(long, value_name = "PAT")]
    deny_from_ros: Vec<String>,
    /// DDS on this host only (loopback), as `ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST`, which
    /// also turns it on.
    #[arg(long)]
    localhost_only: bool,
    /// Namespace (default: `HORUS_NAMESPACE`, else one per user).
    #[arg(long)]
    namespace: Option<String>,
    /// Stop after this many seconds.
    #[arg(long)]
    duration: Option<f64>,
    /// Print the status of the namespace's running ROS 2 bridge and exit.
    #[arg(long, alias = "stats")]
    status: bool,
}

pub(crate) fn run(a: Ros2Args, out: &Output) -> anyhow::Result<ExitCode> {
    let namespace = a.namespace.clone().unwrap_or_else(horus::namespace);
    if a.status {
        return status(&namespace, out);
    }
    signals::install()?;
    let mut cfg = horus_ros2::BridgeConfig::from_env(&namespace)?;
    if let Some(d) = &a.domain {
        cfg.domain_id = horus_ros2::parse_domain_id(d)?;
    }
    cfg.to_ros = Filter::new(&a.allow_to_ros, &a.deny_to_ros)?;
    cfg.from_ros = Filter::new(&a.allow_from_ros, &a.deny_from_ros)?;
    cfg.localhost_only |= a.localhost_only;
    let mut bridge = horus_ros2::Bridge::start(cfg.clone()).context("horus ros2")?;
    if out.is_json() {
        out.json_line(&json!({
            "event": "started", "namespace": cfg.namespace, "domain_id": cfg.domain_id,
            "localhost_only": cfg.localhost_only, "pid": std::process::id(),
        }));
    } else {
        println!(
            "ros2: namespace \"{}\" ROS 2 domain {}{}",
            cfg.namespace,
            cfg.domain_id,
            if cfg.localhost_only {
                ", localhost only"
            } else {
                ""
            }
        );
    }
    let started = Instant::now();
    let duration = a.duration.map(Duration::from_secs_f64);
    let mut seen = Seen::default();
    let mut last = None;
    bridge.run(|st| {
        seen.report(st, out);
        last = Some(st.clone());
        signals::count() == 0 && duration.is_none_or(|d| started.elapsed() < d)
    });
    let last = last.unwrap_or_else(|| bridge.status());
    if out.is_json() {
        out.json_line(&json!({ "event": "stopped", "status": last }));
    } else {
        println!("ros2: stopped");
        print_status(&last);
    }
    Ok(ExitCode::SUCCESS)
}

/// What was already reported, to print changes only.
#[derive(Default)]
struct Seen {
    topics: BTreeMap<(String, Direction), (bool, Option<String>)>,
}

impl Seen {
    fn report(&mut self, st: &BridgeStatus, out: &Output) {
        for t in &st.topics {
            let now = (t.active, t.refused.clone());
            let key = (t.horus_topic.clone(), t.direction);
            if self.topics.get(&key) == Some(&now) {
                continue;
            }
            self.topics.insert(key, now);
            if out.is_json() {
                out.json_line(&json!({
                    "event": "topic", "horus_topic": t.horus_topic, "ros_topic": t.ros_topic,
                    "direction": t.direction, "type": t.type_name, "active": t.active,
                    "refused": t.refused,
                }));
            } else {
                let arrow = arrow(t.direction);
                match (&t.refused, t.active) {
                    (Some(why), _) => println!(
                        "ros2: {} {arrow} {}: REFUSED: {why}",
                        t.horus_topic, t.ros_topic
                    ),
                    (None, true) => println!(
                        "ros2: {} {arrow} {} ({}) crossing",
                        t.horus_topic, t.ros_topic, t.type_name
                    ),
                    (None, false) => {
                        println!("ros2: {} {arrow} {} stopped", t.horus_topic, t.ros_topic)
                    }
                }
            }
        }
    }
}

fn arrow(d: Direction) -> &'static str {
    match d {
        Direction::ToRos => "->",
        Direction::FromRos => "<-",
    }
}

fn status(namespace: &str, out: &Output) -> anyhow::Result<ExitCode> {
    let no_bridge = format!("no ROS 2 bridge running in namespace \"{namespace}\"");
    let found = horus_ros2::read_status_file(namespace)?;
    Ok(bridge_status::report(
        found,
        namespace,
        &no_bridge,
        out,
        print_status,
    ))
}

fn print_status(s: &BridgeStatus) {
    println!(
        "ROS 2 bridge pid {} namespace \"{}\" domain {}",
        s.pid, s.namespace, s.domain_id
    );
    if s.topics.is_empty() {
        println!("  no topic crosses");
    }
    for t in &s.topics {
        print_topic(t);
    }
    let f = &s.dds_fragments_refused;
    if f.any() {
        println!(
            "  DDS fragments refused: oversize {}, over budget {}, over process budget {}, unmatched writer {}, too many fragments {}, malformed {}; samples given up: expired {}, evicted {}",
            f.oversize, f.over_budget, f.over_process_budget, f.unmatched_writer, f.too_many_fragments, f.malformed, f.expired, f.evicted
        );
    }
    let d = &s.dds_discovery_refused;
    if d.any() {
        println!(
            "  DDS discovery refused: participants {}, participants given up {}, leases clamped {}, endpoints {}, endpoints forgotten {}, topic records {}, USER_DATA too long {}, USER_DATA malformed {}",
            d.participants_refused, d.participants_evicted, d.leases_clamped, d.endpoints_refused, d.endpoints_forgotten, d.topics_refused, d.user_data_too_long, d.user_data_malformed
        );
    }
    if s.dds_held_back > 0 {
        // Back-pressure, not a loss: each was requested again once it fitted.
        println!(
            "  DDS samples held back (ack window of routes into Block topics; requested again, not lost): {}",
            s.dds_held_back
        );
    }
}

fn print_topic(t: &TopicStatus) {
    let c = &t.counters;
    println!(
        "  {} {} {} [{}] {}: {} msgs, {} bytes, lost {}, replayed {}, refused {}, malformed {}, oversize {}, type mismatches {}",
        t.horus_topic,
        arrow(t.direction),
        t.ros_topic,
        t.type_name,
        if t.active { "active" } else { "idle" },
        c.messages,
        c.bytes,
        c.lost,
        c.replayed,
        c.refused,
        c.malformed,
        c.oversize,
        t.refusals
    );
    if c.held_back > 0 {
        // Back-pressure, not a loss: each was requested again once it fitted.
        println!(
            "    DDS samples held back (ack window; requested again, not lost): {}",
            c.held_back
        );
    }
    if let Some(why) = &t.refused {
        println!("    refused: {why}");
    }
}
