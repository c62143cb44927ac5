//! Why a message could not be encoded or decoded.

/// Encoding a message failed; nothing was sent.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum EncodeError {
    /// A bounded sequence or string (`T[<=N]`, `string<=N`) holds more than its bound.
    #[error("field '{field}' has {len} elements, more than its bound {bound}")]
    BoundExceeded {
        /// The field (as in the `.msg` file).
        field: &'static str,
        /// Its length (bytes for `string<=N`, UTF-16 units for `wstring<=N`).
        len: usize,
        /// The bound.
        bound: usize,
    },
    /// A string with a NUL byte inside (ROS 2's C and C++ sides would cut it there).
    #[error("field '{field}' contains a NUL byte at {at}")]
    StringContainsNul {
        /// The field.
        field: &'static str,
        /// Byte index of the NUL.
        at: usize,
    },
    /// A sequence or string longer than CDR's 32-bit lengths can say.
    #[error("field '{field}' has {len} elements, more than CDR can encode (2^32-1)")]
    TooLong {
        /// The field.
        field: &'static str,
        /// Its length.
        len: usize,
    },
    /// The buffer given to the writer is smaller than the message (a size computed for
    /// other contents).
    #[error("the message needs {needed} bytes, the buffer holds {available}")]
    BufferTooSmall {
        /// Bytes needed so far.
        needed: usize,
        /// Bytes in the buffer.
        available: usize,
    },
}

/// Decoding or viewing bytes failed. Offsets count from the first byte of the CDR body
/// (after the 4-byte encapsulation header).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum DecodeError {
    /// The bytes do not start with a little-endian CDR encapsulation header (`00 01 xx xx`).
    #[error("encapsulation header {0:02x?} is not little-endian CDR (00 01 xx xx)")]
    BadHeader([u8; 4]),
    /// Fewer than the 4 bytes of an encapsulation header.
    #[error("{0} bytes: too short for the 4-byte encapsulation header")]
    NoHeader(usize),
    /// The bytes end before the message does.
    #[error("truncated at offset {offset}: {needed} bytes needed, {remaining} left")]
    Truncated {
        /// Where.
        offset: usize,
        /// Bytes needed.
        needed: usize,
        /// Bytes left.
        remaining: usize,
    },
    /// A sequence or string count that the bytes left cannot hold (checked before anything
    /// is allocated).
    #[error("count {count} at offset {offset} needs at least {min_bytes} bytes, {remaining} left")]
    CountTooLarge {
        /// Where the count was read.
        offset: usize,
        /// The count.
        count: u32,
        /// Its minimum size on the wire.
        min_bytes: u64,
        /// Bytes left after the count.
        remaining: usize,
    },
    /// A bounded sequence or string longer than its bound.
    #[error("length {len} at offset {offset} exceeds the bound {bound}")]
    BoundExceeded {
        /// Where the length was read.
        offset: usize,
        /// The length.
        len: usize,
        /// The bound.
        bound: usize,
    },
    /// A `bool` byte other than 0 or 1.
    #[error("bool byte {value} at offset {offset} is neither 0 nor 1")]
    InvalidBool {
        /// Where.
        offset: usize,
        /// The byte.
        value: u8,
    },
    /// A string whose last byte is not NUL.
    #[error("string at offset {offset} is not NUL-terminated")]
    StringNotTerminated {
        /// Where the string's length was read.
        offset: usize,
    },
    /// A string with a NUL before its end.
    #[error("string at offset {offset} contains a NUL byte")]
    StringContainsNul {
        /// Where the string's length was read.
        offset: usize,
    },
    /// A string that is not UTF-8.
    #[error("string at offset {offset} is not valid UTF-8")]
    StringNotUtf8 {
        /// Where the string's length was read.
        offset: usize,
    },
    /// A `wstring` unit above 0xFFFF or an unpaired surrogate.
    #[error("wstring at offset {offset} is not valid UTF-16")]
    WStringNotUtf16 {
        /// Where the wstring's length was read.
        offset: usize,
    },
    /// Structures nested deeper than [`MAX_DEPTH`](crate::MAX_DEPTH).
    #[error("structures nested more than {0} deep")]
    TooDeep(u32),
    /// A view of a primitive sequence whose elements are not aligned in memory: the body
    /// does not start at an 8-byte-aligned address. Copy the bytes into a
    /// [`CdrBuf`](crate::CdrBuf) (horus's shared memory always aligns them).
    #[error("sequence at offset {offset} is not aligned in memory for a zero-copy view")]
    Misaligned {
        /// Where the elements start.
        offset: usize,
    },
}
