//! What a publish/subscribe peer is: one ping-pong measured the same way for every
//! transport (A writes, B echoes from a separate process, A reads). The peers
//! themselves live in crates of their own (`horus-bench-peer-iceoryx2`,
//! `horus-bench-peer-zenoh`), horus's and the Unix socket's in `horus-bench`.

use crate::harness::{Config, Mode};
/// The far side of a measurement in a child process (every kind of peer has them).
pub use crate::peer::ChildRole;
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
