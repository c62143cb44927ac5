//! Python message objects → CDR bytes, walking the compiled type: no intermediate
//! values, primitive sequences copied as one block from their buffer.
//!
//! Two passes over the same walker: [`Counter`] measures the exact size and finds
//! every encoding error, then [`Writer`] fills a buffer of that size (a `bytes` object
//! or a loan). The writer checks every write against the buffer, so an object
//! changed between the passes is an error, never an overrun.

use horus_idl::{ArrayKind, Primitive};
use pyo3::prelude::*;
use pyo3::types::{PyInt, PyString};

use super::errors::{CodecResult, Failure, PathSeg, Side};
use super::loan::LoanedArray;
use super::plan::{byte_like, prim_size, Elem, FieldPlan, Plans};
use super::pybuf::{ContiguousBuf, ElemKind};

/// Most structures nested in one another (as horus_idl::cdr).
pub(crate) const MAX_DEPTH: usize = 64;

/// The CDR encapsulation header (plain CDR, little endian).
pub(crate) const HEADER: [u8; 4] = [0x00, 0x01, 0x00, 0x00];

pub(crate) fn fail(kind: &'static str, message: impl Into<String>) -> Failure {
    Failure::new(Side::Encode, kind, message)
}

fn type_name_of(v: &Bound<'_, PyAny>) -> String {
    v.get_type()
        .name()
        .map(|n| n.to_string())
        .unwrap_or_else(|_| "?".to_owned())
}

/// Where bytes go: counted or written. Positions count from the first body byte.
pub(crate) trait Sink {
    fn pos(&self) -> usize;
    /// `n` bytes, filled by `fill` (not called when counting).
    fn put_with(&mut self, n: usize, fill: impl FnOnce(&mut [u8])) -> CodecResult<()>;

    fn put(&mut self, b: &[u8]) -> CodecResult<()> {
        self.put_with(b.len(), |out| out.copy_from_slice(b))
    }

    fn align(&mut self, align: usize) -> CodecResult<()> {
        let pad = (align - self.pos() % align) % align;
        self.put_with(pad, |out| out.fill(0))
    }

    /// A primitive array's bytes, from `buf` (which a sink may keep instead of copying).
    fn put_block(&mut self, buf: ContiguousBuf) -> CodecResult<()> {
        self.put(buf.bytes())
    }

    /// The `n` bytes of a loaned array's elements (see [`super::loan`]): only the sinks
    /// that encode a loan take them.
    fn put_loaned(&mut self, _array: &LoanedArray, _n: usize) -> CodecResult<()> {
        Err(fail(
            "wrong_type",
            "an array of a loan, outside the loan (a loan's arrays travel only in its own message)",
        ))
    }
}

/// Arrays at least this large are not copied by [`Parts`]: the publisher copies them
/// once, from where they are, into shared memory.
pub(crate) const BLOCK_MIN: usize = 4096;

/// Writes into pieces: small items into `small`, large primitive arrays kept in place
/// (`blocks`: where in `small` each goes, and its buffer, held until sent).
#[derive(Default)]
pub(crate) struct Parts {
    pub(crate) small: Vec<u8>,
    pub(crate) pos: usize,
    pub(crate) blocks: Vec<(usize, ContiguousBuf)>,
}

impl Parts {
    /// The message's pieces in order: `head`, then the small buffer cut where each
    /// block goes, with the blocks in between.
    pub(crate) fn pieces<'a>(&'a self, head: &'a [u8]) -> Vec<&'a [u8]> {
        let mut pieces: Vec<&[u8]> = Vec::with_capacity(2 + 2 * self.blocks.len());
        pieces.push(head);
        let mut at = 0;
        for (off, block) in &self.blocks {
            pieces.push(&self.small[at..*off]);
            pieces.push(block.bytes());
            at = *off;
        }
        pieces.push(&self.small[at..]);
        pieces
    }
}

impl Sink for Parts {
    fn pos(&self) -> usize {
        self.pos
    }

    fn put_with(&mut self, n: usize, fill: impl FnOnce(&mut [u8])) -> CodecResult<()> {
        let start = self.small.len();
        self.small.resize(start + n, 0);
        fill(&mut self.small[start..]);
        self.pos += n;
        Ok(())
    }

