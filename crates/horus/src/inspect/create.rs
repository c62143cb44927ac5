//! Creating a topic's segment from a message description and QoS read at run time (for
//! `horus play`, which publishes recorded topics that do not exist yet).
//!
//! Both inputs come from a file and are untrusted: the description is validated (every
//! offset, reference and layout hash), the QoS is checked against what the message needs,
//! and the segment layer validates the capacities again.

use horus_msgs::MessageDescription;
use horus_shm::{ChannelConfig, OpenError, SegmentError};

use super::{QosInfo, TopicView};
use crate::description::SchemaRecord;
use crate::qos::{Durability, Overflow};

/// Why a topic could not be created from a description.
#[derive(Debug, thiserror::Error)]
pub enum CreateError {
    /// The namespace or topic name is not valid.
    #[error("invalid name: {0}")]
    Name(String),
    /// The description is inconsistent.
    #[error("topic {topic}: invalid description: {source}")]
    Description {
        /// The topic.
        topic: String,
        /// Why.
        source: horus_msgs::DescriptionError,
    },
    /// The QoS cannot carry the described message (or is out of range).
    #[error("topic {topic}: QoS cannot be used: {reason}")]
    Qos {
        /// The topic.
        topic: String,
        /// Why.
        reason: String,
    },
    /// The segment could not be created or opened (another schema, other capacities…).
    #[error("topic {topic}: {source}")]
    Open {
        /// The topic.
        topic: String,
        /// Why.
        source: OpenError,
    },
}

/// Opens `topic` of `namespace`, creating its segment from `description` and `qos` when it
/// does not exist. An existing segment must carry the same schema (its own QoS is kept).
/// A topic it creates is volatile: see [`open_or_create_topic_durable`].
pub fn open_or_create_topic(
    namespace: &str,
    topic: &str,
    description: &MessageDescription,
    qos: &QosInfo,
) -> Result<TopicView, CreateError> {
    open_or_create_topic_durable(namespace, topic, description, qos, Durability::Volatile)
}

/// [`open_or_create_topic`], creating the segment with `durability` (a replayed
/// `tf_static` is latched again). The history depth must be at most `qos.depth`
/// ([`CreateError::Qos`] otherwise). An existing segment keeps its own durability: compare
/// [`TopicView::durability`] if it matters.
pub fn open_or_create_topic_durable(
    namespace: &str,
    topic: &str,
    description: &MessageDescription,
    qos: &QosInfo,
    durability: Durability,
) -> Result<TopicView, CreateError> {
    description
        .validate()
        .map_err(|source| CreateError::Description {
            topic: topic.to_owned(),
            source,
        })?;
    let root = description.root();
    let qos_err = |reason: String| CreateError::Qos {
        topic: topic.to_owned(),
        reason,
    };
    let record = SchemaRecord {
        name: root.name.clone(),
        version: root.version,
        size: u32::try_from(root.size).map_err(|_| qos_err("message too large".into()))?,
        align: u32::try_from(root.align).map_err(|_| qos_err("alignment too large".into()))?,
        layout_hash: root.layout_hash,
    };
    if root.align > 8 {
        return Err(qos_err(format!("alignment {} above 8", root.align)));
    }
    if qos.chunk_bytes == 0 {
        if root.has_tail || root.size > qos.inline_bytes as usize {
            return Err(qos_err(format!(
                "{}-byte inline slots cannot carry {} ({} B{})",
                qos.inline_bytes,
                root.name,
                root.size,
                if root.has_tail { " + tail" } else { "" }
            )));
        }
    } else if qos.chunk_bytes < root.size.next_multiple_of(8) as u64 {
        return Err(qos_err(format!(
            "{}-byte chunks cannot hold a {}-byte message",
            qos.chunk_bytes, root.size
        )));
    }
    let overflow = qos
        .overflow
        .ok_or_else(|| qos_err("unknown overflow policy".into()))?;
    let config = ChannelConfig {
        schema: crate::schema_record::encode_record(&record)
            .ok_or_else(|| qos_err(format!("schema name {:?} too long", record.name)))?,
        depth: qos.depth,
        slot_payload: qos.inline_bytes,
        max_publishers: qos.max_publishers,
        max_subscribers: qos.max_subscribers,
        chunk_size: qos.chunk_bytes,
        chunks_per_publisher: qos.chunks_per_publisher,
        qos_code: ChannelConfig::compose_qos(Overflow::code(overflow), durability.latched())
            .filter(|_| durability != (Durability::TransientLocal { depth: 0 }))
            .filter(|_| durability.latched() <= qos.depth)
            .ok_or_else(|| {
                qos_err(format!(
                    "durability {durability} must keep 1..={} messages (the depth)",
                    qos.depth
                ))
            })?,
    };
    let json = serde_json::to_vec(description).map_err(|e| qos_err(e.to_string()))?;
    let seg = horus_shm::name::segment_name(namespace, "t", topic)
        .map_err(|e| CreateError::Name(e.to_string()))?;
    let open = |e: OpenError| CreateError::Open {
        topic: topic.to_owned(),
        source: e,
    };
    let chan = match horus_shm::Channel::open_existing(&seg, Some(&config.schema)) {
        Ok(chan) => chan,
        Err(OpenError::Segment(SegmentError::NotFound(_))) => {
            match horus_shm::Channel::open_or_create_described(&seg, &config, &json) {
                Ok(chan) => chan,
                // Created meanwhile by someone else with other capacities: same schema is
                // what matters for publishing.
                Err(OpenError::ConfigMismatch { .. }) => {
                    horus_shm::Channel::open_existing(&seg, Some(&config.schema)).map_err(open)?
                }
                Err(e) => return Err(open(e)),
            }
        }
        Err(e) => return Err(open(e)),
    };
    Ok(TopicView::from_channel(topic, chan))
}

