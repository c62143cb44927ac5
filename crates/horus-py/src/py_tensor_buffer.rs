//! `TensorBuffer`: one reference to a tensor slot, a writable buffer over
//! its bytes (the package's `Tensor` builds shapes, dtypes and DLPack on it).

use std::ffi::c_int;

use horus_tensor::{Meta, Tensor, TensorRef};
use pyo3::ffi;
use pyo3::prelude::*;

use crate::buffer::export;
use crate::errors::descriptor_error;

/// One reference to a tensor slot; a writable buffer over its bytes. The
/// slot returns to the pool when every reference in every process is gone.
#[pyclass(module = "horus._horus", frozen)]
pub(crate) struct TensorBuffer {
    pub(crate) tensor: Tensor,
}

#[pymethods]
impl TensorBuffer {
    /// Slot index.
    #[getter]
    fn slot(&self) -> u32 {
        self.tensor.slot()
    }

    /// Generation of the slot for this tensor.
    #[getter]
    fn generation(&self) -> u32 {
        self.tensor.generation()
    }

    /// Byte offset of the data in the pool segment.
    #[getter]
    fn offset(&self) -> u64 {
        self.tensor.offset()
    }

    /// Bytes of data.
    #[getter]
    fn nbytes(&self) -> usize {
        self.tensor.nbytes()
    }

    /// Processes holding a reference (this one included).
    #[getter]
    fn refcount(&self) -> u32 {
        self.tensor.refcount()
    }

    /// Pool id.
    #[getter]
    fn pool_id(&self) -> u64 {
        self.tensor.pool().pool_id()
    }

    /// Address of the data in this process (for DLPack).
    #[getter]
    fn address(&self) -> usize {
        self.tensor.as_ptr() as usize
    }

    /// The bytes of a `TensorRef` naming this tensor as `shape` of `dtype`
    /// (a NumPy type string such as `<f4`), in a new bytearray.
    #[pyo3(signature = (dtype, shape, kind=0, stamp_ns=0, frame_id=""))]
    fn descriptor<'py>(
        &self,
        py: Python<'py>,
        dtype: &str,
        shape: Vec<u64>,
        kind: u32,
        stamp_ns: u64,
        frame_id: &str,
    ) -> PyResult<Bound<'py, pyo3::types::PyByteArray>> {
        let meta = Meta {
            kind,
            stamp_ns,
            frame_id,
        };
        let r = TensorRef::describe(&self.tensor, dtype, &shape, meta).map_err(descriptor_error)?;
        Ok(pyo3::types::PyByteArray::new(py, bytemuck::bytes_of(&r)))
    }

    unsafe fn __getbuffer__(
        slf: Bound<'_, Self>,
        view: *mut ffi::Py_buffer,
        flags: c_int,
    ) -> PyResult<()> {
        let t = &slf.get().tensor;
        // SAFETY: the slot stays mapped and referenced while this object
        // lives, which the view guarantees through its reference to it.
        // Writable: tensors are shared mutable memory by design (as a
        // torch tensor in shared memory is); the pool guarantees only that
        // the memory is not reused while referenced.
        unsafe { export(slf.as_any(), view, t.as_ptr(), t.nbytes(), false, flags) }
    }
}
