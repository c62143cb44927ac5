//! `horus topic pub`: publish a message given as YAML or JSON.
//!
//! The topic must exist (its segment's description gives the type). The message is an object
//! of fields, in YAML or JSON — what `topic echo --json` prints; fields left out are zero.

use std::process::ExitCode;
use std::time::{Duration, Instant};

use clap::Args;
use serde_json::json;

use super::{description, TopicArg};
use crate::launch::signals;
use crate::output::Output;
use horus::inspect::encode_message;

/// Publish a message on a topic.
#[derive(Debug, Args)]
pub(crate) struct Publish {
    #[command(flatten)]
    topic: TopicArg,
    /// The message as YAML or JSON (e.g. `{linear: 0.5, angular: 0.1}`); `-` reads standard
    /// input, one message per line when there are several.
    message: String,
    /// Publish at this rate (Hz) until `--count` or Ctrl-C, instead of once.
    #[arg(long, short = 'r')]
    rate: Option<f64>,
    /// Publish this many times (default 1 without `--rate`).
    #[arg(long, short = 'n')]
    count: Option<u64>,
}

pub(super) fn run(a: Publish, out: &Output) -> anyhow::Result<ExitCode> {
    signals::install()?;
    let view = a.topic.open()?;
    let desc = description(&view)?;
    let texts: Vec<String> = if a.message == "-" {
        std::io::read_to_string(std::io::stdin())?
            .lines()
            .filter(|l| !l.trim().is_empty())
            .map(str::to_owned)
            .collect()
    } else {
        vec![a.message.clone()]
    };
    anyhow::ensure!(!texts.is_empty(), "no message given");
    let messages = texts
        .iter()
        .enumerate()
        .map(|(i, t)| {
            let v: serde_json::Value = serde_yaml::from_str(t)
                .map_err(|e| anyhow::anyhow!("message {}: not YAML/JSON: {e}", i + 1))?;
            encode_message(&desc, &v).map_err(|e| anyhow::anyhow!("message {}: {e}", i + 1))
        })
        .collect::<anyhow::Result<Vec<_>>>()?;
    let period = match a.rate {
        Some(r) if r.is_finite() && r > 0.0 => Some(Duration::from_secs_f64(1.0 / r)),
        Some(r) => anyhow::bail!("--rate must be a positive number of Hz, not {r}"),
        None => None,
    };
    let total = a.count.unwrap_or(if period.is_some() {
        u64::MAX
    } else {
        messages.len() as u64
    });
    let mut publisher = view.publisher(desc.root().size)?;
    let start = Instant::now();
    let (mut sent, mut delivered) = (0u64, 0u64);
    while sent < total && signals::count() == 0 {
        let bytes = &messages[(sent % messages.len() as u64) as usize];
        delivered += u64::from(publisher.send(bytes)?);
        sent += 1;
        if let Some(p) = period {
            let next = start + p.mul_f64(sent as f64);
            if let Some(wait) = next.checked_duration_since(Instant::now()) {
                std::thread::sleep(wait);
            }
        }
    }
    if out.is_json() {
        out.json_line(&json!({ "topic": view.name(), "sent": sent, "deliveries": delivered }));
    } else {
        println!(
            "{}: sent {sent} message(s), {delivered} deliveries",
            view.name()
        );
    }
    Ok(ExitCode::SUCCESS)
}
