//! The tensor pool as seen from Python: raw slots exported through the
//! buffer protocol. The package's `TensorPool`/`Tensor` add shapes, dtypes,
//! descriptors and DLPack on top.

use std::ffi::{c_int, CStr};
use std::sync::{Arc, Mutex, Weak};

use pyo3::ffi;
use pyo3::prelude::*;

use crate::buffer::{export, with_bytes, with_bytes_mut};
use crate::errors::{pool_error, TensorPoolError};
use crate::tensor_msg::{DescriptorError, TensorLayout, TensorRef};
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
        let r = read_ref(descriptor)?;
        let dims = r.dims().map_err(descriptor_error)?.to_vec();
        let dtype = std::str::from_utf8(r.dtype_bytes())
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
        let tensor = self.inner.alloc(nbytes).map_err(pool_error)?;
        let r = make_ref(&tensor, dtype, &shape, kind, stamp_ns, frame_id)?;
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
        let tensor = self.inner.alloc(nbytes).map_err(pool_error)?;
        write_ref(
            out,
            &make_ref(&tensor, dtype, &shape, kind, stamp_ns, frame_id)?,
        )?;
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
        let tensor = self.inner.alloc(layout.len as u64).map_err(pool_error)?;
        write_ref(
            out,
            &make_ref(&tensor, dtype, &shape, kind, stamp_ns, frame_id)?,
        )?;
        Ok(Some(view(layout, tensor)))
    }

    /// Takes a reference on the tensor a `TensorRef` (its bytes) names, as
    /// a `TensorView` exporting its dtype and shape (`numpy.asarray` of it
    /// is the tensor). `None`, with no reference taken, when the dtype has
    /// no buffer-protocol format (not a plain numeric type in native byte
    /// order): use `attach` then.
    fn attach_view(&self, descriptor: &Bound<'_, PyAny>) -> PyResult<Option<TensorView>> {
        view_of(&self.inner, &read_ref(descriptor)?)
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

/// The typed view of the tensor `r` names in `inner` (see
/// `RawTensorPool::attach_view`).
fn view_of(inner: &Arc<PoolInner>, r: &TensorRef) -> PyResult<Option<TensorView>> {
    let dims = r.dims().map_err(descriptor_error)?;
    // The layout first: no reference is taken when there is no fast path.
    let Some(layout) =
        TensorLayout::new(r.dtype_bytes(), dims, r.nbytes).map_err(descriptor_error)?
    else {
        return Ok(None);
    };
    if r.pool_id != inner.pool_id() {
        return Err(crate::errors::StaleDescriptorError::new_err(format!(
            "descriptor names pool {}, not {}",
            r.pool_id,
            inner.pool_id()
        )));
    }
    let tensor = inner
        .acquire(r.slot, r.generation, r.offset, r.nbytes)
        .map_err(pool_error)?;
    Ok(Some(view(layout, tensor)))
}

/// A descriptor whose dtype or shape cannot be viewed, as a ValueError.
fn descriptor_error(e: DescriptorError) -> PyErr {
    pyo3::exceptions::PyValueError::new_err(e.to_string())
}

/// The `TensorView` exporting `tensor` as `layout` says.
fn view(layout: TensorLayout, tensor: Tensor) -> TensorView {
    TensorView {
        tensor,
        format: layout.format,
        itemsize: layout.itemsize,
        len: layout.len,
        shape: layout.shape,
        strides: layout.strides,
    }
}

/// Pools attached through descriptors by [`attach_view`], held (mapped, and
/// this process one of their holders) until [`release_attached`] (at exit),
/// so that receiving a tensor never maps or unmaps memory on the hot path.
static ATTACHED: Mutex<Vec<(String, u64, Arc<PoolInner>)>> = Mutex::new(Vec::new());

fn attached(namespace: Option<&str>, pool_id: u64) -> PyResult<Arc<PoolInner>> {
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
    let pool = open_cached(
        &ns,
        pool_id,
        PoolConfig {
            slots: None,
            slot_bytes: None,
        },
    )?;
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
/// exit ([`PoolInner::depart`]) drops this process's references and place
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

/// A `TensorRef` naming `t` as `shape` of `dtype` (a NumPy type string).
fn make_ref(
    t: &Tensor,
    dtype: &str,
    shape: &[u64],
    kind: u32,
    stamp_ns: u64,
    frame_id: &str,
) -> PyResult<TensorRef> {
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
    r.stamp_ns = stamp_ns;
    r.pool_id = t.pool().pool_id();
    r.offset = t.offset();
    r.nbytes = t.nbytes() as u64;
    r.slot = t.slot();
    r.generation = t.generation();
    r.ndim = shape.len() as u32;
    r.kind = kind;
    r.dtype[..dtype.len()].copy_from_slice(dtype.as_bytes());
    r.shape[..shape.len()].copy_from_slice(shape);
    r.frame_id[..frame_id.len()].copy_from_slice(frame_id.as_bytes());
    Ok(r)
}

/// Writes `r` into `out`, a writable buffer of exactly its size (e.g. a
/// TensorRef message's array).
fn write_ref(out: &Bound<'_, PyAny>, r: &TensorRef) -> PyResult<()> {
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
fn read_ref(descriptor: &Bound<'_, PyAny>) -> PyResult<TensorRef> {
    with_bytes(descriptor, |b| {
        (b.len() == std::mem::size_of::<TensorRef>()).then(|| bytemuck::pod_read_unaligned(b))
    })?
    .ok_or_else(|| pyo3::exceptions::PyValueError::new_err("not a TensorRef"))
}

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
        let r = make_ref(&self.tensor, dtype, &shape, kind, stamp_ns, frame_id)?;
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
