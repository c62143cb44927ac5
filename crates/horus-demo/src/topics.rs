//! The demo robot's topics: names, message types and QoS, in one place so
//! that every process opens them with the same settings (whichever process
//! comes first creates the segment; the others must agree with it).

use horus::prelude::*;
use horus::ros::Ros;
use horus_ros_msgs::builtin_interfaces::msg::Time as RosTime;
use horus_ros_msgs::geometry_msgs::msg::Twist;
use horus_ros_msgs::nav_msgs::msg::Odometry;
use horus_ros_msgs::sensor_msgs::msg::{Imu, LaserScan};

/// Lidar scans (`sensor_msgs/msg/LaserScan`), 10 Hz.
pub(crate) const SCAN: &str = "demo/scan";
/// IMU readings (`sensor_msgs/msg/Imu`), 1 kHz.
pub(crate) const IMU: &str = "demo/imu";
/// Velocity commands from the controller to the motor (`geometry_msgs/msg/Twist`), 100 Hz.
pub(crate) const CMD_VEL: &str = "demo/cmd_vel";
/// Emergency stops announced by any of the robot's schedulers.
pub(crate) const ESTOP: &str = "demo/estop";
/// The Python obstacle detector's stop flag (an `EmergencyStop`: engaged
/// while an obstacle is too close ahead, released otherwise), one per scan.
/// The controller honours it. Not the robot-wide emergency stop.
pub(crate) const STOP: &str = "demo/stop";

/// The motor's odometry (`nav_msgs/msg/Odometry`): the pose integrated from the commands
/// applied, and the velocity applied, 100 Hz.
pub(crate) const ODOM: &str = "demo/odom";

/// The `frame_id` of the scans.
pub(crate) const LASER_FRAME: &str = "laser";
/// The `frame_id` of the IMU readings.
pub(crate) const IMU_FRAME: &str = "imu";
/// The odometry's fixed frame (`header.frame_id`).
pub(crate) const ODOM_FRAME: &str = "odom";
/// The robot's frame (the odometry's `child_frame_id`).
pub(crate) const BASE_FRAME: &str = "base_link";

/// Largest CDR body of a scan: 360 ranges of 4 bytes plus the header and fields (about
/// 1.5 KiB), with room to spare. Every endpoint creates the topic with the same size.
pub(crate) const SCAN_MAX_BYTES: usize = 4096;
/// Largest CDR body of an IMU reading, odometry message or command (each a few hundred
/// bytes at most).
const SMALL_MAX_BYTES: usize = 1024;

/// What the controller decided from, one record per tick (see [`ControlTrace`]).
pub(crate) const CONTROL_TRACE: &str = "demo/control_trace";

horus::message! {
    /// The inputs behind one controller tick: which scan and IMU reading (by their
    /// `header.stamp` in ns; 0 when none had arrived yet), which stop flag (its `stamp_ns`)
    /// and which tuning produced the command, and the command itself (a `Twist` has no
    /// stamp: this record is what links a command to its tick). With it,
    /// `horus-demo --replay` feeds the controller exactly what it saw.
    pub struct ControlTrace: "horus-demo/ControlTrace", version 2 {
        /// The tick's time (wall clock, ns since the epoch).
        pub tick_ns: u64,
        /// `header.stamp` of the scan decided from, ns.
        pub scan_stamp_ns: u64,
        /// `header.stamp` of the IMU reading whose yaw rate was damped, ns.
        pub imu_stamp_ns: u64,
        /// `stamp_ns` of the detector's stop flag considered.
        pub flag_stamp_ns: u64,
        /// Cruise speed in force, m/s.
        pub cruise: f32,
        /// Stop distance in force, m.
        pub stop_at: f32,
        /// The command sent on `demo/cmd_vel` this tick: `linear.x`, m/s.
        pub linear: f32,
        /// The command sent on `demo/cmd_vel` this tick: `angular.z`, rad/s.
        pub angular: f32,
    }
}

/// `demo/control_trace`: one per controller tick.
pub(crate) fn control_trace(ns: &str) -> Result<Topic<ControlTrace>, TopicError> {
    open(ns, CONTROL_TRACE, 16)
}

/// Opens `name` in namespace `ns` with the demo's QoS: `DropOldest`
/// (sensor-style: the newest reading matters; every overwrite is counted as
/// lost) and a history of `depth` messages per publisher.
fn open<T: Message>(ns: &str, name: &str, depth: u32) -> Result<Topic<T>, TopicError> {
    Topic::<T>::builder(name)
        .namespace(ns)
        .depth(depth)
        .overflow(Overflow::DropOldest)
        .open()
}

