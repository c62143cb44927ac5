//! CDR bytes → Python message objects: strings as `str`, nested messages as objects of
//! their bound classes, primitive arrays as read-only NumPy views into the bytes (no
//! copy, made through NumPy's C API: each array's base is the received sample, or a
//! read-only memoryview of any other buffer decoded, which keeps the bytes alive).
//!
//! Bounded by the input: every count is checked against the bytes left (at least the
//! element type's minimum wire size per element) before anything is allocated, nesting
//! is at most [`MAX_DEPTH`] deep, and every problem is a [`Failure`] naming the field.

use horus_idl::{ArrayKind, Primitive};
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyFloat, PyInt, PyList, PyMemoryView, PyString, PyType};

use super::encode::MAX_DEPTH;
use super::errors::{CodecResult, Failure, PathSeg, Side};
use super::ndarray::NdArrayApi;
use super::plan::{min_elem_size, prim_size, Elem, FieldPlan, Plans};
use super::slots;

fn fail(kind: &'static str, message: impl Into<String>) -> Failure {
    Failure::new(Side::Decode, kind, message)
}

/// What the decoder needs from Python: NumPy's C API (arrays made natively), one dtype
/// per primitive (little endian), and `object.__new__`.
pub(crate) struct PyRefs {
    pub(crate) ndarray: NdArrayApi,
    /// Indexed by [`dtype_index`].
    pub(crate) dtypes: Vec<Py<PyAny>>,
    pub(crate) object_new: Py<PyAny>,
}

/// The dtype string of each primitive, in [`dtype_index`] order.
pub(crate) const DTYPES: [&str; 10] = [
    "?", "u1", "i1", "<i2", "<u2", "<i4", "<u4", "<i8", "<u8", "<f4",
];
const F64: &str = "<f8";

/// Index of a primitive's dtype in [`PyRefs::dtypes`].
pub(crate) fn dtype_index(p: Primitive) -> usize {
    match p {
        Primitive::Bool => 0,
        Primitive::Byte | Primitive::Char | Primitive::UInt8 => 1,
        Primitive::Int8 => 2,
        Primitive::Int16 => 3,
        Primitive::UInt16 => 4,
        Primitive::Int32 => 5,
        Primitive::UInt32 => 6,
        Primitive::Int64 => 7,
        Primitive::UInt64 => 8,
        Primitive::Float32 => 9,
        Primitive::Float64 => 10,
    }
}

impl PyRefs {
    pub(crate) fn new(py: Python<'_>) -> PyResult<Self> {
        let np = py.import("numpy")?;
        let dtype = np.getattr("dtype")?;
        let mut dtypes = Vec::new();
        for d in DTYPES.iter().chain([F64].iter()) {
            dtypes.push(dtype.call1((*d,))?.unbind());
        }
        Ok(PyRefs {
            ndarray: NdArrayApi::import(py)?,
            dtypes,
            object_new: py
                .import("builtins")?
                .getattr("object")?
                .getattr("__new__")?
                .unbind(),
        })
    }
}

/// `object.__new__(cls)`: a new instance, no `__init__`. For a class that keeps
/// `object`'s `__new__` and is not abstract (every generated message class) this is what
/// `object.__new__` does after its checks — `cls->tp_alloc(cls, 0)` — without the call
/// through Python (about a third of a small message's decode); any other class goes
/// through `object.__new__` itself, with its checks and errors.
fn new_instance<'py>(
    cls: &Bound<'py, PyType>,
    object_new: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyAny>> {
    let py = cls.py();
    let tp = cls.as_type_ptr();
    // SAFETY: `tp` is a live type object (`cls` holds a reference to it) and the GIL is
    // held; reading its slots and `object`'s `tp_new` is what `object.__new__` does.
    let alloc = unsafe {
        let object_tp_new = (*std::ptr::addr_of!(ffi::PyBaseObject_Type)).tp_new;
        // Addresses of C functions in the interpreter (one each), compared as CPython
        // compares slots.
        let plain = (*tp).tp_new.map(|f| f as usize) == object_tp_new.map(|f| f as usize)
            && ffi::PyType_HasFeature(tp, ffi::Py_TPFLAGS_IS_ABSTRACT) == 0;
        if plain {
            (*tp).tp_alloc
        } else {
            None
        }
    };
    match alloc {
        // SAFETY: `alloc` is `cls`'s own allocator, called as `object_new` calls it (the
        // GIL held, 0 items); it returns a new reference or NULL with an exception set,
        // which `from_owned_ptr_or_err` takes over.
        Some(alloc) => unsafe { Bound::from_owned_ptr_or_err(py, alloc(tp, 0)) },
        None => object_new.call1((cls,)),
    }
}

