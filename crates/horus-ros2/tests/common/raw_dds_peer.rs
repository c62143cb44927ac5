//! A bare RustDDS peer for the tests that play a DDS node no ROS 2 node would be (a writer
//! skipping sequence numbers, hostile payloads, another type on a topic): a participant in
//! the child's `ROS_DOMAIN_ID`, one topic, and writers of raw CDR bytes on it.
//!
//! Included by path (`#[path = "common/raw_dds_peer.rs"]`) only in the tests that play such a
//! peer, not through `common/mod.rs`, which other crates' tests include without RustDDS.

#![allow(dead_code)]

use horus_ros2::raw::WireCdr;
use rustdds::no_key::{DataWriter, SerializerAdapter};
use rustdds::{policy, DomainParticipant, Publisher, QosPolicyBuilder, Topic, TopicKind};

/// The DDS type name of `std_msgs/msg/String`.
pub(crate) const STRING_TYPE: &str = "std_msgs::msg::dds_::String_";

/// The DDS type name of `std_msgs/msg/Int32`.
pub(crate) const INT32_TYPE: &str = "std_msgs::msg::dds_::Int32_";

/// A valid `std_msgs/String` "ok" (CDR little-endian, with its encapsulation header).
pub(crate) const VALID_STRING: [u8; 11] = [0, 1, 0, 0, 3, 0, 0, 0, b'o', b'k', 0];

/// How the peer's writers deliver.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Delivery {
    /// Best effort, volatile.
    BestEffort,
    /// Reliable (a write waits at most 100 ms for a reader's window), volatile.
    Reliable,
    /// Reliable and transient-local: a reader gets what was written before it matched.
    ReliableLatched,
}

/// A DDS participant with one topic and a publisher on it; every writer keeps the last 16.
pub(crate) struct RawDdsPeer {
    topic: Topic,
    publisher: Publisher,
    // Dropped last: its topic and publisher belong to it.
    _participant: DomainParticipant,
}

impl RawDdsPeer {
    /// A peer in the domain of `ROS_DOMAIN_ID` (set by the test's world) with DDS topic
    /// `topic_name` (e.g. `rt/demo/h`) of DDS type `dds_type`.
    pub(crate) fn new(topic_name: &str, dds_type: &str, delivery: Delivery) -> RawDdsPeer {
        let domain =
            horus_ros2::parse_domain_id(&std::env::var("ROS_DOMAIN_ID").expect("ROS_DOMAIN_ID"))
                .expect("a valid ROS_DOMAIN_ID");
        let participant = rustdds::DomainParticipantBuilder::new(domain)
            .build()
            .expect("DDS participant");
        let reliable = policy::Reliability::Reliable {
            max_blocking_time: rustdds::Duration::from_millis(100),
        };
        let qos = QosPolicyBuilder::new().history(policy::History::KeepLast { depth: 16 });
        let qos = match delivery {
            Delivery::BestEffort => qos.reliability(policy::Reliability::BestEffort),
            Delivery::Reliable => qos.reliability(reliable),
            Delivery::ReliableLatched => qos
                .reliability(reliable)
                .durability(policy::Durability::TransientLocal),
        }
        .build();
        let topic = participant
            .create_topic(topic_name.into(), dds_type.into(), &qos, TopicKind::NoKey)
            .expect("DDS topic");
        let publisher = participant.create_publisher(&qos).expect("DDS publisher");
        RawDdsPeer {
            topic,
            publisher,
            _participant: participant,
        }
    }

    /// A writer on the peer's topic, its payload's bytes made by `SA` (e.g.
    /// `horus_ros2::raw::PassThrough`: the bytes as given).
    pub(crate) fn writer<SA: SerializerAdapter<WireCdr>>(&self) -> DataWriter<WireCdr, SA> {
        self.publisher
            .create_datawriter_no_key::<WireCdr, SA>(&self.topic, None)
            .expect("DDS writer")
    }
}
