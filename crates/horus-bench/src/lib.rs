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
//!   [`machine`], [`markdown`], [`units`] — the machine a document records, the tables
//!   as text and Markdown, and how sizes and times are written in them;
//! * [`horus_wire`] — the payloads as horus messages (the crate `horus-bench-wire`,
//!   which `horus-bench-multi-host` shares) and how each is written, read and echoed;
//! * [`floors`] — the hardware floor (cache-line handoff) and the references
//!   (memcpy, in-place touch, futex wake), which are not lower bounds;
//! * [`peer`] — what every system under test is (one trait, `horus-bench-core`'s);
//!   [`pubsub`] — horus's publish/subscribe peers (topics, and the Unix socket as
//!   the kernel-copy reference) behind it, as are horus's services in [`rpc`];
//! * [`robotics`], [`topology`], [`rate`] — robotics message types, M:K
//!   publishers/subscribers in a thread, threads or processes, and paced traffic;
//! * [`interleaved`] — horus and each peer back to back over several rounds, and
//!   the per-round ratios every "faster" claim is drawn from; [`many_to_many`] —
//!   the same for 4 publisher and 4 subscriber processes against iceoryx2;
//! * [`rpc`] — request/response calls: horus services, and the rows and tables of
//!   the `rpc` binary;
//! * [`report`], [`ratios`], [`cli`] — tables, JSON and the command line of the
//!   `pingpong` binary; [`suite`], [`rows`] — the same for the suite binaries
//!   (`horus-bench-core`'s suite harness with horus's own child roles);
//!   [`logging`] — the rows and tables of that benchmark; [`block_wake`] — the document,
//!   table and method of the `block_wake` binary; [`testing`] — what the binaries'
//!   black-box tests share.
//!
//! This crate links no peer middleware. Its binaries measure horus alone
//! (`all_paths`, `block_wake`, `payload_sweep`, `robotics_messages`, `scalability`);
//! each benchmark that measures a peer is a crate of its own whose dependencies
//! are exactly the peers it measures, so a binary compiles only those:
//! `horus-bench-pingpong` (`pingpong`, `many_to_many`: iceoryx2),
//! `horus-bench-peers` (`peers`, `interleaved`: iceoryx2, Zenoh), `horus-bench-rpc`
//! (`rpc`: iceoryx2, Zenoh, gRPC), `horus-bench-multi-host` (`multi_host`: Zenoh,
//! network namespaces, horus's bridge), `horus-bench-ros` (`ros_messages`, `tf`),
//! `horus-bench-ros2` (`ros2`: the ROS 2 bridge), `horus-bench-loggers` (`logging`).
//! The rows of `multi_host` are `horus-bench-multi-host-rows`'s, those of
//! `ros_messages` (and its ROS 2 message workloads) `horus-bench-ros`'s. The page is
//! rendered from the rows by `horus-bench-report`.
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

pub use horus_bench_core::{
    affinity, child, clock, harness, machine, markdown, payload, peer, stats, sysclock, units,
};

pub mod block_wake;
pub mod cli;
pub mod floors;
pub mod horus_wire;
pub mod interleaved;
pub mod logging;
pub mod many_to_many;
pub mod pubsub;
pub mod rate;
pub mod ratios;
pub mod report;
pub mod robotics;
pub mod rows;
pub mod rpc;
pub mod suite;
pub mod tables;
pub mod testing;
pub mod topology;
