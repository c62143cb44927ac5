//! The `motor` process: applies the newest velocity command (`geometry_msgs/msg/Twist`)
//! 1000 times a second, integrates the robot's pose (a unicycle model) and publishes it
//! as `nav_msgs/msg/Odometry` 100 times a second, and as the transform `odom → base_link` on
//! `tf` with the same stamp.

use std::time::Duration;

use horus::prelude::*;
use horus::ros::Ros;
use horus_ros_msgs::geometry_msgs::msg::{Quaternion, Twist};
use horus_ros_msgs::nav_msgs::msg::Odometry;
use horus_tf::{transform_stamped, TransformBroadcaster};

use crate::topics::{self, now_ns, ros_time, Failed};

/// A command received longer ago than this is not applied: the robot stops
/// (the controller died or stalled). A `Twist` carries no stamp: the age is
/// counted from its arrival.
const COMMAND_TIMEOUT: Duration = Duration::from_millis(100);
/// Odometry is published every this many motor ticks (100 Hz at 1 kHz).
const ODOM_EVERY: u64 = 10;

/// The robot's pose in the plane: x, y (m), heading θ (rad).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub(crate) struct Pose {
    pub(crate) x: f64,
    pub(crate) y: f64,
    pub(crate) theta: f64,
}

impl Pose {
    /// The pose after driving at `linear` m/s and `angular` rad/s for `dt` s.
    pub(crate) fn step(self, linear: f64, angular: f64, dt: f64) -> Pose {
        // Midpoint heading: exact for straight lines, second-order for arcs.
        let mid = self.theta + 0.5 * angular * dt;
        Pose {
            x: self.x + linear * mid.cos() * dt,
            y: self.y + linear * mid.sin() * dt,
            theta: (self.theta + angular * dt).rem_euclid(std::f64::consts::TAU),
        }
    }
}

impl Pose {
    /// The heading as a quaternion (a rotation about z).
    pub(crate) fn orientation(&self) -> Quaternion {
        let (s, c) = (0.5 * self.theta).sin_cos();
        Quaternion {
            x: 0.0,
            y: 0.0,
            z: s,
            w: c,
        }
    }
}

/// The motor node.
pub(crate) struct Motor {
    commands: Subscriber<Ros<Twist>>,
    estop: Subscriber<EmergencyStop>,
    odom_out: Publisher<Ros<Odometry>>,
    /// `odom → base_link` on `tf`.
    tf: TransformBroadcaster,
    /// The newest command: linear and angular speed.
    command: (f64, f64),
    /// When it arrived (wall clock, ns; 0: none yet).
    command_at: u64,
    /// Reused from tick to tick.
    odom: Odometry,
    pose: Pose,
    distance: f64,
    ticks: u64,
    applied: u64,
    stale: u64,
    undecodable: u64,
    stopped: bool,
    failed: Failed,
}

impl Motor {
    pub(crate) fn new(
        commands: Subscriber<Ros<Twist>>,
        estop: Subscriber<EmergencyStop>,
        odom_out: Publisher<Ros<Odometry>>,
        tf: TransformBroadcaster,
    ) -> Motor {
        let mut odom = Odometry::default();
        odom.header.frame_id = topics::ODOM_FRAME.to_owned();
        odom.child_frame_id = topics::BASE_FRAME.to_owned();
        Motor {
            commands,
            estop,
            odom_out,
            tf,
            command: (0.0, 0.0),
            command_at: 0,
            odom,
            pose: Pose::default(),
            distance: 0.0,
            ticks: 0,
            applied: 0,
            stale: 0,
            undecodable: 0,
            stopped: false,
            failed: Failed::default(),
        }
    }

