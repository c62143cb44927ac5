//! Argument values: how a macro argument is stored in a record, and read back.
//!
//! On the calling thread a value is copied as raw bytes after a one-byte tag — integers,
//! floats, bools and chars by value, strings by copy — and never formatted. A value of any
//! other type goes through [`display`] or [`debug`], which format it into a stack buffer
//! of [`CAPTURE_LEN`] bytes (no allocation; longer text is cut and counted).

use std::fmt;

/// Bytes a [`display`]/[`debug`] capture keeps.
pub const CAPTURE_LEN: usize = 192;

pub(crate) const T_I64: u8 = 1;
pub(crate) const T_U64: u8 = 2;
pub(crate) const T_F64: u8 = 3;
pub(crate) const T_BOOL: u8 = 4;
pub(crate) const T_CHAR: u8 = 5;
pub(crate) const T_STR: u8 = 6;
pub(crate) const T_TEXT: u8 = 7;
pub(crate) const T_TEXT_CUT: u8 = 8;
pub(crate) const T_F32: u8 = 9;

/// Where a record is being written: the ring's bytes from some offset, wrapping.
pub struct Out {
    pub(crate) base: *mut u8,
    pub(crate) mask: usize,
    pub(crate) off: usize,
}

impl Out {
    /// Copies `bytes` at the cursor (wrapping at the ring's end) and advances it.
    #[inline(always)]
    pub fn put(&mut self, bytes: &[u8]) {
        let start = self.off & self.mask;
        let size = self.mask + 1;
        let len = bytes.len();
        // Both branches write inside the ring: `base` is the start of the ring's `size` bytes
        // (mask = size - 1), which stay mapped while the logger lives, and start < size.
        // The cells belong to this writer's reservation (ring::reserve), so no other writer
        // touches them; observers validate their copies afterwards (ring::intact).
        if len <= size - start {
            // The common case, one copy. Its length is the caller's (a constant for the
            // record head and fixed-size values), so the compiler can inline the copy
            // instead of calling `memcpy`.
            // SAFETY: start + len ≤ size (checked above); see the comment above the `if`.
            unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), self.base.add(start), len) };
        } else {
            // Wrapping at the ring's end: `first` < len bytes up to the end, the rest
            // (< size: a record is never larger than the ring) at the ring's start.
            let first = size - start;
            // SAFETY: start + first = size; len - first < size; see the comment above
            // the `if`.
            unsafe {
                std::ptr::copy_nonoverlapping(bytes.as_ptr(), self.base.add(start), first);
                std::ptr::copy_nonoverlapping(bytes.as_ptr().add(first), self.base, len - first);
            }
        }
        self.off += len;
    }
}

/// A value a log macro can store without formatting it.
pub trait Value {
    /// Bytes [`Value::encode`] writes (tag included).
    fn encoded_len(&self) -> usize;
    /// Writes the tag and the raw value.
    fn encode(&self, out: &mut Out);
    /// Whether the value was cut to fit (counted in the segment).
    fn truncated(&self) -> bool {
        false
    }
}

macro_rules! int_value {
    ($tag:expr, $as:ty, $($t:ty),*) => {$(
        impl Value for $t {
            #[inline(always)]
            fn encoded_len(&self) -> usize { 9 }
            #[inline(always)]
            fn encode(&self, out: &mut Out) {
                let mut b = [0u8; 9];
                b[0] = $tag;
                b[1..].copy_from_slice(&(*self as $as).to_ne_bytes());
                out.put(&b);
            }
        }
    )*};
}
int_value!(T_I64, i64, i8, i16, i32, i64, isize);
int_value!(T_U64, u64, u8, u16, u32, u64, usize);
int_value!(T_F64, f64, f64);

impl Value for f32 {
    #[inline(always)]
    fn encoded_len(&self) -> usize {
        5
    }
    #[inline(always)]
    fn encode(&self, out: &mut Out) {
        let mut b = [T_F32; 5];
        b[1..].copy_from_slice(&self.to_ne_bytes());
        out.put(&b);
    }
}

impl Value for bool {
    #[inline(always)]
    fn encoded_len(&self) -> usize {
        2
    }
    #[inline(always)]
    fn encode(&self, out: &mut Out) {
        out.put(&[T_BOOL, u8::from(*self)]);
    }
}

