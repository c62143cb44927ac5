//! The one place atomics come from, so loom can swap them in.
//!
//! Every lock-free algorithm in this crate (the slot ring in `ring.rs`, the
//! chunk pool in `pool.rs`) uses these re-exports. Under `cfg(loom)` they are
//! loom's model-checked types and the loom tests in `tests/loom_*.rs` explore
//! every interleaving; in normal builds they are `core::sync::atomic`, whose
//! types have the same in-memory representation as the plain integers, which
//! is what lets us overlay them on shared memory.

#[cfg(loom)]
pub use loom::sync::atomic::{fence, AtomicU32, AtomicU64, Ordering};

#[cfg(not(loom))]
pub use core::sync::atomic::{fence, AtomicU32, AtomicU64, Ordering};

/// Gives the CPU to another runnable thread, if any (loom: lets another thread run).
#[inline]
pub fn yield_now() {
    #[cfg(loom)]
    loom::thread::yield_now();
    #[cfg(not(loom))]
    std::thread::yield_now();
}

/// Spin-loop hint that loom understands (it must be able to preempt a spinner).
#[inline(always)]
pub fn spin_hint() {
    #[cfg(loom)]
    loom::thread::yield_now();
    #[cfg(not(loom))]
    core::hint::spin_loop();
}
