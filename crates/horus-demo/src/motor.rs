//! The `motor` process: applies the newest velocity command 1000 times a
//! second and integrates the robot's pose (a unicycle model).

use std::time::Duration;

use horus::prelude::*;

use crate::topics::now_ns;

/// A command older than this is not applied: the robot stops (the
/// controller died or stalled).
const COMMAND_TIMEOUT: Duration = Duration::from_millis(100);

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

/// The motor node.
pub(crate) struct Motor {
    commands: Subscriber<CmdVel>,
    estop: Subscriber<EmergencyStop>,
    command: CmdVel,
    pose: Pose,
    distance: f64,
    applied: u64,
    stale: u64,
    stopped: bool,
}

impl Motor {
    pub(crate) fn new(commands: Subscriber<CmdVel>, estop: Subscriber<EmergencyStop>) -> Motor {
        Motor {
            commands,
            estop,
            command: CmdVel::STOP,
            pose: Pose::default(),
            distance: 0.0,
            applied: 0,
            stale: 0,
            stopped: false,
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
        if let Some(cmd) = self.commands.latest() {
            self.command = *cmd;
        }
        let fresh =
            now_ns().saturating_sub(self.command.stamp_ns) <= COMMAND_TIMEOUT.as_nanos() as u64;
        let (linear, angular) = if self.stopped || !fresh {
            if !self.stopped && self.command.stamp_ns != 0 {
                self.stale += 1;
            }
            (0.0, 0.0)
        } else {
            self.applied += 1;
            (
                f64::from(self.command.linear),
                f64::from(self.command.angular),
            )
        };
        let dt = ctx
            .period()
            .unwrap_or(Duration::from_millis(1))
            .as_secs_f64();
        self.pose = self.pose.step(linear, angular, dt);
        self.distance += linear.abs() * dt;
        Ok(())
    }

    fn enter_safe_state(&mut self) {
        // Zero the motor currents, and keep them zero.
        self.stopped = true;
        self.command = CmdVel::STOP;
    }

    fn shutdown(&mut self) -> Result<(), NodeError> {
        let p = self.pose;
        println!(
            "motor: shut down; applied {} commands ({} ticks on a stale command), drove {:.2} m, \
             pose x {:+.2} m, y {:+.2} m, heading {:+.0}°{}",
            self.applied,
            self.stale,
            self.distance,
            p.x,
            p.y,
            heading_degrees(p.theta),
            if self.stopped {
                " (emergency-stopped)"
            } else {
                ""
            }
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
    }
}
