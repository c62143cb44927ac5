//! `horus topic echo`: print a topic's messages as they arrive.
//!
//! An observer that polls (never registers a wake-up with the publishers, so it costs them
//! nothing) every millisecond when the topic is idle. Text output abbreviates arrays longer
//! than 8 elements unless `--full`; `--json` prints each message complete, one per line, in
//! the form `topic pub` accepts back. A ROS 2-typed topic is decoded from the definition
//! its description carries ([`super::ros_echo`]).

use std::process::ExitCode;
use std::time::{Duration, Instant};

use clap::Args;
use serde_json::{Map, Value};

use super::fields::{abbreviate, select, to_text};
use super::{description, TopicArg};
use crate::output::Output;
use horus::inspect::decode_message;
use horus_launch::signals;

/// Array elements text output shows before abbreviating.
pub(super) const KEEP: usize = 8;
/// Sleep between polls of an idle topic.
pub(super) const IDLE: Duration = Duration::from_millis(1);

/// Print messages of a topic.
#[derive(Debug, Args)]
pub(crate) struct Echo {
    #[command(flatten)]
    topic: TopicArg,
    /// Print only this field (dotted path, e.g. `pose.position.x`); repeatable.
    #[arg(long = "field", short = 'f')]
    pub(super) fields: Vec<String>,
    /// Stop after this many messages.
    #[arg(long, short = 'n')]
    pub(super) count: Option<u64>,
    /// Stop after one message (`--count 1`).
    #[arg(long, conflicts_with = "count")]
    pub(super) once: bool,
    /// Print arrays (and, for ROS 2 types, strings) whole in text output.
    #[arg(long)]
    pub(super) full: bool,
    /// Give up (exit 1) when no message arrives for this many seconds.
    #[arg(long)]
    pub(super) timeout: Option<f64>,
}

pub(super) fn run(a: Echo, out: &Output) -> anyhow::Result<ExitCode> {
    signals::install()?;
    let view = a.topic.open()?;
    let desc = description(&view)?;
    if let Some(ty) = desc.ros2 {
        return super::ros_echo::run(a, view, ty, out);
    }
    let mut obs = view.observer(false)?;
    let limit = if a.once { Some(1) } else { a.count };
    let timeout = a
        .timeout
        .map(Duration::try_from_secs_f64)
        .transpose()
        .map_err(|e| anyhow::anyhow!("--timeout: {e}"))?;
    let mut printed = 0u64;
    let mut last = Instant::now();
    let mut undecodable = 0u64;
    while signals::count() == 0 && limit.is_none_or(|n| printed < n) {
        let Some(msg) = obs.try_recv() else {
            if timeout.is_some_and(|t| last.elapsed() >= t) {
                anyhow::bail!(
                    "no message on {} within {:.3} s",
                    view.name(),
                    timeout.unwrap_or_default().as_secs_f64()
                );
            }
            if view.is_lost() {
                anyhow::bail!("the topic's segment was truncated");
            }
            std::thread::sleep(IDLE);
            continue;
        };
        last = Instant::now();
        let value = match decode_message(&desc, &msg.bytes) {
            Ok(v) => v,
            Err(e) => {
                undecodable += 1;
                eprintln!("horus: skipped a message: {e}");
                continue;
            }
        };
        let shown = if a.fields.is_empty() {
            value
        } else {
            let mut m = Map::new();
            for f in &a.fields {
                m.insert(f.clone(), select(&value, f).cloned().unwrap_or(Value::Null));
            }
            Value::Object(m)
        };
        if out.is_json() {
            out.json_line(&shown);
        } else {
            let shown = if a.full {
                shown
            } else {
                abbreviate(&shown, KEEP)
            };
            let mut text = String::new();
            to_text(&shown, 0, &mut text);
            println!("{text}---");
        }
        printed += 1;
    }
    let (received, missed, malformed) = obs.counts();
    if !out.is_json() && (missed > 0 || malformed > 0 || undecodable > 0) {
        eprintln!(
            "horus: {received} received, {missed} missed (overwritten before read), \
             {malformed} malformed, {undecodable} undecodable"
        );
    }
    Ok(ExitCode::SUCCESS)
}
