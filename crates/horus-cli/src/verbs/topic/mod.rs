//! `horus topic`: list, inspect, echo, measure and publish on the topics of a namespace,
//! decoding messages from the description each topic's segment carries (no compiled types).
//!
//! `list`, `info`, `hz` and `bw` only read the segments' records; `echo` joins as an
//! observer (never in a publisher's room check, never counted by publishers). Only `pub`
//! takes a publisher place.

mod bridged;
mod echo;
mod fields;
mod info;
mod list;
mod publish;
pub(crate) mod rate;
mod ros_echo;
mod ros_json;
mod ros_publish;
mod ros_yaml;
pub(crate) mod sampler;

use std::process::ExitCode;

use clap::{Args, Subcommand};
use horus::inspect::{QosInfo, TopicView};
use horus::msgs::MessageDescription;
use horus_shm::ChannelSnapshot;
use serde_json::{json, Value};

pub(crate) use horus_monitor::text::{overflow_text, process_alive, process_name};

use crate::output::Output;

/// Topics: list, info, echo, hz, bw, pub.
#[derive(Debug, Args)]
pub(crate) struct TopicCmd {
    #[command(subcommand)]
    verb: TopicVerb,
}

#[derive(Debug, Subcommand)]
enum TopicVerb {
    /// Every topic of the namespace: type, endpoints, QoS, rate.
    List(list::List),
    /// One topic: its type and fields, QoS, and every endpoint with its counters.
    Info(info::Info),
    /// Print messages as they arrive (an observer: changes nothing for the robot).
    Echo(echo::Echo),
    /// Message rate, from the publishers' sequence counters (no payload is read).
    Hz(rate::Hz),
    /// Bandwidth, from the publishers' byte counters (no payload is read).
    Bw(rate::Bw),
    /// Publish a message given as YAML or JSON (what `echo --json` prints), once or at a rate.
    Pub(publish::Publish),
}

pub(crate) fn run(cmd: TopicCmd, out: &Output) -> anyhow::Result<ExitCode> {
    match cmd.verb {
        TopicVerb::List(a) => list::run(a, out),
        TopicVerb::Info(a) => info::run(a, out),
        TopicVerb::Echo(a) => echo::run(a, out),
        TopicVerb::Hz(a) => rate::run_hz(a, out),
        TopicVerb::Bw(a) => rate::run_bw(a, out),
        TopicVerb::Pub(a) => publish::run(a, out),
    }
}

/// The namespace and topic arguments every topic verb but `list` takes.
#[derive(Debug, Args)]
pub(super) struct TopicArg {
    /// Topic name (e.g. `robot/imu`).
    pub(super) topic: String,
    /// Namespace (default: `HORUS_NAMESPACE`, else one per user).
    #[arg(long)]
    pub(super) namespace: Option<String>,
}

impl TopicArg {
    pub(super) fn namespace(&self) -> String {
        self.namespace.clone().unwrap_or_else(horus::namespace)
    }

    pub(super) fn open(&self) -> anyhow::Result<TopicView> {
        Ok(TopicView::open(&self.namespace(), &self.topic)?)
    }
}

/// The topic's validated description, or an error saying why the topic cannot be decoded.
pub(crate) fn description(view: &TopicView) -> anyhow::Result<MessageDescription> {
    view.description().map_err(|e| {
        anyhow::anyhow!(
            "topic {} ({}) cannot be decoded: {e}",
            view.name(),
            view.schema_text()
        )
    })
}

/// Publisher, subscriber and observer counts.
pub(crate) fn endpoint_counts(s: &ChannelSnapshot) -> (usize, usize, usize) {
    let observers = s.subscribers.iter().filter(|x| x.observer).count();
    (
        s.publishers.len(),
        s.subscribers.len() - observers,
        observers,
    )
}

pub(super) fn qos_json(q: &QosInfo) -> Value {
    json!({
        "depth": q.depth,
        "overflow": overflow_text(q.overflow),
        "max_publishers": q.max_publishers,
        "max_subscribers": q.max_subscribers,
        "inline_bytes": q.inline_bytes,
        "chunk_bytes": q.chunk_bytes,
        "chunks_per_publisher": q.chunks_per_publisher,
    })
}
