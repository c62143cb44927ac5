//! The errors of each pool operation.

use horus_shm::{NameError, SegmentError};

use crate::{DescriptorError, HeaderError, HOLDERS};

/// Why [`TensorPool::open`](crate::TensorPool::open) failed.
#[derive(Debug, thiserror::Error)]
pub enum OpenError {
    /// The namespace does not make a valid segment name.
    #[error("tensor pool {pool_id}: {source}")]
    Name {
        /// Pool id.
        pool_id: u64,
        /// Details.
        source: NameError,
    },
    /// The segment could not be created, opened or mapped.
    #[error("tensor pool {pool_id}: {source}")]
    Segment {
        /// Pool id.
        pool_id: u64,
        /// Details.
        source: SegmentError,
    },
    /// The segment's creator never published its header.
    #[error("tensor pool {pool_id}: the segment was never initialised by its creator")]
    NotInitialised {
        /// Pool id.
        pool_id: u64,
    },
    /// The segment is not a tensor pool of this layout version, or its
    /// header is inconsistent.
    #[error("tensor pool {pool_id}: {source}")]
    Corrupt {
        /// Pool id.
        pool_id: u64,
        /// What failed validation.
        source: HeaderError,
    },
    /// The requested settings cannot make a pool.
    #[error("tensor pool {pool_id}: {reason}")]
    InvalidConfig {
        /// Pool id.
        pool_id: u64,
        /// Why.
        reason: String,
    },
    /// The pool exists with other settings than explicitly requested.
    #[error("tensor pool {pool_id} exists with {found}; requested {requested}")]
    ConfigMismatch {
        /// Pool id.
        pool_id: u64,
        /// What the pool has.
        found: String,
        /// What was requested.
        requested: String,
    },
    /// Every holder place is taken by a live process.
    #[error("tensor pool {0}: all {HOLDERS} holder places are taken by live processes")]
    TooManyHolders(u64),
    /// The segment kept being removed (its last holder leaving) while we
    /// opened it, more times than a healthy pool allows.
    #[error("tensor pool {0}: the pool segment kept disappearing while opening it")]
    KeptClosing(u64),
}

/// Why [`TensorPool::alloc`](crate::TensorPool::alloc) returned no tensor.
#[derive(Debug, thiserror::Error)]
pub enum AllocError {
    /// The tensor does not fit in a slot.
    #[error("tensor of {requested} B does not fit in a slot of {slot_bytes} B (pool {pool_id})")]
    TooLarge {
        /// Pool id.
        pool_id: u64,
        /// Requested bytes.
        requested: u64,
        /// Slot size.
        slot_bytes: u64,
    },
    /// Every slot is held.
    #[error("tensor pool {pool_id}: all {slots} slots are in use")]
    Exhausted {
        /// Pool id.
        pool_id: u64,
        /// Slots in the pool.
        slots: u32,
    },
    /// The dtype has no known item size (`alloc_array` only).
    #[error("dtype {0:?} is not a plain numeric NumPy type string")]
    UnknownDtype(String),
    /// The shape overflows (`alloc_array` only).
    #[error(transparent)]
    Shape(#[from] DescriptorError),
    /// This process left the pool ([`TensorPool::depart`](crate::TensorPool::depart)).
    #[error("tensor pool {0}: this process has left the pool (interpreter exit)")]
    Departed(u64),
}

/// Why a reference on a described tensor could not be taken
/// ([`TensorPool::acquire`](crate::TensorPool::acquire),
/// [`TensorPool::attach`](crate::TensorPool::attach)).
#[derive(Debug, thiserror::Error)]
pub enum AttachError {
    /// The descriptor names another pool.
    #[error("descriptor names pool {named}, not {pool_id}")]
    ForeignPool {
        /// This pool.
        pool_id: u64,
        /// The descriptor's pool.
        named: u64,
    },
    /// Slot, offset or size do not describe a slot of this pool.
    #[error(
        "slot {slot}, offset {offset}, {nbytes} B do not describe a slot of pool {pool_id} \
         ({slots} slots × {slot_bytes} B)"
    )]
    OutOfBounds {
        /// Pool id.
        pool_id: u64,
        /// The descriptor's slot.
        slot: u32,
        /// The descriptor's offset.
        offset: u64,
        /// The descriptor's size.
        nbytes: u64,
        /// Slots in the pool.
        slots: u32,
        /// Slot size.
        slot_bytes: u64,
    },
    /// The tensor was freed since (the slot is free or at another generation).
    #[error("slot {slot} of pool {pool_id} is no longer at generation {generation} (the tensor was freed)")]
    Stale {
        /// Pool id.
        pool_id: u64,
        /// Slot.
        slot: u32,
        /// The descriptor's generation.
        generation: u32,
    },
    /// Other processes kept changing the slot's word under every attempt.
    #[error("slot {slot} of pool {pool_id} kept changing under every attempt to reference it")]
    Contended {
        /// Pool id.
        pool_id: u64,
        /// Slot.
        slot: u32,
    },
    /// The descriptor's dtype or shape is invalid.
    #[error(transparent)]
    Descriptor(#[from] DescriptorError),
    /// This process left the pool ([`TensorPool::depart`](crate::TensorPool::depart)).
    #[error("tensor pool {0}: this process has left the pool (interpreter exit)")]
    Departed(u64),
}
