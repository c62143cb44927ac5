//! The two topics transforms travel on, `tf` and `tf_static`, opened with the same settings
//! by every broadcaster and every feeder of this crate.
//!
//! ROS 2 names them `/tf` and `/tf_static`; horus topic names carry no leading `/` (as
//! `horus play` and the bridges map ROS 2 names), so a recording or a bridge turns `/tf`
//! into `tf` and back.

use horus::ros::Ros;
use horus::{Durability, Topic, TopicError};
use horus_ros_msgs::tf2_msgs::msg::TFMessage;

/// The topic of dynamic transforms (ROS 2's `/tf`).
pub const TF_TOPIC: &str = "tf";
/// The topic of static transforms (ROS 2's `/tf_static`).
pub const TF_STATIC_TOPIC: &str = "tf_static";

/// A `tf`/`tf_static` topic: `tf2_msgs/msg/TFMessage` as ROS 2's CDR bytes.
pub type TfTopic = Topic<Ros<TFMessage>>;

/// `tf_static`'s durability: each publisher's last message is kept for subscribers that
/// join later (ROS 2's `transient_local` with depth 1, as tf2_ros's static broadcaster).
/// A static broadcaster's last message is its whole set.
pub const TF_STATIC_DURABILITY: Durability = Durability::TransientLocal { depth: 1 };

/// Opens `name` (one of [`TF_TOPIC`], [`TF_STATIC_TOPIC`]) in `namespace` (`None`: the
/// process's, `HORUS_NAMESPACE` else per user), creating it if needed.
///
/// The settings are those any ROS-typed topic gets by default (the ones `horus play`, the
/// bridges and Python's `RosTopic` create it with, so that whichever process comes first,
/// the others agree): history 4 per publisher, `DropOldest`, up to 1 MiB of CDR per
/// message (about 9,000 transforms with short frame names). `tf_static` is created latched
/// ([`TF_STATIC_DURABILITY`]); one that exists already keeps the durability it was created
/// with (a topic created volatile by another tool is still opened: see
/// [`Topic::durability`]).
pub fn open_tf_topic(namespace: Option<&str>, name: &str) -> Result<TfTopic, TopicError> {
    let builder = || {
        let b = Topic::<Ros<TFMessage>>::builder(name);
        match namespace {
            Some(ns) => b.namespace(ns),
            None => b,
        }
    };
    if name != TF_STATIC_TOPIC {
        return builder().open();
    }
    match builder().durability(TF_STATIC_DURABILITY).open() {
        // Created volatile by someone else: adopt what it is.
        Err(TopicError::QosMismatch { .. }) => builder().open(),
        r => r,
    }
}
