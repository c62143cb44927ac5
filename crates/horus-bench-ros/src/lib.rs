//! The ROS 2 message workloads of the `ros_messages` benchmark, their rows and their
//! tables: ROS 2 messages on horus topics (`Topic<Ros<M>>`) against the fixed-layout
//! path of the same bytes, and loan builds against a memcpy; and the rows and tables of
//! the `tf` benchmark (transform lookups).
//!
//! * [`ros_kinds`], [`ros_loads`] — which messages, how each is built in a loan and
//!   read through its view;
//! * [`ros_peer`] — round trips of those messages between two processes, and of the
//!   same bytes as a fixed-layout message;
//! * [`ros_build`] — building a message in a loan against copying its bytes;
//! * [`ros_rows`], [`ros_tables`], [`ros_report`] — the rows of the `--json` document,
//!   their per-round ratios and targets, the printed tables and the sections of
//!   `docs/benchmarks.md` (which `horus-bench-report` renders from the rows);
//! * [`tf_rows`], [`tf_tables`] — the rows of the `tf` benchmark's `--json` document
//!   (transform lookups, and the host CPU of a shared buffer against per-process ones),
//!   their medians, ratios, tables and targets.
//!
//! Here rather than in `horus-bench` so that only this crate (and the report) compiles
//! the ROS 2 message types.
#![warn(missing_docs)]

pub mod ros_build;
pub mod ros_kinds;
pub mod ros_loads;
pub mod ros_peer;
pub mod ros_report;
pub mod ros_rows;
pub mod ros_tables;
pub mod tf_rows;
pub mod tf_tables;