impl Value for char {
    #[inline(always)]
    fn encoded_len(&self) -> usize {
        5
    }
    #[inline(always)]
    fn encode(&self, out: &mut Out) {
        let mut b = [T_CHAR; 5];
        b[1..].copy_from_slice(&u32::from(*self).to_ne_bytes());
        out.put(&b);
    }
}

#[inline(always)]
fn encode_text(tag: u8, s: &[u8], out: &mut Out) {
    let mut h = [tag; 5];
    h[1..].copy_from_slice(&(s.len() as u32).to_ne_bytes());
    out.put(&h);
    out.put(s);
}

impl Value for str {
    #[inline(always)]
    fn encoded_len(&self) -> usize {
        5 + self.len()
    }
    #[inline(always)]
    fn encode(&self, out: &mut Out) {
        encode_text(T_STR, self.as_bytes(), out);
    }
}

impl Value for String {
    #[inline(always)]
    fn encoded_len(&self) -> usize {
        self.as_str().encoded_len()
    }
    #[inline(always)]
    fn encode(&self, out: &mut Out) {
        self.as_str().encode(out)
    }
}

impl<T: Value + ?Sized> Value for &T {
    #[inline(always)]
    fn encoded_len(&self) -> usize {
        (**self).encoded_len()
    }
    #[inline(always)]
    fn encode(&self, out: &mut Out) {
        (**self).encode(out)
    }
    fn truncated(&self) -> bool {
        (**self).truncated()
    }
}

/// A value formatted into a stack buffer on the calling thread (see [`display`]).
pub struct Captured {
    buf: [u8; CAPTURE_LEN],
    len: usize,
    cut: bool,
}

impl fmt::Write for Captured {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        let room = CAPTURE_LEN - self.len;
        let mut n = s.len().min(room);
        if n < s.len() {
            self.cut = true;
            while !s.is_char_boundary(n) {
                n -= 1;
            }
        }
        self.buf[self.len..self.len + n].copy_from_slice(&s.as_bytes()[..n]);
        self.len += n;
        // Keep going (no error): the rest is dropped, and `cut` says so.
        Ok(())
    }
}

impl Captured {
    fn new() -> Self {
        Captured {
            buf: [0; CAPTURE_LEN],
            len: 0,
            cut: false,
        }
    }
}

impl Value for Captured {
    #[inline(always)]
    fn encoded_len(&self) -> usize {
        5 + self.len
    }
    #[inline(always)]
    fn encode(&self, out: &mut Out) {
        let tag = if self.cut { T_TEXT_CUT } else { T_TEXT };
        encode_text(tag, &self.buf[..self.len], out);
    }
    fn truncated(&self) -> bool {
        self.cut
    }
}

/// Captures `v`'s `Display` text (at most [`CAPTURE_LEN`] bytes) without allocating:
/// for values of types the macros cannot store raw. `info!("pose {}", display(&pose))`.
pub fn display<T: fmt::Display + ?Sized>(v: &T) -> Captured {
    let mut c = Captured::new();
    let _ = fmt::write(&mut c, format_args!("{v}"));
    c
}

/// Like [`display`], with the `Debug` text.
pub fn debug<T: fmt::Debug + ?Sized>(v: &T) -> Captured {
    let mut c = Captured::new();
    let _ = fmt::write(&mut c, format_args!("{v:?}"));
    c
}

/// A value read back from a record.
#[derive(Clone, Debug, PartialEq)]
pub enum Val {
    /// A signed integer.
    I64(i64),
    /// An unsigned integer.
    U64(u64),
    /// A float (f64, or an f32 widened).
    F64(f64),
    /// An f32 (kept apart so it prints as the writer's `Display` would).
    F32(f32),
    /// A bool.
    Bool(bool),
    /// A char.
    Char(char),
    /// A string argument.
    Str(String),
    /// Text captured with `display`/`debug`; `true` if it was cut.
    Text(String, bool),
}

impl fmt::Display for Val {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Val::I64(v) => fmt::Display::fmt(v, f),
            Val::U64(v) => fmt::Display::fmt(v, f),
            Val::F64(v) => fmt::Display::fmt(v, f),
            Val::F32(v) => fmt::Display::fmt(v, f),
            Val::Bool(v) => fmt::Display::fmt(v, f),
            Val::Char(v) => fmt::Display::fmt(v, f),
            Val::Str(v) => f.write_str(v),
            Val::Text(v, cut) => {
                f.write_str(v)?;
                if *cut {
                    f.write_str("…")?;
                }
                Ok(())
            }
        }
    }
}

