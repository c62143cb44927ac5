//! [`TopicView`]: one topic's segment, opened without knowing its type.

use std::sync::Arc;

use horus_msgs::MessageDescription;
use horus_shm::{Channel, ChannelSnapshot, OpenError, SegmentError};

use super::{RawObserver, RawPublisher, RawReader};
use crate::description::{DescriptionReadError, SchemaRecord};
use crate::qos::{Durability, Overflow, StartAt};

/// Why a topic could not be looked at.
#[derive(Debug, thiserror::Error)]
pub enum InspectError {
    /// The namespace or topic name is not valid.
    #[error("invalid name: {0}")]
    Name(String),
    /// `/dev/shm` could not be listed.
    #[error("cannot list /dev/shm: {0}")]
    List(std::io::Error),
    /// No such topic in the namespace.
    #[error("no topic {topic} in namespace {namespace}")]
    NotFound {
        /// The topic.
        topic: String,
        /// The namespace searched.
        namespace: String,
    },
    /// The segment exists but could not be opened (corrupt, other layout version…).
    #[error("topic {topic}: {source}")]
    Open {
        /// The topic.
        topic: String,
        /// Why.
        source: OpenError,
    },
    /// No observer place was free, or the segment is closing.
    #[error("topic {topic}: cannot observe: {source}")]
    Join {
        /// The topic.
        topic: String,
        /// Why.
        source: horus_shm::JoinError,
    },
}

/// The names of every topic with a segment in `namespace`, sorted.
pub fn list_topics(namespace: &str) -> Result<Vec<String>, InspectError> {
    let prefix =
        horus_shm::channel_prefix(namespace).map_err(|e| InspectError::Name(e.to_string()))?;
    let mut names: Vec<String> = std::fs::read_dir("/dev/shm")
        .map_err(InspectError::List)?
        .filter_map(|e| e.ok())
        .filter_map(|e| {
            e.file_name()
                .to_str()
                .and_then(|n| n.strip_prefix(&prefix))
                // Segment names spell `/` as `~` (horus_shm::name::segment_name).
                .map(|n| n.replace('~', "/"))
        })
        .collect();
    names.sort();
    Ok(names)
}

/// A topic's delivery settings, as its segment states them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct QosInfo {
    /// Messages kept per publisher.
    pub depth: u32,
    /// What a publisher does when a subscriber lags (`None`: an unknown code).
    pub overflow: Option<Overflow>,
    /// Publisher places.
    pub max_publishers: u32,
    /// Subscriber places (observers included).
    pub max_subscribers: u32,
    /// Bytes a message may carry inline in the ring.
    pub inline_bytes: u32,
    /// Bytes per loaned chunk (0: no loans).
    pub chunk_bytes: u64,
    /// Chunks per publisher.
    pub chunks_per_publisher: u32,
}

/// One topic's segment, opened by name whatever its type.
pub struct TopicView {
    name: String,
    chan: Arc<Channel>,
}

impl TopicView {
    /// Opens the topic `topic` of `namespace`.
    pub fn open(namespace: &str, topic: &str) -> Result<TopicView, InspectError> {
        let seg = horus_shm::name::segment_name(namespace, "t", topic)
            .map_err(|e| InspectError::Name(e.to_string()))?;
        let chan = Channel::open_existing(&seg, None).map_err(|e| match e {
            OpenError::Segment(SegmentError::NotFound(_)) => InspectError::NotFound {
                topic: topic.to_owned(),
                namespace: namespace.to_owned(),
            },
            source => InspectError::Open {
                topic: topic.to_owned(),
                source,
            },
        })?;
        Ok(TopicView {
            name: topic.to_owned(),
            chan,
        })
    }

    /// A view of a channel this crate opened or created.
    pub(crate) fn from_channel(topic: &str, chan: Arc<Channel>) -> TopicView {
        TopicView {
            name: topic.to_owned(),
            chan,
        }
    }

    /// The topic's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The schema the segment's header names (`None`: not a horus schema record).
    pub fn schema(&self) -> Option<SchemaRecord> {
        crate::schema_record::decode(&self.chan.layout().config.schema)
    }

    /// The schema for humans, whatever the header holds.
    pub fn schema_text(&self) -> String {
        crate::schema_record::describe(&self.chan.layout().config.schema)
    }

