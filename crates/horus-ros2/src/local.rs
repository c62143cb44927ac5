//! What this host's horus side has: the namespace's ROS 2-typed topics with their
//! endpoints (`horus::inspect::TopicScan`: records and counters only, never a message).

use std::collections::BTreeMap;

use horus::inspect::{QosInfo, TopicScan, TopicView};
use horus::Durability;
use horus_msgs::Ros2Type;

pub(crate) use horus::inspect::process_alive as alive;

/// One ROS 2-typed horus topic.
#[derive(Clone, Debug)]
pub(crate) struct LocalTopic {
    /// Its ROS 2 type.
    pub(crate) ty: Ros2Type,
    /// Its delivery settings.
    pub(crate) qos: QosInfo,
    /// Latched or not.
    pub(crate) durability: Durability,
    /// A live publisher other than this bridge.
    pub(crate) has_publisher: bool,
    /// A live subscriber (not an observer) other than this bridge.
    pub(crate) has_subscriber: bool,
}

/// Scans the namespace, keeping segments mapped between scans.
pub(crate) struct LocalScan(TopicScan);

impl LocalScan {
    pub(crate) fn new(namespace: &str) -> LocalScan {
        LocalScan(TopicScan::new(namespace))
    }

    /// The mapped view of `topic` (from the last scan).
    pub(crate) fn view(&self, topic: &str) -> Option<&TopicView> {
        self.0.view(topic)
    }

    /// Every ROS 2-typed topic of the namespace. A segment that cannot be opened (being
    /// created, corrupt, another layout version) or carries a horus fixed-layout type is
    /// left out.
    pub(crate) fn topics(&mut self) -> BTreeMap<String, LocalTopic> {
        self.0
            .scan()
            .into_iter()
            .filter_map(|t| {
                let ty = t.view.ros2().ok()?;
                Some((
                    t.name.to_owned(),
                    LocalTopic {
                        ty,
                        qos: t.view.qos(),
                        durability: t.view.durability(),
                        has_publisher: t.has_publisher,
                        has_subscriber: t.has_subscriber,
                    },
                ))
            })
            .collect()
    }
}
