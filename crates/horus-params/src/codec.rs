//! The compact byte encoding of a [`ParamValue`] used in the parameter
//! service's bounded `value` field.
//!
//! Layout (all integers little-endian):
//!
//! | kind | bytes |
//! | --- | --- |
//! | `Bool` | 1 byte, 0 or 1 |
//! | `I64` / `F64` | 8 bytes (`f64` as its IEEE-754 bits) |
//! | `Str` | `u16` length, then that many UTF-8 bytes |
//! | arrays | `u16` element count, then each element encoded as above |
//!
//! The kind itself travels in its own field (a [`ParamKind::code`]); the
//! encoded value must fill exactly the declared length, and at most
//! [`VALUE_CAPACITY`] bytes. Decoding treats the bytes as untrusted: every
//! length is bounds-checked and every loop is bounded by the input length.

use crate::error::ParamError;
use crate::value::{ParamKind, ParamValue};

/// Largest encoded value, in bytes (the service's value field).
pub const VALUE_CAPACITY: usize = 1024;

/// Why bytes could not be decoded as a value.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum DecodeError {
    /// The kind code is not one of [`ParamKind::ALL`].
    #[error("unknown kind code {0}")]
    UnknownKind(u8),
    /// The bytes end before the value does.
    #[error("value truncated")]
    Truncated,
    /// Bytes are left after the value.
    #[error("{0} trailing bytes after the value")]
    Trailing(usize),
    /// A boolean byte other than 0 or 1.
    #[error("invalid boolean byte {0}")]
    BadBool(u8),
    /// A string that is not UTF-8.
    #[error("string is not UTF-8")]
    BadUtf8,
}

/// Appends the encoding of `value` to `out`.
pub fn encode(value: &ParamValue, out: &mut Vec<u8>) {
    fn str_(s: &str, out: &mut Vec<u8>) {
        // Lengths above u16::MAX never reach the wire: check_encoded_len rejects them first.
        out.extend_from_slice(&(s.len().min(usize::from(u16::MAX)) as u16).to_le_bytes());
        out.extend_from_slice(&s.as_bytes()[..s.len().min(usize::from(u16::MAX))]);
    }
    fn count(n: usize, out: &mut Vec<u8>) {
        out.extend_from_slice(&(n.min(usize::from(u16::MAX)) as u16).to_le_bytes());
    }
    match value {
        ParamValue::Bool(b) => out.push(u8::from(*b)),
        ParamValue::I64(v) => out.extend_from_slice(&v.to_le_bytes()),
        ParamValue::F64(v) => out.extend_from_slice(&v.to_bits().to_le_bytes()),
        ParamValue::Str(s) => str_(s, out),
        ParamValue::BoolArray(vs) => {
            count(vs.len(), out);
            vs.iter().for_each(|b| out.push(u8::from(*b)));
        }
        ParamValue::I64Array(vs) => {
            count(vs.len(), out);
            vs.iter()
                .for_each(|v| out.extend_from_slice(&v.to_le_bytes()));
        }
        ParamValue::F64Array(vs) => {
            count(vs.len(), out);
            vs.iter()
                .for_each(|v| out.extend_from_slice(&v.to_bits().to_le_bytes()));
        }
        ParamValue::StrArray(vs) => {
            count(vs.len(), out);
            vs.iter().for_each(|s| str_(s, out));
        }
    }
}

/// The encoded length of `value`.
pub fn encoded_len(value: &ParamValue) -> usize {
    match value {
        ParamValue::Bool(_) => 1,
        ParamValue::I64(_) | ParamValue::F64(_) => 8,
        ParamValue::Str(s) => 2 + s.len(),
        ParamValue::BoolArray(v) => 2 + v.len(),
        ParamValue::I64Array(v) => 2 + 8 * v.len(),
        ParamValue::F64Array(v) => 2 + 8 * v.len(),
        ParamValue::StrArray(v) => 2 + v.iter().map(|s| 2 + s.len()).sum::<usize>(),
    }
}

/// `TooLarge` if `value` does not fit in [`VALUE_CAPACITY`].
pub(crate) fn check_encoded_len(name: &str, value: &ParamValue) -> Result<(), ParamError> {
    let len = encoded_len(value);
    if len > VALUE_CAPACITY {
        return Err(ParamError::TooLarge {
            name: name.to_owned(),
            len,
            max: VALUE_CAPACITY,
        });
    }
    Ok(())
}

