//! What this host has: the local namespace's topics and services with their endpoints, found
//! by scanning `/dev/shm` (read-only: records and counters, never a message).

use std::collections::BTreeMap;

use horus::inspect::{QosInfo, TopicScan, TopicView};
use horus::{Durability, Overflow};

use crate::keys::SchemaKey;

pub(crate) use horus::inspect::process_alive as alive;

/// The schema key of a topic's type: a hash of its schema name and version, and its layout
/// hash.
pub(crate) fn topic_schema_key(view: &TopicView) -> Option<(SchemaKey, String)> {
    let s = view.schema()?;
    let mut id = horus_msgs::fnv1a64(s.name.as_bytes());
    id = horus_msgs::fnv1a64_extend(id, &s.version.to_le_bytes());
    Some((
        SchemaKey {
            id,
            layout: s.layout_hash,
        },
        format!("{} v{}", s.name, s.version),
    ))
}

/// One local topic.
#[derive(Clone, Debug)]
pub(crate) struct LocalTopic {
    /// Its type's key.
    pub(crate) schema: SchemaKey,
    /// Its type for people.
    pub(crate) type_name: String,
    /// Its delivery settings.
    pub(crate) qos: QosInfo,
    /// Its durability (latched or not).
    pub(crate) durability: Durability,
    /// A live publisher other than this bridge.
    pub(crate) has_publisher: bool,
    /// A live subscriber (not an observer) other than this bridge.
    pub(crate) has_subscriber: bool,
}

impl LocalTopic {
    /// The topic's overflow policy (`DropOldest` when the segment holds an unknown code).
    pub(crate) fn overflow(&self) -> Overflow {
        self.qos.overflow.unwrap_or(Overflow::DropOldest)
    }
}

/// One local service.
#[derive(Clone, Debug)]
pub(crate) struct LocalService {
    /// Hashes of its request and response schemas.
    pub(crate) schema: SchemaKey,
    /// A live server other than this bridge.
    pub(crate) has_server: bool,
}

/// Scans the namespace, keeping segments mapped between scans.
pub(crate) struct LocalScan {
    topics: TopicScan,
    namespace: String,
    me: u32,
}

impl LocalScan {
    pub(crate) fn new(namespace: &str) -> LocalScan {
        LocalScan {
            topics: TopicScan::new(namespace),
            namespace: namespace.to_owned(),
            me: std::process::id(),
        }
    }

    /// Every readable topic of the namespace. A segment that cannot be opened (being created,
    /// corrupt, another layout version) is left out until it can.
    pub(crate) fn topics(&mut self) -> BTreeMap<String, LocalTopic> {
        self.topics
            .scan()
            .into_iter()
            .filter_map(|t| {
                let (schema, type_name) = topic_schema_key(t.view)?;
                Some((
                    t.name.to_owned(),
                    LocalTopic {
                        schema,
                        type_name,
                        qos: t.view.qos(),
                        durability: t.view.durability(),
                        has_publisher: t.has_publisher,
                        has_subscriber: t.has_subscriber,
                    },
                ))
            })
            .collect()
    }

    /// Every readable service of the namespace.
    pub(crate) fn services(&self) -> BTreeMap<String, LocalService> {
        let me = self.me;
        horus::list_services(&self.namespace)
            .unwrap_or_default()
            .into_iter()
            .filter_map(|l| {
                let snap = l.snapshot.ok()?;
                Some((
                    l.name,
                    LocalService {
                        schema: service_schema_key(&snap.request_schema, &snap.response_schema),
                        has_server: snap.servers.iter().any(|s| s.alive && s.pid != me),
                    },
                ))
            })
            .collect()
    }
}

/// The schema key of a service: hashes of its request's and response's schema texts (name,
/// version, size and layout hash).
pub(crate) fn service_schema_key(request: &str, response: &str) -> SchemaKey {
    SchemaKey {
        id: horus_msgs::fnv1a64(request.as_bytes()),
        layout: horus_msgs::fnv1a64(response.as_bytes()),
    }
}
