//! The simulated world the sensors measure: a square room with one moving
//! obstacle, seen from the robot (the sensor frame: x forward, y left, z up).
//!
//! The world is open-loop — the robot's motion does not move it — which is
//! all the demo needs: the controller has something approaching and
//! receding to react to, and every reading is a pure function of time, so a
//! run is reproducible.

use std::f64::consts::{PI, TAU};

use horus_ros_msgs::geometry_msgs::msg::{Quaternion, Vector3};
use horus_ros_msgs::sensor_msgs::msg::{Imu, LaserScan};

/// Beams per scan: one per degree.
pub(crate) const BEAMS: usize = 360;

/// Half the side of the square room around the robot, m.
const ROOM_HALF: f64 = 4.0;
/// Radius of the moving obstacle, m.
const OBSTACLE_RADIUS: f64 = 0.25;
/// Longest range the lidar reports, m.
pub(crate) const RANGE_MAX: f32 = 10.0;
/// Shortest range the lidar reports, m.
pub(crate) const RANGE_MIN: f32 = 0.05;

/// Centre of the obstacle at time `t` (s): it sways across the robot's path
/// and comes as close as 0.4 m every 5 s.
pub(crate) fn obstacle(t: f64) -> (f64, f64) {
    let x = 2.0 + 1.6 * (TAU * t / 5.0).sin();
    let y = 0.6 * (TAU * t / 3.7).sin();
    (x, y)
}

/// Distance along the unit ray `(c, s)` to the room's walls.
fn wall_range(c: f64, s: f64) -> f64 {
    let along = |d: f64| {
        if d.abs() < 1e-12 {
            f64::INFINITY
        } else {
            ROOM_HALF / d.abs()
        }
    };
    along(c).min(along(s))
}

/// Distance along the unit ray `(c, s)` to a circle centred at `(px, py)`,
/// if the ray hits it in front of the sensor.
fn circle_range(c: f64, s: f64, (px, py): (f64, f64), r: f64) -> Option<f64> {
    let b = px * c + py * s;
    let disc = b * b - (px * px + py * py - r * r);
    if disc < 0.0 {
        return None;
    }
    let t = b - disc.sqrt();
    (t > 0.0).then_some(t)
}

/// Fills `scan` with the sweep taken at time `t`: [`BEAMS`] beams, one per degree,
/// from −180° to +179° (no return: +∞, as REP 117 asks). The header is left for the
/// caller (stamped at send).
pub(crate) fn fill_scan(scan: &mut LaserScan, t: f64, scan_time: f32) {
    let n = BEAMS;
    let inc = TAU / n as f64;
    scan.angle_min = -PI as f32;
    scan.angle_increment = inc as f32;
    scan.angle_max = (-PI + inc * (n - 1) as f64) as f32;
    scan.scan_time = scan_time;
    scan.time_increment = scan_time / n as f32;
    scan.range_min = RANGE_MIN;
    scan.range_max = RANGE_MAX;
    scan.ranges.resize(n, 0.0);
    scan.intensities.clear();
    let obs = obstacle(t);
    for (i, r) in scan.ranges.iter_mut().enumerate() {
        let a = -PI + inc * i as f64;
        let (s, c) = a.sin_cos();
        let d = circle_range(c, s, obs, OBSTACLE_RADIUS)
            .unwrap_or(f64::INFINITY)
            .min(wall_range(c, s));
        *r = if d > f64::from(RANGE_MAX) {
            f32::INFINITY
        } else {
            d as f32
        };
    }
}

/// The IMU reading at time `t` (s): a gentle yaw oscillation plus gravity.
/// The header is left for the caller (stamped at send).
pub(crate) fn fill_imu(imu: &mut Imu, t: f64) {
    // ω_z(t) = A sin(2πt/T), so yaw(t) = A T / 2π · (1 − cos(2πt/T)).
    let (a, period) = (0.3, 2.0);
    let w = TAU / period;
    let yaw_rate = a * (w * t).sin();
    let yaw = a / w * (1.0 - (w * t).cos());
    let (sy, cy) = (yaw / 2.0).sin_cos();
    imu.orientation = Quaternion {
        x: 0.0,
        y: 0.0,
        z: sy,
        w: cy,
    };
    imu.angular_velocity = Vector3 {
        x: 0.0,
        y: 0.0,
        z: yaw_rate,
    };
    imu.linear_acceleration = Vector3 {
        x: 0.2 * (w * t).cos(),
        y: 0.0,
        z: 9.81,
    };
    // Row-major 3×3 covariances: 1e-4 on each diagonal.
    let diagonal = [1e-4, 0.0, 0.0, 0.0, 1e-4, 0.0, 0.0, 0.0, 1e-4];
    imu.orientation_covariance = diagonal;
    imu.angular_velocity_covariance = diagonal;
    imu.linear_acceleration_covariance = diagonal;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_scan_sees_the_obstacle_ahead_and_walls_elsewhere() {
        let mut scan = LaserScan::default();
        // t = 0: obstacle centre at (2.0, 0.0), straight ahead.
        fill_scan(&mut scan, 0.0, 0.1);
        let ahead = scan.ranges[180]; // angle 0
        assert!((ahead - 1.75).abs() < 1e-3, "{ahead}");
        let behind = scan.ranges[0]; // angle −180°
        assert!((behind - 4.0).abs() < 1e-3, "{behind}");
    }

    #[test]
    fn the_imu_measures_gravity() {
        let mut imu = Imu::default();
        fill_imu(&mut imu, 0.7);
        assert_eq!(imu.linear_acceleration.z, 9.81);
        let q = &imu.orientation;
        let norm = q.x * q.x + q.y * q.y + q.z * q.z + q.w * q.w;
        assert!((norm - 1.0).abs() < 1e-9);
    }
}
