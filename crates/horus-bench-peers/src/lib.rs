//! The `peers` and `interleaved` benchmarks: horus topics beside iceoryx2, Zenoh (TCP
//! loopback and shared memory) and a Unix socket, one ping-pong each, the same way
//! ([`horus_bench::pubsub::PubSub`]). This crate links exactly those two peer
//! crates; [`by_name`] maps the `system` of a row to its peer and [`CHILD_ROLES`] is
//! what the binaries' child processes can be.
#![warn(missing_docs)]

mod by_name;

pub use by_name::by_name;
use horus_bench::pubsub::ChildRole;
/// The iceoryx2 pub/sub peer (the crate `horus-bench-peer-iceoryx2`).
pub use horus_bench_peer_iceoryx2::pubsub as iceoryx2;
/// The Zenoh pub/sub peer (the crate `horus-bench-peer-zenoh`).
pub use horus_bench_peer_zenoh::pubsub as zenoh;

/// The child roles of the peers this crate links (horus's own are every suite
/// binary's): what `peers` and `interleaved` pass to [`horus_bench::suite::main_with`].
pub const CHILD_ROLES: &[&[ChildRole]] = &[iceoryx2::CHILD_ROLES, zenoh::CHILD_ROLES];
