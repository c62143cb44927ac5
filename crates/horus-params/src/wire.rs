//! The parameter service's request and response messages (fixed-size POD).
//!
//! A request carries an op code, a parameter name or index and, for a set,
//! the value: its kind code ([`ParamKind::code`]) and its encoding
//! ([`crate::codec`]) in a bounded byte field. A response carries a status
//! code and, by op, a value, a description and a range.
//!
//! | op | request | response on `STATUS_OK` |
//! | --- | --- | --- |
//! | `OP_DESCRIBE_INDEX` | `index` | the `index`th declaration (default in `value`), `count` = number of parameters |
//! | `OP_DESCRIBE` | `name` | that declaration (default in `value`) |
//! | `OP_GET` | `name` | current value |
//! | `OP_SET` | `name`, `kind`, `value` | the value now stored |
//!
//! Errors: `STATUS_NOT_FOUND`; `STATUS_WRONG_TYPE` (`kind` = declared
//! kind); `STATUS_OUT_OF_RANGE` (`value` = a string array: offending value,
//! min, max); `STATUS_TOO_LARGE` (`count` = encoded length);
//! `STATUS_MALFORMED` (the request could not be decoded; `message` says why).

use horus::message;

use crate::codec;
use crate::value::ParamValue;

/// List one declaration by position.
pub const OP_DESCRIBE_INDEX: u32 = 1;
/// Describe one declaration by name.
pub const OP_DESCRIBE: u32 = 2;
/// Get a current value.
pub const OP_GET: u32 = 3;
/// Set a value.
pub const OP_SET: u32 = 4;

/// Success.
pub const STATUS_OK: u32 = 0;
/// No such parameter (or index past the end).
pub const STATUS_NOT_FOUND: u32 = 1;
/// The value's kind is not the declared kind.
pub const STATUS_WRONG_TYPE: u32 = 2;
/// The value is outside the declared range.
pub const STATUS_OUT_OF_RANGE: u32 = 3;
/// The value is too large to store.
pub const STATUS_TOO_LARGE: u32 = 4;
/// The request could not be decoded.
pub const STATUS_MALFORMED: u32 = 5;

/// No range.
pub const RANGE_NONE: u32 = 0;
/// `range_min` / `range_max` are `i64` bit patterns.
pub const RANGE_I64: u32 = 1;
/// `range_min` / `range_max` are `f64` bit patterns.
pub const RANGE_F64: u32 = 2;

message! {
    /// A request to a node's parameter service.
    pub struct ParamRequest: "horus/ParamRequest", version 1 {
        /// `OP_*`.
        pub op: u32,
        /// Position, for `OP_DESCRIBE_INDEX`.
        pub index: u32,
        /// Kind code of `value`, for `OP_SET`.
        pub kind: u32,
        /// Bytes of `value` in use.
        pub value_len: u32,
        /// Parameter name, UTF-8, NUL-padded.
        pub name: [u8; 64],
        /// Encoded value, for `OP_SET`.
        pub value: [u8; 1024],
    }
}

message! {
    /// A parameter service's answer.
    pub struct ParamResponse: "horus/ParamResponse", version 1 {
        /// `STATUS_*`.
        pub status: u32,
        /// Number of parameters (`OP_DESCRIBE_INDEX`), or an encoded length (`STATUS_TOO_LARGE`).
        pub count: u32,
        /// Kind code of the parameter.
        pub kind: u32,
        /// Bytes of `value` in use.
        pub value_len: u32,
        /// `RANGE_*`.
        pub range_kind: u32,
        /// Zero.
        pub _pad: u32,
        /// Lower bound bits.
        pub range_min: u64,
        /// Upper bound bits.
        pub range_max: u64,
        /// Parameter name, UTF-8, NUL-padded.
        pub name: [u8; 64],
        /// Description, UTF-8, NUL-padded.
        pub description: [u8; 192],
        /// Error detail for `STATUS_MALFORMED`, UTF-8, NUL-padded.
        pub message: [u8; 192],
        /// Encoded value.
        pub value: [u8; 1024],
    }
}

/// Writes `s` NUL-padded into `buf`, cut at a character boundary if too long.
pub(crate) fn put_str(buf: &mut [u8], s: &str) {
    let mut n = s.len().min(buf.len());
    while !s.is_char_boundary(n) {
        n -= 1;
    }
    buf[..n].copy_from_slice(&s.as_bytes()[..n]);
    buf[n..].fill(0);
}

/// Reads a NUL-padded string; `None` if not UTF-8.
pub(crate) fn get_str(buf: &[u8]) -> Option<&str> {
    let end = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
    std::str::from_utf8(&buf[..end]).ok()
}

/// Encodes `v` into a value field; returns the length (callers check the
/// size against [`codec::VALUE_CAPACITY`] first).
pub(crate) fn put_value(buf: &mut [u8; 1024], v: &ParamValue) -> u32 {
    let mut bytes = Vec::with_capacity(codec::encoded_len(v));
    codec::encode(v, &mut bytes);
    let n = bytes.len().min(buf.len());
    buf[..n].copy_from_slice(&bytes[..n]);
    n as u32
}

/// Decodes a value field of kind `kind` and length `len` (both untrusted).
pub(crate) fn get_value(kind: u32, len: u32, buf: &[u8; 1024]) -> Result<ParamValue, String> {
    let len = usize::try_from(len).unwrap_or(usize::MAX);
    let bytes = buf
        .get(..len)
        .ok_or_else(|| format!("value length {len} exceeds {}", buf.len()))?;
    let code = u8::try_from(kind).map_err(|_| format!("unknown kind code {kind}"))?;
    codec::decode(code, bytes).map_err(|e| e.to_string())
}
