//! Black-box behaviour tests of the scheduler. They assert behaviour with
//! generous tolerances (the CI machine is shared and noisy), never latency.
//! Each test uses its own namespace, so they run in parallel.

mod api;
mod classes;
mod common;
mod deterministic;
mod estop;
mod failure;
mod miss;
mod rate;
mod sigterm;
mod stats_file;
mod watchdog;
