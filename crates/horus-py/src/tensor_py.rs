//! The tensor pool as seen from Python: raw slots exported through the
//! buffer protocol. The package's `TensorPool`/`Tensor` add shapes, dtypes,
//! descriptors and DLPack on top.

use std::ffi::c_int;
use std::sync::{Arc, Mutex, Weak};

use pyo3::ffi;
use pyo3::prelude::*;

use crate::buffer::{export, with_bytes};
use crate::errors::{pool_error, TensorPoolError};
use crate::tensor_msg::TensorRef;
use crate::tensor_pool::{PoolConfig, PoolInner, Tensor};

/// Pools this process has mapped, so that every handle of a process shares
/// one mapping and one holder place per pool.
static POOLS: Mutex<Vec<(String, u64, Weak<PoolInner>)>> = Mutex::new(Vec::new());

fn open_cached(namespace: &str, pool_id: u64, cfg: PoolConfig) -> PyResult<Arc<PoolInner>> {
    let mut pools = POOLS.lock().unwrap_or_else(|p| p.into_inner());
    pools.retain(|(_, _, w)| w.strong_count() > 0);
    let found = pools
        .iter()
        .find(|(ns, id, _)| ns == namespace && *id == pool_id)
        .and_then(|(_, _, w)| w.upgrade());
    if let Some(pool) = found {
        let bytes_ok = cfg
            .slot_bytes
            .is_none_or(|b| b.max(1).div_ceil(4096) * 4096 == pool.slot_bytes());
        if cfg.slots.is_none_or(|s| s == pool.slots()) && bytes_ok {
            return Ok(pool);
        }
        return Err(TensorPoolError::new_err(format!(
            "tensor pool {pool_id} is open with {} slots × {} B; requested {:?} slots × {:?} B",
            pool.slots(),
            pool.slot_bytes(),
            cfg.slots,
            cfg.slot_bytes
        )));
    }
    let pool = PoolInner::open(namespace, pool_id, cfg).map_err(pool_error)?;
    pools.push((namespace.to_owned(), pool_id, Arc::downgrade(&pool)));
    Ok(pool)
}

/// A pool of fixed-size tensor slots in shared memory (created on first
/// open, adopted afterwards; settings left as None adopt the pool's).
#[pyclass(module = "horus._horus", frozen)]
pub(crate) struct RawTensorPool {
    inner: Arc<PoolInner>,
    namespace: String,
}

#[pymethods]
impl RawTensorPool {
    #[new]
    #[pyo3(signature = (pool_id, *, slots=None, slot_bytes=None, namespace=None))]
    fn new(
        pool_id: u64,
        slots: Option<u32>,
        slot_bytes: Option<u64>,
        namespace: Option<String>,
    ) -> PyResult<Self> {
        let namespace = namespace.unwrap_or_else(horus_shm::name::namespace);
        let inner = open_cached(&namespace, pool_id, PoolConfig { slots, slot_bytes })?;
        Ok(RawTensorPool { inner, namespace })
    }

    /// Takes a free slot for `nbytes` bytes (not zeroed).
    fn alloc(&self, nbytes: u64) -> PyResult<TensorBuffer> {
        let tensor = self.inner.alloc(nbytes).map_err(pool_error)?;
        Ok(TensorBuffer { tensor })
    }

    /// Takes a reference on the tensor a descriptor names; raises
    /// StaleDescriptorError if it was freed since.
    fn acquire(
        &self,
        slot: u32,
        generation: u32,
        offset: u64,
        nbytes: u64,
    ) -> PyResult<TensorBuffer> {
        let tensor = self
            .inner
            .acquire(slot, generation, offset, nbytes)
            .map_err(pool_error)?;
        Ok(TensorBuffer { tensor })
    }

    /// Takes a reference on the tensor a `TensorRef` (its bytes) names,
    /// which must live in this pool. Returns the buffer, the dtype string
    /// and the shape.
    fn attach(&self, descriptor: &Bound<'_, PyAny>) -> PyResult<(TensorBuffer, String, Vec<u64>)> {
        let r: TensorRef = with_bytes(descriptor, |b| {
            (b.len() == std::mem::size_of::<TensorRef>()).then(|| bytemuck::pod_read_unaligned(b))
        })?
        .ok_or_else(|| pyo3::exceptions::PyValueError::new_err("not a TensorRef"))?;
        let ndim = r.ndim as usize;
        if ndim > r.shape.len() {
            return Err(pyo3::exceptions::PyValueError::new_err(format!(
                "descriptor has {ndim} dimensions"
            )));
        }
        let end = r
            .dtype
            .iter()
            .position(|&c| c == 0)
            .unwrap_or(r.dtype.len());
        let dtype = std::str::from_utf8(&r.dtype[..end])
            .map_err(|_| pyo3::exceptions::PyValueError::new_err("descriptor dtype is not UTF-8"))?
            .to_owned();
        if r.pool_id != self.inner.pool_id() {
            return Err(crate::errors::StaleDescriptorError::new_err(format!(
                "descriptor names pool {}, not {}",
                r.pool_id,
                self.inner.pool_id()
            )));
        }
        let tensor = self
            .inner
            .acquire(r.slot, r.generation, r.offset, r.nbytes)
            .map_err(pool_error)?;
        Ok((TensorBuffer { tensor }, dtype, r.shape[..ndim].to_vec()))
    }

    /// Clears the references of holders whose process died; returns how
    /// many holders were reclaimed.
    fn reclaim_dead(&self) -> usize {
        self.inner.reclaim_dead()
    }

    /// Pool id.
    #[getter]
    fn pool_id(&self) -> u64 {
        self.inner.pool_id()
    }

    /// Namespace the pool lives in.
    #[getter]
    fn namespace(&self) -> &str {
        &self.namespace
    }

    /// Number of slots.
    #[getter]
    fn slots(&self) -> u32 {
        self.inner.slots()
    }

    /// Bytes per slot.
    #[getter]
    fn slot_bytes(&self) -> u64 {
        self.inner.slot_bytes()
    }

    /// Slots that no process holds.
    #[getter]
    fn free_slots(&self) -> u32 {
        self.inner.free_slots()
    }

    /// Processes that have the pool mapped.
    #[getter]
    fn holders(&self) -> u32 {
        self.inner.holders()
    }
}

/// One reference to a tensor slot; a writable buffer over its bytes. The
/// slot returns to the pool when every reference in every process is gone.
#[pyclass(module = "horus._horus", frozen)]
pub(crate) struct TensorBuffer {
    tensor: Tensor,
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
        let mut r: TensorRef = bytemuck::Zeroable::zeroed();
        if shape.len() > r.shape.len()
            || dtype.len() > r.dtype.len()
            || frame_id.len() > r.frame_id.len()
        {
            return Err(pyo3::exceptions::PyValueError::new_err(format!(
                "a descriptor holds at most {} dimensions, a {}-byte dtype and a {}-byte frame id",
                r.shape.len(),
                r.dtype.len(),
                r.frame_id.len()
            )));
        }
        let t = &self.tensor;
        r.stamp_ns = stamp_ns;
        r.pool_id = t.pool().pool_id();
        r.offset = t.offset();
        r.nbytes = t.nbytes() as u64;
        r.slot = t.slot();
        r.generation = t.generation();
        r.ndim = shape.len() as u32;
        r.kind = kind;
        r.dtype[..dtype.len()].copy_from_slice(dtype.as_bytes());
        r.shape[..shape.len()].copy_from_slice(&shape);
        r.frame_id[..frame_id.len()].copy_from_slice(frame_id.as_bytes());
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
