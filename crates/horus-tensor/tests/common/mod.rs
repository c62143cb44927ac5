//! Shared test helpers: unique namespaces and the segment path of a pool.
#![allow(dead_code)]

use std::sync::atomic::{AtomicU32, Ordering};

/// A namespace no other test (or test run) uses.
pub(crate) fn unique_ns(tag: &str) -> String {
    static N: AtomicU32 = AtomicU32::new(0);
    format!(
        "tt-{}-{tag}-{}",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    )
}

/// `/dev/shm/...` path of pool `id` in `ns`.
pub(crate) fn pool_path(ns: &str, id: u64) -> std::path::PathBuf {
    let name = horus_shm::name::segment_name(ns, "tp", &id.to_string()).unwrap();
    std::path::PathBuf::from(format!("/dev/shm{name}"))
}

/// A pool of `slots` one-page slots.
pub(crate) fn small(slots: u32) -> horus_tensor::PoolConfig {
    horus_tensor::PoolConfig {
        slots: Some(slots),
        slot_bytes: Some(4096),
    }
}
