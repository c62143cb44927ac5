//! `horus topic pub`: publish a message given as YAML or JSON.
//!
//! The topic must exist (its segment's description gives the type), unless a ROS 2 type is
//! given (`horus topic pub TOPIC sensor_msgs/msg/Imu '{...}'`: created when missing, see
//! [`super::ros_publish`]). The message is an object of fields, in YAML or JSON — what
//! `topic echo --json` prints; fields left out are zero (ROS 2 types: their defaults).

use std::process::ExitCode;
use std::time::{Duration, Instant};

use clap::Args;
use serde_json::json;

use super::ros_publish::RosTarget;
use super::{description, TopicArg};
use crate::output::Output;
use crate::verbs::msg::PackageDirs;
use horus::inspect::{encode_message, TopicView};
use horus_launch::signals;

/// Publish a message on a topic.
#[derive(Debug, Args)]
pub(crate) struct Publish {
    #[command(flatten)]
    topic: TopicArg,
    /// `[TYPE] MESSAGE`: an optional ROS 2 message type (`sensor_msgs/msg/Imu` or
    /// `sensor_msgs/Imu`; the topic is created if missing), then the message as YAML or
    /// JSON (e.g. `{linear: 0.5, angular: 0.1}`); `-` reads standard input, one message per
    /// line when there are several.
    #[arg(num_args = 1..=2, value_names = ["TYPE", "MESSAGE"], required = true)]
    args: Vec<String>,
    /// Publish at this rate (Hz) until `--count` or Ctrl-C, instead of once.
    #[arg(long, short = 'r')]
    rate: Option<f64>,
    /// Publish this many times (default 1 without `--rate`).
    #[arg(long, short = 'n')]
    count: Option<u64>,
    #[command(flatten)]
    packages: PackageDirs,
}

pub(super) fn run(a: Publish, out: &Output) -> anyhow::Result<ExitCode> {
    signals::install()?;
    let (type_arg, message) = match &a.args[..] {
        [m] => (None, m.as_str()),
        [t, m] => (Some(t.as_str()), m.as_str()),
        _ => anyhow::bail!("expected [TYPE] MESSAGE"),
    };
    let texts: Vec<String> = if message == "-" {
        std::io::read_to_string(std::io::stdin())?
            .lines()
            .filter(|l| !l.trim().is_empty())
            .map(str::to_owned)
            .collect()
    } else {
        vec![message.to_owned()]
    };
    anyhow::ensure!(!texts.is_empty(), "no message given");
    let values = texts
        .iter()
        .enumerate()
        .map(|(i, t)| {
            serde_yaml::from_str::<serde_json::Value>(t)
                .map_err(|e| anyhow::anyhow!("message {}: not YAML/JSON: {e}", i + 1))
        })
        .collect::<anyhow::Result<Vec<_>>>()?;
    let existing = if type_arg.is_some() {
        None
    } else {
        Some(a.topic.open()?)
    };
    let is_ros = existing
        .as_ref()
        .is_some_and(|v| v.description().is_ok_and(|d| d.ros2.is_some()));
    if type_arg.is_some() || is_ros {
        let target = RosTarget::open(&a.topic, type_arg, &a.packages, existing)?;
        let messages = values
            .iter()
            .enumerate()
            .map(|(i, v)| {
                target
                    .encode(v)
                    .map_err(|e| anyhow::anyhow!("message {} ({}): {e}", i + 1, target.type_name()))
            })
            .collect::<anyhow::Result<Vec<_>>>()?;
        let mut publisher = target.view.ros_publisher()?;
        return send_all(&a, &target.view, &messages, out, |b| {
            Ok(publisher.send_cdr(b)?)
        });
    }
    let view = existing.expect("opened without a type");
    let desc = description(&view)?;
    let messages = values
        .iter()
        .enumerate()
        .map(|(i, v)| {
            encode_message(&desc, v).map_err(|e| anyhow::anyhow!("message {}: {e}", i + 1))
        })
        .collect::<anyhow::Result<Vec<_>>>()?;
    let mut publisher = view.publisher(desc.root().size)?;
    send_all(&a, &view, &messages, out, |b| Ok(publisher.send(b)?))
}

/// Sends `messages` in turn, once each or `--count` times in all, at `--rate`; prints
/// what was sent and delivered.
fn send_all(
    a: &Publish,
    view: &TopicView,
    messages: &[Vec<u8>],
    out: &Output,
    mut send: impl FnMut(&[u8]) -> anyhow::Result<u32>,
) -> anyhow::Result<ExitCode> {
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
    let start = Instant::now();
    let (mut sent, mut delivered) = (0u64, 0u64);
    while sent < total && signals::count() == 0 {
        let bytes = &messages[(sent % messages.len() as u64) as usize];
        delivered += u64::from(send(bytes)?);
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
