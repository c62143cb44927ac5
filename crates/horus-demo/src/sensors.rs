//! The `sensors` process: a simulated lidar (10 Hz) and IMU (1 kHz), publishing
//! `sensor_msgs/msg/LaserScan` and `sensor_msgs/msg/Imu`.

use horus::prelude::*;
use horus::ros::Ros;
use horus_ros_msgs::sensor_msgs::msg::{Imu, LaserScan};

use crate::topics::{self, now_ns, ros_time, Failed};
use crate::world;

/// Publishes a `LaserScan` of the simulated world every tick.
pub(crate) struct Lidar {
    scans: Publisher<Ros<LaserScan>>,
    /// Reused from tick to tick (its ranges keep their allocation).
    scan: LaserScan,
    sent: u64,
    failed: Failed,
}

impl Lidar {
    pub(crate) fn new(scans: Publisher<Ros<LaserScan>>) -> Lidar {
        let mut scan = LaserScan::default();
        scan.header.frame_id = topics::LASER_FRAME.to_owned();
        Lidar {
            scans,
            scan,
            sent: 0,
            failed: Failed::default(),
        }
    }
}

impl Node for Lidar {
    fn name(&self) -> &str {
        "lidar"
    }

    fn tick(&mut self, ctx: &TickContext<'_>) -> Result<(), NodeError> {
        let t = ctx.release_time().as_secs_f64();
        let scan_time = ctx.period().map_or(0.1, |p| p.as_secs_f32());
        world::fill_scan(&mut self.scan, t, scan_time);
        // Stamp last, just before the send: the latency the monitor reports
        // is from here to its receive. `publish` sizes the CDR, loans a chunk
        // and encodes the message into it in place.
        self.scan.header.stamp = ros_time(now_ns());
        // DropOldest never refuses a message for a full history; what can still fail (no
        // free chunk in the loan pool) is counted and reported at shutdown.
        match self.scans.publish(&self.scan) {
            Ok(_) => self.sent += 1,
            Err(e) => self.failed.record("lidar", &e),
        }
        Ok(())
    }

    fn shutdown(&mut self) -> Result<(), NodeError> {
        println!(
            "lidar: shut down after {} scans{}",
            self.sent,
            self.failed.summary()
        );
        Ok(())
    }
}

/// Publishes an `Imu` reading every tick.
pub(crate) struct ImuSensor {
    readings: Publisher<Ros<Imu>>,
    reading: Imu,
    sent: u64,
    failed: Failed,
}

impl ImuSensor {
    pub(crate) fn new(readings: Publisher<Ros<Imu>>) -> ImuSensor {
        let mut reading = Imu::default();
        reading.header.frame_id = topics::IMU_FRAME.to_owned();
        ImuSensor {
            readings,
            reading,
            sent: 0,
            failed: Failed::default(),
        }
    }
}

impl Node for ImuSensor {
    fn name(&self) -> &str {
        "imu"
    }

    fn tick(&mut self, ctx: &TickContext<'_>) -> Result<(), NodeError> {
        world::fill_imu(&mut self.reading, ctx.release_time().as_secs_f64());
        self.reading.header.stamp = ros_time(now_ns());
        match self.readings.publish(&self.reading) {
            Ok(_) => self.sent += 1,
            Err(e) => self.failed.record("imu", &e),
        }
        Ok(())
    }

    fn shutdown(&mut self) -> Result<(), NodeError> {
        println!(
            "imu: shut down after {} readings{}",
            self.sent,
            self.failed.summary()
        );
        Ok(())
    }
}
