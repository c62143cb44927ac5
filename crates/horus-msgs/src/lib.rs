//! Standard robotics messages for horus, and the machinery to define your own.
//!
//! A horus message is a plain-old-data struct: `#[repr(C)]`, no pointers, no padding, every
//! bit pattern valid ([`bytemuck::Pod`]). It travels over shared memory as raw bytes, with no
//! serialization, and a subscriber can read it even if the publisher is buggy or hostile.
//! Each message type has a [`SchemaId`] (name, version, size, alignment, layout hash) that
//! publisher and subscriber compare before exchanging bytes.
//!
//! # Defining a message
//!
//! [`message!`] declares the struct and implements [`Message`] from one field list, so the
//! struct, its schema id and its field table cannot drift apart:
//!
//! ```
//! use horus_msgs::{message, Message};
//!
//! message! {
//!     /// Wheel encoder ticks.
//!     pub struct WheelTicks: "my_robot/WheelTicks", version 1 {
//!         /// Time of the reading, ns since the UNIX epoch.
//!         pub stamp_ns: u64,
//!         /// Left wheel ticks since start.
//!         pub left: i32,
//!         /// Right wheel ticks since start.
//!         pub right: i32,
//!     }
//! }
//!
//! let ticks = WheelTicks { stamp_ns: 1, left: 10, right: -3 };
//! assert_eq!(bytemuck::bytes_of(&ticks).len(), 16);
//! assert_eq!(WheelTicks::SCHEMA.name(), "my_robot/WheelTicks");
//! assert_eq!(WheelTicks::FIELDS.iter().map(|f| f.name).collect::<Vec<_>>(),
//!            ["stamp_ns", "left", "right"]);
//! println!("{}", WheelTicks::SCHEMA); // my_robot/WheelTicks v1 (16 B, layout 0x…)
//! ```
//!
//! # Standard messages
//!
//! | Message | Size (B) | |
//! |---|---:|---|
//! | [`Time`] | 8 | ns since the UNIX epoch |
//! | [`Header`] | 48 | stamp, sequence, frame id |
//! | [`Vector3`], [`Quaternion`], [`Pose2D`], [`Pose`], [`Twist`] | 24, 32, 24, 56, 48 | geometry |
//! | [`CmdVel`] | 16 | planar velocity command |
//! | [`EmergencyStop`] | 48 | stop / release with reason and source |
//! | [`BatteryState`] | 104 | battery pack |
//! | [`Imu`] | 304 | inertial measurement |
//! | [`Odometry`] | 736 | pose + twist with covariances |
//! | [`LaserScan`] | 1,480 | up to 360 beams |
//! | [`JointState`] | 912 | up to 16 joints |
//! | [`PointCloud`] | 56 + tail | points in a variable-size tail |
//! | [`Image`] | 64 + tail | pixels in a variable-size tail |
//!
//! Time is `u64` nanoseconds since the UNIX epoch everywhere (`stamp_ns`).
//!
//! # Messages with a tail
//!
//! [`PointCloud`] and [`Image`] are headers ([`Message::HAS_TAIL`] is `true`): the points or
//! pixels follow in a byte tail that the transport allocates (`loan_slice(tail_len)`), 8-byte
//! aligned. The header's helpers view the tail with validation:
//!
//! ```
//! use horus_msgs::PointCloud;
//!
//! let cloud = PointCloud::new(2, false);
//! let mut storage = [0u64; 3]; // stands in for the transport's 8-byte-aligned tail
//! let tail: &mut [u8] = bytemuck::cast_slice_mut(&mut storage);
//! assert_eq!(cloud.tail_len(), 24);
//! cloud.points_mut(tail).unwrap()[1] = [1.0, 2.0, 3.0];
//! assert_eq!(cloud.points(tail).unwrap()[1], [1.0, 2.0, 3.0]);
//! assert!(cloud.points(&tail[..20]).is_err()); // too short
//! ```
#![warn(missing_docs)]

mod macros;

mod battery;
mod control;
mod describe;
mod fixed_str;
mod geometry;
mod header;
mod image;
mod joint;
mod message;
mod odometry;
mod pointcloud;
mod ros2;
mod schema;
mod sensors;
mod standard;

#[doc(hidden)]
pub use bytemuck as __bytemuck;

pub use battery::{BatteryState, BATTERY_MAX_CELLS};
pub use control::{CmdVel, EmergencyStop, ESTOP_SOURCE_LEN};
pub use describe::{
    DescriptionError, FieldDescription, FieldKind, FieldType, MessageDescription, Scalar,
    TypeCollector, TypeDescription,
};
pub use fixed_str::FixedStrError;
pub use geometry::{Pose, Pose2D, Quaternion, Twist, Vector3};
pub use header::{Header, Time, FRAME_ID_LEN};
pub use image::{Image, ImageError, IMAGE_FRAME_ID_LEN};
pub use joint::{JointState, JointStateError, JOINT_NAME_LEN, JOINT_STATE_CAPACITY};
pub use message::Message;
pub use odometry::{Odometry, ODOM_FRAME_ID_LEN};
pub use pointcloud::{PointCloud, PointCloudError, XyzI, POINT_CLOUD_FRAME_ID_LEN};
pub use ros2::{rihs01_layout_hash, Ros2Info, Ros2Type};
pub use schema::{
    fnv1a64, fnv1a64_extend, FieldInfo, LayoutHasher, SchemaId, FNV1A64_OFFSET, FNV1A64_PRIME,
};
pub use sensors::{Imu, LaserScan, LASER_SCAN_MAX_RANGES};
pub use standard::{standard_schema, STANDARD_SCHEMAS};

/// The message trait, the schema types, every standard message, and `bytemuck`'s
/// [`Pod`](bytemuck::Pod) / [`Zeroable`](bytemuck::Zeroable) (for `T::zeroed()`).
pub mod prelude {
    pub use crate::{
        message, BatteryState, CmdVel, EmergencyStop, FieldInfo, Header, Image, Imu, JointState,
        LaserScan, Message, Odometry, PointCloud, Pose, Pose2D, Quaternion, SchemaId, Time, Twist,
        Vector3, XyzI,
    };
    pub use bytemuck::{Pod, Zeroable};
}
