//! `RawTensorPool`: a `horus_tensor::TensorPool` as seen from Python (the
//! package's `TensorPool` adds dtypes, shapes and DLPack on top), and the
//! per-process registry of mapped pools that `attach_view` and the exit
//! handler `release_attached` use.

use std::sync::{Arc, Mutex, Weak};

use horus_tensor::{Meta, PoolConfig, TensorLayout, TensorPool, TensorRef};
use pyo3::prelude::*;

use crate::endpoint::Endpoint;
use crate::errors::{
    descriptor_error, pool_alloc_error, pool_attach_error, pool_open_error, TensorPoolError,
};
use crate::py_tensor_buffer::TensorBuffer;
use crate::py_tensor_view::{view, view_of, TensorView};
use crate::tensor_ref_bytes::{read_ref, write_ref};

/// Pools this process has mapped, so that every handle of a process shares
/// one mapping and one holder place per pool.
static POOLS: Mutex<Vec<(String, u64, Weak<TensorPool>)>> = Mutex::new(Vec::new());

fn open_cached(namespace: &str, pool_id: u64, cfg: PoolConfig) -> PyResult<Arc<TensorPool>> {
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
    let pool = TensorPool::open(namespace, pool_id, cfg).map_err(pool_open_error)?;
    pools.push((namespace.to_owned(), pool_id, Arc::downgrade(&pool)));
    Ok(pool)
}