    /// Publishes the pose and the velocity applied.
    fn publish_odom(&mut self, linear: f64, angular: f64) {
        let o = &mut self.odom;
        o.header.stamp = ros_time(now_ns());
        o.pose.pose.position.x = self.pose.x;
        o.pose.pose.position.y = self.pose.y;
        o.pose.pose.orientation = self.pose.orientation();
        o.twist.twist.linear.x = linear;
        o.twist.twist.angular.z = angular;
        if let Err(e) = self.odom_out.publish(&self.odom) {
            self.failed.record("motor", &e);
        }
        // The same pose, as the transform tf users look up (`odom → base_link`).
        let p = &self.odom.pose.pose;
        let q = &p.orientation;
        let t = transform_stamped(
            topics::ODOM_FRAME,
            topics::BASE_FRAME,
            self.odom.header.stamp.clone(),
            [p.position.x, p.position.y, p.position.z],
            [q.x, q.y, q.z, q.w],
        );
        if let Err(e) = self.tf.send(&t) {
            self.failed.record("motor", &e);
        }
    }
}

impl Node for Motor {
    fn name(&self) -> &str {
        "motor"
    }

    fn tick(&mut self, ctx: &TickContext<'_>) -> Result<(), NodeError> {
        // An emergency stop from any of the robot's schedulers latches.
        while let Some(e) = self.estop.try_recv() {
            if e.is_engaged() {
                self.enter_safe_state();
            }
        }
        let now = now_ns();
        if let Some(sample) = self.commands.latest() {
            match sample.view() {
                Ok(t) => {
                    self.command = (t.linear().x(), t.angular().z());
                    self.command_at = now;
                }
                Err(e) => {
                    if self.undecodable == 0 {
                        horus_log::warn!("skipping an undecodable command: {}", e.to_string(); node = "motor");
                    }
                    self.undecodable += 1;
                }
            }
        }
        let fresh = now.saturating_sub(self.command_at) <= COMMAND_TIMEOUT.as_nanos() as u64;
        let (linear, angular) = if self.stopped || !fresh {
            if !self.stopped && self.command_at != 0 {
                self.stale += 1;
            }
            (0.0, 0.0)
        } else {
            self.applied += 1;
            self.command
        };
        let dt = ctx
            .period()
            .unwrap_or(Duration::from_millis(1))
            .as_secs_f64();
        self.pose = self.pose.step(linear, angular, dt);
        self.distance += linear.abs() * dt;
        if self.ticks.is_multiple_of(ODOM_EVERY) {
            self.publish_odom(linear, angular);
        }
        self.ticks += 1;
        Ok(())
    }

    fn enter_safe_state(&mut self) {
        // Zero the motor currents, and keep them zero.
        self.stopped = true;
        self.command = (0.0, 0.0);
    }

    fn shutdown(&mut self) -> Result<(), NodeError> {
        let p = self.pose;
        println!(
            "motor: shut down; applied {} commands ({} ticks on a stale command{}), drove \
             {:.2} m, pose x {:+.2} m, y {:+.2} m, heading {:+.0}°{}{}",
            self.applied,
            self.stale,
            if self.undecodable == 0 {
                String::new()
            } else {
                format!(", {} undecodable commands skipped", self.undecodable)
            },
            self.distance,
            p.x,
            p.y,
            heading_degrees(p.theta),
            if self.stopped {
                " (emergency-stopped)"
            } else {
                ""
            },
            self.failed.summary()
        );
        Ok(())
    }
}

/// A heading in [0, 2π) as degrees in (−180°, 180°].
fn heading_degrees(theta: f64) -> f64 {
    let d = theta.to_degrees();
    if d > 180.0 {
        d - 360.0
    } else {
        d
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_straight_line_and_a_quarter_turn() {
        let mut p = Pose::default();
        for _ in 0..1000 {
            p = p.step(0.5, 0.0, 0.001);
        }
        assert!((p.x - 0.5).abs() < 1e-9 && p.y.abs() < 1e-12);
        let mut q = Pose::default();
        for _ in 0..1000 {
            q = q.step(0.0, std::f64::consts::FRAC_PI_2, 0.001);
        }
        assert!((q.theta - std::f64::consts::FRAC_PI_2).abs() < 1e-9);
        assert_eq!(heading_degrees(1.5 * std::f64::consts::PI), -90.0);
        let o = q.orientation();
        assert!((o.z - std::f64::consts::FRAC_PI_4.sin()).abs() < 1e-9);
        assert!((o.w - std::f64::consts::FRAC_PI_4.cos()).abs() < 1e-9);
    }
}
