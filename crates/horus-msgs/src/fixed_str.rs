//! NUL-padded fixed-capacity strings stored inline in messages (`frame_id`, joint names …).
//!
//! Layout: the UTF-8 bytes of the string, then NUL bytes up to the capacity. A string that fills
//! the whole buffer has no terminator. Reading stops at the first NUL. Bytes come from shared
//! memory and may be garbage, so reading validates UTF-8 and reports a typed error.

use core::fmt;

/// Error reading or writing a fixed-capacity string field.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FixedStrError {
    /// The string is longer (in bytes) than the field can hold.
    TooLong {
        /// Length of the rejected string, in bytes.
        len: usize,
        /// Capacity of the field, in bytes.
        capacity: usize,
    },
    /// The string contains a NUL byte, which would silently truncate it when read back.
    InteriorNul {
        /// Byte index of the first NUL.
        at: usize,
    },
    /// The stored bytes (up to the first NUL) are not valid UTF-8.
    InvalidUtf8 {
        /// Length of the longest valid UTF-8 prefix.
        valid_up_to: usize,
    },
}

impl fmt::Display for FixedStrError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::TooLong { len, capacity } => {
                write!(f, "string of {len} bytes does not fit in {capacity} bytes")
            }
            Self::InteriorNul { at } => write!(f, "string contains a NUL byte at index {at}"),
            Self::InvalidUtf8 { valid_up_to } => {
                write!(f, "stored string is not UTF-8 after byte {valid_up_to}")
            }
        }
    }
}

impl std::error::Error for FixedStrError {}

/// Read a NUL-padded string: the bytes before the first NUL (or all of them), as UTF-8.
pub(crate) fn read(buf: &[u8]) -> Result<&str, FixedStrError> {
    let end = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
    core::str::from_utf8(&buf[..end]).map_err(|e| FixedStrError::InvalidUtf8 {
        valid_up_to: e.valid_up_to(),
    })
}

/// Write `s` into `buf`, NUL-padding the rest. On error `buf` is left untouched.
pub(crate) fn write(buf: &mut [u8], s: &str) -> Result<(), FixedStrError> {
    let bytes = s.as_bytes();
    if bytes.len() > buf.len() {
        return Err(FixedStrError::TooLong {
            len: bytes.len(),
            capacity: buf.len(),
        });
    }
    if let Some(at) = bytes.iter().position(|&b| b == 0) {
        return Err(FixedStrError::InteriorNul { at });
    }
    let (head, rest) = buf.split_at_mut(bytes.len());
    head.copy_from_slice(bytes);
    rest.fill(0);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_and_padding() {
        let mut buf = [0xAAu8; 8];
        write(&mut buf, "odom").unwrap();
        assert_eq!(&buf, b"odom\0\0\0\0");
        assert_eq!(read(&buf), Ok("odom"));
    }

    #[test]
    fn full_buffer_has_no_terminator() {
        let mut buf = [0u8; 4];
        write(&mut buf, "base").unwrap();
        assert_eq!(read(&buf), Ok("base"));
    }

    #[test]
    fn too_long_leaves_buffer_untouched() {
        let mut buf = *b"map\0";
        assert_eq!(
            write(&mut buf, "world"),
            Err(FixedStrError::TooLong {
                len: 5,
                capacity: 4
            })
        );
        assert_eq!(&buf, b"map\0");
    }

    #[test]
    fn interior_nul_is_rejected() {
        let mut buf = [0u8; 8];
        assert_eq!(
            write(&mut buf, "a\0b"),
            Err(FixedStrError::InteriorNul { at: 1 })
        );
    }

    #[test]
    fn garbage_bytes_are_a_typed_error() {
        let buf = [b'o', 0xFF, b'k', 0];
        assert_eq!(
            read(&buf),
            Err(FixedStrError::InvalidUtf8 { valid_up_to: 1 })
        );
    }
}
