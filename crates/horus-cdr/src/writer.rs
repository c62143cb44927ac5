//! Writes a CDR body into a buffer of exactly the message's size, in one pass.

use crate::error::EncodeError;
use crate::primitive::CdrPrimitive;
use crate::size::align_to;
use crate::text;

/// Writes a CDR body (no encapsulation header). Positions and alignment count from the
/// first byte of the buffer, which is the first byte of the body. Padding is written as
/// zeros.
///
/// A writer made with [`CdrWriter::counting`] writes nothing and only advances its
/// position: running a message's `write_cdr` through it gives the exact size (and every
/// encoding error) before any buffer is loaned.
#[derive(Debug)]
pub struct CdrWriter<'b> {
    buf: &'b mut [u8],
    pos: usize,
    counting: bool,
}

impl CdrWriter<'static> {
    /// A writer that only counts bytes.
    pub fn counting() -> Self {
        CdrWriter {
            buf: &mut [],
            pos: 0,
            counting: true,
        }
    }
}

impl<'b> CdrWriter<'b> {
    /// A writer filling `buf` from its first byte.
    pub fn new(buf: &'b mut [u8]) -> Self {
        CdrWriter {
            buf,
            pos: 0,
            counting: false,
        }
    }

    /// Bytes written (or counted) so far.
    #[inline]
    pub fn position(&self) -> usize {
        self.pos
    }

    /// Reserves `len` bytes after padding to `align`; returns the slice to fill, or `None`
    /// when counting.
    #[inline]
    fn reserve(&mut self, align: usize, len: usize) -> Result<Option<&mut [u8]>, EncodeError> {
        let start = align_to(self.pos, align);
        let end = start + len;
        if self.counting {
            self.pos = end;
            return Ok(None);
        }
        if end > self.buf.len() {
            return Err(EncodeError::BufferTooSmall {
                needed: end,
                available: self.buf.len(),
            });
        }
        if start != self.pos {
            // Padding (1-7 bytes). Tested first: most fields need none, and an empty
            // `fill` still costs a call to memset (~20 ns of a 1,080-range LaserScan build).
            self.zero_padding(start);
        }
        self.pos = end;
        Ok(Some(&mut self.buf[start..end]))
    }

    /// Zeros `pos..start` (1-7 bytes of padding). Where the buffer has room, one 8-byte
    /// store from `pos` instead of a call to `memset`: the bytes it zeros past `start` are
    /// the field being reserved and what follows it, which are written after this (or, past
    /// the message's end in a larger buffer, never sent).
    #[inline]
    fn zero_padding(&mut self, start: usize) {
        debug_assert!(start > self.pos && start - self.pos < 8);
        match self.buf.get_mut(self.pos..self.pos + 8) {
            Some(word) => word.copy_from_slice(&[0; 8]),
            None => self.buf[self.pos..start].fill(0),
        }
    }

    /// `N` bytes after padding to `align`, written by `fill` (every byte: they are not
    /// cleared first): a run of fixed-size fields written as one block, with one bounds
    /// check (generated code writes consecutive primitive members this way, padding
    /// between them included). `fill` is not called when counting.
    #[inline]
    pub fn write_block<const N: usize>(
        &mut self,
        align: usize,
        fill: impl FnOnce(&mut [u8; N]),
    ) -> Result<(), EncodeError> {
        if let Some(out) = self.reserve(align, N)? {
            debug_assert_eq!(out.len(), N);
            if let Some(block) = out.first_chunk_mut::<N>() {
                fill(block);
            }
        }
        Ok(())
    }

    /// A numeric primitive.
    #[inline]
    pub fn write<T: CdrPrimitive>(&mut self, v: T) -> Result<(), EncodeError> {
        if let Some(out) = self.reserve(T::SIZE, T::SIZE)? {
            v.to_le(out);
        }
        Ok(())
    }

    /// A `bool` (one byte, 0 or 1).
    #[inline]
    pub fn write_bool(&mut self, v: bool) -> Result<(), EncodeError> {
        self.write(v as u8)
    }

    /// A sequence's element count (checked against its bound, if any).
    #[inline]
    pub fn write_count(
        &mut self,
        field: &'static str,
        len: usize,
        bound: Option<usize>,
    ) -> Result<(), EncodeError> {
        if let Some(bound) = bound {
            if len > bound {
                return Err(EncodeError::BoundExceeded { field, len, bound });
            }
        }
        let n = u32::try_from(len).map_err(|_| EncodeError::TooLong { field, len })?;
        self.write(n)
    }