/// A pool of fixed-size tensor slots in shared memory (created on first
/// open, adopted afterwards; settings left as None adopt the pool's).
#[pyclass(module = "horus._horus", frozen)]
pub(crate) struct RawTensorPool {
    /// This handle's reference on the process's mapping of the pool.
    inner: Endpoint<Arc<TensorPool>>,
    namespace: String,
    pool_id: u64,
    slots: u32,
    slot_bytes: u64,
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
        Ok(RawTensorPool {
            pool_id: inner.pool_id(),
            slots: inner.slots(),
            slot_bytes: inner.slot_bytes(),
            inner: Endpoint::new(inner, "tensor pool"),
            namespace,
        })
    }

    /// Takes a free slot for `nbytes` bytes (not zeroed).
    fn alloc(&self, nbytes: u64) -> PyResult<TensorBuffer> {
        let tensor = self.inner.lock()?.alloc(nbytes).map_err(pool_alloc_error)?;
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
            .lock()?
            .acquire(slot, generation, offset, nbytes)
            .map_err(pool_attach_error)?;
        Ok(TensorBuffer { tensor })
    }

    /// Takes a reference on the tensor a `TensorRef` (its bytes) names,
    /// which must live in this pool. Returns the buffer, the dtype string
    /// and the shape.
    fn attach(&self, descriptor: &Bound<'_, PyAny>) -> PyResult<(TensorBuffer, String, Vec<u64>)> {
        let r = read_ref(descriptor)?;
        let dims = r.dims().map_err(descriptor_error)?.to_vec();
        let dtype = std::str::from_utf8(r.dtype_bytes())
            .map_err(|_| pyo3::exceptions::PyValueError::new_err("descriptor dtype is not UTF-8"))?
            .to_owned();
        let tensor = self.inner.lock()?.attach(&r).map_err(pool_attach_error)?;
        Ok((TensorBuffer { tensor }, dtype, dims))
    }

    /// `alloc` and `TensorBuffer.descriptor` in one call: a free slot for
    /// `nbytes` bytes (not zeroed) and the bytes of a `TensorRef` naming it
    /// as `shape` of `dtype`, in a new bytearray.
    #[pyo3(signature = (nbytes, dtype, shape, kind=0, stamp_ns=0, frame_id=""))]
    #[allow(clippy::too_many_arguments)]
    fn alloc_ref<'py>(
        &self,
        py: Python<'py>,
        nbytes: u64,
        dtype: &str,
        shape: Vec<u64>,
        kind: u32,
        stamp_ns: u64,
        frame_id: &str,
    ) -> PyResult<(TensorBuffer, Bound<'py, pyo3::types::PyByteArray>)> {
        let tensor = self.inner.lock()?.alloc(nbytes).map_err(pool_alloc_error)?;
        let meta = Meta {
            kind,
            stamp_ns,
            frame_id,
        };
        let r = TensorRef::describe(&tensor, dtype, &shape, meta).map_err(descriptor_error)?;
        Ok((
            TensorBuffer { tensor },
            pyo3::types::PyByteArray::new(py, bytemuck::bytes_of(&r)),
        ))
    }

    /// As `alloc_ref`, writing the `TensorRef` into `out` (a writable
    /// buffer of exactly its size, e.g. a TensorRef message's array).
    #[pyo3(signature = (out, nbytes, dtype, shape, kind=0, stamp_ns=0, frame_id=""))]
    #[allow(clippy::too_many_arguments)]
    fn alloc_into(
        &self,
        out: &Bound<'_, PyAny>,
        nbytes: u64,
        dtype: &str,
        shape: Vec<u64>,
        kind: u32,
        stamp_ns: u64,
        frame_id: &str,
    ) -> PyResult<TensorBuffer> {
        let tensor = self.inner.lock()?.alloc(nbytes).map_err(pool_alloc_error)?;
        let meta = Meta {
            kind,
            stamp_ns,
            frame_id,
        };
        let r = TensorRef::describe(&tensor, dtype, &shape, meta).map_err(descriptor_error)?;
        write_ref(out, &r)?;
        Ok(TensorBuffer { tensor })
    }

    /// A free slot for `shape` of `dtype` (a NumPy type string) as a
    /// `TensorView` (`numpy.asarray` of it is the tensor, holding its
    /// reference), with the `TensorRef` naming it written into `out` (as
    /// `alloc_into`). `None`, with nothing allocated, when the dtype has no
    /// buffer format.
    #[pyo3(signature = (out, dtype, shape, kind=0, stamp_ns=0, frame_id=""))]
    fn alloc_view_into(
        &self,
        out: &Bound<'_, PyAny>,
        dtype: &str,
        shape: Vec<u64>,
        kind: u32,
        stamp_ns: u64,
        frame_id: &str,
    ) -> PyResult<Option<TensorView>> {
        let Some(layout) =
            TensorLayout::new(dtype.as_bytes(), &shape, u64::MAX).map_err(descriptor_error)?
        else {
            return Ok(None);
        };
        let tensor = self
            .inner
            .lock()?
            .alloc(layout.len as u64)
            .map_err(pool_alloc_error)?;
        let meta = Meta {
            kind,
            stamp_ns,
            frame_id,
        };
        let r = TensorRef::describe(&tensor, dtype, &shape, meta).map_err(descriptor_error)?;
        write_ref(out, &r)?;
        Ok(Some(view(layout, tensor)))
    }

    /// Takes a reference on the tensor a `TensorRef` (its bytes) names, as
    /// a `TensorView` exporting its dtype and shape (`numpy.asarray` of it
    /// is the tensor). `None`, with no reference taken, when the dtype has
    /// no buffer-protocol format (not a plain numeric type in native byte
    /// order): use `attach` then.
    fn attach_view(&self, descriptor: &Bound<'_, PyAny>) -> PyResult<Option<TensorView>> {
        view_of(&*self.inner.lock()?, &read_ref(descriptor)?)
    }

    /// Clears the references of holders whose process died; returns how
    /// many holders were reclaimed.
    fn reclaim_dead(&self) -> PyResult<usize> {
        Ok(self.inner.lock()?.reclaim_dead())
    }

    /// Pool id.
    #[getter]
    fn pool_id(&self) -> u64 {
        self.pool_id
    }

    /// Namespace the pool lives in.
    #[getter]
    fn namespace(&self) -> &str {
        &self.namespace
    }

    /// Number of slots.
    #[getter]
    fn slots(&self) -> u32 {
        self.slots
    }

    /// Bytes per slot.
    #[getter]
    fn slot_bytes(&self) -> u64 {
        self.slot_bytes
    }

    /// Slots that no process holds.
    #[getter]
    fn free_slots(&self) -> PyResult<u32> {
        Ok(self.inner.lock()?.free_slots())
    }

    /// Processes that have the pool mapped.
    #[getter]
    fn holders(&self) -> PyResult<u32> {
        Ok(self.inner.lock()?.holders())
    }

    /// Lets go of this handle's reference on the pool now, and any use after
    /// raises ClosedError. The process leaves the pool (its holder place is
    /// released, the segment removed by the last holder) once no other
    /// handle of it and no tensor from it is alive in this process.
    /// Idempotent.
    fn close(&self) {
        self.inner.close();
    }

    /// Whether `close()` was called.
    #[getter]
    fn closed(&self) -> bool {
        self.inner.is_closed()
    }
}

