//! Which process feeds the host's buffer: the one holding the feeder claim, an abstract
//! Unix socket bound to a name derived from the user and the namespace.
//!
//! Binding an abstract socket name is atomic and exclusive across the host (the network
//! namespace), and the kernel releases the name when its holder exits, however it exits
//! (kill -9 included): a claim can never be left behind by a dead process, and nothing is
//! left on disk or in `/dev/shm`.
//!
//! The holder's socket listens (std's `bind` does) but never accepts: a standby listener
//! connects to it ([`watch`]) and sleeps in a read of that connection, which the kernel
//! ends when the holder's socket is closed — the holder exiting, however it exits. A standby
//! thus costs nothing while it waits, instead of a bind attempt and a wake-up every 100 ms.

use std::os::fd::{FromRawFd, OwnedFd};
use std::os::linux::net::SocketAddrExt;
use std::os::unix::fs::MetadataExt;
use std::os::unix::net::{SocketAddr, UnixListener, UnixStream};

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

/// A connection to the claim's holder for `namespace`, to wait on: a blocking read of it
/// returns (end of file or `ECONNRESET`) once the holder's socket is closed. None when there
/// is no holder, when the holder does not listen (not a horus feeder) or when its queue of
/// waiting connections is full: the caller then tries the claim again later.
pub(crate) fn watch(namespace: &str) -> Option<UnixStream> {
    let name = claim_name(namespace);
    // An abstract address: `sun_path` starts with a NUL, then the name (not NUL-terminated;
    // the length passed says where it ends).
    // SAFETY: sockaddr_un is plain old data; all-zero is a valid value.
    let mut addr: libc::sockaddr_un = unsafe { std::mem::zeroed() };
    addr.sun_family = libc::AF_UNIX as libc::sa_family_t;
    debug_assert!(name.len() <= MAX_NAME);
    for (d, s) in addr.sun_path[1..].iter_mut().zip(name.as_bytes()) {
        *d = *s as libc::c_char;
    }
    let len = std::mem::size_of::<libc::sa_family_t>() + 1 + name.len();
    // Non-blocking for the connect only: a listener whose queue is full would otherwise
    // block us in `connect` until a place frees, which never happens (nobody accepts).
    // SAFETY: socket(2) takes no pointers.
    let fd = unsafe {
        libc::socket(
            libc::AF_UNIX,
            libc::SOCK_STREAM | libc::SOCK_CLOEXEC | libc::SOCK_NONBLOCK,
            0,
        )
    };
    if fd < 0 {
        return None;
    }
    // SAFETY: `fd` is a socket we just created and own; OwnedFd closes it on every path.
    let fd = unsafe { OwnedFd::from_raw_fd(fd) };
    let stream = UnixStream::from(fd);
    // SAFETY: `addr` is a valid sockaddr_un and `len` ≤ its size (name ≤ 107 bytes).
    let r = unsafe {
        libc::connect(
            std::os::fd::AsRawFd::as_raw_fd(&stream),
            (&raw const addr).cast::<libc::sockaddr>(),
            len as libc::socklen_t,
        )
    };
    // A Unix stream connect completes at once or fails (ECONNREFUSED: nobody, or not
    // listening; EAGAIN: the queue is full).
    if r != 0 {
        return None;
    }
    stream.set_nonblocking(false).ok()?;
    Some(stream)
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
    fn a_watch_ends_when_the_holder_lets_go() {
        use std::io::Read;
        let ns = format!("claim-watch-{}", std::process::id());
        assert!(watch(&ns).is_none(), "no holder: nothing to watch");
        let claim = FeederClaim::try_take(&ns).expect("free claim");
        let mut conn = watch(&ns).expect("a holder to watch");
        let waiter = std::thread::spawn(move || conn.read(&mut [0u8; 1]));
        std::thread::sleep(std::time::Duration::from_millis(20));
        assert!(
            !waiter.is_finished(),
            "the watch ended while the claim was held"
        );
        drop(claim);
        // End of file or ECONNRESET: either says the holder is gone.
        let _ = waiter.join().unwrap();
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
