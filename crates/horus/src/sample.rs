//! A received message: a read guard.

use std::ops::Deref;
use std::ptr::NonNull;
use std::sync::Arc;

use horus_msgs::Message;
use horus_shm::SubPlace;

use crate::publisher::tail_offset;

/// A received message. Dereferences to `T`; [`Sample::tail`] gives the
/// variable-size data of `PointCloud`/`Image`-like messages.
///
/// Large and tailed messages are read in place in shared memory: the guard
/// pins the chunk (the publisher cannot reuse it) until it is dropped.
/// Messages of at most [`INLINE_MAX`](crate::INLINE_MAX) bytes are copied out
/// of the ring slot when received (that copy *is* the read of a few cache
/// lines, validated against the slot's sequence number so it is never torn).
pub struct Sample<T> {
    inner: Inner<T>,
}

enum Inner<T> {
    Inline(T),
    Chunk {
        place: Arc<SubPlace>,
        pool: usize,
        chunk: usize,
        ptr: NonNull<u8>,
        len: usize,
    },
}

// SAFETY: the chunk is pinned by this place's reference bit until drop, so the
// pointer stays valid and unwritten on any thread; SubPlace is Send + Sync.
unsafe impl<T: Send> Send for Sample<T> {}
// SAFETY: a Sample only hands out shared references to immutable memory.
unsafe impl<T: Sync> Sync for Sample<T> {}

impl<T: Message> Sample<T> {
    pub(crate) fn inline(value: T) -> Self {
        Sample {
            inner: Inner::Inline(value),
        }
    }

    pub(crate) fn chunk(
        place: Arc<SubPlace>,
        pool: usize,
        chunk: usize,
        ptr: *const u8,
        len: usize,
    ) -> Self {
        Sample {
            inner: Inner::Chunk {
                place,
                pool,
                chunk,
                ptr: NonNull::new(ptr as *mut u8).expect("chunk pointers are never null"),
                len,
            },
        }
    }

    /// The variable-size tail (empty for messages without one).
    pub fn tail(&self) -> &[u8] {
        match &self.inner {
            Inner::Inline(_) => &[],
            Inner::Chunk { ptr, len, .. } => {
                let start = tail_offset::<T>().min(*len);
                // SAFETY: the chunk holds at least `len` bytes (validated
                // against the chunk size on receive), is pinned and not
                // written while we hold the reference.
                unsafe { std::slice::from_raw_parts(ptr.as_ptr().add(start), len - start) }
            }
        }
    }

    /// The whole message as received: the fixed part and any tail.
    pub(crate) fn payload(&self) -> &[u8] {
        match &self.inner {
            Inner::Inline(v) => bytemuck::bytes_of(v),
            // SAFETY: as in `tail`: `len` bytes of the pinned chunk, not written while we
            // hold the reference.
            Inner::Chunk { ptr, len, .. } => unsafe {
                std::slice::from_raw_parts(ptr.as_ptr(), *len)
            },
        }
    }

    /// Whether the message was read in place in shared memory.
    pub fn is_zero_copy(&self) -> bool {
        matches!(self.inner, Inner::Chunk { .. })
    }
}

impl<T: Message> Deref for Sample<T> {
    type Target = T;
    fn deref(&self) -> &T {
        match &self.inner {
            Inner::Inline(v) => v,
            // SAFETY: chunks are page or cache-line aligned (≥ align_of T,
            // which topics limit to 8), hold at least size_of::<T>() bytes
            // (checked on receive), T is Pod (valid for any bytes), and the
            // chunk is pinned against reuse until this guard drops.
            Inner::Chunk { ptr, .. } => unsafe { &*ptr.as_ptr().cast::<T>() },
        }
    }
}

impl<T> Drop for Sample<T> {
    fn drop(&mut self) {
        if let Inner::Chunk {
            place, pool, chunk, ..
        } = &self.inner
        {
            place.release_chunk(*pool, *chunk);
        }
    }
}

impl<T: Message + std::fmt::Debug> std::fmt::Debug for Sample<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Sample")
            .field("value", &**self)
            .field("tail_len", &self.tail().len())
            .finish()
    }
}