/// Decodes one value from `b`; returns it and the bytes it used, or None if malformed.
pub(crate) fn decode(b: &[u8]) -> Option<(Val, usize)> {
    let (&tag, rest) = b.split_first()?;
    let word = |n: usize| -> Option<[u8; 8]> {
        let mut w = [0u8; 8];
        w[..n].copy_from_slice(rest.get(..n)?);
        Some(w)
    };
    Some(match tag {
        T_I64 => (Val::I64(i64::from_ne_bytes(word(8)?)), 9),
        T_U64 => (Val::U64(u64::from_ne_bytes(word(8)?)), 9),
        T_F64 => (Val::F64(f64::from_ne_bytes(word(8)?)), 9),
        T_F32 => {
            let w = word(4)?;
            (Val::F32(f32::from_ne_bytes([w[0], w[1], w[2], w[3]])), 5)
        }
        T_BOOL => (Val::Bool(*rest.first()? != 0), 2),
        T_CHAR => {
            let w = word(4)?;
            (
                Val::Char(char::from_u32(u32::from_ne_bytes([
                    w[0], w[1], w[2], w[3],
                ]))?),
                5,
            )
        }
        T_STR | T_TEXT | T_TEXT_CUT => {
            let w = word(4)?;
            let n = u32::from_ne_bytes([w[0], w[1], w[2], w[3]]) as usize;
            let s = rest.get(4..4usize.checked_add(n)?)?;
            let s = String::from_utf8_lossy(s).into_owned();
            let v = if tag == T_STR {
                Val::Str(s)
            } else {
                Val::Text(s, tag == T_TEXT_CUT)
            };
            (v, 5 + n)
        }
        _ => return None,
    })
}

impl fmt::Display for Captured {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&String::from_utf8_lossy(&self.buf[..self.len]))
    }
}

impl fmt::Debug for Captured {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

/// The values of one record, statically dispatched: the macros build a nested tuple
/// `(&a, (&b, (&c, ())))`, so computing the length and encoding inline into the caller.
pub trait Values {
    /// Number of values.
    fn count(&self) -> usize;
    /// Bytes they encode to.
    fn encoded_len(&self) -> usize;
    /// Encodes them in order; returns how many were cut to fit.
    fn encode_all(&self, out: &mut Out) -> u64;
}

impl Values for () {
    #[inline(always)]
    fn count(&self) -> usize {
        0
    }
    #[inline(always)]
    fn encoded_len(&self) -> usize {
        0
    }
    #[inline(always)]
    fn encode_all(&self, _: &mut Out) -> u64 {
        0
    }
}

impl<H: Value, T: Values> Values for (H, T) {
    #[inline(always)]
    fn count(&self) -> usize {
        1 + self.1.count()
    }
    #[inline(always)]
    fn encoded_len(&self) -> usize {
        self.0.encoded_len() + self.1.encoded_len()
    }
    #[inline(always)]
    fn encode_all(&self, out: &mut Out) -> u64 {
        self.0.encode(out);
        u64::from(self.0.truncated()) + self.1.encode_all(out)
    }
}

impl Values for [&dyn Value] {
    fn count(&self) -> usize {
        self.len()
    }
    fn encoded_len(&self) -> usize {
        self.iter().map(|v| v.encoded_len()).sum()
    }
    fn encode_all(&self, out: &mut Out) -> u64 {
        let mut cut = 0;
        for v in self {
            v.encode(out);
            cut += u64::from(v.truncated());
        }
        cut
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::Out;

    /// `Out::put` into a 16-byte ring: the copy that fits before the end (one copy) and the
    /// copy that wraps (split at the end, the rest at the start) land where they should.
    #[test]
    fn put_writes_in_place_and_splits_a_copy_at_the_ring_end() {
        let mut ring = [0u8; 16];
        let mut out = Out {
            base: ring.as_mut_ptr(),
            mask: 15,
            off: 10,
        };
        out.put(&[1, 2, 3, 4, 5, 6]); // exactly up to the end: one copy
        out.put(&[7, 8, 9]); // at the start (offset 16 wraps to 0)
        out.off = 30; // 14 in the ring: 2 bytes before the end, 3 after
        out.put(&[10, 11, 12, 13, 14]);
        assert_eq!(out.off, 35);
        assert_eq!(
            ring,
            [12, 13, 14, 0, 0, 0, 0, 0, 0, 0, 1, 2, 3, 4, 10, 11],
            "bytes 0..3 were first written with 7, 8, 9 and then by the wrapped copy"
        );
    }
}
