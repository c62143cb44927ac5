//! Read-only NumPy arrays over bytes that another object keeps alive, made through
//! NumPy's C API (`PyArray_NewFromDescr` + `PyArray_SetBaseObject`) instead of a call
//! to `numpy.frombuffer`: no argument tuple, no keyword parsing, no memoryview of the
//! owner and no failed writable-buffer request per array (the decoder makes one array
//! per primitive sequence of every received message).
//!
//! The API table is NumPy's `_ARRAY_API` capsule (what `import_array()` reads), whose
//! entries used here have the same index in NumPy 1.x and 2.x.

use std::ffi::{c_int, c_void};

use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::PyCapsule;

/// `PyArray_Type`.
const TYPE: usize = 2;
/// `PyArray_NewFromDescr(subtype, descr, nd, dims, strides, data, flags, obj)`.
const NEW_FROM_DESCR: usize = 94;
/// `PyArray_SetBaseObject(arr, base)`.
const SET_BASE_OBJECT: usize = 282;
/// `NPY_ARRAY_WRITEABLE`.
const WRITEABLE: c_int = 0x0400;

type NewFromDescr = unsafe extern "C" fn(
    *mut ffi::PyTypeObject,
    *mut ffi::PyObject,
    c_int,
    *const ffi::Py_intptr_t,
    *const ffi::Py_intptr_t,
    *mut c_void,
    c_int,
    *mut ffi::PyObject,
) -> *mut ffi::PyObject;
type SetBaseObject = unsafe extern "C" fn(*mut ffi::PyObject, *mut ffi::PyObject) -> c_int;

/// NumPy's C API, as the decoder uses it.
pub(crate) struct NdArrayApi {
    /// Keeps the table alive (it lives as long as NumPy's module, which the capsule
    /// references).
    _capsule: Py<PyCapsule>,
    array_type: *mut ffi::PyTypeObject,
    new_from_descr: NewFromDescr,
    set_base_object: SetBaseObject,
}

// SAFETY: the pointers are to NumPy's static type object and functions, valid for the
// life of the process once NumPy is imported (NumPy is never unloaded); they are only
// used with the GIL held.
unsafe impl Send for NdArrayApi {}
// SAFETY: as for Send: read-only data, used with the GIL held.
unsafe impl Sync for NdArrayApi {}

impl NdArrayApi {
    /// Reads the table from `numpy._core._multiarray_umath` (NumPy 2) or
    /// `numpy.core._multiarray_umath` (NumPy 1).
    pub(crate) fn import(py: Python<'_>) -> PyResult<Self> {
        let module = py
            .import("numpy._core._multiarray_umath")
            .or_else(|_| py.import("numpy.core._multiarray_umath"))?;
        let capsule = module.getattr("_ARRAY_API")?.cast_into::<PyCapsule>()?;
        // SAFETY: `_ARRAY_API` is NumPy's capsule of its C API table (an array of
        // function and object pointers), unnamed as `import_array()` reads it;
        // checked non-null before it is indexed.
        let table = unsafe { ffi::PyCapsule_GetPointer(capsule.as_ptr(), std::ptr::null()) }
            .cast::<*const c_void>();
        if table.is_null() {
            return Err(PyErr::fetch(py));
        }
        // SAFETY: the table has more than SET_BASE_OBJECT entries in every NumPy this
        // package supports (>= 1.23); each entry used is the function or type object of
        // the signature declared above (numpy/__multiarray_api.h).
        unsafe {
            let array_type = (*table.add(TYPE)).cast_mut().cast::<ffi::PyTypeObject>();
            let new_from_descr =
                std::mem::transmute::<*const c_void, NewFromDescr>(*table.add(NEW_FROM_DESCR));
            let set_base_object =
                std::mem::transmute::<*const c_void, SetBaseObject>(*table.add(SET_BASE_OBJECT));
            Ok(NdArrayApi {
                _capsule: capsule.unbind(),
                array_type,
                new_from_descr,
                set_base_object,
            })
        }
    }

    /// A one-dimensional, read-only NumPy array of `count` elements of `dtype` at
    /// `data`, whose base is `base` (which it keeps alive).
    ///
    /// # Safety
    /// `dtype` must be a `numpy.dtype` whose item size times `count` bytes at `data`
    /// stay valid and unmoved for as long as `base` lives.
    pub(crate) unsafe fn view<'py>(
        &self,
        dtype: &Bound<'py, PyAny>,
        count: usize,
        data: *const u8,
        base: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        // SAFETY: the caller's contract; flags 0: not writeable.
        unsafe { self.make(dtype, count, data.cast_mut(), base, 0) }
    }

    /// As [`view`](Self::view), but writeable (a loan's arrays).
    ///
    /// # Safety
    /// As for [`view`](Self::view), and the bytes must be writable, by Python alone,
    /// for as long as `base` lives.
    pub(crate) unsafe fn view_mut<'py>(
        &self,
        dtype: &Bound<'py, PyAny>,
        count: usize,
        data: *mut u8,
        base: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        // SAFETY: the caller's contract.
        unsafe { self.make(dtype, count, data, base, WRITEABLE) }
    }

    unsafe fn make<'py>(
        &self,
        dtype: &Bound<'py, PyAny>,
        count: usize,
        data: *mut u8,
        base: &Bound<'py, PyAny>,
        flags: c_int,
    ) -> PyResult<Bound<'py, PyAny>> {
        let py = dtype.py();
        let dims = [count as ffi::Py_intptr_t];
        // SAFETY: NewFromDescr steals a reference to the descriptor: we hand it a new
        // one. `flags`: 0 (read-only) or WRITEABLE (NumPy computes contiguity and
        // alignment from the pointer and the strides it derives); the data is not owned
        // by the array. Per the callers' contracts the bytes outlive `base`, which the
        // array holds.
        unsafe {
            ffi::Py_INCREF(dtype.as_ptr());
            let arr = (self.new_from_descr)(
                self.array_type,
                dtype.as_ptr(),
                1,
                dims.as_ptr(),
                std::ptr::null(),
                data.cast::<c_void>(),
                flags,
                std::ptr::null_mut(),
            );
            let arr = Bound::from_owned_ptr_or_err(py, arr)?;
            // SetBaseObject steals a reference to the base, also when it fails.
            ffi::Py_INCREF(base.as_ptr());
            if (self.set_base_object)(arr.as_ptr(), base.as_ptr()) != 0 {
                return Err(PyErr::fetch(py));
            }
            Ok(arr)
        }
    }
}
