//! `Sample`: a message read in place in shared memory, as a read-only buffer.

use std::ffi::c_int;

use pyo3::ffi;
use pyo3::prelude::*;

use crate::buffer::export;
use crate::dynamic::AnySample;

/// A message read in place in shared memory (read-only buffer: header,
/// padding, tail). The chunk is pinned while the sample or any view of it
/// is alive.
#[pyclass(module = "horus._horus", frozen)]
pub(crate) struct Sample {
    pub(super) inner: Box<dyn AnySample>,
}

#[pymethods]
impl Sample {
    /// Where the tail starts in the buffer.
    #[getter]
    fn tail_offset(&self) -> usize {
        self.inner.tail_offset()
    }

    /// Bytes of tail.
    #[getter]
    fn tail_len(&self) -> usize {
        self.inner.tail_len()
    }

    /// Bytes of the fixed part.
    #[getter]
    fn header_len(&self) -> usize {
        self.inner.header().len()
    }

    unsafe fn __getbuffer__(
        slf: Bound<'_, Self>,
        view: *mut ffi::Py_buffer,
        flags: c_int,
    ) -> PyResult<()> {
        let region = slf.get().inner.region();
        // SAFETY: the region is pinned by the sample, which the view keeps
        // alive through its reference; read-only (other subscribers read it).
        unsafe {
            export(
                slf.as_any(),
                view,
                region.as_ptr().cast_mut(),
                region.len(),
                true,
                flags,
            )
        }
    }
}
