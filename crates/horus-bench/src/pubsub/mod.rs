//! Publish/subscribe peers: one ping-pong measured the same way for every
//! transport (A writes, B echoes from a separate process, A reads).
//!
//! * [`horus`] — horus topics (loan or copy; busy-poll or futex wait);
//! * [`uds`] — a Unix-domain stream socket (the kernel copy reference).
//!
//! The other peers are crates of their own (`horus-bench-peer-iceoryx2`,
//! `horus-bench-peer-zenoh`), linked only by the benchmark crates that measure them
//! (`horus-bench-pingpong`, `horus-bench-peers`, `horus-bench-rpc`); each exports its
//! `CHILD_ROLES`, which those binaries pass to [`crate::suite::main_with`]. The trait
//! every one implements, [`PubSub`], is `horus-bench-core`'s.

pub mod horus;
pub mod uds;

pub use horus_bench_core::pubsub::{ChildRole, PubSub};

/// The child roles of horus and the Unix socket (every suite binary has them).
pub const OWN_ROLES: &[ChildRole] = &[
    ChildRole {
        role: horus::ECHO_ROLE,
        run: horus::echo_child,
    },
    ChildRole {
        role: horus::SINK_ROLE,
        run: horus::sink_child,
    },
    ChildRole {
        role: uds::ECHO_ROLE,
        run: uds::echo_child,
    },
];
