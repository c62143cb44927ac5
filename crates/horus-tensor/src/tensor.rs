//! [`Tensor`]: one handle on a tensor slot.

use std::sync::Arc;

use crate::{AttachError, TensorPool};

/// A reference to one tensor slot. The slot returns to the pool when the
/// last `Tensor` of every process is dropped (or its process dies).
///
/// The memory is shared and mutable by design (as a tensor in shared memory
/// is in PyTorch): the pool guarantees only that the slot is not reused
/// while referenced. Other holders may write it at any time.
pub struct Tensor {
    pool: Arc<TensorPool>,
    slot: u32,
    gen: u32,
    nbytes: usize,
    ptr: *mut u8,
}

// SAFETY: `ptr` points into the pool mapping, which `pool` keeps alive and
// which has no thread affinity; the reference bit is per process and its
// count is behind the pool's mutex.
unsafe impl Send for Tensor {}
// SAFETY: as above; `&Tensor` hands out only `bytes()` (u8 has no invalid
// values, concurrent writers only change what is read) and raw pointers,
// whose use is the caller's to make sound.
unsafe impl Sync for Tensor {}

impl std::fmt::Debug for Tensor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Tensor")
            .field("pool_id", &self.pool.pool_id())
            .field("slot", &self.slot)
            .field("generation", &self.gen)
            .field("nbytes", &self.nbytes)
            .finish()
    }
}

impl Tensor {
    pub(crate) fn new(
        pool: Arc<TensorPool>,
        slot: u32,
        gen: u32,
        nbytes: usize,
        ptr: *mut u8,
    ) -> Tensor {
        Tensor {
            pool,
            slot,
            gen,
            nbytes,
            ptr,
        }
    }

    /// Start of the data (page aligned). Valid for [`nbytes`](Self::nbytes)
    /// bytes while this handle lives.
    pub fn as_ptr(&self) -> *mut u8 {
        self.ptr
    }

    /// Bytes of data.
    pub fn nbytes(&self) -> usize {
        self.nbytes
    }

    /// Slot index.
    pub fn slot(&self) -> u32 {
        self.slot
    }

    /// Generation of the slot for this tensor.
    pub fn generation(&self) -> u32 {
        self.gen
    }

    /// The pool.
    pub fn pool(&self) -> &Arc<TensorPool> {
        &self.pool
    }

    /// Byte offset of the data in the pool segment.
    pub fn offset(&self) -> u64 {
        self.pool.offset_of(self.slot)
    }

    /// Processes holding a reference on this tensor (this one included).
    pub fn refcount(&self) -> u32 {
        self.pool.refcount(self.slot, self.gen)
    }

    /// The data as bytes (a snapshot only if no other holder writes).
    pub fn bytes(&self) -> &[u8] {
        // SAFETY: ptr..ptr+nbytes lies within this slot (nbytes <= slot_bytes
        // checked at alloc/acquire), which stays mapped while `pool` lives.
        // Other holders may write concurrently: the bytes may change under
        // us, but u8 has no invalid values.
        unsafe { std::slice::from_raw_parts(self.ptr, self.nbytes) }
    }

    /// A second handle on the same tensor (bumps this process's count).
    pub fn try_clone(&self) -> Result<Tensor, AttachError> {
        self.pool
            .acquire(self.slot, self.gen, self.offset(), self.nbytes as u64)
    }
}

impl Drop for Tensor {
    fn drop(&mut self) {
        self.pool.release(self.slot);
    }
}
