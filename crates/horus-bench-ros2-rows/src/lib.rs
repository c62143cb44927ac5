//! The systems, rows, table and targets of the `ros2` benchmark (the reference report's
//! ROS 2 ping-pong between rclpy, horus Python, horus Rust and horus ↔ rclpy through the
//! bridge). The ends, the bridge and the `ros2` binary are the crate `horus-bench-ros2`
//! (which re-exports this one); these are a crate of their own so that the report
//! (`horus-bench-report`) reads and renders the rows without linking the bridge and its
//! DDS implementation.
#![warn(missing_docs)]

pub mod system;
pub mod table;

pub use system::System;

/// How a measurement whose ping gave up (round trips lost in a row) begins its error in the
/// JSON's `errors`: such a measurement misses the zero-loss target, and the report counts
/// them from the errors it reads back.
pub const GAVE_UP: &str = "ping gave up after";

/// Measurements whose ping gave up, among a run's errors (`what: error` each).
pub fn gave_up(errors: &[String]) -> usize {
    errors.iter().filter(|e| e.contains(GAVE_UP)).count()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_errors_of_a_ping_that_gave_up_count() {
        let errors = vec![
            format!("round 1 65536 B rclpy-to-horus: {GAVE_UP} 5 round trips lost in a row"),
            "round 1 64 B rclpy-rclpy: no round trip completed (3 lost)".to_owned(),
        ];
        assert_eq!(gave_up(&errors), 1);
        assert_eq!(gave_up(&[]), 0);
    }
}
