//! The robot's transform tree, as tf2 users expect it (REP 105):
//!
//! ```text
//! map ─(static: no localisation, identity)─ odom ─(motor, 100 Hz)─ base_link ─┬─(static)─ laser
//!                                                                              └─(static)─ imu
//! ```
//!
//! The motor broadcasts `odom → base_link` on `tf` with each odometry message (same stamp
//! and pose); the sensors process publishes the static transforms once on `tf_static` and
//! keeps its broadcaster alive, so late joiners (the recorder, `horus tf frames`,
//! Foxglove) get them.

use horus_ros_msgs::builtin_interfaces::msg::Time;
use horus_ros_msgs::geometry_msgs::msg::TransformStamped;
use horus_tf::transform_stamped;

use crate::topics::{BASE_FRAME, IMU_FRAME, LASER_FRAME, ODOM_FRAME};

/// The fixed world frame.
pub(crate) const MAP_FRAME: &str = "map";

/// Where the lidar sits on the base: 10 cm ahead of its centre, 20 cm up.
pub(crate) const LASER_MOUNT: [f64; 3] = [0.1, 0.0, 0.2];
/// Where the IMU sits on the base: at its centre, 5 cm up.
pub(crate) const IMU_MOUNT: [f64; 3] = [0.0, 0.0, 0.05];

const IDENTITY: [f64; 4] = [0.0, 0.0, 0.0, 1.0];

/// The static transforms of the tree, stamped `stamp`.
pub(crate) fn static_transforms(stamp: Time) -> Vec<TransformStamped> {
    vec![
        transform_stamped(MAP_FRAME, ODOM_FRAME, stamp.clone(), [0.0; 3], IDENTITY),
        transform_stamped(
            BASE_FRAME,
            LASER_FRAME,
            stamp.clone(),
            LASER_MOUNT,
            IDENTITY,
        ),
        transform_stamped(BASE_FRAME, IMU_FRAME, stamp, IMU_MOUNT, IDENTITY),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_static_tree_joins_map_to_both_sensors_through_odom_and_base_link() {
        let t = static_transforms(Time::default());
        let edges: Vec<(&str, &str)> = t
            .iter()
            .map(|t| (t.header.frame_id.as_str(), t.child_frame_id.as_str()))
            .collect();
        assert_eq!(
            edges,
            [
                ("map", "odom"),
                ("base_link", "laser"),
                ("base_link", "imu")
            ]
        );
    }
}