#[cfg(test)]
mod tests {
    use super::*;
    use horus_msgs::{CmdVel, PointCloud};

    fn ns(tag: &str) -> String {
        format!("inspect-create-{tag}-{}", std::process::id())
    }

    fn qos_inline() -> QosInfo {
        QosInfo {
            depth: 8,
            overflow: Some(Overflow::DropOldest),
            max_publishers: 2,
            max_subscribers: 4,
            // What a typed endpoint creates for CmdVel, so that it adopts the segment.
            inline_bytes: (std::mem::size_of::<CmdVel>().next_multiple_of(8).max(16)) as u32,
            chunk_bytes: 0,
            chunks_per_publisher: 0,
        }
    }

    #[test]
    fn created_topic_describes_itself_and_typed_endpoints_meet_it() {
        let ns = ns("ok");
        let d = MessageDescription::of::<CmdVel>();
        let view = open_or_create_topic(&ns, "a/cmd", &d, &qos_inline()).unwrap();
        assert_eq!(view.description().unwrap(), d);
        assert_eq!(view.qos(), qos_inline());
        let typed = crate::Topic::<CmdVel>::builder("a/cmd")
            .namespace(&ns)
            .open()
            .expect("a typed endpoint adopts the created segment");
        let mut sub = typed.subscriber().unwrap();
        let mut publ = view.publisher(d.root().size).unwrap();
        let msg = CmdVel::new(7, 1.5, -0.5);
        publ.send(bytemuck::bytes_of(&msg)).unwrap();
        assert_eq!(sub.try_recv().map(|m| *m), Some(msg));
    }

    #[test]
    fn bad_descriptions_and_qos_are_refused() {
        let ns = ns("bad");
        let mut d = MessageDescription::of::<CmdVel>();
        d.types[0].layout_hash ^= 1;
        assert!(matches!(
            open_or_create_topic(&ns, "x", &d, &qos_inline()),
            Err(CreateError::Description { .. })
        ));
        let pc = MessageDescription::of::<PointCloud>();
        assert!(matches!(
            open_or_create_topic(&ns, "x", &pc, &qos_inline()),
            Err(CreateError::Qos { .. })
        ));
        let mut q = qos_inline();
        q.depth = 3; // not a power of two: the segment layer refuses it
        assert!(matches!(
            open_or_create_topic(&ns, "x", &MessageDescription::of::<CmdVel>(), &q),
            Err(CreateError::Open { .. })
        ));
        assert!(crate::inspect::list_topics(&ns).unwrap().is_empty());
    }
}