/// Decodes a value of kind `code` that fills `bytes` exactly.
pub fn decode(code: u8, bytes: &[u8]) -> Result<ParamValue, DecodeError> {
    let kind = ParamKind::from_code(code).ok_or(DecodeError::UnknownKind(code))?;
    let mut r = Reader { bytes, at: 0 };
    let value = match kind {
        ParamKind::Bool => ParamValue::Bool(r.bool()?),
        ParamKind::I64 => ParamValue::I64(r.i64()?),
        ParamKind::F64 => ParamValue::F64(f64::from_bits(r.i64()? as u64)),
        ParamKind::Str => ParamValue::Str(r.string()?),
        ParamKind::BoolArray => ParamValue::BoolArray(r.array(Reader::bool)?),
        ParamKind::I64Array => ParamValue::I64Array(r.array(Reader::i64)?),
        ParamKind::F64Array => {
            ParamValue::F64Array(r.array(|r| r.i64().map(|v| f64::from_bits(v as u64)))?)
        }
        ParamKind::StrArray => ParamValue::StrArray(r.array(Reader::string)?),
    };
    match bytes.len() - r.at {
        0 => Ok(value),
        n => Err(DecodeError::Trailing(n)),
    }
}

struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl Reader<'_> {
    fn take(&mut self, n: usize) -> Result<&[u8], DecodeError> {
        let end = self.at.checked_add(n).ok_or(DecodeError::Truncated)?;
        let s = self.bytes.get(self.at..end).ok_or(DecodeError::Truncated)?;
        self.at = end;
        Ok(s)
    }
    fn bool(&mut self) -> Result<bool, DecodeError> {
        match self.take(1)?[0] {
            0 => Ok(false),
            1 => Ok(true),
            b => Err(DecodeError::BadBool(b)),
        }
    }
    fn u16(&mut self) -> Result<usize, DecodeError> {
        let b = self.take(2)?;
        Ok(usize::from(u16::from_le_bytes([b[0], b[1]])))
    }
    fn i64(&mut self) -> Result<i64, DecodeError> {
        let b = self.take(8)?;
        let mut a = [0u8; 8];
        a.copy_from_slice(b);
        Ok(i64::from_le_bytes(a))
    }
    fn string(&mut self) -> Result<String, DecodeError> {
        let n = self.u16()?;
        let b = self.take(n)?;
        std::str::from_utf8(b)
            .map(str::to_owned)
            .map_err(|_| DecodeError::BadUtf8)
    }
    /// A count then that many elements. Each element takes at least one
    /// byte, so the loop is bounded by the input length whatever the count says.
    fn array<T>(
        &mut self,
        mut elem: impl FnMut(&mut Self) -> Result<T, DecodeError>,
    ) -> Result<Vec<T>, DecodeError> {
        let n = self.u16()?;
        let mut out = Vec::with_capacity(n.min(self.bytes.len()));
        for _ in 0..n {
            out.push(elem(self)?);
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round(v: ParamValue) {
        let mut out = Vec::new();
        encode(&v, &mut out);
        assert_eq!(out.len(), encoded_len(&v));
        assert_eq!(decode(v.kind().code(), &out).unwrap(), v);
    }

    #[test]
    fn every_kind_round_trips() {
        round(ParamValue::Bool(true));
        round(ParamValue::I64(-42));
        round(ParamValue::F64(2.5));
        round(ParamValue::Str("héllo".into()));
        round(ParamValue::BoolArray(vec![true, false]));
        round(ParamValue::I64Array(vec![1, i64::MIN, i64::MAX]));
        round(ParamValue::F64Array(vec![]));
        round(ParamValue::StrArray(vec!["a".into(), String::new()]));
    }

    #[test]
    fn hostile_bytes_are_typed_errors() {
        assert_eq!(decode(0, &[]), Err(DecodeError::UnknownKind(0)));
        assert_eq!(decode(9, &[]), Err(DecodeError::UnknownKind(9)));
        assert_eq!(decode(1, &[2]), Err(DecodeError::BadBool(2)));
        assert_eq!(decode(2, &[1, 2, 3]), Err(DecodeError::Truncated));
        assert_eq!(decode(1, &[1, 0]), Err(DecodeError::Trailing(1)));
        assert_eq!(decode(4, &[2, 0, 0xff, 0xfe]), Err(DecodeError::BadUtf8));
        // A count of 65535 elements with no bytes behind it stops at once.
        assert_eq!(decode(6, &[0xff, 0xff]), Err(DecodeError::Truncated));
    }
}