/// The decoder over one buffer.
pub(crate) struct Dec<'a, 'py> {
    pub(crate) py: Python<'py>,
    pub(crate) plans: &'a Plans,
    pub(crate) refs: &'a PyRefs,
    /// The body (after the encapsulation header).
    pub(crate) data: &'a [u8],
    pub(crate) pos: usize,
    /// The object whose buffer `data` is, and where the body starts in it.
    pub(crate) owner: &'a Bound<'py, PyAny>,
    pub(crate) body_offset: usize,
    /// Whether `owner` is a [`RosSample`] whose bytes `data` is (they never move or
    /// change while it lives: arrays can view them with the sample as their base).
    pub(crate) owner_is_sample: bool,
    /// What the arrays keep alive, and where the body starts in its bytes; made at the
    /// first array.
    pub(crate) base: Option<ArrayBase<'py>>,
}

/// The base object of the arrays of one decode and the address of the body in it.
pub(crate) struct ArrayBase<'py> {
    obj: Bound<'py, PyAny>,
    body: *const u8,
    /// Bytes from `body` to the end of the base's buffer.
    len: usize,
}

impl<'a, 'py> Dec<'a, 'py> {
    fn remaining(&self) -> usize {
        self.data.len() - self.pos
    }

    fn take(&mut self, n: usize) -> CodecResult<&'a [u8]> {
        if n > self.remaining() {
            return Err(fail(
                "truncated",
                format!(
                    "truncated: {n} more bytes needed at offset {}, {} present",
                    self.pos,
                    self.remaining()
                ),
            ));
        }
        let data: &'a [u8] = self.data;
        let s = &data[self.pos..self.pos + n];
        self.pos += n;
        Ok(s)
    }

    fn align(&mut self, align: usize) -> CodecResult<()> {
        let pad = (align - self.pos % align) % align;
        self.take(pad).map(|_| ())
    }

    fn u32(&mut self) -> CodecResult<u32> {
        self.align(4)?;
        let b = self.take(4)?;
        Ok(u32::from_le_bytes(b.try_into().expect("4 bytes")))
    }

    fn check_count(&self, count: u64, min_size: u64) -> CodecResult<()> {
        let min_bytes = count.saturating_mul(min_size.max(1));
        if min_bytes > self.remaining() as u64 {
            return Err(fail(
                "count_too_large",
                format!(
                    "count {count} needs at least {min_bytes} bytes, only {} left",
                    self.remaining()
                ),
            ));
        }
        Ok(())
    }

    /// A string, checked as ROS 2 reads it: NUL-terminated, no inner NUL, within its
    /// bound, UTF-8.
    fn read_str(&mut self, bound: Option<u32>) -> CodecResult<&'a str> {
        let n = self.u32()?;
        self.check_count(n.into(), 1)?;
        let raw = self.take(n as usize)?;
        let text = match raw.split_last() {
            // Fast CDR reads a length of 0 as the empty string.
            None => &[][..],
            Some((0, text)) => text,
            Some(_) => return Err(fail("not_terminated", "string is not NUL-terminated")),
        };
        if let Some(i) = text.iter().position(|&b| b == 0) {
            return Err(fail(
                "contains_nul",
                format!("string contains a NUL byte at {i}"),
            ));
        }
        if let Some(b) = bound {
            if text.len() as u64 > u64::from(b) {
                return Err(fail(
                    "over_bound",
                    format!("string of {} bytes exceeds the bound {b}", text.len()),
                ));
            }
        }
        std::str::from_utf8(text).map_err(|e| {
            fail(
                "not_utf8",
                format!("string is not valid UTF-8 (at byte {})", e.valid_up_to()),
            )
        })
    }

    /// A wstring (UTF-16 units in 4 bytes each), checked.
    fn read_wstr(&mut self, bound: Option<u32>) -> CodecResult<String> {
        let n = self.u32()?;
        self.check_count(n.into(), 4)?;
        if let Some(b) = bound {
            if n > b {
                return Err(fail(
                    "over_bound",
                    format!("wstring of {n} units exceeds the bound {b}"),
                ));
            }
        }
        let raw = self.take(n as usize * 4)?;
        let mut units = Vec::with_capacity(n as usize);
        for c in raw.chunks_exact(4) {
            let u = u32::from_le_bytes(c.try_into().expect("4 bytes"));
            let u = u16::try_from(u).map_err(|_| fail("not_utf16", "wstring unit above 0xFFFF"))?;
            units.push(u);
        }
        String::from_utf16(&units).map_err(|_| fail("not_utf16", "wstring is not valid UTF-16"))
    }

    /// A primitive's bits (little endian, zero-extended), bools checked.
    fn read_prim(&mut self, p: Primitive) -> CodecResult<u64> {
        let size = prim_size(p);
        self.align(size)?;
        let b = self.take(size)?;
        // Fixed-size reads (a copy of `size` bytes into a zeroed u64 is a memcpy call and
        // a stalled load).
        let raw = match *b {
            [x] => u64::from(x),
            [x, y] => u64::from(u16::from_le_bytes([x, y])),
            [x, y, z, w] => u64::from(u32::from_le_bytes([x, y, z, w])),
            _ => u64::from_le_bytes(b.try_into().expect("8 bytes")),
        };
        if p == Primitive::Bool && raw > 1 {
            return Err(fail(
                "invalid_bool",
                format!("bool byte {raw} is neither 0 nor 1"),
            ));
        }
        Ok(raw)
    }

    fn py_err(e: PyErr) -> Failure {
        fail("python", format!("{e}"))
    }

    /// Decodes structure `idx` into a new object of its bound class.
    pub(crate) fn structure(&mut self, idx: usize, depth: usize) -> CodecResult<Bound<'py, PyAny>> {
        if depth >= MAX_DEPTH {
            return Err(fail(
                "too_deep",
                format!("nested more than {MAX_DEPTH} structures deep"),
            ));
        }
        let plans = self.plans;
        let plan = &plans.structs[idx];
        let Some(cls) = plan.class(self.py) else {
            return Err(fail(
                "no_class",
                format!(
                    "no Python class is bound to {} (import its module, or load its package)",
                    plan.name
                ),
            ));
        };
        let cls = cls.bind(self.py);
        let obj = new_instance(cls, self.refs.object_new.bind(self.py)).map_err(Self::py_err)?;
        let offsets = slots::offsets(&plan.slots, cls, plan);
        for (k, f) in plan.fields.iter().enumerate() {
            if f.placeholder {
                // Any value: rclpy ignores it too.
                self.take(1)?;
                continue;
            }
            let v = self
                .field(f, depth)
                .map_err(|e| e.at(PathSeg::Field(f.name.clone())))?;
            match &offsets {
                // SAFETY: the offsets are those of `cls`, `obj`'s exact class
                // (`new_instance` made it), one per field of the plan.
                Some(o) => unsafe { slots::store(&obj, o[k], v) },
                None => obj.setattr(f.attr.bind(self.py), v).map_err(Self::py_err)?,
            }
        }
        Ok(obj)
    }

    fn field(&mut self, f: &FieldPlan, depth: usize) -> CodecResult<Bound<'py, PyAny>> {
        let count = match f.array {
            ArrayKind::Single => return self.element(f.elem, depth),
            ArrayKind::Fixed(n) => n,
            ArrayKind::Bounded(b) => {
                let n = self.u32()?;
                if n > b {
                    return Err(fail(
                        "over_bound",
                        format!("{n} elements exceed the bound {b}"),
                    ));
                }
                n
            }
            ArrayKind::Unbounded => self.u32()?,
        };
        self.check_count(count.into(), min_elem_size(&self.plans.structs, f.elem))?;
        let count = count as usize;
        if let Elem::Prim(p) = f.elem {
            return self.prim_array(p, count);
        }
        let list = PyList::empty(self.py);
        for i in 0..count {
            let v = self
                .element(f.elem, depth)
                .map_err(|e| e.at(PathSeg::Index(i)))?;
            list.append(v).map_err(Self::py_err)?;
        }
        Ok(list.into_any())
    }

    /// A read-only NumPy view of `count` elements in place.
    fn prim_array(&mut self, p: Primitive, count: usize) -> CodecResult<Bound<'py, PyAny>> {
        let size = prim_size(p);
        if count > 0 {
            self.align(size)?;
        }
        let start = self.pos;
        let bytes = self.take(count * size)?;
        if p == Primitive::Bool {
            if let Some(i) = bytes.iter().position(|&b| b > 1) {
                return Err(fail(
                    "invalid_bool",
                    format!("bool byte {} at element {i} is neither 0 nor 1", bytes[i]),
                ));
            }
        }
        let base = match &self.base {
            Some(b) => b,
            None => {
                let b = self.array_base()?;
                self.base.insert(b)
            }
        };
        let nbytes = count * size;
        if start + nbytes > base.len {
            return Err(fail(
                "python",
                "the buffer decoded shrank while it was being decoded",
            ));
        }
        // SAFETY: `base.body + start .. + nbytes` lies in the base's buffer (checked
        // just above), which stays valid and in place while `base.obj` lives: a
        // RosSample's pinned chunk, or the buffer a memoryview holds exported.
        unsafe {
            self.refs.ndarray.view(
                self.refs.dtypes[dtype_index(p)].bind(self.py),
                count,
                base.body.add(start),
                &base.obj,
            )
        }
        .map_err(Self::py_err)
    }

    /// The arrays' base: the sample itself, or a read-only memoryview of the owner
    /// (which holds the owner's buffer exported, so it can neither move nor shrink).
    fn array_base(&self) -> CodecResult<ArrayBase<'py>> {
        if self.owner_is_sample {
            return Ok(ArrayBase {
                obj: self.owner.clone(),
                body: self.data.as_ptr(),
                len: self.data.len(),
            });
        }
        let m = PyMemoryView::from(self.owner).map_err(Self::py_err)?;
        let m = m.call_method0("toreadonly").map_err(Self::py_err)?;
        let mut view = std::mem::MaybeUninit::<ffi::Py_buffer>::zeroed();
        // SAFETY: `m` is a live memoryview and `view` is writable memory for one
        // Py_buffer.
        if unsafe { ffi::PyObject_GetBuffer(m.as_ptr(), view.as_mut_ptr(), ffi::PyBUF_SIMPLE) } != 0
        {
            return Err(Self::py_err(PyErr::fetch(self.py)));
        }
        // SAFETY: PyObject_GetBuffer succeeded: the struct is filled in. The pointer
        // stays valid after the release below: the memoryview keeps its own export of
        // the owner's buffer for as long as it lives (and the arrays keep it alive).
        let (buf, len) = unsafe {
            let v = view.assume_init_mut();
            let r = (
                v.buf.cast::<u8>().cast_const(),
                usize::try_from(v.len).unwrap_or(0),
            );
            ffi::PyBuffer_Release(v);
            r
        };
        if buf.is_null() || len < self.body_offset + self.data.len() {
            return Err(fail(
                "python",
                "the buffer decoded changed size while it was being decoded",
            ));
        }
        Ok(ArrayBase {
            obj: m,
            // SAFETY: `body_offset` is within the `len` bytes at `buf` (checked above).
            body: unsafe { buf.add(self.body_offset) },
            len: len - self.body_offset,
        })
    }

    fn element(&mut self, elem: Elem, depth: usize) -> CodecResult<Bound<'py, PyAny>> {
        let py = self.py;
        match elem {
            Elem::Prim(p) => self.primitive(p),
            Elem::Str { bound } => {
                let s = self.read_str(bound)?;
                Ok(PyString::new(py, s).into_any())
            }
            Elem::WStr { bound } => {
                let s = self.read_wstr(bound)?;
                Ok(PyString::new(py, &s).into_any())
            }
            Elem::Nested(i) => self.structure(i, depth + 1),
        }
    }

    fn primitive(&mut self, p: Primitive) -> CodecResult<Bound<'py, PyAny>> {
        let py = self.py;
        let raw = self.read_prim(p)?;
        Ok(match p {
            Primitive::Bool => PyBool::new(py, raw == 1).to_owned().into_any(),
            Primitive::Float32 => {
                PyFloat::new(py, f64::from(f32::from_bits(raw as u32))).into_any()
            }
            Primitive::Float64 => PyFloat::new(py, f64::from_bits(raw)).into_any(),
            Primitive::Int8 => PyInt::new(py, raw as u8 as i8).into_any(),
            Primitive::Int16 => PyInt::new(py, raw as u16 as i16).into_any(),
            Primitive::Int32 => PyInt::new(py, raw as u32 as i32).into_any(),
            Primitive::Int64 => PyInt::new(py, raw as i64).into_any(),
            _ => PyInt::new(py, raw).into_any(),
        })
    }
}
