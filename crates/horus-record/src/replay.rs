//! Deterministic re-execution: a recording's messages fed into a scheduler running on its
//! simulated clock, each published at the tick where the simulated time reaches its recorded
//! time (relative to the recording's first message).
//!
//! [`RecordedInputs::load`] reads the chosen topics into memory; [`RecordedInputs::into_node`]
//! makes a [`ReplayNode`] that publishes them (exact bytes, on topics created from the
//! recorded descriptions when missing; ROS-typed channels, horus's or rosbag2's, as
//! ROS-typed topics of the recorded type with the recorded wire bytes). Add it to a
//! `Scheduler::new().deterministic(true)` ahead of the nodes under test (a lower `order`, or
//! added first): on every run the nodes see the same messages at the same ticks, so nodes
//! that depend only on their inputs and the scheduler's clock produce the same outputs,
//! byte for byte.

use std::path::Path;
use std::time::Duration;

use horus::inspect::{
    open_or_create_ros_topic_durable, open_or_create_topic_durable, ros_qos, QosInfo, RawPublisher,
    RawRosPublisher, TopicView,
};
use horus::msgs::Ros2Type;
use horus::sched::{Node, NodeError, TickContext};
use horus::Durability;

use crate::meta::ChannelMeta;
use crate::reader::{ReadError, RecordingReader};

/// Why recorded inputs could not be loaded or published.
#[derive(Debug, thiserror::Error)]
pub enum ReplayError {
    /// The file could not be read.
    #[error(transparent)]
    Read(#[from] ReadError),
    /// A requested topic is not in the recording.
    #[error("{path}: no topic {topic}")]
    NoTopic {
        /// The file.
        path: String,
        /// The topic.
        topic: String,
    },
    /// The chosen topics' messages are more than the limit of [`RecordedInputs::load_bounded`]
    /// ([`MAX_LOADED_BYTES`] for [`RecordedInputs::load`]): a compressed recording can hold
    /// far more than its size.
    #[error("{path}: the messages of the chosen topics exceed {limit} bytes in memory")]
    TooLarge {
        /// The file.
        path: String,
        /// The limit.
        limit: u64,
    },
    /// A topic has no usable horus description or its messages do not decode.
    #[error("topic {topic}: {reason}")]
    Channel {
        /// The topic.
        topic: String,
        /// Why.
        reason: String,
    },
}

/// Most bytes [`RecordedInputs::load`] holds in memory (4 GiB; each message counts its bytes
/// plus 64 for its bookkeeping).
pub const MAX_LOADED_BYTES: u64 = 4 << 30;

/// What a recorded topic is published as.
#[derive(Clone, Debug)]
enum Kind {
    /// A fixed-layout topic: its description and QoS; messages are horus bytes.
    Horus(ChannelMeta),
    /// A ROS-typed topic: its type, QoS and durability; messages are wire bytes.
    Ros(Box<Ros2Type>, QosInfo, Durability),
}

/// Largest message (CDR body) of a ROS-typed topic created for a recording that states no
/// horus QoS (rosbag2's): a typed endpoint's default.
const ROSBAG_MAX_MESSAGE: usize = 1 << 20;

/// Messages of some topics of a recording, in recorded order, with their time since the
/// recording's first message.
pub struct RecordedInputs {
    topics: Vec<(String, Kind)>,
    messages: Vec<(Duration, usize, Vec<u8>)>,
}

impl RecordedInputs {
    /// Loads every message of `topics` from `path`, at most [`MAX_LOADED_BYTES`].
    pub fn load(path: &Path, topics: &[&str]) -> Result<RecordedInputs, ReplayError> {
        Self::load_bounded(path, topics, MAX_LOADED_BYTES)
    }

