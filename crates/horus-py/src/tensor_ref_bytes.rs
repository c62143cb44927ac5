//! A `TensorRef` to and from the bytes of a Python buffer (a `TensorRef`
//! message's array, a bytearray).

use horus_tensor::TensorRef;
use pyo3::prelude::*;

use crate::buffer::{with_bytes, with_bytes_mut};

/// Writes `r` into `out`, a writable buffer of exactly its size (e.g. a
/// TensorRef message's array).
pub(crate) fn write_ref(out: &Bound<'_, PyAny>, r: &TensorRef) -> PyResult<()> {
    with_bytes_mut(out, |b| {
        if b.len() != std::mem::size_of::<TensorRef>() {
            return Err(pyo3::exceptions::PyValueError::new_err(format!(
                "out has {} bytes, a TensorRef {}",
                b.len(),
                std::mem::size_of::<TensorRef>()
            )));
        }
        b.copy_from_slice(bytemuck::bytes_of(r));
        Ok(())
    })?
}

/// Reads a `TensorRef` from the bytes of `descriptor`.
pub(crate) fn read_ref(descriptor: &Bound<'_, PyAny>) -> PyResult<TensorRef> {
    with_bytes(descriptor, |b| {
        (b.len() == std::mem::size_of::<TensorRef>()).then(|| bytemuck::pod_read_unaligned(b))
    })?
    .ok_or_else(|| pyo3::exceptions::PyValueError::new_err("not a TensorRef"))
}
