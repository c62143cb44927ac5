//! ROS 2-typed topics whose type is known only at run time (Python, recorders, bridges,
//! `horus topic echo`): opened from a [`Ros2Type`] (type name, RIHS01 hash, `ros2msg`
//! definition) or from a topic's own description, carrying the ROS 2 wire bytes.
//!
//! The bytes are those of a typed `Topic<Ros<M>>` ([`crate::ros`]): every message is one
//! chunk `[0 0 0 0][00 01 00 00][CDR body…]`, the body 8-byte aligned, so typed and
//! run-time endpoints meet on the same topic.

use horus_cdr::{CdrReader, DecodeError};
use horus_msgs::{MessageDescription, Ros2Type};

use super::{
    open_or_create_topic, CreateError, InspectError, QosInfo, RawPublisher, RawReader, RawSample,
    RawSendError, TopicView,
};
use crate::description::DescriptionReadError;
use crate::qos::Overflow;

/// Bytes before the CDR body in a chunk: 4 reserved, 4 of encapsulation header.
const FRAME: usize = 8;

/// The delivery settings a typed `Topic::<Ros<M>>::open` creates with a largest body of
/// `max_tail_bytes` (its default is 1 MiB): a topic created with these meets typed
/// endpoints opened with default settings.
pub fn ros_qos(max_tail_bytes: usize) -> QosInfo {
    let depth = crate::topic::DEFAULT_TAIL_DEPTH;
    QosInfo {
        depth,
        overflow: Some(Overflow::DropOldest),
        max_publishers: crate::topic::DEFAULT_MAX_PUBLISHERS,
        max_subscribers: crate::topic::DEFAULT_MAX_SUBSCRIBERS,
        inline_bytes: crate::topic::TAIL_SLOT_PAYLOAD,
        chunk_bytes: (FRAME + max_tail_bytes) as u64,
        chunks_per_publisher: 2 * depth + 4,
    }
}

/// Opens `topic` of `namespace` as a topic of the ROS 2 type `ty`, creating it with `qos`
/// (see [`ros_qos`]) when it does not exist. An existing topic must carry exactly that type
/// (name and hash), else [`CreateError::Open`] with the schema mismatch; `ty` is checked
/// first ([`CreateError::Description`]).
pub fn open_or_create_ros_topic(
    namespace: &str,
    topic: &str,
    ty: &Ros2Type,
    qos: &QosInfo,
) -> Result<TopicView, CreateError> {
    let d = MessageDescription::ros2(ty.clone()).map_err(|source| CreateError::Description {
        topic: topic.to_owned(),
        source,
    })?;
    open_or_create_topic(namespace, topic, &d, qos)
}

/// [`open_or_create_ros_topic`], creating the topic with `durability` (see
/// [`open_or_create_topic_durable`](super::open_or_create_topic_durable)); an existing
/// topic keeps its own (compare [`TopicView::durability`]).
pub fn open_or_create_ros_topic_durable(
    namespace: &str,
    topic: &str,
    ty: &Ros2Type,
    qos: &QosInfo,
    durability: crate::Durability,
) -> Result<TopicView, CreateError> {
    let d = MessageDescription::ros2(ty.clone()).map_err(|source| CreateError::Description {
        topic: topic.to_owned(),
        source,
    })?;
    super::open_or_create_topic_durable(namespace, topic, &d, qos, durability)
}

/// Why a topic could not be used as a ROS 2-typed one.
#[derive(Debug, thiserror::Error)]
pub enum RosTopicError {
    /// The topic's description is missing, unreadable or inconsistent.
    #[error("topic {topic}: {source}")]
    Description {
        /// The topic.
        topic: String,
        /// Why.
        source: DescriptionReadError,
    },
    /// The topic carries a fixed-layout horus type, not a ROS 2 one.
    #[error("topic {topic} carries {schema}, not a ROS 2 type")]
    NotRos {
        /// The topic.
        topic: String,
        /// Its schema.
        schema: String,
    },
    /// No place to join (see [`InspectError`]).
    #[error(transparent)]
    Join(#[from] InspectError),
}

impl TopicView {
    /// The ROS 2 type the topic carries (from its description, validated).
    pub fn ros2(&self) -> Result<Ros2Type, RosTopicError> {
        let d = self
            .description()
            .map_err(|source| RosTopicError::Description {
                topic: self.name().to_owned(),
                source,
            })?;
        d.ros2.ok_or_else(|| RosTopicError::NotRos {
            topic: self.name().to_owned(),
            schema: self.schema_text(),
        })
    }

    /// A publisher of ROS 2 wire bytes on this ROS 2-typed topic.
    pub fn ros_publisher(&self) -> Result<RawRosPublisher, RosTopicError> {
        self.ros2()?;
        Ok(RawRosPublisher {
            raw: self.publisher(FRAME)?,
        })
    }

    /// An observer of this ROS 2-typed topic (see [`TopicView::observer`]).
    pub fn ros_observer(&self, blocking: bool) -> Result<RawRosReader, RosTopicError> {
        self.ros2()?;
        Ok(RawRosReader {
            raw: self.observer(blocking)?,
        })
    }

