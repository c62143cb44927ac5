//! Reads a CDR body with every offset, count and length checked.

use crate::bools_view::BoolsView;
use crate::error::DecodeError;
use crate::primitive::CdrPrimitive;
use crate::size::align_to;
use crate::str_view::WStrView;
use crate::text;
use crate::MAX_DEPTH;

/// `text` (a string's bytes without its terminator) as a `&str`: no NUL inside, valid
/// UTF-8. Plain ASCII (nearly every frame id and name) is settled by one pass over the
/// bytes; anything else gets the exact checks, in the order their errors are reported.
#[inline]
fn check_text(text: &[u8], offset: usize) -> Result<&str, DecodeError> {
    if text::is_ascii_without_nul(text) {
        // SAFETY: every byte is in 1..=0x7F (just checked), and a sequence of ASCII bytes
        // is valid UTF-8. (Bytes in shared memory that a publisher rewrites after this
        // check: the caveat of every `&str` view, docs/security.md "Not protected" — the
        // same as after `str::from_utf8`.)
        return Ok(unsafe { std::str::from_utf8_unchecked(text) });
    }
    if text.contains(&0) {
        return Err(DecodeError::StringContainsNul { offset });
    }
    std::str::from_utf8(text).map_err(|_| DecodeError::StringNotUtf8 { offset })
}

/// Reads a CDR body (after the encapsulation header). Positions and alignment count from
/// the body's first byte. Every read checks the bytes left first; counts are checked
/// against the bytes left (at least `min_element_bytes` each) before the caller allocates
/// or loops, so work and memory stay linear in the input.
#[derive(Debug, Clone, Copy)]
pub struct CdrReader<'a> {
    buf: &'a [u8],
    pos: usize,
    depth: u32,
}

impl<'a> CdrReader<'a> {
    /// A reader of `body` (the bytes after the encapsulation header).
    pub fn new(body: &'a [u8]) -> Self {
        CdrReader {
            buf: body,
            pos: 0,
            depth: 0,
        }
    }

    /// A reader of a whole message: checks the little-endian CDR encapsulation header and
    /// reads the body after it.
    pub fn from_message(bytes: &'a [u8]) -> Result<Self, DecodeError> {
        let Some(header) = bytes.get(..4) else {
            return Err(DecodeError::NoHeader(bytes.len()));
        };
        // 00 01: plain CDR, little-endian; the options bytes are not interpreted (ROS 2
        // writes zeros).
        if header[0] != 0 || header[1] != 1 {
            let mut h = [0u8; 4];
            h.copy_from_slice(header);
            return Err(DecodeError::BadHeader(h));
        }
        Ok(Self::new(&bytes[4..]))
    }

    /// Bytes read so far.
    #[inline]
    pub fn position(&self) -> usize {
        self.pos
    }

    /// Bytes left after the current position.
    #[inline]
    pub fn remaining(&self) -> usize {
        self.buf.len() - self.pos
    }

