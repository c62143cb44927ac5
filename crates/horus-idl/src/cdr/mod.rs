//! CDR, as ROS 2 puts messages on the wire: little-endian plain CDR (XCDR1) behind the
//! 4-byte encapsulation header `00 01 00 00`.
//!
//! - Each primitive is aligned to its size (at most 8) relative to the first byte after
//!   the header; padding bytes are unspecified in ROS 2, horus writes zeros.
//! - `bool`, `byte`, `char`, `int8`, `uint8`: 1 byte (`bool` is 0 or 1).
//! - `string`: `u32` length counting the terminating NUL, the UTF-8 bytes, the NUL.
//! - `wstring`: `u32` count of UTF-16 code units, then each unit as a 4-byte `u32`, no
//!   terminator: what rosidl_typesupport_fastrtps (kilted, C and C++) writes "for
//!   interoperability with other DDS-based implementations"; a unit above 0xFFFF is
//!   refused as it refuses it. Read from its source, not run against rclpy (no shipped
//!   message has a `wstring` field).
//! - sequences (`T[]`, `T[<=N]`): `u32` element count, then the elements; fixed arrays
//!   (`T[N]`): the N elements, no count; nested structures inline. Padding comes only
//!   before an item written: an empty `float64[]` is its count alone.
//!
//! [`encode`] writes a [`CdrValue`] tree of a resolved type; [`decode`] reads one back
//! (ignoring bytes after the message, as ROS 2 does: its own buffers carry some),
//! bounded: every count is checked against the bytes present before anything is
//! allocated, nesting is at most [`MAX_DEPTH`] structures deep, and every problem is a
//! [`CdrError`] naming the field. [`CdrCheck`] accepts exactly what [`decode_prefix`]
//! accepts without building a value and without allocating per message (for bridges and
//! tools that only carry the bytes).

mod check;
mod decode;
mod encode;
mod error;
mod layout;
mod value;

pub use check::CdrCheck;
pub use decode::{decode, decode_prefix};
pub use encode::{encode, encode_with_padding, Encoded};
pub use error::{CdrError, CdrErrorKind};
pub use layout::{ENCAPSULATION_CDR_LE, MAX_DEPTH};
pub use value::CdrValue;
