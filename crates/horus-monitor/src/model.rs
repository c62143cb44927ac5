//! What one refresh of the monitor shows: every topic and every node, as plain data that the
//! terminal views draw and `--once --json` prints.

use horus::msgs::{FieldKind, MessageDescription};
use horus::sched::{NodeStats, STATS_WINDOW};
use serde::Serialize;
use serde_json::{json, Value};

use crate::delivered::DeliveredRow;
use crate::logs::LogLines;
use crate::schedulers::{node_json, SchedulerTable};
use crate::tf::TfFrames;

/// Every topic and node of a namespace at one moment.
pub struct Snapshot {
    /// The namespace observed.
    pub namespace: String,
    /// Seconds the rates and latencies are measured over.
    pub window_s: f64,
    /// Every topic that could be opened, by name.
    pub topics: Vec<TopicRow>,
    /// Topics that exist but could not be opened: name and why.
    pub unreadable: Vec<(String, String)>,
    /// Every scheduler's statistics table.
    pub schedulers: Vec<SchedulerTable>,
    /// Why the schedulers' tables could not be listed, if they could not.
    pub schedulers_error: Option<String>,
    /// The frames broadcast on `tf` and `tf_static`.
    pub(crate) tf: TfFrames,
    /// The latest log lines, or why they cannot be read.
    pub(crate) logs: Result<LogLines, String>,
}

/// One topic.
#[derive(Clone, Debug, Serialize)]
pub struct TopicRow {
    /// The topic's name.
    pub name: String,
    /// Schema name (`horus/Imu`), if the header holds a horus schema.
    #[serde(rename = "type")]
    pub type_name: Option<String>,
    /// The schema for humans (name, version, size, layout hash).
    pub schema: String,
    /// The delivery settings for humans.
    pub qos: String,
    /// Messages per second over the window.
    pub rate_hz: f64,
    /// Payload bytes per second over the window.
    pub bytes_per_s: f64,
    /// One-way latency over the window, when the messages carry a publish stamp.
    pub latency: Option<LatencyRow>,
    /// Why there is no latency figure, when there is none.
    pub latency_note: Option<String>,
    /// The latency the robot's subscribers measured themselves (their histograms merged,
    /// since each joined), when the messages carry a publish stamp: what horus delivers.
    pub delivered: Option<DeliveredRow>,
    /// Losses of the robot's endpoints since they were created (the monitor's own are apart).
    pub losses: Losses,
    /// The robot's endpoints (the monitor's own observer is not among them).
    pub publishers: Vec<PublisherRow>,
    /// The robot's subscribers and the other observers.
    pub subscribers: Vec<SubscriberRow>,
    /// What the monitor's own observer read and missed.
    pub(crate) monitor: OwnCounts,
    /// The message's fields (from the topic's description), nested ones as dotted paths.
    pub(crate) fields: Vec<FieldRow>,
}

impl TopicRow {
    /// Subscribers that take part in delivery (not observers).
    pub fn subscriber_count(&self) -> usize {
        self.subscribers.iter().filter(|s| !s.observer).count()
    }

    /// Observers other than the monitor (echo, record, another monitor…).
    pub fn observer_count(&self) -> usize {
        self.subscribers.iter().filter(|s| s.observer).count()
    }

    /// The latency the topic list shows, p50 and p99 in µs: the subscribers' own
    /// ([`delivered`](Self::delivered)) when they measured any, else the monitor's
    /// ([`latency`](Self::latency), marked `true`: it includes the monitor's polling).
    pub fn shown_latency(&self) -> Option<(f64, f64, bool)> {
        match (&self.delivered, &self.latency) {
            (Some(d), _) => Some((d.p50_us, d.p99_us, false)),
            (None, Some(l)) => Some((l.p50_us, l.p99_us, true)),
            (None, None) => None,
        }
    }
}

