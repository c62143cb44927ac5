//! Benchmark harness of horus: cross-process ping-pong of horus against hardware
//! floors and peer transports, all timed with one clock and reported side by side.
//!
//! Every number is a **round trip** (A sends, B receives and answers, A receives)
//! or a **no-loss one-way burst** confirmed by the receiver — never the cost of a
//! send alone. The pieces:
//!
//! * the measuring library, the crate `horus-bench-core` (no middleware among its
//!   dependencies), re-exported here under the same names: [`clock`], [`stats`],
//!   [`harness`] — the timer, the statistics and the one measurement loop every
//!   system goes through; [`payload`] — how messages are written and read (whole
//!   payload or its ends); [`affinity`], [`child`] — pinning, and the echo side as a
//!   separate process; [`sysclock`] — the cross-process clock and CPU accounting;
//! * [`floors`] — the hardware floor (cache-line handoff) and the references
//!   (memcpy, in-place touch, futex wake), which are not lower bounds;
//! * [`peer`] — what every system under test is (one trait, `horus-bench-core`'s);
//!   [`pubsub`] — the publish/subscribe peers (horus, Unix socket, iceoryx2, Zenoh)
//!   behind it, as are the request/response peers of [`rpc`] and the two-host
//!   systems of the crate `horus-bench-multi-host` ([`multi_host`] holds its rows and
//!   tables). Each peer middleware is a crate of its own
//!   (`horus-bench-peer-iceoryx2`, `-zenoh`, `-grpc`) compiled in only with its
//!   cargo feature (`iceoryx2`, `zenoh`, `grpc`, …; all on by
//!   default), and each benchmark binary requires only the features of the peers it
//!   measures;
//! * [`robotics`], [`topology`], [`rate`] — robotics message types, M:K
//!   publishers/subscribers in a thread, threads or processes, and paced traffic;
//! * [`interleaved`] — horus and each peer back to back over several rounds, and
//!   the per-round ratios every "faster" claim is drawn from; [`many_to_many`] —
//!   the same for 4 publisher and 4 subscriber processes against iceoryx2;
//! * `ros_kinds`, `ros_loads`, `ros_peer`, `ros_build`, `ros_rows`, `ros_report` — ROS 2 messages
//!   (`Topic<Ros<M>>`) against the fixed-layout path of the same bytes, and loan
//!   builds against a memcpy (the `ros_messages` binary);
//! * [`rpc`] — request/response calls: horus services beside iceoryx2, Zenoh
//!   queryables and gRPC (the `rpc` binary);
//! * [`report`], [`ratios`], [`cli`] — tables, JSON and the command line of the
//!   `pingpong` binary; [`suite`], [`rows`] — the same for the suite binaries;
//!   [`markdown`] — the tables in Markdown. `docs/benchmarks.md` and its figures are
//!   rendered from the rows by the crate `horus-bench-report` (its `report` binary).
//!
//! ```no_run
//! use horus_bench::{floors, harness::Config, payload::Touch};
//!
//! let cfg = Config { warmup: 100, iterations: 1000, touch: Touch::Full,
//!                    one_way_messages: 1000, cpus: [0, 1] };
//! let floor = floors::cacheline(&cfg, Some(cfg.cpus))?;
//! println!("cache-line round trip: median {} ns", floor.median_ns);
//! # Ok::<(), anyhow::Error>(())
//! ```
#![warn(missing_docs)]

pub use horus_bench_core::{affinity, child, clock, harness, payload, peer, stats, sysclock};

pub mod cli;
pub mod floors;
pub mod horus_wire;
pub mod interleaved;
pub mod logging;
pub mod many_to_many;
pub mod markdown;
pub mod multi_host;
pub mod pubsub;
pub mod rate;
pub mod ratios;
pub mod report;
pub mod robotics;
#[cfg(feature = "ros2")]
pub mod ros2;
#[cfg(feature = "ros-msgs")]
pub mod ros_build;
#[cfg(feature = "ros-msgs")]
pub mod ros_kinds;
#[cfg(feature = "ros-msgs")]
pub mod ros_loads;
#[cfg(feature = "ros-msgs")]
pub mod ros_peer;
#[cfg(feature = "ros-msgs")]
pub mod ros_report;
#[cfg(feature = "ros-msgs")]
pub mod ros_rows;
pub mod rows;
pub mod rpc;
pub mod suite;
pub mod tables;
pub mod topology;