    fn put_block(&mut self, buf: ContiguousBuf) -> CodecResult<()> {
        let n = buf.bytes().len();
        if n < BLOCK_MIN {
            return self.put(buf.bytes());
        }
        self.pos += n;
        self.blocks.push((self.small.len(), buf));
        Ok(())
    }
}

/// Counts bytes.
pub(crate) struct Counter {
    pub(crate) pos: usize,
}

impl Sink for Counter {
    fn pos(&self) -> usize {
        self.pos
    }

    fn put_with(&mut self, n: usize, _fill: impl FnOnce(&mut [u8])) -> CodecResult<()> {
        self.pos = self
            .pos
            .checked_add(n)
            .ok_or_else(|| fail("too_long", "message larger than the address space"))?;
        Ok(())
    }
}

/// Writes into a body buffer of the size [`Counter`] found.
pub(crate) struct Writer<'a> {
    pub(crate) out: &'a mut [u8],
    pub(crate) pos: usize,
}

impl Sink for Writer<'_> {
    fn pos(&self) -> usize {
        self.pos
    }

    fn put_with(&mut self, n: usize, fill: impl FnOnce(&mut [u8])) -> CodecResult<()> {
        let Some(dst) = self.out.get_mut(self.pos..self.pos.saturating_add(n)) else {
            return Err(fail(
                "changed",
                "the message grew while it was being encoded (changed by another thread?)",
            ));
        };
        fill(dst);
        self.pos += n;
        Ok(())
    }
}

/// The encoder over one sink.
pub(crate) struct Enc<'a, S> {
    pub(crate) plans: &'a Plans,
    pub(crate) sink: S,
}

