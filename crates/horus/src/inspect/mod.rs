//! Looking at a running system from outside: what tools (`horus topic …`, the recorder, the
//! bridge) use to find topics, read their description and counters, and observe their
//! messages as bytes, without having been compiled with the message types.
//!
//! Everything here is read-only towards the robot: a [`RawObserver`] is an observer (never in
//! a publisher's room check, never counted by publishers), and a [`TopicView`] only maps the
//! segment.

mod create;
mod decode;
mod encode;
mod raw_publisher;
mod raw_reader;
mod raw_sample;
mod ros;
mod topic_scan;
mod topic_view;

pub use create::{open_or_create_topic, open_or_create_topic_durable, CreateError};
pub use decode::{decode_message, DecodeError};
pub use encode::{encode_message, EncodeError};
pub use raw_publisher::{RawPublisher, RawSendError};
pub use raw_reader::{RawMessage, RawObserver, RawReader};
pub use raw_sample::RawSample;
pub use ros::{
    open_or_create_ros_topic, open_or_create_ros_topic_durable, ros_qos, RawRosPublisher,
    RawRosReader, RawRosSample, RawRosSendError, RosTopicError,
};
pub use topic_scan::{process_alive, ScannedTopic, TopicScan};
pub use topic_view::{list_topics, InspectError, QosInfo, TopicView};
