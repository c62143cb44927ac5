//! The header in front of every message and call a bridge puts on the network.
//!
//! 48 bytes, little-endian: magic `HZW1`, version, the origin publisher's place, the sending
//! stream's epoch (its start time: a restarted stream starts a new sequence), the schema id
//! and layout hash of the message's type, the stream's sequence number (0, 1, 2…) and the
//! origin publisher's own sequence number. The receiver checks all of it; a gap in the
//! stream's sequence is loss on the wire, a gap in the publisher's is loss anywhere between
//! the publisher and here (a bridge restarted in between included). Both are counted where
//! they are seen.

/// Bytes of the header.
pub const HEADER_LEN: usize = 48;
/// The start of a batch: several messages of one topic in one put (see [`Batch`]).
pub(crate) const BATCH_MAGIC: [u8; 4] = *b"HZB1";
/// Bytes of a frame's length, in front of each message of a batch.
pub(crate) const FRAME_LEN: usize = 4;
const MAGIC: [u8; 4] = *b"HZW1";
const VERSION: u16 = 1;

/// One message's header.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WireHeader {
    /// The sending bridge's epoch.
    pub epoch: u64,
    /// Schema id of the message's type.
    pub schema_id: u64,
    /// Layout hash of the message's type.
    pub layout_hash: u64,
    /// The sender's sequence number (per topic and epoch).
    pub seq: u64,
    /// The publisher place the message came from on the sending host.
    pub origin_place: u16,
    /// The message's sequence number from that publisher.
    pub origin_seq: u64,
}

/// Why bytes from the network are not a message.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum WireError {
    /// Fewer bytes than a header.
    #[error("{0} bytes: shorter than the {HEADER_LEN}-byte header")]
    Truncated(usize),
    /// Not a horus bridge message.
    #[error("bad magic {0:02x?}")]
    Magic([u8; 4]),
    /// A header version this build does not speak.
    #[error("wire version {0}, this build speaks {VERSION}")]
    Version(u16),
    /// A batch's frame says it is longer than what is left of the batch (or the batch ends
    /// inside a frame's length).
    #[error("batch frame of {0} bytes runs past the batch")]
    Frame(usize),
}

impl WireHeader {
    /// Writes the header into the first [`HEADER_LEN`] bytes of `out`.
    ///
    /// # Panics
    /// If `out` is shorter than the header (callers reserve it).
    pub fn write(&self, out: &mut [u8]) {
        let h = &mut out[..HEADER_LEN];
        h[0..4].copy_from_slice(&MAGIC);
        h[4..6].copy_from_slice(&VERSION.to_le_bytes());
        h[6..8].copy_from_slice(&self.origin_place.to_le_bytes());
        h[8..16].copy_from_slice(&self.epoch.to_le_bytes());
        h[16..24].copy_from_slice(&self.schema_id.to_le_bytes());
        h[24..32].copy_from_slice(&self.layout_hash.to_le_bytes());
        h[32..40].copy_from_slice(&self.seq.to_le_bytes());
        h[40..48].copy_from_slice(&self.origin_seq.to_le_bytes());
    }

    /// Reads and checks the header of `bytes`; returns it and the payload after it.
    pub fn read(bytes: &[u8]) -> Result<(WireHeader, &[u8]), WireError> {
        if bytes.len() < HEADER_LEN {
            return Err(WireError::Truncated(bytes.len()));
        }
        let u64_at = |i: usize| {
            let mut b = [0u8; 8];
            b.copy_from_slice(&bytes[i..i + 8]);
            u64::from_le_bytes(b)
        };
        let mut magic = [0u8; 4];
        magic.copy_from_slice(&bytes[0..4]);
        if magic != MAGIC {
            return Err(WireError::Magic(magic));
        }
        let version = u16::from_le_bytes([bytes[4], bytes[5]]);
        if version != VERSION {
            return Err(WireError::Version(version));
        }
        Ok((
            WireHeader {
                epoch: u64_at(8),
                schema_id: u64_at(16),
                layout_hash: u64_at(24),
                seq: u64_at(32),
                origin_place: u16::from_le_bytes([bytes[6], bytes[7]]),
                origin_seq: u64_at(40),
            },
            &bytes[HEADER_LEN..],
        ))
    }
}

/// Several messages of one topic in one put: [`BATCH_MAGIC`], then each message (its header
/// and body) behind its length (`u32`, little-endian). A sending bridge batches what its
/// topic's ring already holds when it reads a message, so that a burst costs one put, one
/// Zenoh batch and one receiving callback instead of one per message; a lone message still
/// travels alone, at once.
pub(crate) struct Batch {
    bytes: Vec<u8>,
    count: usize,
}

