//! `TensorView`: one reference to a tensor slot exported through the
//! buffer protocol with its element type and shape, so that
//! `numpy.asarray` makes the typed N-dimensional view in one step.

use std::ffi::{c_int, CStr};
use std::sync::Arc;

use horus_tensor::{Tensor, TensorLayout, TensorPool, TensorRef};
use pyo3::ffi;
use pyo3::prelude::*;

use crate::errors::{descriptor_error, pool_attach_error};

/// One reference to a tensor slot, exported through the buffer protocol
/// with its element type and shape (C order), so that `numpy.asarray`
/// makes the typed N-dimensional view in one step, without a copy.
#[pyclass(module = "horus._horus", frozen)]
pub(crate) struct TensorView {
    tensor: Tensor,
    format: &'static CStr,
    itemsize: usize,
    /// Bytes viewed: the product of `shape` times `itemsize`.
    len: usize,
    shape: Box<[ffi::Py_ssize_t]>,
    strides: Box<[ffi::Py_ssize_t]>,
}

/// The `TensorView` exporting `tensor` as `layout` says.
pub(crate) fn view(layout: TensorLayout, tensor: Tensor) -> TensorView {
    debug_assert!(layout.len <= tensor.nbytes());
    TensorView {
        tensor,
        format: layout.format,
        itemsize: layout.itemsize,
        len: layout.len,
        shape: layout.shape,
        strides: layout.strides,
    }
}

/// The typed view of the tensor `r` names in `pool`; `None`, with no
/// reference taken, when its dtype has no buffer-protocol format.
pub(crate) fn view_of(pool: &Arc<TensorPool>, r: &TensorRef) -> PyResult<Option<TensorView>> {
    let dims = r.dims().map_err(descriptor_error)?;
    // The layout first: no reference is taken when there is no fast path.
    let Some(layout) =
        TensorLayout::new(r.dtype_bytes(), dims, r.nbytes).map_err(descriptor_error)?
    else {
        return Ok(None);
    };
    // Checks the pool id too (another pool's descriptor: StaleDescriptorError).
    let tensor = pool.attach(r).map_err(pool_attach_error)?;
    Ok(Some(view(layout, tensor)))
}

#[pymethods]
impl TensorView {
    /// Bytes viewed.
    #[getter]
    fn nbytes(&self) -> usize {
        self.len
    }

    unsafe fn __getbuffer__(
        slf: Bound<'_, Self>,
        view: *mut ffi::Py_buffer,
        flags: c_int,
    ) -> PyResult<()> {
        if view.is_null() {
            return Err(pyo3::exceptions::PyBufferError::new_err("no view to fill"));
        }
        let this = slf.get();
        let nd = flags & ffi::PyBUF_ND == ffi::PyBUF_ND;
        let strided = flags & ffi::PyBUF_STRIDES == ffi::PyBUF_STRIDES;
        let format = flags & ffi::PyBUF_FORMAT == ffi::PyBUF_FORMAT;
        let buf = this.tensor.as_ptr();
        let owner = slf.clone().into_any().into_ptr();
        // SAFETY: `view` is the non-null Py_buffer CPython passed to
        // `__getbuffer__`, ours to fill. It takes a new reference to this
        // object (`owner`), which keeps the tensor referenced and its slot
        // mapped, and the format, shape and strides arrays (owned by this
        // frozen object, never changed) alive for as long as the view
        // lives. `len` bytes at `buf` lie within the slot (checked against
        // the tensor's size when the view was made). Writable, as
        // `TensorBuffer`: tensors are shared mutable memory by design.
        unsafe {
            (*view).obj = owner;
            (*view).buf = buf.cast();
            (*view).len = this.len as ffi::Py_ssize_t;
            (*view).readonly = 0;
            (*view).itemsize = this.itemsize as ffi::Py_ssize_t;
            (*view).format = if format {
                this.format.as_ptr().cast_mut()
            } else {
                std::ptr::null_mut()
            };
            (*view).ndim = if nd { this.shape.len() as c_int } else { 1 };
            (*view).shape = if nd {
                this.shape.as_ptr().cast_mut()
            } else {
                std::ptr::null_mut()
            };
            (*view).strides = if strided {
                this.strides.as_ptr().cast_mut()
            } else {
                std::ptr::null_mut()
            };
            (*view).suboffsets = std::ptr::null_mut();
            (*view).internal = std::ptr::null_mut();
        }
        Ok(())
    }
}
