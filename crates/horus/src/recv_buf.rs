//! The buffer a port copies an inline message into, which the message's
//! [`Sample`](crate::Sample) then keeps instead of copying it again (large
//! messages) or copies its few words from (small ones).

use std::sync::Arc;

/// 8-byte words that a port's validated copy out of a ring slot fills (the
/// one copy of an inline message).
///
/// Endpoints of messages larger than a `Sample`'s own few words use a
/// [`RecvBuf::Shared`] buffer: the sample takes a share of it rather than a
/// copy of the message, so a `Sample` is a few words whatever the message
/// size, and moving it, returning it in an `Option` or polling an empty ring
/// copies no payload. The next receive writes into the same buffer once no
/// sample holds it (the usual receive-use-drop loop: no allocation), and into
/// a fresh one while a sample still does (a sample is never written under
/// its reader). Endpoints of small messages (which a sample copies: cheaper
/// than counting shares) and of raw bytes use a [`RecvBuf::Private`] one:
/// no atomic operation per poll.
pub(crate) enum RecvBuf {
    /// Never shared.
    Private(Box<[u64]>),
    /// Shared with the samples of large messages.
    Shared(Arc<[u64]>),
}

impl RecvBuf {
    /// A buffer of `words` 8-byte words (the port's slot payload), shared
    /// with samples if `share`.
    pub(crate) fn new(words: usize, share: bool) -> Self {
        if share {
            RecvBuf::Shared(Arc::from(vec![0u64; words]))
        } else {
            RecvBuf::Private(vec![0u64; words].into_boxed_slice())
        }
    }

    /// The words to receive into: this buffer if no sample shares it any
    /// more, else a fresh one of the same size (the shared one stays with its
    /// samples, unwritten).
    #[inline]
    pub(crate) fn target(&mut self) -> &mut [u64] {
        match self {
            RecvBuf::Private(w) => w,
            // One compare-exchange on the count when unique; a copy into a
            // fresh buffer only while a sample still holds this one.
            RecvBuf::Shared(w) => Arc::make_mut(w),
        }
    }

    /// Copies `len` bytes from `src` (a body in a pool chunk pinned for us)
    /// to bytes `start..start + len` of the buffer, as a receive would have
    /// written them ([`COPY_OUT_MAX`](crate::COPY_OUT_MAX)): a sample then
    /// shares or copies them and the chunk can be released at once. `false`
    /// (nothing copied) if the buffer does not hold them.
    ///
    /// # Safety
    /// `src..src + len` must be readable (inside a pinned chunk). Another
    /// process may write it while we copy (shared memory is untrusted): the
    /// copy is then torn, as an in-place read would be, and any bytes are a
    /// valid message (`Pod`).
    #[inline]
    pub(crate) unsafe fn copy_from(&mut self, start: usize, src: *const u8, len: usize) -> bool {
        let dst: &mut [u8] = bytemuck::cast_slice_mut(self.target());
        let Some(dst) = start
            .checked_add(len)
            .and_then(|end| dst.get_mut(start..end))
        else {
            return false;
        };
        // SAFETY: `dst` is `len` bytes of our own buffer, unshared (`target`);
        // the caller vouches for `src`, which is shared memory, never `dst`.
        unsafe { std::ptr::copy_nonoverlapping(src, dst.as_mut_ptr(), len) };
        true
    }

    /// What the last receive wrote.
    #[inline]
    pub(crate) fn words(&self) -> &[u64] {
        match self {
            RecvBuf::Private(w) => w,
            RecvBuf::Shared(w) => w,
        }
    }

    /// The bytes `start..start + len` of the last receive (the caller
    /// checked them against the received length, which the port bounds by
    /// the buffer).
    #[inline]
    pub(crate) fn bytes(&self, start: usize, len: usize) -> &[u8] {
        &bytemuck::cast_slice::<u64, u8>(self.words())[start..start + len]
    }

    /// Whether a sample holds a share of the buffer now (the next
    /// [`target`](Self::target) then makes a fresh one).
    #[inline]
    pub(crate) fn is_shared(&self) -> bool {
        match self {
            RecvBuf::Private(_) => false,
            RecvBuf::Shared(w) => Arc::strong_count(w) > 1,
        }
    }

    /// A share of the buffer for a sample; the next receive leaves it alone
    /// until every share is dropped. A private buffer is copied (correct,
    /// but an allocation: endpoints whose samples share use a shared one).
    #[inline]
    pub(crate) fn share(&self) -> Arc<[u64]> {
        match self {
            RecvBuf::Private(w) => Arc::from(&w[..]),
            RecvBuf::Shared(w) => Arc::clone(w),
        }
    }
}

/// A received record's body in a [`RecvBuf`]: bytes `start..start + len`,
/// `start` a multiple of 8.
pub(crate) struct InlineBody<'a> {
    pub(crate) buf: &'a RecvBuf,
    pub(crate) start: usize,
    pub(crate) len: usize,
}

impl InlineBody<'_> {
    /// The body's bytes.
    pub(crate) fn bytes(&self) -> &[u8] {
        self.buf.bytes(self.start, self.len)
    }
}

#[cfg(test)]
mod tests {
    use super::RecvBuf;

    #[test]
    fn a_shared_buffer_is_never_written_by_the_next_receive() {
        let mut b = RecvBuf::new(4, true);
        b.target()[0] = 7;
        let held = b.share();
        b.target()[0] = 9;
        assert_eq!(held[0], 7, "a held sample's words were overwritten");
        assert_eq!(b.words()[0], 9);
    }

    #[test]
    fn a_released_buffer_is_reused_without_allocating() {
        let mut b = RecvBuf::new(4, true);
        let first = b.target().as_ptr();
        drop(b.share());
        assert_eq!(b.target().as_ptr(), first);
    }

    #[test]
    fn a_share_of_a_private_buffer_is_a_copy() {
        let mut b = RecvBuf::new(4, false);
        b.target()[1] = 5;
        let held = b.share();
        b.target()[1] = 6;
        assert_eq!(held[1], 5);
    }
}
