//! The two topics transforms travel on, `tf` and `tf_static`, opened with the same settings
//! by every broadcaster and every feeder of this crate.
//!
//! ROS 2 names them `/tf` and `/tf_static`; horus topic names carry no leading `/` (as
//! `horus play` and the bridges map ROS 2 names), so a recording or a bridge turns `/tf`
//! into `tf` and back.

use horus::ros::Ros;
use horus::{Topic, TopicError};
use horus_ros_msgs::tf2_msgs::msg::TFMessage;

/// The topic of dynamic transforms (ROS 2's `/tf`).
pub const TF_TOPIC: &str = "tf";
/// The topic of static transforms (ROS 2's `/tf_static`).
pub const TF_STATIC_TOPIC: &str = "tf_static";

/// A `tf`/`tf_static` topic: `tf2_msgs/msg/TFMessage` as ROS 2's CDR bytes.
pub type TfTopic = Topic<Ros<TFMessage>>;

/// Opens `name` (one of [`TF_TOPIC`], [`TF_STATIC_TOPIC`]) in `namespace` (`None`: the
/// process's, `HORUS_NAMESPACE` else per user), creating it if needed.
///
/// The settings are those any ROS-typed topic gets by default (the ones `horus play`, the
/// bridges and Python's `RosTopic` create it with, so that whichever process comes first,
/// the others agree): history 4 per publisher, `DropOldest`, up to 1 MiB of CDR per
/// message (about 9,000 transforms with short frame names).
pub fn open_tf_topic(namespace: Option<&str>, name: &str) -> Result<TfTopic, TopicError> {
    let mut b = Topic::<Ros<TFMessage>>::builder(name);
    if let Some(ns) = namespace {
        b = b.namespace(ns);
    }
    b.open()
}
