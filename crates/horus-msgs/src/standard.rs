//! The list of standard message schemas, for tools that meet a schema id at run time.

use crate::message::Message;
use crate::schema::SchemaId;
use crate::{
    BatteryState, CmdVel, EmergencyStop, Header, Image, Imu, JointState, LaserScan, Odometry,
    PointCloud, Pose, Pose2D, Quaternion, Time, Twist, Vector3,
};

/// Schema ids of every standard message in this crate.
///
/// Names and layout hashes are pairwise distinct (checked by the test suite).
pub const STANDARD_SCHEMAS: &[SchemaId] = &[
    Time::SCHEMA,
    Header::SCHEMA,
    Vector3::SCHEMA,
    Quaternion::SCHEMA,
    Pose2D::SCHEMA,
    Pose::SCHEMA,
    Twist::SCHEMA,
    CmdVel::SCHEMA,
    EmergencyStop::SCHEMA,
    Imu::SCHEMA,
    LaserScan::SCHEMA,
    BatteryState::SCHEMA,
    Odometry::SCHEMA,
    JointState::SCHEMA,
    PointCloud::SCHEMA,
    Image::SCHEMA,
];

/// The standard schema called `name` (e.g. `"horus/CmdVel"`), if there is one.
///
/// ```
/// use horus_msgs::{standard_schema, CmdVel, Message};
/// assert_eq!(standard_schema("horus/CmdVel"), Some(CmdVel::SCHEMA));
/// assert_eq!(standard_schema("horus/Nope"), None);
/// ```
pub fn standard_schema(name: &str) -> Option<SchemaId> {
    STANDARD_SCHEMAS.iter().copied().find(|s| s.name() == name)
}