/// [`open`] for a ROS 2 type, whose CDR body is at most `max_bytes` (each message is one
/// shared-memory chunk of that size).
fn open_ros<M: horus::cdr::RosMessage>(
    ns: &str,
    name: &str,
    depth: u32,
    max_bytes: usize,
) -> Result<Topic<Ros<M>>, TopicError> {
    Topic::<Ros<M>>::builder(name)
        .namespace(ns)
        .depth(depth)
        .overflow(Overflow::DropOldest)
        .max_tail_bytes(max_bytes)
        .open()
}

/// `demo/scan`: 8 scans of history (0.8 s at 10 Hz).
pub(crate) fn scan(ns: &str) -> Result<Topic<Ros<LaserScan>>, TopicError> {
    open_ros(ns, SCAN, 8, SCAN_MAX_BYTES)
}

/// `demo/imu`: 64 readings of history (64 ms at 1 kHz), so a subscriber that
/// is descheduled for a few tens of milliseconds loses nothing.
pub(crate) fn imu(ns: &str) -> Result<Topic<Ros<Imu>>, TopicError> {
    open_ros(ns, IMU, 64, SMALL_MAX_BYTES)
}

/// `demo/cmd_vel`: 16 commands of history (160 ms at 100 Hz).
pub(crate) fn cmd_vel(ns: &str) -> Result<Topic<Ros<Twist>>, TopicError> {
    open_ros(ns, CMD_VEL, 16, SMALL_MAX_BYTES)
}

/// `demo/odom`: 16 messages of history (160 ms at 100 Hz).
pub(crate) fn odom(ns: &str) -> Result<Topic<Ros<Odometry>>, TopicError> {
    open_ros(ns, ODOM, 16, SMALL_MAX_BYTES)
}

/// `demo/estop`: a few messages of history; there is at most one per
/// scheduler.
pub(crate) fn estop(ns: &str) -> Result<Topic<EmergencyStop>, TopicError> {
    open(ns, ESTOP, 8)
}

/// `demo/stop`: 8 flags of history (0.8 s at 10 Hz).
pub(crate) fn stop_flag(ns: &str) -> Result<Topic<EmergencyStop>, TopicError> {
    open(ns, STOP, 8)
}

/// Wall-clock time, ns since the UNIX epoch (`CLOCK_REALTIME`), which is
/// what every `stamp_ns` field of the horus messages and every ROS `header.stamp` holds. The clock is
/// system-wide, so a stamp taken in one process and read in another on the
/// same machine gives a one-way latency (an NTP step during the run would
/// show up as an outlier; slewing changes it by parts per million).
pub(crate) fn now_ns() -> u64 {
    Time::now().nanos
}

/// `ns` since the epoch as a ROS `builtin_interfaces/msg/Time` (seconds saturate at
/// `i32::MAX`, in 2038).
pub(crate) fn ros_time(ns: u64) -> RosTime {
    RosTime {
        sec: i32::try_from(ns / 1_000_000_000).unwrap_or(i32::MAX),
        nanosec: (ns % 1_000_000_000) as u32,
    }
}

/// A ROS `builtin_interfaces/msg/Time` as ns since the epoch (0 for times before it).
pub(crate) fn stamp_ns(sec: i32, nanosec: u32) -> u64 {
    u64::try_from(sec).map_or(0, |s| s * 1_000_000_000 + u64::from(nanosec))
}

/// Messages a node could not publish (nothing was sent for them), counted, the first one
/// logged, and the count reported at shutdown.
#[derive(Debug, Default)]
pub(crate) struct Failed(u64);

impl Failed {
    /// Counts a failed publish of `node`; logs the first.
    pub(crate) fn record(&mut self, node: &str, e: &impl std::fmt::Display) {
        if self.0 == 0 {
            horus_log::warn!("publish failed: {}", e.to_string(); node = node);
        }
        self.0 += 1;
    }

    /// `""`, or `", N not sent (publish failed)"`.
    pub(crate) fn summary(&self) -> String {
        if self.0 == 0 {
            String::new()
        } else {
            format!(", {} not sent (publish failed)", self.0)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ros_time_round_trips_wall_clock_ns() {
        let ns = 1_764_250_000_123_456_789;
        let t = ros_time(ns);
        assert_eq!((t.sec, t.nanosec), (1_764_250_000, 123_456_789));
        assert_eq!(stamp_ns(t.sec, t.nanosec), ns);
        assert_eq!(stamp_ns(-1, 5), 0);
    }
}
