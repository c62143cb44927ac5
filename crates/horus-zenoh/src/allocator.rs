//! The bridge process's memory allocator settings.
//!
//! Zenoh's receiving thread allocates and frees its 64 KiB batch buffers as a large message's
//! fragments come and go. With glibc's defaults the allocator hands freed memory back to the
//! kernel (`madvise`) and faults it in again for the next allocation, on that same thread:
//! measured with 1 MiB messages at 1 kHz between two hosts, that churn took the receiving
//! host's core to 80–100 % and one-way latency from ~1 ms to 15–23 ms in some runs. Keeping
//! the memory (a high trim threshold) and serving these sizes from the heap (a high mmap
//! threshold) removes it.

/// Freed memory kept by the allocator before it is returned to the kernel.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
const TRIM_THRESHOLD: libc::c_int = 256 << 20;
/// Allocations below this come from the heap, not from a mapping of their own.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
const MMAP_THRESHOLD: libc::c_int = 32 << 20;

/// Sets the process's allocator for a bridge: call once, early in `main` of a process that
/// runs a [`Bridge`](crate::Bridge). Process-wide; does nothing where the C library is not
/// glibc. Returns whether the settings were taken.
pub fn tune_allocator_for_bridge() -> bool {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        // SAFETY: mallopt only changes glibc's allocator parameters; it is called with valid
        // parameter numbers and values and touches no memory of ours.
        unsafe {
            libc::mallopt(libc::M_TRIM_THRESHOLD, TRIM_THRESHOLD) == 1
                && libc::mallopt(libc::M_MMAP_THRESHOLD, MMAP_THRESHOLD) == 1
        }
    }
    #[cfg(not(all(target_os = "linux", target_env = "gnu")))]
    {
        false
    }
}
