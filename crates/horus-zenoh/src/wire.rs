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
/// Messages in one batch at most: a sending bridge puts no more in one, and a receiving one
/// ends a batch that holds more (the rest is one malformed message).
pub(crate) const MAX_BATCH_MESSAGES: usize = 1024;
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
    /// A batch holds more messages than [`MAX_BATCH_MESSAGES`] (what follows is not read).
    #[error("batch of more than {MAX_BATCH_MESSAGES} messages")]
    BatchCount,
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
/// batch with `Err` (the rest cannot be delimited), and so does a frame past the
/// [`MAX_BATCH_MESSAGES`]th: at most that many frames and one `Err`, each frame read once.
pub(crate) fn batch_frames(bytes: &[u8]) -> impl Iterator<Item = Result<&[u8], WireError>> {
    let mut rest = bytes.strip_prefix(&BATCH_MAGIC[..]).unwrap_or(&[]);
    let mut count = 0usize;
    std::iter::from_fn(move || {
        if rest.is_empty() {
            return None;
        }
        if count == MAX_BATCH_MESSAGES {
            rest = &[];
            return Some(Err(WireError::BatchCount));
        }
        count += 1;
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

    /// A batch whose frames are these lengths, with `body` bytes after them.
    fn raw_batch(frames: &[u32], body: &[u8]) -> Vec<u8> {
        let mut b = BATCH_MAGIC.to_vec();
        for len in frames {
            b.extend_from_slice(&len.to_le_bytes());
        }
        b.extend_from_slice(body);
        b
    }

    #[test]
    fn a_frame_length_past_the_end_ends_the_batch_without_reading_past_it() {
        for len in [49, 1 << 20, u32::MAX] {
            let bytes = raw_batch(&[len], &[0u8; 48]);
            let frames: Vec<_> = batch_frames(&bytes).collect();
            assert_eq!(frames, vec![Err(WireError::Frame(len as usize))], "{len}");
        }
    }

    #[test]
    fn zero_length_frames_are_empty_messages_and_bounded_by_the_count() {
        let bytes = raw_batch(&[0; 3], &[]);
        let frames: Vec<_> = batch_frames(&bytes).collect();
        assert_eq!(frames, vec![Ok(&b""[..]); 3]);
        // Each an empty message (which is no header: malformed, as `WireHeader::read` says).
        assert_eq!(WireHeader::read(b""), Err(WireError::Truncated(0)));
        // 4-byte frames could number a quarter of the payload: the count bounds them.
        let bytes = raw_batch(&[0; 5000], &[]);
        let frames: Vec<_> = batch_frames(&bytes).collect();
        assert_eq!(frames.len(), MAX_BATCH_MESSAGES + 1);
        assert_eq!(frames.last(), Some(&Err(WireError::BatchCount)));
    }

    #[test]
    fn a_batch_of_more_than_1024_messages_ends_at_the_1025th() {
        let mut b = Batch::with_capacity(0);
        for i in 0..MAX_BATCH_MESSAGES + 3 {
            b.push(&(i as u32).to_le_bytes());
        }
        let bytes = b.into_bytes();
        let frames: Vec<_> = batch_frames(&bytes).collect();
        assert_eq!(frames.len(), MAX_BATCH_MESSAGES + 1);
        assert!(frames[..MAX_BATCH_MESSAGES]
            .iter()
            .enumerate()
            .all(|(i, f)| *f == Ok(&(i as u32).to_le_bytes()[..])));
        assert_eq!(frames[MAX_BATCH_MESSAGES], Err(WireError::BatchCount));
        // Exactly the limit: all of them, no error.
        let mut b = Batch::with_capacity(0);
        for _ in 0..MAX_BATCH_MESSAGES {
            b.push(b"m");
        }
        let bytes = b.into_bytes();
        assert!(batch_frames(&bytes).all(|f| f == Ok(&b"m"[..])));
        assert_eq!(batch_frames(&bytes).count(), MAX_BATCH_MESSAGES);
    }

    #[test]
    fn a_batch_nested_in_a_batch_is_one_malformed_message_not_split_again() {
        let mut inner = Batch::with_capacity(0);
        inner.push(b"hidden");
        let inner = inner.into_bytes();
        let mut outer = Batch::with_capacity(0);
        outer.push(&inner);
        // Magic upon magic, as deep as the payload allows.
        let mut deep = BATCH_MAGIC.repeat(1000);
        deep.extend_from_slice(&[0u8; 4]);
        outer.push(&deep);
        let bytes = outer.into_bytes();
        let frames: Vec<_> = batch_frames(&bytes).collect();
        assert_eq!(frames, vec![Ok(&inner[..]), Ok(&deep[..])]);
        for frame in frames {
            let frame = frame.unwrap();
            assert!(is_batch(frame));
            // Taken as one message: not a header, so malformed (the receiver splits once).
            assert!(WireHeader::read(frame).is_err());
        }
        // A payload of nothing but magics: the first is the batch's, the rest one frame
        // length (0x31425a48 bytes) past the end.
        let bytes = BATCH_MAGIC.repeat(3);
        let frames: Vec<_> = batch_frames(&bytes).collect();
        assert_eq!(frames.len(), 1);
        assert!(matches!(frames[0], Err(WireError::Frame(_))));
    }
}
