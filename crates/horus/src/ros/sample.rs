//! Reading a received ROS 2 message in place.

use horus_cdr::{DecodeError, RosMessage};

use super::Ros;
use crate::Sample;

impl<M: RosMessage> Sample<Ros<M>> {
    /// The message exactly as ROS 2 puts it on the wire: the encapsulation header
    /// (`00 01 00 00`) and the CDR body, contiguous, read in place in shared memory (for
    /// recorders and bridges).
    pub fn cdr(&self) -> &[u8] {
        self.payload().get(4..).unwrap_or(&[])
    }

    /// The CDR body alone (the message's tail), 8-byte aligned.
    pub fn body(&self) -> &[u8] {
        self.tail()
    }

    /// A zero-copy view of the message: strings as `&str` and primitive sequences as
    /// slices (`&[f32]`, `&[u8]`, …) pointing into the shared-memory chunk, which this
    /// sample keeps pinned. Every length and count is checked against the message's bytes
    /// first: bytes that are not a valid message of `M` (a buggy or hostile publisher) give
    /// a [`DecodeError`], never a panic or a read outside the message.
    pub fn view(&self) -> Result<M::View<'_>, DecodeError> {
        horus_cdr::view_message::<M>(self.cdr())
    }

    /// Decodes the message into an owned `M` (copies; see [`view`](Self::view) for
    /// reading in place). The bytes are first copied out of shared memory and decoded from
    /// that private copy, so a publisher that breaks the protocol and rewrites the chunk
    /// meanwhile cannot make a checked string invalid after its check.
    pub fn decode(&self) -> Result<M, DecodeError> {
        decode_private::<M>(self.cdr())
    }
}

/// Decodes `M` from a private, aligned copy of `cdr` (bytes in shared memory that another
/// process could still write).
pub(crate) fn decode_private<M: RosMessage>(cdr: &[u8]) -> Result<M, DecodeError> {
    horus_cdr::decode_message::<M>(horus_cdr::CdrBuf::new(cdr).bytes())
}
