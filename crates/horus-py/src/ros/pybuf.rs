//! Reading a Python buffer (NumPy array, bytes, bytearray, memoryview, array.array)
//! as one C-contiguous block with its element kind, for primitive sequences.

use std::ffi::CStr;
use std::mem::MaybeUninit;

use pyo3::ffi;
use pyo3::prelude::*;

/// What a buffer's elements are, from its struct-module format.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ElemKind {
    Signed,
    Unsigned,
    Float,
    Bool,
    /// A format this codec does not read as numbers (structured, big-endian, …).
    Other,
}

/// A C-contiguous buffer, released on drop.
pub(crate) struct ContiguousBuf {
    view: Box<ffi::Py_buffer>,
}

impl ContiguousBuf {
    /// The buffer of `obj` if it exports a C-contiguous one; `None` if it exports no
    /// buffer or only a non-contiguous one (the caller then reads it as a sequence).
    pub(crate) fn get(obj: &Bound<'_, PyAny>) -> Option<Self> {
        let mut view = Box::new(MaybeUninit::<ffi::Py_buffer>::zeroed());
        // SAFETY: `obj` is a live object (we hold the GIL and a reference) and `view`
        // is writable memory for one Py_buffer.
        let rc = unsafe {
            ffi::PyObject_GetBuffer(
                obj.as_ptr(),
                view.as_mut_ptr(),
                ffi::PyBUF_C_CONTIGUOUS | ffi::PyBUF_FORMAT,
            )
        };
        if rc != 0 {
            // Not a buffer, or not a contiguous one: forget the exception.
            drop(PyErr::take(obj.py()));
            return None;
        }
        // SAFETY: PyObject_GetBuffer succeeded, so it filled the struct in;
        // MaybeUninit<T> has T's layout.
        let view = unsafe { Box::from_raw(Box::into_raw(view).cast::<ffi::Py_buffer>()) };
        Some(ContiguousBuf { view })
    }

    /// The bytes of the buffer.
    pub(crate) fn bytes(&self) -> &[u8] {
        if self.view.len <= 0 || self.view.buf.is_null() {
            return &[];
        }
        // SAFETY: a C-contiguous buffer is `len` bytes at `buf`, valid until it is
        // released (on drop, after every borrow of `self` ended).
        unsafe { std::slice::from_raw_parts(self.view.buf.cast::<u8>(), self.view.len as usize) }
    }

    /// Bytes per element.
    pub(crate) fn itemsize(&self) -> usize {
        usize::try_from(self.view.itemsize).unwrap_or(0)
    }

    /// The element kind, from the format (no format means unsigned bytes).
    pub(crate) fn kind(&self) -> ElemKind {
        if self.view.format.is_null() {
            return ElemKind::Unsigned;
        }
        // SAFETY: a non-null format is a NUL-terminated string owned by the exporter,
        // valid until the buffer is released.
        let f = unsafe { CStr::from_ptr(self.view.format) }.to_bytes();
        let f = match f.first() {
            Some(b'@' | b'=' | b'<') => &f[1..],
            // Big-endian elements are not CDR's little-endian ones (bytes are).
            Some(b'>' | b'!') if self.itemsize() == 1 => &f[1..],
            Some(b'>' | b'!') => return ElemKind::Other,
            _ => f,
        };
        match f {
            [b'b' | b'h' | b'i' | b'l' | b'q' | b'n'] => ElemKind::Signed,
            [b'B' | b'H' | b'I' | b'L' | b'Q' | b'N' | b'c'] => ElemKind::Unsigned,
            [b'e' | b'f' | b'd'] => ElemKind::Float,
            [b'?'] => ElemKind::Bool,
            _ => ElemKind::Other,
        }
    }

    /// A short description for errors, e.g. `float64 (8-byte float)`.
    pub(crate) fn describe(&self) -> String {
        let what = match self.kind() {
            ElemKind::Signed => "signed integer",
            ElemKind::Unsigned => "unsigned integer",
            ElemKind::Float => "float",
            ElemKind::Bool => "bool",
            ElemKind::Other => "non-numeric or big-endian",
        };
        format!("{}-byte {what} elements", self.itemsize())
    }
}

impl Drop for ContiguousBuf {
    fn drop(&mut self) {
        // SAFETY: releases the view obtained in `get`, exactly once; the codec holds
        // the GIL for its whole run, and this value never leaves it.
        unsafe { ffi::PyBuffer_Release(&mut *self.view) };
    }
}
