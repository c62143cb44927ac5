//! A received message: a read guard.

use std::marker::PhantomData;
use std::ops::Deref;
use std::ptr::NonNull;
use std::sync::Arc;

use horus_msgs::Message;
use horus_shm::SubPlace;

use crate::publisher::tail_offset;
use crate::recv_buf::RecvBuf;

/// Inline messages of at most this many 8-byte words are copied into the
/// `Sample` itself (as cheap as sharing the receive buffer, and no atomic
/// counting); larger ones share the receive buffer. It bounds the size of a
/// `Sample` whatever the message size.
pub(crate) const SMALL_WORDS: usize = 8;

/// A received fixed-size message (no tail) of at most this many bytes that
/// travelled in a pool chunk reaches a receiver that may keep it as a copy,
/// its chunk released at once, so that keeping it pins none of the sender's
/// chunks (a sender whose chunks are all pinned fails: `PoolExhausted`).
/// Such receivers are a service's client (its responses) and server (its
/// requests), whose bodies above [`INLINE_MAX`](crate::INLINE_MAX) travel in
/// chunks, and Python's topic subscribers. The copy replaces the two an
/// inline message costs (into the ring slot and out of it). Typed topic
/// subscribers read such messages in place (zero copy; one that keeps more
/// samples than the publisher's spare chunks makes its loans fail). Larger
/// and tailed messages are read in place everywhere.
pub const COPY_OUT_MAX: usize = 2048;

/// Whether the receive buffer of an endpoint receiving `T` is shared with
/// its samples ([`RecvBuf::Shared`]) or only copied from.
pub(crate) fn shares_buffer<T>() -> bool {
    std::mem::size_of::<T>() > SMALL_WORDS * 8
}

/// A received message. Dereferences to `T`; [`Sample::tail`] gives the
/// variable-size data of `PointCloud`/`Image`-like messages.
///
/// Large and tailed messages are read in place in shared memory: the guard
/// pins the chunk (the publisher cannot reuse it) until it is dropped.
/// Messages of at most [`INLINE_MAX`](crate::INLINE_MAX) bytes are copied out
/// of the ring slot once when received (that copy *is* the read of a few
/// cache lines, validated against the slot's sequence number so it is never
/// torn) into the subscriber's receive buffer, which the guard then shares
/// (messages of up to 64 bytes are copied into the guard instead): a `Sample`
/// is a few words whatever `T`'s size, so moving it copies no large message.
/// The subscriber reuses the buffer once the guard is dropped.
pub struct Sample<T> {
    inner: Inner,
    _t: PhantomData<T>,
}

enum Inner {
    /// A small message, copied here (the first `size_of::<T>()` bytes).
    Small([u64; SMALL_WORDS]),
    /// In a receive buffer: bytes `start..start + size_of::<T>()`, `start` a
    /// multiple of 8 (checked by [`Sample::inline`]).
    Inline { words: Arc<[u64]>, start: usize },
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
    /// A sample of the `T` at byte `start` of what a receive buffer holds:
    /// copied if small, else a share of the buffer. `None` (a bug of the
    /// caller, which checked the received length) unless the buffer holds
    /// all of it at an 8-aligned offset and `T` needs no more than 8-byte
    /// alignment (topics and services refuse such types on open).
    pub(crate) fn inline(buf: &RecvBuf, start: usize) -> Option<Self> {
        let size = std::mem::size_of::<T>();
        let words = buf.words();
        let fits = start
            .checked_add(size)
            .is_some_and(|end| end <= words.len() * 8);
        if !fits || !start.is_multiple_of(8) || std::mem::align_of::<T>() > 8 {
            return None;
        }
        let inner = if shares_buffer::<T>() {
            Inner::Inline {
                words: buf.share(),
                start,
            }
        } else {
            let mut small = [0u64; SMALL_WORDS];
            let n = size.div_ceil(8);
            small[..n].copy_from_slice(&words[start / 8..start / 8 + n]);
            Inner::Small(small)
        };
        Some(Sample {
            inner,
            _t: PhantomData,
        })
    }

    /// A sample of a small `T` already in `words` (its first
    /// `size_of::<T>()` bytes). `None` (a bug of the caller) unless `T` fits
    /// them and needs no more than 8-byte alignment.
    #[inline]
    pub(crate) fn small(words: [u64; SMALL_WORDS]) -> Option<Self> {
        if shares_buffer::<T>() || std::mem::align_of::<T>() > 8 {
            return None;
        }
        Some(Sample {
            inner: Inner::Small(words),
            _t: PhantomData,
        })
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
            _t: PhantomData,
        }
    }

    /// The variable-size tail (empty for messages without one).
    pub fn tail(&self) -> &[u8] {
        match &self.inner {
            Inner::Small(_) | Inner::Inline { .. } => &[],
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
            Inner::Small(words) => {
                &bytemuck::cast_slice::<u64, u8>(words)[..std::mem::size_of::<T>()]
            }
            Inner::Inline { words, start } => {
                &bytemuck::cast_slice::<u64, u8>(words)[*start..*start + std::mem::size_of::<T>()]
            }
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
            // SAFETY: `inline` checked that the buffer holds size_of::<T>()
            // bytes from `start`, 8-aligned (the buffer is u64s, `start` a
            // multiple of 8, align_of T ≤ 8); T is Pod (valid for any bytes);
            // the buffer is shared, so nothing writes it while we hold it
            // (the receive writes only an unshared buffer: `RecvBuf::target`).
            Inner::Inline { words, start } => unsafe {
                &*words.as_ptr().cast::<u8>().add(*start).cast::<T>()
            },
            // SAFETY: `inline` and `small` made this variant only for a T of at most
            // SMALL_WORDS words with align_of T ≤ 8 (the array is u64s);
            // T is Pod.
            Inner::Small(words) => unsafe { &*words.as_ptr().cast::<T>() },
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