    /// The elements of a numeric array or sequence (after its count): aligned once, then
    /// copied as one block.
    #[inline]
    pub fn write_slice<T: CdrPrimitive>(&mut self, v: &[T]) -> Result<(), EncodeError> {
        if v.is_empty() {
            // ROS 2 writes no padding before absent elements.
            return Ok(());
        }
        if let Some(out) = self.reserve(T::SIZE, std::mem::size_of_val(v))? {
            #[cfg(target_endian = "little")]
            out.copy_from_slice(bytemuck::cast_slice(v));
            #[cfg(not(target_endian = "little"))]
            for (x, o) in v.iter().zip(out.chunks_exact_mut(T::SIZE)) {
                x.to_le(o);
            }
        }
        Ok(())
    }

    /// The elements of a numeric array or sequence (after its count), written in place:
    /// aligned once as [`CdrWriter::write_slice`] does, then `fill` gets the
    /// `n × size_of::<T>()` bytes to write as little-endian elements (every byte: they are
    /// not cleared first). For large arrays produced straight into a loaned chunk (a
    /// camera frame, a point cloud) without a second copy. Not called when counting.
    pub fn write_slice_with<T: CdrPrimitive>(
        &mut self,
        field: &'static str,
        n: usize,
        fill: impl FnOnce(&mut [u8]),
    ) -> Result<(), EncodeError> {
        if n == 0 {
            // ROS 2 writes no padding before absent elements.
            return Ok(());
        }
        let len = n
            .checked_mul(T::SIZE)
            .ok_or(EncodeError::TooLong { field, len: n })?;
        if let Some(out) = self.reserve(T::SIZE, len)? {
            fill(out);
        }
        Ok(())
    }

    /// The elements of a `bool` array or sequence (after its count).
    pub fn write_bool_slice(&mut self, v: &[bool]) -> Result<(), EncodeError> {
        if let Some(out) = self.reserve(1, v.len())? {
            for (o, b) in out.iter_mut().zip(v) {
                *o = *b as u8;
            }
        }
        Ok(())
    }

    /// A `string` / `string<=N`: `u32` length including the NUL, the bytes, the NUL
    /// (reserved and bounds-checked as one block).
    #[inline]
    pub fn write_string(
        &mut self,
        field: &'static str,
        s: &str,
        bound: Option<usize>,
    ) -> Result<(), EncodeError> {
        let text = s.as_bytes();
        if let Some(bound) = bound {
            if text.len() > bound {
                return Err(EncodeError::BoundExceeded {
                    field,
                    len: text.len(),
                    bound,
                });
            }
        }
        if text::has_nul(text) {
            let at = text.iter().position(|&b| b == 0).unwrap_or(0);
            return Err(EncodeError::StringContainsNul { field, at });
        }
        let n = u32::try_from(text.len() + 1).map_err(|_| EncodeError::TooLong {
            field,
            len: text.len(),
        })?;
        if let Some(out) = self.reserve(4, 4 + text.len() + 1)? {
            let (count, rest) = out.split_at_mut(4);
            count.copy_from_slice(&n.to_le_bytes());
            let (bytes, nul) = rest.split_at_mut(text.len());
            bytes.copy_from_slice(text);
            // One byte (not `fill`, which is a call to memset here).
            if let Some(z) = nul.first_mut() {
                *z = 0;
            }
        }
        Ok(())
    }

    /// A `wstring` / `wstring<=N`: `u32` count of UTF-16 units, then each unit as a
    /// 4-byte `u32` (as rosidl_typesupport_fastrtps writes it), no terminator.
    pub fn write_wstring(
        &mut self,
        field: &'static str,
        s: &str,
        bound: Option<usize>,
    ) -> Result<(), EncodeError> {
        let units = s.encode_utf16().count();
        if let Some(bound) = bound {
            if units > bound {
                return Err(EncodeError::BoundExceeded {
                    field,
                    len: units,
                    bound,
                });
            }
        }
        if s.contains('\0') {
            let at = s.bytes().position(|b| b == 0).unwrap_or(0);
            return Err(EncodeError::StringContainsNul { field, at });
        }
        let n = u32::try_from(units).map_err(|_| EncodeError::TooLong { field, len: units })?;
        self.write(n)?;
        for u in s.encode_utf16() {
            self.write(u as u32)?;
        }
        Ok(())
    }

    /// The body's length: bytes written (or counted).
    pub fn finish(self) -> usize {
        self.pos
    }
}