impl<S: Sink> Enc<'_, S> {
    fn u32(&mut self, v: u32) -> CodecResult<()> {
        self.sink.align(4)?;
        self.sink.put(&v.to_le_bytes())
    }

    /// Encodes structure `idx` from `obj`.
    pub(crate) fn structure(
        &mut self,
        idx: usize,
        obj: &Bound<'_, PyAny>,
        depth: usize,
    ) -> CodecResult<()> {
        if depth >= MAX_DEPTH {
            return Err(fail(
                "too_deep",
                format!("nested more than {MAX_DEPTH} structures deep"),
            ));
        }
        let plans = self.plans;
        let plan = &plans.structs[idx];
        if let Some(cls) = plan.class(obj.py()) {
            if !obj.is_instance(cls.bind(obj.py())).unwrap_or(false) {
                return Err(fail(
                    "wrong_type",
                    format!("expected {}, got {}", plan.name, type_name_of(obj)),
                ));
            }
        }
        for f in &plan.fields {
            if f.placeholder {
                self.sink.put(&[0])?;
                continue;
            }
            let value = obj.getattr(f.attr.bind(obj.py())).map_err(|e| {
                fail("missing_field", format!("cannot read the field: {e}"))
                    .at(PathSeg::Field(f.name.clone()))
            })?;
            self.field(f, &value, depth)
                .map_err(|e| e.at(PathSeg::Field(f.name.clone())))?;
        }
        Ok(())
    }

    /// Checks an array's length against its kind and writes its count.
    fn length(&mut self, array: ArrayKind, len: usize) -> CodecResult<()> {
        match array {
            ArrayKind::Single => Ok(()),
            ArrayKind::Fixed(n) => {
                if len as u64 != u64::from(n) {
                    return Err(fail(
                        "fixed_length",
                        format!("fixed array needs {n} elements, got {len}"),
                    ));
                }
                Ok(())
            }
            ArrayKind::Bounded(b) if len as u64 > u64::from(b) => Err(fail(
                "over_bound",
                format!("{len} elements exceed the bound {b}"),
            )),
            ArrayKind::Bounded(_) | ArrayKind::Unbounded => {
                let n = u32::try_from(len).map_err(|_| {
                    fail("too_long", format!("{len} elements do not fit CDR's u32"))
                })?;
                self.u32(n)
            }
        }
    }

    fn field(&mut self, f: &FieldPlan, value: &Bound<'_, PyAny>, depth: usize) -> CodecResult<()> {
        if f.array == ArrayKind::Single {
            return self.element(f.elem, value, depth);
        }
        if let Elem::Prim(p) = f.elem {
            if let Ok(loaned) = value.cast::<LoanedArray>() {
                return self.loaned(p, f.array, loaned.get());
            }
            if !value.is_instance_of::<PyString>() {
                if let Some(buf) = ContiguousBuf::get(value) {
                    return self.prim_block(p, f.array, buf);
                }
            }
        }
        if value.is_instance_of::<PyString>() {
            return Err(fail(
                "wrong_type",
                "expected a sequence (list, tuple or NumPy array), got str",
            ));
        }
        let len = value.len().map_err(|_| {
            fail(
                "wrong_type",
                format!("expected a sequence, got {}", type_name_of(value)),
            )
        })?;
        self.length(f.array, len)?;
        for i in 0..len {
            let item = value.get_item(i).map_err(|e| {
                fail("wrong_type", format!("cannot read element: {e}")).at(PathSeg::Index(i))
            })?;
            self.element(f.elem, &item, depth)
                .map_err(|e| e.at(PathSeg::Index(i)))?;
        }
        Ok(())
    }

    /// A primitive array from a contiguous buffer: its count, then one copy.
    fn prim_block(
        &mut self,
        p: Primitive,
        array: ArrayKind,
        buf: ContiguousBuf,
    ) -> CodecResult<()> {
        let size = prim_size(p);
        let bytes = buf.bytes();
        // Byte arrays take the raw bytes of any buffer (a float32 point array for
        // PointCloud2.data); other primitives need elements of their own kind and size.
        if !byte_like(p) {
            let want = match p {
                Primitive::Bool => ElemKind::Bool,
                Primitive::Float32 | Primitive::Float64 => ElemKind::Float,
                Primitive::Int8 | Primitive::Int16 | Primitive::Int32 | Primitive::Int64 => {
                    ElemKind::Signed
                }
                _ => ElemKind::Unsigned,
            };
            if buf.kind() != want || buf.itemsize() != size {
                return Err(fail(
                    "wrong_type",
                    format!(
                        "expected {} elements, got a buffer of {} (convert it with numpy's astype)",
                        p.msg_name(),
                        buf.describe()
                    ),
                ));
            }
        }
        let count = bytes.len() / size;
        self.length(array, count)?;
        if count == 0 {
            return Ok(());
        }
        self.sink.align(size)?;
        if p == Primitive::Bool {
            // NumPy bools are 0/1, but any other byte must not reach the wire.
            return self.sink.put_with(bytes.len(), |out| {
                for (o, b) in out.iter_mut().zip(bytes) {
                    *o = u8::from(*b != 0);
                }
            });
        }
        self.sink.put_block(buf)
    }

    /// A loaned primitive array (its elements in the loan's chunk): its count, then its
    /// bytes, which the sink places.
    fn loaned(&mut self, p: Primitive, array: ArrayKind, a: &LoanedArray) -> CodecResult<()> {
        if a.prim != p && !(byte_like(a.prim) && byte_like(p)) {
            return Err(fail(
                "wrong_type",
                format!(
                    "expected {} elements, got a loaned array of {}",
                    p.msg_name(),
                    a.prim.msg_name()
                ),
            ));
        }
        self.length(array, a.count)?;
        if a.count == 0 {
            return Ok(());
        }
        let size = prim_size(p);
        let n = a
            .count
            .checked_mul(size)
            .ok_or_else(|| fail("too_long", "loaned array larger than the address space"))?;
        self.sink.align(size)?;
        self.sink.put_loaned(a, n)
    }

    fn element(&mut self, elem: Elem, value: &Bound<'_, PyAny>, depth: usize) -> CodecResult<()> {
        match elem {
            Elem::Prim(p) => self.primitive(p, value),
            Elem::Str { bound } => {
                let s = value.cast::<PyString>().map_err(|_| {
                    fail(
                        "wrong_type",
                        format!("expected str, got {}", type_name_of(value)),
                    )
                })?;
                let s = s.to_str().map_err(|_| {
                    fail(
                        "not_utf8",
                        "string cannot be encoded as UTF-8 (lone surrogate)",
                    )
                })?;
                if let Some(b) = bound {
                    if s.len() as u64 > u64::from(b) {
                        return Err(fail(
                            "over_bound",
                            format!("string of {} bytes exceeds the bound {b}", s.len()),
                        ));
                    }
                }
                if let Some(i) = s.bytes().position(|b| b == 0) {
                    return Err(fail(
                        "contains_nul",
                        format!("string contains a NUL byte at {i}"),
                    ));
                }
                let n = u32::try_from(s.len() + 1)
                    .map_err(|_| fail("too_long", "string does not fit CDR's u32 length"))?;
                self.u32(n)?;
                self.sink.put(s.as_bytes())?;
                self.sink.put(&[0])
            }
            Elem::WStr { bound } => {
                let s = value.cast::<PyString>().map_err(|_| {
                    fail(
                        "wrong_type",
                        format!("expected str, got {}", type_name_of(value)),
                    )
                })?;
                let s = s
                    .to_str()
                    .map_err(|_| fail("not_utf8", "string cannot be encoded (lone surrogate)"))?;
                let units = s.encode_utf16().count();
                if let Some(b) = bound {
                    if units as u64 > u64::from(b) {
                        return Err(fail(
                            "over_bound",
                            format!("wstring of {units} UTF-16 units exceeds the bound {b}"),
                        ));
                    }
                }
                let n = u32::try_from(units)
                    .map_err(|_| fail("too_long", "wstring does not fit CDR's u32 length"))?;
                self.u32(n)?;
                self.sink.put_with(units * 4, |out| {
                    for (o, u) in out.chunks_exact_mut(4).zip(s.encode_utf16()) {
                        o.copy_from_slice(&u32::from(u).to_le_bytes());
                    }
                })
            }
            Elem::Nested(i) => self.structure(i, value, depth + 1),
        }
    }

    fn primitive(&mut self, p: Primitive, value: &Bound<'_, PyAny>) -> CodecResult<()> {
        let size = prim_size(p);
        let mut le = [0u8; 8];
        match p {
            Primitive::Bool => {
                let b = value.extract::<bool>().map_err(|_| {
                    fail(
                        "wrong_type",
                        format!("expected bool, got {}", type_name_of(value)),
                    )
                })?;
                le[0] = u8::from(b);
            }
            Primitive::Float32 | Primitive::Float64 => {
                if value.is_instance_of::<PyString>() {
                    return Err(fail("wrong_type", "expected float, got str"));
                }
                let v = value.extract::<f64>().map_err(|_| {
                    fail(
                        "wrong_type",
                        format!("expected float, got {}", type_name_of(value)),
                    )
                })?;
                if p == Primitive::Float32 {
                    if v.is_finite() && v.abs() > f64::from(f32::MAX) {
                        return Err(fail(
                            "out_of_range",
                            format!("{v} is out of range for float32"),
                        ));
                    }
                    le[..4].copy_from_slice(&(v as f32).to_le_bytes());
                } else {
                    le.copy_from_slice(&v.to_le_bytes());
                }
            }
            _ => {
                let (lo, hi) = p.integer_range().expect("integer primitive");
                let v: i128 = match value.extract::<i64>() {
                    Ok(v) => v.into(),
                    Err(_) => match value.extract::<u64>() {
                        Ok(v) => v.into(),
                        Err(_) => return Err(int_error(p, value)),
                    },
                };
                if v < lo || v > hi {
                    return Err(fail(
                        "out_of_range",
                        format!("{v} is out of range for {}", p.msg_name()),
                    ));
                }
                le = (v as u64).to_le_bytes();
            }
        }
        self.sink.align(size)?;
        self.sink.put(&le[..size])
    }
}

/// Why an integer field's value was refused: too large for 64 bits, or not an integer.
fn int_error(p: Primitive, value: &Bound<'_, PyAny>) -> Failure {
    if value.is_instance_of::<PyInt>() {
        fail(
            "out_of_range",
            format!("{value} is out of range for {}", p.msg_name()),
        )
    } else {
        fail(
            "wrong_type",
            format!("expected int, got {}", type_name_of(value)),
        )
    }
}