/// One-way latency over the window, from the messages' stamps.
#[derive(Clone, Debug, Serialize)]
pub struct LatencyRow {
    /// The stamp field read (`stamp_ns`, `header.stamp_ns`).
    #[serde(rename = "stamp_field")]
    pub field: String,
    /// Messages measured.
    pub samples: usize,
    /// Median, µs.
    pub p50_us: f64,
    /// 99th percentile, µs.
    pub p99_us: f64,
    /// Largest, µs.
    pub max_us: f64,
}

/// Messages the robot's endpoints lost, by kind, summed over endpoints.
#[derive(Clone, Copy, Debug, Default, Serialize, PartialEq, Eq)]
pub struct Losses {
    /// Overwritten before a subscriber read them (`DropOldest`).
    pub overrun: u64,
    /// Handed back to a publisher: the ring was full (`Reject`).
    pub rejected: u64,
    /// Handed back after waiting for room (`Block`).
    pub timed_out: u64,
    /// Sent while no subscriber was there.
    pub undelivered: u64,
    /// Slots that failed a subscriber's validation.
    pub malformed: u64,
}

impl Losses {
    /// Every kind together.
    pub fn total(&self) -> u64 {
        self.overrun + self.rejected + self.timed_out + self.undelivered + self.malformed
    }
}

/// One publisher place.
#[derive(Clone, Debug, Serialize)]
pub struct PublisherRow {
    /// Its place in the segment.
    pub place: usize,
    /// Its process.
    pub pid: u32,
    /// The process's command name, if readable.
    pub process: Option<String>,
    /// Whether the process exists.
    pub alive: bool,
    /// Messages sent.
    pub sent: u64,
    /// Payload bytes sent.
    pub bytes_sent: u64,
    /// Messages handed back: the ring was full (`Reject`).
    pub rejected: u64,
    /// Messages handed back after waiting for room (`Block`).
    pub timed_out: u64,
    /// Messages sent while no subscriber was there.
    pub undelivered: u64,
    /// Loans refused because every chunk was in use.
    pub loan_failures: u64,
    /// Sequence number of its last committed message.
    pub sequence: u64,
}

/// One subscriber or observer place.
#[derive(Clone, Debug, Serialize)]
pub struct SubscriberRow {
    /// Its place in the segment.
    pub place: usize,
    /// Its process.
    pub pid: u32,
    /// The process's command name, if readable.
    pub process: Option<String>,
    /// Whether the process exists.
    pub alive: bool,
    /// An observer (reads without taking part in delivery) rather than a subscriber.
    pub observer: bool,
    /// Messages received.
    pub received: u64,
    /// Messages overwritten before it read them.
    pub overrun: u64,
    /// Messages passed over by `latest()`.
    pub skipped: u64,
    /// Slots that failed its validation.
    pub malformed: u64,
    /// Messages published and not yet read.
    pub backlog: u64,
    /// The delivery latency it measured itself (since it joined), if it recorded any.
    pub delivered: Option<DeliveredRow>,
}

/// The monitor's own observer on a topic.
#[derive(Clone, Copy, Debug, Default, Serialize)]
pub(crate) struct OwnCounts {
    /// Whether it is attached now.
    pub(crate) observing: bool,
    pub(crate) read: u64,
    /// Overwritten before the monitor read them (its own loss, never the robot's).
    pub(crate) missed: u64,
    pub(crate) malformed: u64,
    /// Messages whose stamp was not a plausible publish time.
    pub(crate) implausible_stamps: u64,
}

/// One field of the message.
#[derive(Clone, Debug, Serialize)]
pub(crate) struct FieldRow {
    pub(crate) path: String,
    #[serde(rename = "type")]
    pub(crate) ty: String,
    /// Byte offset and size in a fixed-layout message; none for a ROS 2 (CDR) member.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) offset: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) size: Option<usize>,
}