impl Batch {
    /// An empty batch with room for `capacity` bytes.
    pub(crate) fn with_capacity(capacity: usize) -> Batch {
        let mut bytes = Vec::with_capacity(capacity);
        bytes.extend_from_slice(&BATCH_MAGIC);
        Batch { bytes, count: 0 }
    }

    /// Appends one message (header and body; the bridge batches messages of at most
    /// 30 KiB, far below a frame's 4 GiB).
    pub(crate) fn push(&mut self, message: &[u8]) {
        self.frame_len(message.len());
        self.bytes.extend_from_slice(message);
    }

    /// Appends one message from its header and its body.
    pub(crate) fn push_parts(&mut self, header: &WireHeader, body: &[u8]) {
        self.frame_len(HEADER_LEN + body.len());
        let at = self.bytes.len();
        self.bytes.resize(at + HEADER_LEN, 0);
        header.write(&mut self.bytes[at..]);
        self.bytes.extend_from_slice(body);
    }

    fn frame_len(&mut self, len: usize) {
        // A message of 4 GiB or more is never batched (the bridge's limit is 64 MiB).
        let len = u32::try_from(len).unwrap_or(u32::MAX);
        self.bytes.extend_from_slice(&len.to_le_bytes());
        self.count += 1;
    }

    /// Messages in the batch.
    pub(crate) fn len(&self) -> usize {
        self.count
    }

    /// The put's payload.
    pub(crate) fn into_bytes(self) -> Vec<u8> {
        self.bytes
    }
}

/// Whether a payload is a batch (starts with [`BATCH_MAGIC`]).
pub(crate) fn is_batch(first_bytes: &[u8]) -> bool {
    first_bytes.starts_with(&BATCH_MAGIC)
}

/// The messages of a batch, in order. A frame whose length runs past the payload ends the
/// batch with `Err` (the rest cannot be delimited): bounded by the payload's length, every
/// frame at least [`FRAME_LEN`] bytes.
pub(crate) fn batch_frames(bytes: &[u8]) -> impl Iterator<Item = Result<&[u8], WireError>> {
    let mut rest = bytes.strip_prefix(&BATCH_MAGIC[..]).unwrap_or(&[]);
    std::iter::from_fn(move || {
        if rest.is_empty() {
            return None;
        }
        let Some((len, after)) = rest.split_first_chunk::<FRAME_LEN>() else {
            let n = rest.len();
            rest = &[];
            return Some(Err(WireError::Frame(n)));
        };
        let len = u32::from_le_bytes(*len) as usize;
        if len > after.len() {
            rest = &[];
            return Some(Err(WireError::Frame(len)));
        }
        let (frame, tail) = after.split_at(len);
        rest = tail;
        Some(Ok(frame))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_round_trips_and_garbage_is_refused() {
        let h = WireHeader {
            epoch: 7,
            schema_id: 0xdead_beef,
            layout_hash: u64::MAX,
            seq: 42,
            origin_place: 3,
            origin_seq: 99,
        };
        let mut buf = vec![0u8; HEADER_LEN + 3];
        h.write(&mut buf);
        buf[HEADER_LEN..].copy_from_slice(b"abc");
        assert_eq!(WireHeader::read(&buf), Ok((h, &b"abc"[..])));
        assert_eq!(WireHeader::read(&buf[..47]), Err(WireError::Truncated(47)));
        let mut bad = buf.clone();
        bad[0] = b'X';
        assert!(matches!(WireHeader::read(&bad), Err(WireError::Magic(_))));
        let mut bad = buf;
        bad[4] = 9;
        assert_eq!(WireHeader::read(&bad), Err(WireError::Version(9)));
    }

    #[test]
    fn batches_split_into_their_messages_and_bad_frames_end_them() {
        let mut b = Batch::with_capacity(64);
        b.push(b"one");
        b.push(b"");
        b.push(b"three");
        assert_eq!(b.len(), 3);
        let bytes = b.into_bytes();
        assert!(is_batch(&bytes));
        let frames: Vec<_> = batch_frames(&bytes).collect();
        assert_eq!(
            frames,
            vec![Ok(&b"one"[..]), Ok(&b""[..]), Ok(&b"three"[..])]
        );
        // A length past the end: an error, and nothing after it.
        let mut bad = bytes.clone();
        bad[4] = 200;
        let frames: Vec<_> = batch_frames(&bad).collect();
        assert_eq!(frames, vec![Err(WireError::Frame(200))]);
        // Cut inside a length.
        let frames: Vec<_> = batch_frames(&bytes[..bytes.len() - 7]).collect();
        assert_eq!(frames.len(), 3);
        assert!(frames[2].is_err());
        let frames: Vec<_> = batch_frames(&bytes[..6]).collect();
        assert_eq!(frames, vec![Err(WireError::Frame(2))]);
        assert_eq!(batch_frames(b"HZB1").count(), 0);
        assert!(!is_batch(b"HZW1"));
    }
}
