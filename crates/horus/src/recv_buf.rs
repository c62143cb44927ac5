//! The buffer a port copies an inline message into, which the message's
//! [`Sample`](crate::Sample) then keeps instead of copying it again.

use std::sync::Arc;

/// 8-byte words that a port's validated copy out of a ring slot fills (the
/// one copy of an inline message). A sample of the message takes a share of
/// the buffer rather than a copy of the message, so a `Sample` is a few words
/// whatever the message size, and moving it, returning it in an `Option` or
/// polling an empty ring copies no payload.
///
/// The next receive writes into the same buffer once no sample holds it
/// (the usual receive-use-drop loop: no allocation), and into a fresh one
/// while a sample still does (a sample is never written under its reader).
pub(crate) struct RecvBuf {
    words: Arc<[u64]>,
}

impl RecvBuf {
    /// A buffer of `words` 8-byte words (the port's slot payload).
    pub(crate) fn new(words: usize) -> Self {
        RecvBuf {
            words: Arc::from(vec![0u64; words]),
        }
    }

    /// The words to receive into: this buffer if no sample shares it any
    /// more, else a fresh one of the same size (the shared one stays with its
    /// samples, unwritten).
    #[inline]
    pub(crate) fn target(&mut self) -> &mut [u64] {
        // One compare-exchange on the count when unique (every empty poll
        // goes through here); a copy into a fresh buffer only while a sample
        // still holds this one.
        Arc::make_mut(&mut self.words)
    }

    /// What the last receive wrote.
    #[inline]
    pub(crate) fn words(&self) -> &[u64] {
        &self.words
    }

    /// The bytes `start..start + len` of the last receive (the caller
    /// checked them against the received length, which the port bounds by
    /// the buffer).
    #[inline]
    pub(crate) fn bytes(&self, start: usize, len: usize) -> &[u8] {
        &bytemuck::cast_slice::<u64, u8>(&self.words)[start..start + len]
    }

    /// A share of the buffer for a sample; the next receive leaves it alone
    /// until every share is dropped.
    #[inline]
    pub(crate) fn share(&self) -> Arc<[u64]> {
        Arc::clone(&self.words)
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
        let mut b = RecvBuf::new(4);
        b.target()[0] = 7;
        let held = b.share();
        b.target()[0] = 9;
        assert_eq!(held[0], 7, "a held sample's words were overwritten");
        assert_eq!(b.words()[0], 9);
    }

    #[test]
    fn a_released_buffer_is_reused_without_allocating() {
        let mut b = RecvBuf::new(4);
        let first = b.target().as_ptr();
        drop(b.share());
        assert_eq!(b.target().as_ptr(), first);
    }
}