    /// A subscriber (or, with `observer`, an observer) of this ROS 2-typed topic starting
    /// where `start` says (see [`TopicView::observer_at`]).
    pub fn ros_reader_at(
        &self,
        blocking: bool,
        observer: bool,
        start: crate::StartAt,
    ) -> Result<RawRosReader, RosTopicError> {
        self.ros2()?;
        let raw = if observer {
            self.observer_at(blocking, start)?
        } else {
            self.subscriber_at(blocking, start)?
        };
        Ok(RawRosReader { raw })
    }

    /// A subscriber of this ROS 2-typed topic (see [`TopicView::subscriber`]).
    pub fn ros_subscriber(&self, blocking: bool) -> Result<RawRosReader, RosTopicError> {
        self.ros2()?;
        Ok(RawRosReader {
            raw: self.subscriber(blocking)?,
        })
    }
}

/// Why [`RawRosPublisher::send_cdr`] published nothing.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RawRosSendError {
    /// The bytes do not start with a little-endian CDR encapsulation header.
    #[error("not ROS 2 CDR bytes: {0}")]
    NotCdr(DecodeError),
    /// The topic refused or could not take the message (too large for its chunks: raise
    /// its `max_tail_bytes`; full; pool exhausted; …).
    #[error(transparent)]
    Send(#[from] RawSendError),
}

/// Publishes ROS 2 wire bytes (encapsulation header and CDR body) on a ROS 2-typed topic,
/// copied once into a chunk behind the 4 reserved bytes. The body is not checked against
/// the type: receivers check it when they view or decode it.
pub struct RawRosPublisher {
    raw: RawPublisher,
}

impl RawRosPublisher {
    /// Publishes one message: `cdr` is the encapsulation header `00 01 xx xx` then the CDR
    /// body. Returns the subscribers it was delivered to.
    pub fn send_cdr(&mut self, cdr: &[u8]) -> Result<u32, RawRosSendError> {
        CdrReader::from_message(cdr).map_err(RawRosSendError::NotCdr)?;
        Ok(self.raw.send_parts(&[&[0; 4], cdr])?)
    }

    /// This publisher's place (see [`RawPublisher::place`]).
    pub fn place(&self) -> usize {
        self.raw.place()
    }
}

/// Receives the messages of a ROS 2-typed topic in place ([`RawRosSample`]).
pub struct RawRosReader {
    raw: RawReader,
}

impl RawRosReader {
    /// The next message, if one is ready. A message shorter than the 8-byte frame is
    /// counted malformed ([`counts`](Self::counts)) and skipped.
    pub fn try_recv(&mut self) -> Option<RawRosSample> {
        loop {
            let s = self.raw.try_recv_sample()?;
            if let Some(s) = self.accept(s) {
                return Some(s);
            }
        }
    }

    /// The next message, waiting at most `timeout` (see [`RawReader::recv_timeout`]).
    pub fn recv_timeout(&mut self, timeout: std::time::Duration) -> Option<RawRosSample> {
        let deadline = std::time::Instant::now() + timeout;
        loop {
            let left = deadline.saturating_duration_since(std::time::Instant::now());
            let s = self.raw.recv_sample_timeout(left)?;
            if let Some(s) = self.accept(s) {
                return Some(s);
            }
        }
    }

    /// Polls a blocking receive makes before it sleeps (see [`RawReader::set_spin`]).
    pub fn set_spin(&mut self, polls: u32) {
        self.raw.set_spin(polls);
    }

    fn accept(&mut self, s: RawSample) -> Option<RawRosSample> {
        if s.bytes().len() < FRAME {
            drop(s);
            self.raw.count_malformed();
            return None;
        }
        Some(RawRosSample { raw: s })
    }

    /// Messages received, missed and malformed so far (see [`RawReader::counts`]).
    pub fn counts(&self) -> (u64, u64, u64) {
        self.raw.counts()
    }

    /// Whether this reader is an observer.
    pub fn is_observer(&self) -> bool {
        self.raw.is_observer()
    }
}

/// One received ROS 2 message, in place in its chunk (pinned until dropped). `Send` and
/// `Sync`: it may be kept alive behind a view in another language.
#[derive(Debug)]
pub struct RawRosSample {
    raw: RawSample,
}

impl RawRosSample {
    /// The ROS 2 wire bytes: encapsulation header and CDR body, contiguous. Not checked:
    /// decode them (e.g. with `horus_idl` from the topic's definition).
    pub fn cdr(&self) -> &[u8] {
        &self.raw.bytes()[4..]
    }

    /// The CDR body, 8-byte aligned.
    pub fn body(&self) -> &[u8] {
        &self.raw.bytes()[FRAME..]
    }

    /// The publisher place it came from.
    pub fn source(&self) -> usize {
        self.raw.source()
    }

    /// Its sequence number in that publisher's ring.
    pub fn seq(&self) -> u64 {
        self.raw.seq()
    }

    /// Whether it is read in place in shared memory.
    pub fn is_zero_copy(&self) -> bool {
        self.raw.is_zero_copy()
    }
}
