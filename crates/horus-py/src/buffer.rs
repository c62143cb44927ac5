//! The buffer protocol, both ways: reading the bytes of any contiguous
//! buffer (bytes, bytearray, memoryview, NumPy arrays), and exporting
//! shared-memory regions so that NumPy views them without a copy.

use std::ffi::c_int;
use std::mem::MaybeUninit;

use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::PyBytes;

/// Runs `f` on the bytes of `obj`, which must export a C-contiguous buffer.
pub(crate) fn with_bytes<R>(obj: &Bound<'_, PyAny>, f: impl FnOnce(&[u8]) -> R) -> PyResult<R> {
    if let Ok(b) = obj.cast::<PyBytes>() {
        return Ok(f(b.as_bytes()));
    }
    let mut view = MaybeUninit::<ffi::Py_buffer>::zeroed();
    // SAFETY: `obj` is a live object (we hold the GIL and a reference) and
    // `view` is writable memory for one Py_buffer.
    if unsafe { ffi::PyObject_GetBuffer(obj.as_ptr(), view.as_mut_ptr(), ffi::PyBUF_SIMPLE) } != 0 {
        return Err(PyErr::fetch(obj.py()));
    }
    // SAFETY: PyObject_GetBuffer succeeded, so it filled the struct in.
    let view = unsafe { view.assume_init_mut() };
    let bytes: &[u8] = if view.len <= 0 || view.buf.is_null() {
        &[]
    } else {
        // SAFETY: a PyBUF_SIMPLE request yields a contiguous region of
        // `len` bytes at `buf`, valid until PyBuffer_Release below; `bytes`
        // does not escape this function.
        unsafe { std::slice::from_raw_parts(view.buf.cast::<u8>(), view.len as usize) }
    };
    let r = f(bytes);
    // SAFETY: releases the view obtained above, exactly once.
    unsafe { ffi::PyBuffer_Release(view) };
    Ok(r)
}

/// Runs `f` on the bytes of `obj`, which must export a writable
/// C-contiguous buffer (a bytearray, a writable NumPy array …).
pub(crate) fn with_bytes_mut<R>(
    obj: &Bound<'_, PyAny>,
    f: impl FnOnce(&mut [u8]) -> R,
) -> PyResult<R> {
    let mut view = MaybeUninit::<ffi::Py_buffer>::zeroed();
    // SAFETY: `obj` is a live object (we hold the GIL and a reference) and
    // `view` is writable memory for one Py_buffer.
    let rc = unsafe {
        ffi::PyObject_GetBuffer(
            obj.as_ptr(),
            view.as_mut_ptr(),
            ffi::PyBUF_SIMPLE | ffi::PyBUF_WRITABLE,
        )
    };
    if rc != 0 {
        return Err(PyErr::fetch(obj.py()));
    }
    // SAFETY: PyObject_GetBuffer succeeded, so it filled the struct in.
    let view = unsafe { view.assume_init_mut() };
    let bytes: &mut [u8] = if view.len <= 0 || view.buf.is_null() {
        &mut []
    } else {
        // SAFETY: a PyBUF_SIMPLE | PyBUF_WRITABLE request yields a writable
        // contiguous region of `len` bytes at `buf`, valid until
        // PyBuffer_Release below; we hold the GIL, so no Python code
        // touches it meanwhile; `bytes` does not escape this function.
        unsafe { std::slice::from_raw_parts_mut(view.buf.cast::<u8>(), view.len as usize) }
    };
    let r = f(bytes);
    // SAFETY: releases the view obtained above, exactly once.
    unsafe { ffi::PyBuffer_Release(view) };
    Ok(r)
}

/// Fills `view` to export `len` bytes at `ptr`, owned by `owner`.
///
/// # Safety
/// `view` is the pointer CPython passed to `__getbuffer__`; `ptr..ptr+len`
/// stays valid (and, unless `readonly`, writable) for as long as `owner` is
/// alive — the view keeps a reference to `owner`.
pub(crate) unsafe fn export(
    owner: &Bound<'_, PyAny>,
    view: *mut ffi::Py_buffer,
    ptr: *mut u8,
    len: usize,
    readonly: bool,
    flags: c_int,
) -> PyResult<()> {
    // SAFETY: per the caller's contract; PyBuffer_FillInfo takes a new
    // reference to `owner`, checks `flags` against `readonly` and fills in
    // a 1-D unsigned-byte view of the region.
    let rc = unsafe {
        ffi::PyBuffer_FillInfo(
            view,
            owner.as_ptr(),
            ptr.cast(),
            len as ffi::Py_ssize_t,
            c_int::from(readonly),
            flags,
        )
    };
    if rc != 0 {
        return Err(PyErr::fetch(owner.py()));
    }
    Ok(())
}
