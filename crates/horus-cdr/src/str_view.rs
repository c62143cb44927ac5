//! Views of strings: `string` as `&str` in place, `wstring` as its validated UTF-16 units.

use crate::error::DecodeError;
use crate::message::RosView;
use crate::primitive::CdrPrimitive;
use crate::reader::CdrReader;

/// An unbounded `string` element viewed in place (for [`SeqView`](crate::SeqView)s of
/// strings). A bounded element (`string<=N`) is checked against its bound by the
/// generated code that makes the sequence's view.
impl<'a> RosView<'a> for &'a str {
    fn read_view(r: &mut CdrReader<'a>) -> Result<Self, DecodeError> {
        r.read_str(None)
    }
}

/// A `wstring` viewed in place: its UTF-16 units (4 bytes each on the wire), checked
/// when the view was made (every unit at most 0xFFFF, surrogates paired, no NUL).
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct WStrView<'a> {
    units: &'a [u8],
}

impl<'a> WStrView<'a> {
    /// Checks `units` (4 little-endian bytes per UTF-16 unit) and views them.
    pub(crate) fn new(units: &'a [u8], offset: usize) -> Result<Self, DecodeError> {
        let view = WStrView { units };
        // Every unit first, then NUL: the errors `CdrReader::read_wstring` gives.
        if view.decode().any(|c| c.is_none()) {
            return Err(DecodeError::WStringNotUtf16 { offset });
        }
        if view.decode().any(|c| c == Some('\0')) {
            return Err(DecodeError::StringContainsNul { offset });
        }
        Ok(view)
    }

    /// The characters; `None` for a unit that is not UTF-16.
    fn decode(&self) -> impl Iterator<Item = Option<char>> + 'a {
        let units = self.units.chunks_exact(4).map(|b| {
            let u = <u32 as CdrPrimitive>::from_le(b);
            u16::try_from(u).map_err(|_| ())
        });
        // An out-of-range unit stops the UTF-16 decoder through a lone surrogate.
        let units = units.map(|u| u.unwrap_or(0xD800));
        char::decode_utf16(units).map(Result::ok)
    }

    /// Number of UTF-16 units.
    pub fn len_utf16(&self) -> usize {
        self.units.len() / 4
    }

    /// Whether it is empty.
    pub fn is_empty(&self) -> bool {
        self.units.is_empty()
    }

    /// The characters (all valid: checked when the view was made).
    pub fn chars(&self) -> impl Iterator<Item = char> + 'a {
        self.decode()
            .map(|c| c.unwrap_or(char::REPLACEMENT_CHARACTER))
    }
}

impl std::fmt::Display for WStrView<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        use std::fmt::Write;
        self.chars().try_for_each(|c| f.write_char(c))
    }
}

impl std::fmt::Debug for WStrView<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Debug::fmt(&self.to_string(), f)
    }
}

/// An unbounded `wstring` element viewed in place (bounded elements: see `&str`).
impl<'a> RosView<'a> for WStrView<'a> {
    fn read_view(r: &mut CdrReader<'a>) -> Result<Self, DecodeError> {
        r.read_wstr(None)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::CdrWriter;

    fn wire(s: &str) -> Vec<u8> {
        let mut w = CdrWriter::counting();
        w.write_wstring("w", s, None).unwrap();
        let mut buf = vec![0u8; w.finish()];
        CdrWriter::new(&mut buf)
            .write_wstring("w", s, None)
            .unwrap();
        buf
    }

    #[test]
    fn wstring_views_read_what_the_writer_wrote() {
        for s in ["", "wide", "ü€𝄞"] {
            let buf = wire(s);
            let v = CdrReader::new(&buf).read_wstr(None).unwrap();
            assert_eq!(v.to_string(), s);
            assert_eq!(v.len_utf16(), s.encode_utf16().count());
            let owned = CdrReader::new(&buf).read_wstring(None).unwrap();
            assert_eq!(owned, s);
        }
    }

    #[test]
    fn bad_wstrings_are_refused_when_viewed() {
        // count 1, unit 0x10000 (above 16 bits)
        let above = [1, 0, 0, 0, 0, 0, 1, 0];
        assert!(matches!(
            CdrReader::new(&above).read_wstr(None),
            Err(DecodeError::WStringNotUtf16 { offset: 0 })
        ));
        // count 1, lone high surrogate
        let lone = [1, 0, 0, 0, 0x00, 0xD8, 0, 0];
        assert!(matches!(
            CdrReader::new(&lone).read_wstr(None),
            Err(DecodeError::WStringNotUtf16 { .. })
        ));
        let nul = [1, 0, 0, 0, 0, 0, 0, 0];
        assert!(matches!(
            CdrReader::new(&nul).read_wstr(None),
            Err(DecodeError::StringContainsNul { .. })
        ));
        // A NUL before a bad unit: the bad unit is reported, as read_wstring does.
        let nul_then_bad = [2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0];
        let viewed = CdrReader::new(&nul_then_bad).read_wstr(None).map(|_| ());
        let owned = CdrReader::new(&nul_then_bad).read_wstring(None).map(|_| ());
        assert_eq!(viewed, owned);
        assert!(matches!(viewed, Err(DecodeError::WStringNotUtf16 { .. })));
        let over = wire("abc");
        assert!(matches!(
            CdrReader::new(&over).read_wstr(Some(2)),
            Err(DecodeError::BoundExceeded { .. })
        ));
    }

    #[test]
    fn strings_view_as_seq_elements() {
        let mut buf = vec![0u8; 16];
        let mut w = CdrWriter::new(&mut buf);
        w.write_string("s", "abc", None).unwrap();
        w.write_string("s", "", None).unwrap();
        let n = w.finish();
        let mut r = CdrReader::new(&buf[..n]);
        let seq = crate::SeqView::<&str>::read(&mut r, 2).unwrap();
        assert_eq!(seq.iter().collect::<Vec<_>>(), ["abc", ""]);
    }
}