/// Pools attached through descriptors by [`attach_view`], held (mapped, and
/// this process one of their holders) until [`release_attached`] (at exit),
/// so that receiving a tensor never maps or unmaps memory on the hot path.
static ATTACHED: Mutex<Vec<(String, u64, Arc<TensorPool>)>> = Mutex::new(Vec::new());

fn attached(namespace: Option<&str>, pool_id: u64) -> PyResult<Arc<TensorPool>> {
    let ns = match namespace.filter(|n| !n.is_empty()) {
        Some(n) => n.to_owned(),
        None => horus_shm::name::namespace(),
    };
    let found = ATTACHED
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .iter()
        .find(|(n, id, _)| *id == pool_id && *n == ns)
        .map(|(_, _, p)| Arc::clone(p));
    if let Some(pool) = found {
        return Ok(pool);
    }
    let pool = open_cached(&ns, pool_id, PoolConfig::default())?;
    ATTACHED
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .push((ns, pool_id, Arc::clone(&pool)));
    Ok(pool)
}

/// Takes a reference on the tensor a `TensorRef` (its bytes) names, in
/// `namespace` (default: HORUS_NAMESPACE, else per user), mapping its pool
/// on first use, as a `TensorView` (`numpy.asarray` of it is the tensor).
/// `None`, with no reference taken, when the dtype has no buffer-protocol
/// format; raises StaleDescriptorError if the tensor was freed.
#[pyfunction]
#[pyo3(signature = (descriptor, namespace=None))]
pub(crate) fn attach_view(
    descriptor: &Bound<'_, PyAny>,
    namespace: Option<&str>,
) -> PyResult<Option<TensorView>> {
    let r = read_ref(descriptor)?;
    view_of(&attached(namespace, r.pool_id)?, &r)
}

/// Lets go of the pools `attach_view` mapped, and leaves every pool this
/// process has open (the package calls it at exit, `atexit`).
///
/// The interpreter does not free every object at exit: a NumPy or DLPack
/// view still referenced then (a global `b = np.from_dlpack(h)`) keeps its
/// tensor, and so its pool, alive for good, and the pool's last holder
/// never unlinked it (its whole segment stayed in /dev/shm). Leaving at
/// exit ([`TensorPool::depart`]) drops this process's references and place
/// whatever views are alive; the views keep working on the mapping until
/// the process ends.
#[pyfunction]
pub(crate) fn release_attached() {
    let pools = std::mem::take(&mut *ATTACHED.lock().unwrap_or_else(|p| p.into_inner()));
    drop(pools);
    let open = std::mem::take(&mut *POOLS.lock().unwrap_or_else(|p| p.into_inner()));
    for (_, _, pool) in open {
        if let Some(pool) = pool.upgrade() {
            pool.depart();
        }
    }
}
