//! horus-tensor: pools of fixed-size tensor slots in shared memory, handed
//! between processes by descriptor and reference-counted per process.
//!
//! A pool is one segment (`/dev/shm/horus.<namespace>.tp.<id>`) of `slots`
//! page-aligned slots of `slot_bytes` each. A process opens it by namespace
//! and id ([`TensorPool::open`], creating it on first use), allocates a
//! tensor ([`TensorPool::alloc`], [`TensorPool::alloc_array`]), writes it in
//! place, and hands its [`TensorRef`] (a horus message: pool, slot,
//! generation, offset, size, dtype, shape) to another process, which takes
//! its own reference with [`TensorPool::attach`]. The slot returns to the
//! pool when the last [`Tensor`] of every process is dropped — or when a
//! holder process dies: its references are reclaimed by the next process
//! that looks. The last holder out unlinks the segment.
//!
//! ```
//! use horus_tensor::{Meta, PoolConfig, TensorPool};
//!
//! # let ns = format!("doc-{}", std::process::id());
//! let cfg = PoolConfig { slots: Some(2), slot_bytes: Some(4096) };
//! let pool = TensorPool::open(&ns, 1, cfg)?;
//! let (tensor, descriptor) = pool.alloc_array("<f4", &[2, 3], Meta::default())?;
//! // SAFETY: 24 bytes of a freshly allocated slot nobody else holds.
//! unsafe { tensor.as_ptr().cast::<f32>().write(1.5) };
//!
//! // In the receiving process (the same here): map the pool, take a reference.
//! let there = TensorPool::open(&ns, descriptor.pool_id, PoolConfig::default())?;
//! let received = there.attach(&descriptor)?;
//! assert_eq!(descriptor.dims()?, &[2, 3]);
//! assert_eq!(received.bytes()[..4], 1.5f32.to_ne_bytes());
//! drop((tensor, received));
//! assert_eq!(pool.free_slots(), 2);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! Built from `horus-shm`'s kit: [`horus_shm::init`] (open with the
//! creator's initialisation wait), `horus_shm::place` (holder places,
//! membership, dead-holder reclaim that survives the reclaimer's death),
//! [`horus_shm::sync`] (atomics loom swaps in; the reference-count protocol
//! in `refs.rs` is loom-checked by `tests/loom_refcounts.rs`).
//!
//! The segment is untrusted input: the header is validated on open
//! ([`HeaderError`]), every descriptor is checked against the pool's own
//! copy of its geometry before an offset is used ([`AttachError`]), and
//! every loop a peer can steer is bounded.
#![warn(missing_docs)]
#![cfg_attr(loom, allow(dead_code, unused_imports))]

pub mod refs;

#[cfg(not(loom))]
mod array_layout;
#[cfg(not(loom))]
mod clean;
#[cfg(not(loom))]
mod descriptor;
#[cfg(not(loom))]
mod error;
#[cfg(not(loom))]
mod header;
#[cfg(not(loom))]
mod holders;
#[cfg(not(loom))]
mod pool;
#[cfg(not(loom))]
mod tensor;

#[cfg(not(loom))]
pub use array_layout::{array_bytes, buffer_format, TensorLayout};
#[cfg(not(loom))]
pub use clean::{judge_pool, remove_stale_pools, PoolFate, PoolReport, PoolVerdict};
#[cfg(not(loom))]
pub use descriptor::{DescriptorError, Meta, TensorRef};
#[cfg(not(loom))]
pub use error::{AllocError, AttachError, OpenError};
#[cfg(not(loom))]
pub use header::{HeaderError, MAX_SLOTS, VERSION};
#[cfg(not(loom))]
pub use pool::{PoolConfig, TensorPool, DEFAULT_SLOTS, DEFAULT_SLOT_BYTES};
pub use refs::HOLDERS;
#[cfg(not(loom))]
pub use tensor::Tensor;

/// Crate internals for tests that play a corrupt or hostile peer.
#[cfg(not(loom))]
#[doc(hidden)]
pub mod testing {
    /// Offset of the membership word.
    pub const MEMBERS_OFFSET: usize = crate::header::MEMBERS_OFFSET;
    /// Offset of the holder places (owner words).
    pub const PLACES_OFFSET: usize = crate::header::PLACES_OFFSET;
    /// Offset of the slot state words.
    pub const STATES_OFFSET: usize = crate::header::STATES_OFFSET;
}