    /// Loads every message of `topics` from `path`, refusing to hold more than `limit` bytes
    /// ([`ReplayError::TooLarge`]).
    pub fn load_bounded(
        path: &Path,
        topics: &[&str],
        limit: u64,
    ) -> Result<RecordedInputs, ReplayError> {
        let mut held = 0u64;
        let mut r = RecordingReader::open(path)?;
        let mut out = RecordedInputs {
            topics: Vec::new(),
            messages: Vec::new(),
        };
        let mut first: Option<u64> = None;
        let mut bytes = Vec::new();
        while let Some(m) = r.next_message()? {
            let ch = r
                .channel(m.channel)
                .expect("messages only on known channels");
            // Log records (`/log`) are not inputs, and their times (when each process wrote
            // them) must not move the start.
            if ch.schema_name == crate::foxlog::SCHEMA_NAME {
                continue;
            }
            let t0 = *first.get_or_insert(m.log_time);
            if !topics.contains(&ch.topic.as_str()) {
                continue;
            }
            let bad = |reason: String| ReplayError::Channel {
                topic: ch.topic.clone(),
                reason,
            };
            let idx = match out.topics.iter().position(|(t, _)| *t == ch.topic) {
                Some(i) => i,
                None => {
                    let kind = match &ch.ros2 {
                        Some(ros) => {
                            let ros = ros.as_ref().map_err(|e| bad(e.to_string()))?;
                            let ty = ros.ros2_type().map_err(|e| bad(e.to_string()))?;
                            let qos = ros.qos.unwrap_or_else(|| ros_qos(ROSBAG_MAX_MESSAGE));
                            Kind::Ros(Box::new(ty), qos, ros.durability)
                        }
                        None => Kind::Horus(ch.meta.clone().map_err(|e| bad(e.to_string()))?),
                    };
                    out.topics.push((ch.topic.clone(), kind));
                    out.topics.len() - 1
                }
            };
            if matches!(out.topics[idx].1, Kind::Ros(..)) {
                bytes.clear();
                bytes.extend_from_slice(&m.cdr);
            } else {
                match r.horus_bytes(&m, &mut bytes) {
                    Some(Ok(())) => {}
                    Some(Err(e)) => return Err(bad(e.to_string())),
                    None => return Err(bad("no horus description".into())),
                }
            }
            held = held.saturating_add(bytes.len() as u64 + 64);
            if held > limit {
                return Err(ReplayError::TooLarge {
                    path: path.display().to_string(),
                    limit,
                });
            }
            let at = Duration::from_nanos(m.log_time.saturating_sub(t0));
            out.messages.push((at, idx, bytes.clone()));
        }
        if let Some(t) = topics
            .iter()
            .find(|t| !out.topics.iter().any(|(n, _)| n == *t))
        {
            return Err(ReplayError::NoTopic {
                path: path.display().to_string(),
                topic: (*t).to_owned(),
            });
        }
        Ok(out)
    }

    /// Every loaded message: time since the recording's start, topic, bytes.
    pub fn messages(&self) -> impl Iterator<Item = (Duration, &str, &[u8])> {
        self.messages
            .iter()
            .map(|(at, i, b)| (*at, self.topics[*i].0.as_str(), b.as_slice()))
    }

    /// A node publishing the messages on their topics in `namespace` as the scheduler's
    /// clock reaches them.
    pub fn into_node(self, namespace: &str) -> Result<ReplayNode, ReplayError> {
        let mut outlets = Vec::new();
        for (topic, kind) in &self.topics {
            let bad = |reason: String| ReplayError::Channel {
                topic: topic.clone(),
                reason,
            };
            let outlet = match kind {
                // A latched topic is created latched again (a replayed `tf_static`).
                Kind::Horus(meta) => {
                    let view = open_or_create_topic_durable(
                        namespace,
                        topic,
                        &meta.description,
                        &meta.qos,
                        meta.durability,
                    )
                    .map_err(|e| bad(e.to_string()))?;
                    let p = view
                        .publisher(meta.description.root().size)
                        .map_err(|e| bad(e.to_string()))?;
                    (view, Outlet::Horus(p))
                }
                Kind::Ros(ty, qos, durability) => {
                    let name = crate::ros2::horus_topic_name(topic);
                    let view =
                        open_or_create_ros_topic_durable(namespace, name, ty, qos, *durability)
                            .map_err(|e| bad(e.to_string()))?;
                    let p = view.ros_publisher().map_err(|e| bad(e.to_string()))?;
                    (view, Outlet::Ros(p))
                }
            };
            outlets.push(outlet);
        }
        Ok(ReplayNode {
            outlets,
            messages: self.messages,
            next: 0,
            topics: self.topics.into_iter().map(|(t, _)| t).collect(),
        })
    }
}

/// A topic's publisher.
enum Outlet {
    Horus(RawPublisher),
    Ros(RawRosPublisher),
}

/// Publishes recorded messages when the scheduler's clock reaches their recorded time.
pub struct ReplayNode {
    /// Views keep the segments open while publishing.
    outlets: Vec<(TopicView, Outlet)>,
    messages: Vec<(Duration, usize, Vec<u8>)>,
    next: usize,
    topics: Vec<String>,
}

impl ReplayNode {
    /// Whether every message has been published.
    pub fn is_done(&self) -> bool {
        self.next >= self.messages.len()
    }
}

impl Node for ReplayNode {
    fn name(&self) -> &str {
        "replay"
    }

    fn tick(&mut self, ctx: &TickContext<'_>) -> Result<(), NodeError> {
        let now = ctx.now();
        while let Some((at, i, bytes)) = self.messages.get(self.next) {
            if *at > now {
                break;
            }
            let sent = match &mut self.outlets[*i].1 {
                Outlet::Horus(p) => p.send(bytes).map(drop).map_err(|e| e.to_string()),
                Outlet::Ros(p) => p.send_cdr(bytes).map(drop).map_err(|e| e.to_string()),
            };
            sent.map_err(|e| NodeError::msg(format!("replaying {}: {e}", self.topics[*i])))?;
            self.next += 1;
        }
        Ok(())
    }
}
