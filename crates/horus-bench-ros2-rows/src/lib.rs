//! The systems, rows, table and targets of the `ros2` benchmark (the reference report's
//! ROS 2 ping-pong between rclpy, horus Python, horus Rust and horus ↔ rclpy through the
//! bridge). The ends, the bridge and the `ros2` binary are the crate `horus-bench-ros2`
//! (which re-exports this one); these are a crate of their own so that the report
//! (`horus-bench-report`) reads and renders the rows without linking the bridge and its
//! DDS implementation.
#![warn(missing_docs)]

pub mod system;
pub mod table;
pub mod targets;

pub use system::System;
pub use targets::GAVE_UP;
