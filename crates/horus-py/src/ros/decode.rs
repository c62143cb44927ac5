//! CDR bytes → Python message objects: strings as `str`, nested messages as objects of
//! their bound classes, primitive arrays as read-only NumPy views into the bytes (no
//! copy: each array's base is a read-only memoryview of the buffer decoded, which keeps
//! it alive).
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
use super::plan::{min_elem_size, prim_size, Elem, FieldPlan, Plans};
use super::slots;
use super::topic::RosSample;

fn fail(kind: &'static str, message: impl Into<String>) -> Failure {
    Failure::new(Side::Decode, kind, message)
}

/// What the decoder needs from Python: NumPy's `frombuffer`, one dtype per primitive
/// (little endian), and `object.__new__`.
pub(crate) struct PyRefs {
    pub(crate) frombuffer: Py<PyAny>,
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
            frombuffer: np.getattr("frombuffer")?.unbind(),
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
    /// A read-only memoryview of `owner`, made at the first array.
    pub(crate) view: Option<Bound<'py, PyAny>>,
}

impl<'py> Dec<'_, 'py> {
    fn remaining(&self) -> usize {
        self.data.len() - self.pos
    }

    fn take(&mut self, n: usize) -> CodecResult<&[u8]> {
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
        let s = &self.data[self.pos..self.pos + n];
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
        let view = match &self.view {
            Some(v) => v.clone(),
            None => {
                // A received sample exports its bytes read-only already: its memoryview
                // is read-only without the `toreadonly` call.
                let m = PyMemoryView::from(self.owner).map_err(Self::py_err)?;
                let v = if self.owner.is_instance_of::<RosSample>() {
                    m.into_any()
                } else {
                    m.call_method0("toreadonly").map_err(Self::py_err)?
                };
                self.view = Some(v.clone());
                v
            }
        };
        self.refs
            .frombuffer
            .bind(self.py)
            .call1((
                view,
                self.refs.dtypes[dtype_index(p)].bind(self.py),
                count,
                self.body_offset + start,
            ))
            .map_err(Self::py_err)
    }

    fn element(&mut self, elem: Elem, depth: usize) -> CodecResult<Bound<'py, PyAny>> {
        let py = self.py;
        match elem {
            Elem::Prim(p) => self.primitive(p),
            Elem::Str { bound } => {
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
                let s = std::str::from_utf8(text).map_err(|e| {
                    fail(
                        "not_utf8",
                        format!("string is not valid UTF-8 (at byte {})", e.valid_up_to()),
                    )
                })?;
                Ok(PyString::new(py, s).into_any())
            }
            Elem::WStr { bound } => {
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
                    let u = u16::try_from(u)
                        .map_err(|_| fail("not_utf16", "wstring unit above 0xFFFF"))?;
                    units.push(u);
                }
                let s = String::from_utf16(&units)
                    .map_err(|_| fail("not_utf16", "wstring is not valid UTF-16"))?;
                Ok(PyString::new(py, &s).into_any())
            }
            Elem::Nested(i) => self.structure(i, depth + 1),
        }
    }

    fn primitive(&mut self, p: Primitive) -> CodecResult<Bound<'py, PyAny>> {
        let py = self.py;
        let size = prim_size(p);
        self.align(size)?;
        let b = self.take(size)?;
        let mut le = [0u8; 8];
        le[..size].copy_from_slice(b);
        let raw = u64::from_le_bytes(le);
        Ok(match p {
            Primitive::Bool => match raw {
                0 => PyBool::new(py, false).to_owned().into_any(),
                1 => PyBool::new(py, true).to_owned().into_any(),
                other => {
                    return Err(fail(
                        "invalid_bool",
                        format!("bool byte {other} is neither 0 nor 1"),
                    ))
                }
            },
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
