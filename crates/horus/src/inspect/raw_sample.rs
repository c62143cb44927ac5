//! [`RawSample`]: one received message as bytes, read in place in its chunk.

use std::ptr::NonNull;
use std::sync::Arc;

use horus_shm::SubPlace;

/// One message received by a [`RawReader`](super::RawReader) without copying it: a
/// message that travelled in a pool chunk is read in place, the chunk pinned (its publisher
/// does not reuse it) until the sample is dropped; one that travelled inline in the ring was
/// copied. Either way [`bytes`](Self::bytes) starts 8-byte aligned.
///
/// Hold samples briefly: each pins a chunk of the publisher's pool.
pub struct RawSample {
    inner: Inner,
    source: usize,
    seq: u64,
}

enum Inner {
    /// Copied out of a ring slot (8-byte aligned words, `len` bytes of them used).
    Copied { words: Box<[u64]>, len: usize },
    /// In place in a pinned chunk.
    Chunk {
        place: Arc<SubPlace>,
        pool: usize,
        chunk: usize,
        ptr: NonNull<u8>,
        len: usize,
    },
}

// SAFETY: the chunk stays pinned by this place's reference until drop, so the pointer
// stays valid and unwritten (by a publisher following the protocol) on any thread;
// SubPlace is Send + Sync.
unsafe impl Send for RawSample {}
// SAFETY: a RawSample only hands out shared references to memory it does not write.
unsafe impl Sync for RawSample {}

impl RawSample {
    pub(crate) fn copied(bytes: &[u8], source: usize, seq: u64) -> RawSample {
        let mut words = vec![0u64; bytes.len().div_ceil(8)].into_boxed_slice();
        bytemuck::cast_slice_mut::<u64, u8>(&mut words)[..bytes.len()].copy_from_slice(bytes);
        RawSample {
            inner: Inner::Copied {
                words,
                len: bytes.len(),
            },
            source,
            seq,
        }
    }

    /// A sample of a chunk the subscriber port validated (`len` bytes within the chunk)
    /// and pinned for this place; released when the sample drops.
    pub(crate) fn chunk(
        place: Arc<SubPlace>,
        pool: usize,
        chunk: usize,
        ptr: *const u8,
        len: usize,
        source: usize,
        seq: u64,
    ) -> RawSample {
        RawSample {
            inner: Inner::Chunk {
                place,
                pool,
                chunk,
                ptr: NonNull::new(ptr as *mut u8).expect("chunk pointers are never null"),
                len,
            },
            source,
            seq,
        }
    }

    /// The message's bytes: the fixed part followed by any tail. 8-byte aligned.
    pub fn bytes(&self) -> &[u8] {
        match &self.inner {
            Inner::Copied { words, len } => &bytemuck::cast_slice(words)[..*len],
            // SAFETY: the port validated that `len` bytes at `ptr` lie inside the chunk, and
            // the chunk is pinned for this place until `drop`; the borrow is tied to `self`.
            Inner::Chunk { ptr, len, .. } => unsafe {
                std::slice::from_raw_parts(ptr.as_ptr(), *len)
            },
        }
    }

    /// The publisher place it came from (see [`RawMessage::source`](super::RawMessage)).
    pub fn source(&self) -> usize {
        self.source
    }

    /// Its sequence number in that publisher's ring.
    pub fn seq(&self) -> u64 {
        self.seq
    }

    /// Whether it is read in place in shared memory (else it was copied from a ring slot).
    pub fn is_zero_copy(&self) -> bool {
        matches!(self.inner, Inner::Chunk { .. })
    }
}

impl Drop for RawSample {
    fn drop(&mut self) {
        if let Inner::Chunk {
            place, pool, chunk, ..
        } = &self.inner
        {
            place.release_chunk(*pool, *chunk);
        }
    }
}

impl std::fmt::Debug for RawSample {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RawSample")
            .field("len", &self.bytes().len())
            .field("source", &self.source)
            .field("seq", &self.seq)
            .field("zero_copy", &self.is_zero_copy())
            .finish()
    }
}