    /// Takes `len` bytes after padding to `align`.
    #[inline]
    fn take(&mut self, align: usize, len: usize) -> Result<&'a [u8], DecodeError> {
        let start = align_to(self.pos, align);
        match start.checked_add(len) {
            Some(end) if end <= self.buf.len() => {
                self.pos = end;
                Ok(&self.buf[start..end])
            }
            _ => Err(DecodeError::Truncated {
                offset: self.pos,
                needed: (start - self.pos).saturating_add(len),
                remaining: self.remaining(),
            }),
        }
    }

    /// A numeric primitive.
    #[inline]
    pub fn read<T: CdrPrimitive>(&mut self) -> Result<T, DecodeError> {
        Ok(T::from_le(self.take(T::SIZE, T::SIZE)?))
    }

    /// `N` bytes after padding to `align`: a run of fixed-size fields read with one bounds
    /// check (generated code reads consecutive numeric members this way and decodes each
    /// from its offset in the block). A truncated block is reported at its start.
    #[inline]
    pub fn read_block<const N: usize>(&mut self, align: usize) -> Result<&'a [u8; N], DecodeError> {
        let offset = self.pos;
        let bytes = self.take(align, N)?;
        bytes.first_chunk::<N>().ok_or(DecodeError::Truncated {
            offset,
            needed: N,
            remaining: 0,
        })
    }

    /// A `bool`: 0 or 1, anything else is an error.
    #[inline]
    pub fn read_bool(&mut self) -> Result<bool, DecodeError> {
        let offset = self.pos;
        match self.read::<u8>()? {
            0 => Ok(false),
            1 => Ok(true),
            value => Err(DecodeError::InvalidBool { offset, value }),
        }
    }

    /// A sequence's count, checked against its bound and against the bytes left
    /// (`min_element_bytes` each, at least 1 is assumed).
    pub fn read_count(
        &mut self,
        min_element_bytes: usize,
        bound: Option<usize>,
    ) -> Result<usize, DecodeError> {
        let offset = align_to(self.pos, 4);
        let count = self.read::<u32>()?;
        let len = count as usize;
        if let Some(bound) = bound {
            if len > bound {
                return Err(DecodeError::BoundExceeded { offset, len, bound });
            }
        }
        // Saturating: a generated type's minimum element size can be near usize::MAX.
        let min_bytes = (count as u64).saturating_mul(min_element_bytes.max(1) as u64);
        if min_bytes > self.remaining() as u64 {
            return Err(DecodeError::CountTooLarge {
                offset,
                count,
                min_bytes,
                remaining: self.remaining(),
            });
        }
        Ok(len)
    }

    /// `n` numeric elements viewed in place (`&[f32]`, `&[u8]`, …): zero-copy. Fails with
    /// [`DecodeError::Misaligned`] when the body does not start 8-byte aligned in memory.
    pub fn read_slice<T: CdrPrimitive>(&mut self, n: usize) -> Result<&'a [T], DecodeError> {
        if n == 0 {
            return Ok(&[]);
        }
        let len = n.checked_mul(T::SIZE).ok_or(DecodeError::Truncated {
            offset: self.pos,
            needed: usize::MAX,
            remaining: self.remaining(),
        })?;
        let bytes = self.take(T::SIZE, len)?;
        #[cfg(target_endian = "little")]
        {
            bytemuck::try_cast_slice(bytes).map_err(|_| DecodeError::Misaligned {
                offset: self.pos - len,
            })
        }
        #[cfg(not(target_endian = "little"))]
        compile_error!("zero-copy CDR views need a little-endian host")
    }

    /// `n` numeric elements copied into a `Vec` (works at any alignment).
    pub fn read_vec<T: CdrPrimitive>(&mut self, n: usize) -> Result<Vec<T>, DecodeError> {
        if n == 0 {
            return Ok(Vec::new());
        }
        let len = n.checked_mul(T::SIZE).ok_or(DecodeError::Truncated {
            offset: self.pos,
            needed: usize::MAX,
            remaining: self.remaining(),
        })?;
        let bytes = self.take(T::SIZE, len)?;
        let mut v = vec![T::default(); n];
        bytemuck::cast_slice_mut::<T, u8>(&mut v).copy_from_slice(bytes);
        #[cfg(not(target_endian = "little"))]
        for (x, b) in v.iter_mut().zip(bytes.chunks_exact(T::SIZE)) {
            *x = T::from_le(b);
        }
        Ok(v)
    }

    /// A fixed array `T[N]` of numeric elements.
    pub fn read_array<T: CdrPrimitive, const N: usize>(&mut self) -> Result<[T; N], DecodeError> {
        let mut a = [T::default(); N];
        if N == 0 {
            return Ok(a);
        }
        let bytes = self.take(T::SIZE, N * T::SIZE)?;
        for (x, b) in a.iter_mut().zip(bytes.chunks_exact(T::SIZE)) {
            *x = T::from_le(b);
        }
        Ok(a)
    }

    /// `n` bools (each 0 or 1).
    pub fn read_bool_vec(&mut self, n: usize) -> Result<Vec<bool>, DecodeError> {
        let offset = self.pos;
        let bytes = self.take(1, n)?;
        bytes
            .iter()
            .enumerate()
            .map(|(i, &value)| match value {
                0 => Ok(false),
                1 => Ok(true),
                _ => Err(DecodeError::InvalidBool {
                    offset: offset + i,
                    value,
                }),
            })
            .collect()
    }

    /// `n` bools viewed in place (each byte checked to be 0 or 1).
    pub fn read_bools(&mut self, n: usize) -> Result<BoolsView<'a>, DecodeError> {
        let offset = self.pos;
        let bytes = self.take(1, n)?;
        BoolsView::new(bytes, offset)
    }

    /// A `string` / `string<=N`, viewed in place: `u32` length including the NUL, bytes,
    /// NUL. A length of 0 reads as "" (as Fast CDR does).
    pub fn read_str(&mut self, bound: Option<usize>) -> Result<&'a str, DecodeError> {
        let offset = align_to(self.pos, 4);
        let n = self.read_count(1, None)?;
        if n == 0 {
            return Ok("");
        }
        let bytes = self.take(1, n)?;
        let (last, text) = bytes.split_last().expect("n > 0");
        if *last != 0 {
            return Err(DecodeError::StringNotTerminated { offset });
        }
        if let Some(bound) = bound {
            if text.len() > bound {
                return Err(DecodeError::BoundExceeded {
                    offset,
                    len: text.len(),
                    bound,
                });
            }
        }
        check_text(text, offset)
    }

    /// A `wstring` / `wstring<=N` (units of 4 bytes each), decoded into a `String`.
    pub fn read_wstring(&mut self, bound: Option<usize>) -> Result<String, DecodeError> {
        let offset = align_to(self.pos, 4);
        let n = self.read_count(4, bound)?;
        let bytes = self.take(4, n * 4)?;
        let mut units = Vec::with_capacity(n);
        for b in bytes.chunks_exact(4) {
            let u = <u32 as CdrPrimitive>::from_le(b);
            units.push(u16::try_from(u).map_err(|_| DecodeError::WStringNotUtf16 { offset })?);
        }
        let s = String::from_utf16(&units).map_err(|_| DecodeError::WStringNotUtf16 { offset })?;
        if s.contains('\0') {
            return Err(DecodeError::StringContainsNul { offset });
        }
        Ok(s)
    }

    /// A `wstring` / `wstring<=N` viewed in place, its units checked (see
    /// [`WStrView`]).
    pub fn read_wstr(&mut self, bound: Option<usize>) -> Result<WStrView<'a>, DecodeError> {
        let offset = align_to(self.pos, 4);
        let n = self.read_count(4, bound)?;
        let bytes = self.take(4, n * 4)?;
        WStrView::new(bytes, offset)
    }

    /// Enters a nested structure; [`DecodeError::TooDeep`] past [`MAX_DEPTH`]. Pair with
    /// [`leave`](Self::leave).
    #[inline]
    pub fn enter(&mut self) -> Result<(), DecodeError> {
        if self.depth >= MAX_DEPTH {
            return Err(DecodeError::TooDeep(MAX_DEPTH));
        }
        self.depth += 1;
        Ok(())
    }

    /// Leaves a nested structure.
    #[inline]
    pub fn leave(&mut self) {
        self.depth = self.depth.saturating_sub(1);
    }
}
