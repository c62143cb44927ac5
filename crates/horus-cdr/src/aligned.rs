//! An owned copy of a message's bytes whose body is 8-byte aligned.

/// A message's bytes (encapsulation header + CDR body) copied so that the body starts at
/// an 8-byte-aligned address, as in shared memory; [`bytes`](Self::bytes) can then be
/// viewed with [`view_message`](crate::view_message).
#[derive(Clone, Debug)]
pub struct CdrBuf {
    words: Vec<u64>,
    len: usize,
}

impl CdrBuf {
    /// Copies `message` (header + body).
    pub fn new(message: &[u8]) -> Self {
        // 4 bytes of padding, then the 4-byte header: the body starts at byte 8.
        let mut words = vec![0u64; (4 + message.len()).div_ceil(8)];
        bytemuck::cast_slice_mut::<u64, u8>(&mut words)[4..4 + message.len()]
            .copy_from_slice(message);
        CdrBuf {
            words,
            len: message.len(),
        }
    }

    /// The message's bytes; `bytes()[4..]` is 8-byte aligned.
    pub fn bytes(&self) -> &[u8] {
        &bytemuck::cast_slice::<u64, u8>(&self.words)[4..4 + self.len]
    }
}
