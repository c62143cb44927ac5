//! Exact sizes of the standard messages: other processes and languages depend on them.

use core::mem::{align_of, size_of};

use horus_msgs::*;

fn check<T: Message>(size: usize) {
    assert_eq!(size_of::<T>(), size, "size_of {}", T::SCHEMA.name());
    assert_eq!(
        T::SCHEMA.size() as usize,
        size,
        "SCHEMA.size {}",
        T::SCHEMA.name()
    );
    assert_eq!(
        T::SCHEMA.align() as usize,
        align_of::<T>(),
        "{}",
        T::SCHEMA.name()
    );
    assert_eq!(T::SCHEMA.version(), 1, "{}", T::SCHEMA.name());
}

#[test]
fn standard_message_sizes() {
    check::<Time>(8);
    check::<Header>(48);
    check::<Vector3>(24);
    check::<Quaternion>(32);
    check::<Pose2D>(24);
    check::<Pose>(56);
    check::<Twist>(48);
    check::<CmdVel>(16);
    check::<EmergencyStop>(48);
    check::<BatteryState>(104);
    check::<Imu>(304);
    check::<Odometry>(736);
    check::<LaserScan>(1480);
    check::<JointState>(912);
    check::<PointCloud>(56);
    check::<Image>(64);
}

#[test]
fn only_tail_messages_have_tails() {
    const { assert!(PointCloud::HAS_TAIL) };
    const { assert!(Image::HAS_TAIL) };
    const { assert!(!CmdVel::HAS_TAIL) };
    const { assert!(!LaserScan::HAS_TAIL) };
}

#[test]
fn all_messages_are_eight_byte_aligned_or_less() {
    for s in STANDARD_SCHEMAS {
        assert!(s.align() <= 8, "{s}");
        assert_eq!(s.size() % s.align(), 0, "{s}");
    }
}

/// The capacity constants agree with the array lengths in the message definitions.
#[test]
fn capacity_constants_match_field_sizes() {
    fn field_size<T: Message>(name: &str) -> usize {
        T::FIELDS.iter().find(|f| f.name == name).unwrap().size
    }
    assert_eq!(field_size::<Header>("frame_id"), FRAME_ID_LEN);
    assert_eq!(field_size::<EmergencyStop>("source"), ESTOP_SOURCE_LEN);
    assert_eq!(field_size::<Odometry>("frame_id"), ODOM_FRAME_ID_LEN);
    assert_eq!(field_size::<Odometry>("child_frame_id"), ODOM_FRAME_ID_LEN);
    assert_eq!(
        field_size::<PointCloud>("frame_id"),
        POINT_CLOUD_FRAME_ID_LEN
    );
    assert_eq!(field_size::<Image>("frame_id"), IMAGE_FRAME_ID_LEN);
    assert_eq!(field_size::<LaserScan>("ranges"), 4 * LASER_SCAN_MAX_RANGES);
    assert_eq!(
        field_size::<BatteryState>("cell_voltage"),
        4 * BATTERY_MAX_CELLS
    );
    assert_eq!(
        field_size::<JointState>("names"),
        JOINT_NAME_LEN * JOINT_STATE_CAPACITY
    );
    assert_eq!(field_size::<JointState>("effort"), 8 * JOINT_STATE_CAPACITY);
}
