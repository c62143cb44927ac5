//! The demo robot's topics: names, message types and QoS, in one place so
//! that every process opens them with the same settings (whichever process
//! comes first creates the segment; the others must agree with it).

use horus::prelude::*;

/// Lidar scans, 10 Hz.
pub(crate) const SCAN: &str = "demo/scan";
/// IMU readings, 1 kHz.
pub(crate) const IMU: &str = "demo/imu";
/// Velocity commands from the controller to the motor, 100 Hz.
pub(crate) const CMD_VEL: &str = "demo/cmd_vel";
/// Emergency stops announced by any of the robot's schedulers.
pub(crate) const ESTOP: &str = "demo/estop";
/// The Python obstacle detector's stop flag (an `EmergencyStop`: engaged
/// while an obstacle is too close ahead, released otherwise), one per scan.
/// The controller honours it. Not the robot-wide emergency stop.
pub(crate) const STOP: &str = "demo/stop";

/// What the controller decided from, one record per tick (see [`ControlTrace`]).
pub(crate) const CONTROL_TRACE: &str = "demo/control_trace";

horus::message! {
    /// The inputs behind one controller tick: which scan, IMU reading and stop flag (by their
    /// `stamp_ns`; 0 when none had arrived yet) and which tuning produced the command stamped
    /// `tick_ns`. With it, `horus-demo --replay` feeds the controller exactly what it saw.
    pub struct ControlTrace: "horus-demo/ControlTrace", version 1 {
        /// The tick's time, the command's `stamp_ns` (wall clock, ns since the epoch).
        pub tick_ns: u64,
        /// `stamp_ns` of the scan decided from.
        pub scan_stamp_ns: u64,
        /// `stamp_ns` of the IMU reading whose yaw rate was damped.
        pub imu_stamp_ns: u64,
        /// `stamp_ns` of the detector's stop flag considered.
        pub flag_stamp_ns: u64,
        /// Cruise speed in force, m/s.
        pub cruise: f32,
        /// Stop distance in force, m.
        pub stop_at: f32,
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

/// `demo/scan`: 8 scans of history (0.8 s at 10 Hz).
pub(crate) fn scan(ns: &str) -> Result<Topic<LaserScan>, TopicError> {
    open(ns, SCAN, 8)
}

/// `demo/imu`: 64 readings of history (64 ms at 1 kHz), so a subscriber that
/// is descheduled for a few tens of milliseconds loses nothing.
pub(crate) fn imu(ns: &str) -> Result<Topic<Imu>, TopicError> {
    open(ns, IMU, 64)
}

/// `demo/cmd_vel`: 16 commands of history (160 ms at 100 Hz).
pub(crate) fn cmd_vel(ns: &str) -> Result<Topic<CmdVel>, TopicError> {
    open(ns, CMD_VEL, 16)
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
/// what every `stamp_ns` field of the standard messages holds. The clock is
/// system-wide, so a stamp taken in one process and read in another on the
/// same machine gives a one-way latency (an NTP step during the run would
/// show up as an outlier; slewing changes it by parts per million).
pub(crate) fn now_ns() -> u64 {
    Time::now().nanos
}
