//! A loaned sample: written in place, then sent.

use std::ops::{Deref, DerefMut};

use horus_msgs::Message;
use horus_shm::ChunkLoan;

use crate::error::SendError;
use crate::publisher::{tail_offset, Delivery, Publisher};

/// Where a loan's memory is.
pub(crate) enum LoanSlot {
    /// The publisher's staging buffer (inline messages).
    Staged,
    /// A pool chunk in shared memory.
    Chunk(ChunkLoan),
}

/// A message being written in place. Dereferences to `T`; [`send`] publishes
/// it; dropping it unsent returns the memory to the pool.
///
/// [`send`]: SampleMut::send
pub struct SampleMut<'a, T: Message> {
    publisher: &'a mut Publisher<T>,
    slot: Option<LoanSlot>,
    /// Start of the loaned memory (staging buffer or chunk), 8-byte aligned.
    ptr: *mut u8,
    tail_len: usize,
}

impl<'a, T: Message> SampleMut<'a, T> {
    pub(crate) fn new(publisher: &'a mut Publisher<T>, slot: LoanSlot, tail_len: usize) -> Self {
        let ptr = match &slot {
            LoanSlot::Staged => publisher.staging.as_mut_ptr().cast::<u8>(),
            LoanSlot::Chunk(loan) => publisher.port.chunk_bytes(loan).as_mut_ptr(),
        };
        SampleMut {
            publisher,
            slot: Some(slot),
            ptr,
            tail_len,
        }
    }

    fn bytes(&self) -> *mut u8 {
        self.ptr
    }

    /// The tail (point data, pixels): `tail_len` bytes, 8-byte aligned.
    pub fn tail_mut(&mut self) -> &mut [u8] {
        let len = self.tail_len;
        if len == 0 {
            return &mut [];
        }
        // SAFETY: a tail is only loaned for chunked topics; the chunk holds
        // tail_offset + max_tail bytes (checked in loan_slice) and is ours
        // exclusively until sent; the borrow is tied to &mut self.
        unsafe { std::slice::from_raw_parts_mut(self.bytes().add(tail_offset::<T>()), len) }
    }

    /// Shortens the tail to its first `len` bytes (a body written into a loan of the
    /// largest tail, its length known only once written); a longer `len` changes nothing.
    pub(crate) fn shrink_tail(&mut self, len: usize) {
        debug_assert!(len <= self.tail_len);
        self.tail_len = self.tail_len.min(len);
    }

    /// Publishes the sample. If the overflow policy refuses it, the sample
    /// is handed back unchanged.
    pub fn send(mut self) -> Result<Delivery, SendError<SampleMut<'a, T>>> {
        if let Err(e) = self.publisher.make_room() {
            return Err(crate::publisher::refusal(e, self));
        }
        let size = std::mem::size_of::<T>();
        let len = if self.tail_len > 0 {
            tail_offset::<T>() + self.tail_len
        } else {
            size
        };
        // Checked before the loan is consumed, so a refusal hands the
        // sample back whole (the topic's capacities were checked against `T`
        // on open, so only a tail can get here too large).
        let capacity = self.publisher.capacity();
        if len > capacity {
            return Err(SendError::TooLarge(self, capacity));
        }
        let slot = self.slot.take().expect("present until sent");
        let sent = match slot {
            LoanSlot::Staged => {
                let Publisher { port, staging, .. } = &mut *self.publisher;
                port.send_inline(&bytemuck::cast_slice::<u64, u8>(staging)[..size])
            }
            LoanSlot::Chunk(loan) => self.publisher.port.send_chunk(loan, len),
        };
        let subscribers = sent.expect("the payload length was checked against the capacity");
        Ok(self.publisher.delivered(subscribers))
    }
}

impl<T: Message> Deref for SampleMut<'_, T> {
    type Target = T;
    fn deref(&self) -> &T {
        // SAFETY: staging and chunks are 8-byte aligned and at least
        // size_of::<T>() long; T is Pod, so any bytes are a valid T; the
        // memory is exclusively ours while the loan lives.
        unsafe { &*self.bytes().cast::<T>() }
    }
}

impl<T: Message> DerefMut for SampleMut<'_, T> {
    fn deref_mut(&mut self) -> &mut T {
        // SAFETY: as in `deref`, and we hold the only reference.
        unsafe { &mut *self.bytes().cast::<T>() }
    }
}

impl<T: Message> Drop for SampleMut<'_, T> {
    fn drop(&mut self) {
        if let Some(LoanSlot::Chunk(loan)) = self.slot.take() {
            self.publisher.port.abandon(loan);
        }
    }
}

impl<T: Message + std::fmt::Debug> std::fmt::Debug for SampleMut<'_, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SampleMut")
            .field("value", &**self)
            .field("tail_len", &self.tail_len)
            .finish()
    }
}
