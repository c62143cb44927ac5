//! The `sensors` process: a simulated lidar (10 Hz) and IMU (1 kHz).

use horus::prelude::*;

use crate::topics::now_ns;
use crate::world;

/// Publishes a `LaserScan` of the simulated world every tick.
pub(crate) struct Lidar {
    scans: Publisher<LaserScan>,
    sent: u64,
}

impl Lidar {
    pub(crate) fn new(scans: Publisher<LaserScan>) -> Lidar {
        Lidar { scans, sent: 0 }
    }
}

impl Node for Lidar {
    fn name(&self) -> &str {
        "lidar"
    }

    fn tick(&mut self, ctx: &TickContext<'_>) -> Result<(), NodeError> {
        let t = ctx.release_time().as_secs_f64();
        let scan_time = ctx.period().map_or(0.1, |p| p.as_secs_f32());
        // Written in place: the scan is filled in the publisher's staging
        // buffer and copied into the ring on send (no extra copy of our own).
        let mut scan = self
            .scans
            .loan()
            .map_err(|e| NodeError::msg(format!("lidar: loan failed: {e}")))?;
        world::fill_scan(&mut scan, t, scan_time);
        // Stamp last, just before the send: the latency the monitor reports
        // is from here to its receive.
        scan.stamp_ns = now_ns();
        // DropOldest never refuses a message.
        let _ = scan.send();
        self.sent += 1;
        Ok(())
    }

    fn shutdown(&mut self) -> Result<(), NodeError> {
        println!("lidar: shut down after {} scans", self.sent);
        Ok(())
    }
}

/// Publishes an `Imu` reading every tick.
pub(crate) struct ImuSensor {
    readings: Publisher<Imu>,
    reading: Imu,
    sent: u64,
}

impl ImuSensor {
    pub(crate) fn new(readings: Publisher<Imu>) -> ImuSensor {
        ImuSensor {
            readings,
            reading: bytemuck::Zeroable::zeroed(),
            sent: 0,
        }
    }
}

impl Node for ImuSensor {
    fn name(&self) -> &str {
        "imu"
    }

    fn tick(&mut self, ctx: &TickContext<'_>) -> Result<(), NodeError> {
        world::fill_imu(&mut self.reading, ctx.release_time().as_secs_f64());
        self.reading.stamp_ns = now_ns();
        let _ = self.readings.send(self.reading);
        self.sent += 1;
        Ok(())
    }

    fn shutdown(&mut self) -> Result<(), NodeError> {
        println!("imu: shut down after {} readings", self.sent);
        Ok(())
    }
}
