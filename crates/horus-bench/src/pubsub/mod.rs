//! Publish/subscribe peers: one ping-pong measured the same way for every
//! transport (A writes, B echoes from a separate process, A reads).
//!
//! * [`horus`] — horus topics (loan or copy; busy-poll or futex wait);
//! * [`uds`] — a Unix-domain stream socket (the kernel copy reference);
//! * [`iceoryx2`] — iceoryx2 publish/subscribe (feature `iceoryx2`);
//! * [`zenoh`] — Zenoh over TCP loopback or its shared memory (feature `zenoh`).

mod by_name;
pub mod horus;
#[cfg(feature = "iceoryx2")]
pub mod iceoryx2;
pub mod uds;
#[cfg(feature = "zenoh")]
pub mod zenoh;

pub use by_name::by_name;

use crate::child::ChildArgs;
use crate::harness::{Config, Mode};
use crate::peer::Peer;
use crate::stats::Summary;

/// A publish/subscribe peer: round trips of `size`-byte messages, A in the calling
/// thread, B (the echo side) a child process.
pub trait PubSub: Peer + Sync {
    /// How the payload moves: [`Mode::Loan`] (written and read in place) or
    /// [`Mode::Copy`].
    fn mode(&self) -> Mode;
    /// Whether both sides busy-poll while waiting (else they block in the kernel).
    fn busy_polls(&self) -> bool;
    /// `cfg.warmup` untimed and `cfg.iterations` timed round trips, A on `cpus[0]`
    /// and B on `cpus[1]` if pinned.
    fn round_trip(
        &self,
        cfg: &Config,
        size: usize,
        cpus: Option<[usize; 2]>,
    ) -> anyhow::Result<Summary>;
}

/// A child role of a pub/sub peer: the far side of its measurement, run in the
/// benchmark's own executable re-started as `--child <role>` ([`crate::child`]).
#[derive(Debug, Clone, Copy)]
pub struct ChildRole {
    /// The role name on the child's command line.
    pub role: &'static str,
    /// Its entry point.
    pub run: fn(ChildArgs) -> anyhow::Result<()>,
}

/// Every pub/sub child role compiled into this binary (a peer whose feature is
/// off has none).
pub const CHILD_ROLES: &[ChildRole] = &[
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
    #[cfg(feature = "iceoryx2")]
    ChildRole {
        role: iceoryx2::ECHO_ROLE,
        run: iceoryx2::echo_child,
    },
    #[cfg(feature = "iceoryx2")]
    ChildRole {
        role: iceoryx2::SINK_ROLE,
        run: iceoryx2::sink_child,
    },
    #[cfg(feature = "zenoh")]
    ChildRole {
        role: zenoh::ECHO_ROLE,
        run: zenoh::echo_child,
    },
];

/// The pub/sub child role named `role`, if compiled in.
pub fn child_role(role: &str) -> Option<&'static ChildRole> {
    CHILD_ROLES.iter().find(|c| c.role == role)
}
