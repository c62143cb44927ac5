//! Which process feeds the host's buffer: the one holding the feeder claim, an abstract
//! Unix socket bound to a name derived from the user and the namespace.
//!
//! Binding an abstract socket name is atomic and exclusive across the host (the network
//! namespace), and the kernel releases the name when its holder exits, however it exits
//! (kill -9 included): a claim can never be left behind by a dead process, and nothing is
//! left on disk or in `/dev/shm`. The socket is never listened on or connected to.

use std::os::linux::net::SocketAddrExt;
use std::os::unix::fs::MetadataExt;
use std::os::unix::net::{SocketAddr, UnixListener};

/// The longest abstract name Linux takes (`sun_path` less the leading NUL).
const MAX_NAME: usize = 107;

/// The claim's name for `namespace` of this user; a namespace too long for the socket name
/// is replaced by a 64-bit hash of it.
fn claim_name(namespace: &str) -> String {
    // This process's user: the owner of its /proc entry.
    let uid = std::fs::metadata("/proc/self").map_or(u32::MAX, |m| m.uid());
    let name = format!("horus.{uid}.{namespace}.tf.feeder");
    if name.len() <= MAX_NAME {
        return name;
    }
    // FNV-1a: stable across processes and builds (std's hasher is randomly keyed).
    let hash = namespace.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    });
    format!("horus.{uid}.#{hash:016x}.tf.feeder")
}

/// The feeder claim, held while this value lives.
#[derive(Debug)]
pub(crate) struct FeederClaim {
    _socket: UnixListener,
}

impl FeederClaim {
    /// Takes the claim for `namespace` if no live process holds it.
    pub(crate) fn try_take(namespace: &str) -> Option<FeederClaim> {
        let addr = SocketAddr::from_abstract_name(claim_name(namespace).as_bytes()).ok()?;
        // EADDRINUSE: a live process holds it. Any other error: no claim either; the caller
        // tries again later.
        UnixListener::bind_addr(&addr)
            .ok()
            .map(|s| FeederClaim { _socket: s })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_holder_at_a_time_and_released_on_drop() {
        let ns = format!("claim-test-{}", std::process::id());
        let first = FeederClaim::try_take(&ns).expect("free claim");
        assert!(FeederClaim::try_take(&ns).is_none());
        drop(first);
        assert!(FeederClaim::try_take(&ns).is_some());
    }

    #[test]
    fn a_long_namespace_gets_a_hashed_name_that_fits() {
        let long = "n".repeat(300);
        let name = claim_name(&long);
        assert!(name.len() <= MAX_NAME, "{name}");
        assert_eq!(name, claim_name(&long));
        assert_ne!(name, claim_name(&"m".repeat(300)));
    }
}