    /// The message description the segment carries, validated and checked against the
    /// header's schema.
    pub fn description(&self) -> Result<MessageDescription, DescriptionReadError> {
        let schema = self
            .schema()
            .ok_or_else(|| DescriptionReadError::SchemaMismatch {
                described: "?".into(),
                schema: self.schema_text(),
            })?;
        crate::description::decode(&self.chan.description(), &schema)
    }

    /// The raw JSON description bytes (for tools that pass it on, e.g. into a recording).
    pub fn description_bytes(&self) -> Vec<u8> {
        self.chan.description()
    }

    /// The delivery settings.
    pub fn qos(&self) -> QosInfo {
        let c = self.chan.layout().config;
        QosInfo {
            depth: c.depth,
            overflow: Overflow::from_code(c.qos_policy()),
            max_publishers: c.max_publishers,
            max_subscribers: c.max_subscribers,
            inline_bytes: c.slot_payload,
            chunk_bytes: c.chunk_size,
            chunks_per_publisher: c.chunks_per_publisher,
        }
    }

    /// The durability the segment states (see [`Durability`]).
    pub fn durability(&self) -> Durability {
        Durability::from_latched(self.chan.latched())
    }

    /// Every endpoint's counters, read now.
    pub fn snapshot(&self) -> ChannelSnapshot {
        self.chan.snapshot()
    }

    /// Whether the segment was truncated under us (then open the topic again).
    pub fn is_lost(&self) -> bool {
        self.chan.is_lost()
    }

    /// Removes the topic's name if no endpoint is active, after reclaiming the places of
    /// dead processes (what a typed `Topic` does when its last endpoint is dropped): call
    /// it after dropping this process's raw endpoints, so a topic whose other users were
    /// killed is not left behind. Returns whether it unlinked.
    pub fn unlink_if_unused(&self) -> bool {
        self.chan.unlink_if_unused()
    }

    /// A publisher on the topic for messages of `message_size` bytes (the described type's
    /// size; followed by a tail of any length when the description says the type has one),
    /// following the topic's overflow policy.
    pub fn publisher(&self, message_size: usize) -> Result<RawPublisher, InspectError> {
        let overflow = self.qos().overflow.unwrap_or(Overflow::DropOldest);
        let tail = self.description().is_ok_and(|d| d.root().has_tail);
        RawPublisher::join(&self.chan, message_size, tail, overflow).map_err(|source| {
            InspectError::Join {
                topic: self.name.clone(),
                source,
            }
        })
    }

    /// An observer of the topic's messages, as bytes. `blocking` observers sleep on the
    /// topic's futex in [`RawObserver::recv_timeout`] instead of polling.
    /// On a transient-local topic it receives the latched history first (see
    /// [`observer_at`](Self::observer_at)).
    pub fn observer(&self, blocking: bool) -> Result<RawObserver, InspectError> {
        self.observer_at(blocking, StartAt::Durability)
    }

    /// An observer that starts where `start` says: [`StartAt::Oldest`] for the oldest
    /// message each ring still holds (a recorder that discovers a topic late),
    /// [`StartAt::Durability`] for the latched history of a transient-local topic,
    /// [`StartAt::Next`] for only what is published from now on.
    pub fn observer_at(&self, blocking: bool, start: StartAt) -> Result<RawObserver, InspectError> {
        RawReader::join(&self.chan, blocking, true, start).map_err(|source| InspectError::Join {
            topic: self.name.clone(),
            source,
        })
    }

    /// A subscriber of the topic's messages, as bytes: unlike an observer it is in the
    /// publishers' room check (a `Block` publisher waits for it) and counted as delivered to.
    /// For the network bridge, which stands for the subscribers of another host.
    /// On a transient-local topic it receives the latched history first.
    pub fn subscriber(&self, blocking: bool) -> Result<RawReader, InspectError> {
        self.subscriber_at(blocking, StartAt::Durability)
    }

    /// [`subscriber`](Self::subscriber), starting where `start` says (see
    /// [`observer_at`](Self::observer_at)).
    pub fn subscriber_at(&self, blocking: bool, start: StartAt) -> Result<RawReader, InspectError> {
        RawReader::join(&self.chan, blocking, false, start).map_err(|source| InspectError::Join {
            topic: self.name.clone(),
            source,
        })
    }
}
