//! Alignment arithmetic shared by the writer and the reader.

/// `pos` rounded up to a multiple of `align` (a power of two, at most 8).
#[inline]
pub const fn align_to(pos: usize, align: usize) -> usize {
    (pos + align - 1) & !(align - 1)
}

/// Counts the bytes a message will take: a [`CdrWriter`](crate::CdrWriter) in counting
/// mode ([`CdrWriter::counting`](crate::CdrWriter::counting)) is one; this alias names it.
pub type SizeCounter = crate::CdrWriter<'static>;
