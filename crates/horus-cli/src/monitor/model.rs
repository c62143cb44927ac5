//! What one refresh of the monitor shows: every topic and every node, as plain data that the
//! terminal views draw and `--once --json` prints.

use horus::msgs::{FieldKind, MessageDescription};
use horus::sched::{NodeStats, STATS_WINDOW};
use serde::Serialize;
use serde_json::{json, Value};

use super::logs::LogLines;
use super::tf::TfFrames;
use crate::verbs::node::{node_json, SchedulerTable};

/// Every topic and node of a namespace at one moment.
pub(crate) struct Snapshot {
    pub(crate) namespace: String,
    /// Seconds the rates and latencies are measured over.
    pub(crate) window_s: f64,
    pub(crate) topics: Vec<TopicRow>,
    /// Topics that exist but could not be opened: name and why.
    pub(crate) unreadable: Vec<(String, String)>,
    /// Every scheduler's statistics table.
    pub(crate) schedulers: Vec<SchedulerTable>,
    /// Why the schedulers' tables could not be listed, if they could not.
    pub(crate) schedulers_error: Option<String>,
    /// The frames broadcast on `tf` and `tf_static`.
    pub(crate) tf: TfFrames,
    /// The latest log lines, or why they cannot be read.
    pub(crate) logs: Result<LogLines, String>,
}

/// One topic.
#[derive(Clone, Debug, Serialize)]
pub(crate) struct TopicRow {
    pub(crate) name: String,
    /// Schema name (`horus/Imu`), if the header holds a horus schema.
    #[serde(rename = "type")]
    pub(crate) type_name: Option<String>,
    /// The schema for humans (name, version, size, layout hash).
    pub(crate) schema: String,
    /// The delivery settings for humans.
    pub(crate) qos: String,
    pub(crate) rate_hz: f64,
    pub(crate) bytes_per_s: f64,
    pub(crate) latency: Option<LatencyRow>,
    /// Why there is no latency figure, when there is none.
    pub(crate) latency_note: Option<String>,
    /// Losses of the robot's endpoints since they were created (the monitor's own are apart).
    pub(crate) losses: Losses,
    /// The robot's endpoints (the monitor's own observer is not among them).
    pub(crate) publishers: Vec<PublisherRow>,
    pub(crate) subscribers: Vec<SubscriberRow>,
    /// What the monitor's own observer read and missed.
    pub(crate) monitor: OwnCounts,
    /// The message's fields (from the topic's description), nested ones as dotted paths.
    pub(crate) fields: Vec<FieldRow>,
}

impl TopicRow {
    /// Subscribers that take part in delivery (not observers).
    pub(crate) fn subscriber_count(&self) -> usize {
        self.subscribers.iter().filter(|s| !s.observer).count()
    }

    /// Observers other than the monitor (echo, record, another monitor…).
    pub(crate) fn observer_count(&self) -> usize {
        self.subscribers.iter().filter(|s| s.observer).count()
    }
}

/// One-way latency over the window, from the messages' stamps.
#[derive(Clone, Debug, Serialize)]
pub(crate) struct LatencyRow {
    /// The stamp field read (`stamp_ns`, `header.stamp_ns`).
    #[serde(rename = "stamp_field")]
    pub(crate) field: String,
    pub(crate) samples: usize,
    pub(crate) p50_us: f64,
    pub(crate) p99_us: f64,
    pub(crate) max_us: f64,
}

/// Messages the robot's endpoints lost, by kind, summed over endpoints.
#[derive(Clone, Copy, Debug, Default, Serialize, PartialEq, Eq)]
pub(crate) struct Losses {
    /// Overwritten before a subscriber read them (`DropOldest`).
    pub(crate) overrun: u64,
    /// Handed back to a publisher: the ring was full (`Reject`).
    pub(crate) rejected: u64,
    /// Handed back after waiting for room (`Block`).
    pub(crate) timed_out: u64,
    /// Sent while no subscriber was there.
    pub(crate) undelivered: u64,
    /// Slots that failed a subscriber's validation.
    pub(crate) malformed: u64,
}

impl Losses {
    pub(crate) fn total(&self) -> u64 {
        self.overrun + self.rejected + self.timed_out + self.undelivered + self.malformed
    }
}

/// One publisher place.
#[derive(Clone, Debug, Serialize)]
pub(crate) struct PublisherRow {
    pub(crate) place: usize,
    pub(crate) pid: u32,
    pub(crate) process: Option<String>,
    pub(crate) alive: bool,
    pub(crate) sent: u64,
    pub(crate) bytes_sent: u64,
    pub(crate) rejected: u64,
    pub(crate) timed_out: u64,
    pub(crate) undelivered: u64,
    pub(crate) loan_failures: u64,
    pub(crate) sequence: u64,
}

/// One subscriber or observer place.
#[derive(Clone, Debug, Serialize)]
pub(crate) struct SubscriberRow {
    pub(crate) place: usize,
    pub(crate) pid: u32,
    pub(crate) process: Option<String>,
    pub(crate) alive: bool,
    pub(crate) observer: bool,
    pub(crate) received: u64,
    pub(crate) overrun: u64,
    pub(crate) skipped: u64,
    pub(crate) malformed: u64,
    pub(crate) backlog: u64,
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
        return super::ros_type::field_rows(ty);
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
pub(crate) struct NodeRef<'a> {
    pub(crate) table: &'a SchedulerTable,
    pub(crate) node: &'a NodeStats,
}

impl NodeRef<'_> {
    /// Ticks per second over the scheduler's last statistics window.
    pub(crate) fn rate_hz(&self) -> f64 {
        self.node.window_ticks as f64 / STATS_WINDOW.as_secs_f64()
    }

    /// Whether its process runs and the node is neither failed nor shut down.
    pub(crate) fn alive(&self) -> bool {
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
    pub(crate) fn nodes(&self) -> Vec<NodeRef<'_>> {
        self.schedulers
            .iter()
            .flat_map(|t| t.nodes.iter().map(move |node| NodeRef { table: t, node }))
            .collect()
    }

    /// The snapshot as one JSON document (`horus monitor --once --json`).
    pub(crate) fn to_json(&self) -> Value {
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
            "poll_period_us": super::sampler::POLL.as_micros() as u64,
            "topics": topics,
            "unreadable_topics": self
                .unreadable
                .iter()
                .map(|(n, e)| json!({ "name": n, "error": e }))
                .collect::<Vec<_>>(),
            "nodes": nodes,
            "schedulers": self.schedulers.iter().map(crate::verbs::node::scheduler_json).collect::<Vec<_>>(),
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
