//! Publish/subscribe peers: one ping-pong measured the same way for every
//! transport (A writes, B echoes from a separate process, A reads).
//!
//! * [`horus`] — horus topics (loan or copy; busy-poll or futex wait);
//! * [`uds`] — a Unix-domain stream socket (the kernel copy reference);
//! * [`iceoryx2`] — iceoryx2 publish/subscribe (the crate `horus-bench-peer-iceoryx2`,
//!   feature `iceoryx2`);
//! * [`zenoh`] — Zenoh over TCP loopback or its shared memory (the crate
//!   `horus-bench-peer-zenoh`, feature `zenoh`).
//!
//! The trait every one implements, [`PubSub`], is `horus-bench-core`'s.

mod by_name;
pub mod horus;
pub mod uds;

pub use by_name::by_name;
pub use horus_bench_core::pubsub::{ChildRole, PubSub};
/// iceoryx2 between M publisher and K subscriber processes (the `many_to_many` benchmark).
#[cfg(feature = "iceoryx2")]
pub use horus_bench_peer_iceoryx2::many as iceoryx2_many;
#[cfg(feature = "iceoryx2")]
pub use horus_bench_peer_iceoryx2::pubsub as iceoryx2;
#[cfg(feature = "zenoh")]
pub use horus_bench_peer_zenoh::pubsub as zenoh;

/// The child roles of horus and the Unix socket.
const OWN_ROLES: &[ChildRole] = &[
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

/// Every pub/sub child role compiled into this binary: horus's and the Unix
/// socket's, and those of each peer crate whose feature is on.
pub fn child_roles() -> impl Iterator<Item = &'static ChildRole> {
    const PEERS: &[&[ChildRole]] = &[
        OWN_ROLES,
        #[cfg(feature = "iceoryx2")]
        iceoryx2::CHILD_ROLES,
        #[cfg(feature = "zenoh")]
        zenoh::CHILD_ROLES,
    ];
    PEERS.iter().flat_map(|roles| roles.iter())
}

/// The pub/sub child role named `role`, if compiled in.
pub fn child_role(role: &str) -> Option<&'static ChildRole> {
    child_roles().find(|c| c.role == role)
}
