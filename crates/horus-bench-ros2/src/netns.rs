//! Keeps DDS on this machine: the benchmark moves itself into a new network namespace with
//! only the loopback interface up before it starts any process, so every child (rclpy's Fast
//! DDS, the bridge's RustDDS) can reach nothing but 127.0.0.1.

use anyhow::{bail, Context};

/// Moves the calling thread (the one that then spawns every child) into a fresh network
/// namespace and brings `lo` up. Needs CAP_SYS_ADMIN (root) and iproute2's `ip`.
pub fn enter_private_loopback() -> anyhow::Result<()> {
    // SAFETY: unshare takes a flag word and touches no memory of ours; CLONE_NEWNET moves
    // only the calling thread (other threads, if any, keep their namespace), and every child
    // is spawned from this thread.
    let rc = unsafe { libc::unshare(libc::CLONE_NEWNET) };
    if rc != 0 {
        let e = std::io::Error::last_os_error();
        bail!("unshare(CLONE_NEWNET): {e} (run as root, or pass --no-netns)");
    }
    let status = std::process::Command::new("ip")
        .args(["link", "set", "lo", "up"])
        .status()
        .context("running `ip link set lo up` (iproute2)")?;
    if !status.success() {
        bail!("`ip link set lo up` failed: {status}");
    }
    Ok(())
}
