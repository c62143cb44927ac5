//! What can be wrong with a value to encode or bytes to decode.

/// A CDR encoding or decoding failure, with the path of the field where it happened
/// (`pose.pose.position.x`, `markers[3].points[0].x`; empty for the message itself).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{}: {kind}", if path.is_empty() { "<message>" } else { path.as_str() })]
pub struct CdrError {
    /// The field path.
    pub path: String,
    /// What is wrong.
    pub kind: CdrErrorKind,
}

/// What is wrong (see [`CdrError`]).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum CdrErrorKind {
    /// The type is not in the resolved set.
    #[error("unknown type '{0}'")]
    UnknownType(String),
    /// Structures nested deeper than [`super::MAX_DEPTH`].
    #[error("nested more than {limit} structures deep")]
    TooDeep {
        /// The limit.
        limit: usize,
    },
    /// Decode: the bytes do not start with the little-endian CDR encapsulation header.
    #[error("encapsulation header {0:02x?} is not little-endian CDR (00 01 xx xx)")]
    BadHeader(Vec<u8>),
    /// Decode: the bytes end before the message does.
    #[error("truncated: {needed} more bytes needed at offset {offset}, {remaining} present")]
    Truncated {
        /// Offset in the payload (after the header).
        offset: usize,
        /// Bytes needed.
        needed: usize,
        /// Bytes left.
        remaining: usize,
    },
    /// Decode: a sequence/string/array count that the remaining bytes cannot hold.
    #[error("count {count} needs at least {min_bytes} bytes, only {remaining} left")]
    CountTooLarge {
        /// The count read (or the fixed array size).
        count: u64,
        /// Its minimum size on the wire.
        min_bytes: u64,
        /// Bytes left.
        remaining: usize,
    },
    /// Decode: a `bool` byte other than 0 or 1.
    #[error("bool byte {0} is neither 0 nor 1")]
    InvalidBool(u8),
    /// Decode: a string whose last byte is not NUL.
    #[error("string is not NUL-terminated")]
    StringNotTerminated,
    /// A string containing a NUL before its end (ROS 2's C and C++ sides would cut it).
    #[error("string contains a NUL byte at {0}")]
    StringContainsNul(usize),
    /// Decode: a string that is not valid UTF-8.
    #[error("string is not valid UTF-8 (at byte {0})")]
    StringNotUtf8(usize),
    /// Decode: a wstring code unit above 0xFFFF or an unpaired surrogate.
    #[error("wstring is not valid UTF-16")]
    WStringNotUtf16,
    /// A bounded string, wstring or sequence longer than its bound.
    #[error("length {len} exceeds the bound {bound}")]
    OverBound {
        /// Its length (bytes for `string`, UTF-16 units for `wstring`, elements).
        len: u64,
        /// The bound.
        bound: u32,
    },
    /// Encode: a string or sequence longer than `u32::MAX`.
    #[error("length {0} does not fit CDR's u32")]
    TooLong(usize),
    /// Encode: a fixed-size array with another number of elements.
    #[error("fixed array needs {expected} elements, value has {got}")]
    FixedArrayLength {
        /// The array size.
        expected: u32,
        /// Elements given.
        got: usize,
    },
    /// Encode: a value of another kind than the field's type.
    #[error("expected {expected}, got {got}")]
    TypeMismatch {
        /// What the type needs.
        expected: &'static str,
        /// What was given.
        got: &'static str,
    },
    /// Encode: an integer outside the range of its primitive.
    #[error("{value} is out of range for {primitive}")]
    IntOutOfRange {
        /// The value.
        value: i128,
        /// The primitive (`.msg` name).
        primitive: &'static str,
    },
    /// Encode: a member of the type missing from the structure value.
    #[error("missing member '{0}'")]
    MissingField(String),
    /// Encode: a structure value member the type does not have (or has once).
    #[error("member '{0}' is not in the type (or given twice)")]
    UnknownField(String),
}