/// The fields of `d`'s root type, nested messages flattened as dotted paths (bounded depth:
/// descriptions are validated, and this only shows them).
pub(crate) fn field_rows(d: &MessageDescription) -> Vec<FieldRow> {
    if let Some(ty) = &d.ros2 {
        return crate::ros_type::field_rows(ty);
    }
    fn walk(
        d: &MessageDescription,
        ty: &str,
        prefix: &str,
        base: usize,
        depth: usize,
        out: &mut Vec<FieldRow>,
    ) {
        let Some(t) = d.get(ty) else { return };
        for f in &t.fields {
            let path = format!("{prefix}{}", f.name);
            out.push(FieldRow {
                path: path.clone(),
                ty: f.ty.clone(),
                offset: Some(base.saturating_add(f.offset)),
                size: Some(f.size),
            });
            if let FieldKind::Message(inner) = &f.kind {
                if depth < 8 {
                    walk(
                        d,
                        inner,
                        &format!("{path}."),
                        base.saturating_add(f.offset),
                        depth + 1,
                        out,
                    );
                }
            }
        }
    }
    let mut out = Vec::new();
    walk(d, &d.root().name, "", 0, 0, &mut out);
    if d.root().has_tail {
        out.push(FieldRow {
            path: "(tail)".into(),
            ty: "variable-size bytes".into(),
            offset: Some(d.root().size),
            size: Some(0),
        });
    }
    out
}

/// One node of one scheduler, as the views index it.
pub struct NodeRef<'a> {
    /// Its scheduler's table.
    pub table: &'a SchedulerTable,
    /// The node.
    pub node: &'a NodeStats,
}

impl NodeRef<'_> {
    /// Ticks per second over the scheduler's last statistics window.
    pub fn rate_hz(&self) -> f64 {
        self.node.window_ticks as f64 / STATS_WINDOW.as_secs_f64()
    }

    /// Whether its process runs and the node is neither failed nor shut down.
    pub fn alive(&self) -> bool {
        use horus::sched::NodeState;
        self.table.alive && !matches!(self.node.state, NodeState::Failed | NodeState::ShutDown)
    }

    /// A key that identifies the node across refreshes.
    pub(crate) fn key(&self) -> String {
        format!("{}/{}", self.table.scheduler, self.node.name)
    }
}

impl Snapshot {
    /// Every node of every scheduler, in table order.
    pub fn nodes(&self) -> Vec<NodeRef<'_>> {
        self.schedulers
            .iter()
            .flat_map(|t| t.nodes.iter().map(move |node| NodeRef { table: t, node }))
            .collect()
    }

    /// The snapshot as one JSON document (`horus monitor --once --json`).
    pub fn to_json(&self) -> Value {
        let nodes: Vec<Value> = self
            .nodes()
            .iter()
            .map(|n| {
                let mut v = node_json(n.table, n.node);
                if let Value::Object(m) = &mut v {
                    m.insert("window_rate_hz".into(), json!(n.rate_hz()));
                    m.insert("running".into(), json!(n.alive()));
                }
                v
            })
            .collect();
        let topics: Vec<Value> = self
            .topics
            .iter()
            .map(|t| serde_json::to_value(t).unwrap_or(Value::Null))
            .collect();
        json!({
            "namespace": self.namespace,
            "window_s": self.window_s,
            "poll_period_us": crate::sampler::POLL.as_micros() as u64,
            "topics": topics,
            "unreadable_topics": self
                .unreadable
                .iter()
                .map(|(n, e)| json!({ "name": n, "error": e }))
                .collect::<Vec<_>>(),
            "nodes": nodes,
            "schedulers": self.schedulers.iter().map(crate::schedulers::scheduler_json).collect::<Vec<_>>(),
            "schedulers_error": self.schedulers_error,
            "tf": self.tf.to_json(),
            "logs": match &self.logs {
                Ok(l) => json!({
                    "lines": l.lines,
                    "processes": l.processes,
                    "dropped": l.dropped,
                    "missed": l.missed,
                }),
                Err(why) => json!({ "error": why }),
            },
        })
    }
}
