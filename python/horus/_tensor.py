"""Shared-memory tensors: ``TensorPool``, ``Tensor``, descriptors, DLPack."""

from __future__ import annotations

import atexit
import math
import os
from typing import TYPE_CHECKING, Any, Dict, Optional, Sequence, Tuple, Type, Union, cast

import numpy as np
import numpy.typing as npt

from . import _horus
from ._closing import Closable
from ._messages import MESSAGE_TYPES

if TYPE_CHECKING:
    from ._message_classes import TensorRef

__all__ = ["TensorPool", "Tensor"]

_KDL_CPU = 1
_TENSOR_REF = cast("Type[TensorRef]", MESSAGE_TYPES["TensorRef"])

# Pools this process attached through descriptors stay mapped (and this
# process a holder of them) until it exits, so that receiving a tensor never
# maps or unmaps memory on the hot path.
_ATTACHED: Dict[Tuple[str, int], _horus.RawTensorPool] = {}
atexit.register(_ATTACHED.clear)
atexit.register(_horus.release_attached)
_DTYPES: Dict[str, np.dtype[Any]] = {}
# (shape, dtype) as given to alloc_with_descriptor -> normalised shape, dtype,
# byte size and type string (a few entries: producers repeat their shapes).
_SHAPES: Dict[Tuple[Any, Any], Tuple[Tuple[int, ...], np.dtype[Any], int, str]] = {}
_USER_NS = f"u{os.getuid()}"  # the native default when HORUS_NAMESPACE is unset


def _shape_dtype(shape: Union[int, Sequence[int]], dtype: npt.DTypeLike) -> Tuple[Tuple[int, ...], np.dtype[Any]]:
    shp = (int(shape),) if isinstance(shape, int) else tuple(int(s) for s in shape)
    if any(s < 0 for s in shp):
        raise ValueError(f"negative dimension in {shp}")
    dt = np.dtype(dtype)
    if dt.hasobject or dt.itemsize == 0:
        raise TypeError(f"dtype {dt} cannot live in shared memory")
    return shp, dt


def _normalised(
    shape: Union[int, Sequence[int]], dtype: npt.DTypeLike
) -> Tuple[Tuple[int, ...], np.dtype[Any], int, str]:
    """Shape, dtype, byte size and type string, cached per (shape, dtype)
    as given (a few entries: producers repeat their shapes)."""
    try:
        return _SHAPES[(shape, dtype)]
    except (KeyError, TypeError):  # new, or unhashable (a list shape)
        pass
    shp, dt = _shape_dtype(shape, dtype)
    entry = (shp, dt, math.prod(shp) * dt.itemsize, dt.str)
    try:
        if len(_SHAPES) >= 64:
            _SHAPES.clear()
        _SHAPES[(shape, dtype)] = entry
    except TypeError:
        pass
    return entry


class Tensor:
    """A reference to one tensor in a ``TensorPool`` (C-contiguous). The
    memory returns to the pool when every reference in every process is
    gone (this object and the arrays viewing it), or when the holding
    processes die."""

    __slots__ = ("_buf", "shape", "dtype")

    def __init__(self, buf: _horus.TensorBuffer, shape: Tuple[int, ...], dtype: np.dtype[Any]) -> None:
        self._buf = buf
        self.shape: Tuple[int, ...] = shape
        """Extent of each dimension."""
        self.dtype: np.dtype[Any] = dtype
        """Element type."""

    def numpy(self) -> npt.NDArray[Any]:
        """A writable NumPy view of the tensor (no copy). The view keeps the
        tensor referenced while it lives."""
        n = math.prod(self.shape)
        return np.frombuffer(cast(memoryview, self._buf), self.dtype, count=n).reshape(self.shape)

    @property
    def nbytes(self) -> int:
        """Bytes of data."""
        return self._buf.nbytes

    @property
    def refcount(self) -> int:
        """Processes holding a reference (this one included)."""
        return self._buf.refcount

    @property
    def pool_id(self) -> int:
        """Id of the pool the tensor lives in."""
        return self._buf.pool_id

    @property
    def slot(self) -> int:
        """Slot index in the pool."""
        return self._buf.slot

    @property
    def generation(self) -> int:
        """Generation of the slot for this tensor."""
        return self._buf.generation

    def to_descriptor(self, *, kind: int = 0, frame_id: str = "", stamp_ns: int = 0) -> TensorRef:
        """A ``TensorRef`` message naming this tensor, to publish on a topic
        or hand to another process. It holds no reference by itself: keep
        this tensor until the receiver has called ``from_descriptor``.
        ``kind`` is 0 (plain tensor), an ``Image`` encoding (shape
        ``(h, w, c)``) or ``TensorRef.POINTS`` (shape ``(n, 3|4)``)."""
        raw = self._buf.descriptor(self.dtype.str, self.shape, kind, stamp_ns, frame_id)
        return _TENSOR_REF._view(np.frombuffer(raw, _TENSOR_REF.DTYPE, count=1))

    def __dlpack__(self, **kwargs: Any) -> Any:
        """DLPack export (``np.from_dlpack``, ``torch.from_dlpack``): the
        capsule views the shared memory and keeps the tensor referenced."""
        return self.numpy().__dlpack__(**{k: v for k, v in kwargs.items() if v is not None})

    def __dlpack_device__(self) -> Tuple[int, int]:
        """CPU memory: ``(kDLCPU, 0)``."""
        return (_KDL_CPU, 0)

    def __repr__(self) -> str:
        return (
            f"Tensor(shape={self.shape}, dtype={self.dtype}, pool={self._buf.pool_id}, "
            f"slot={self._buf.slot}, refcount={self._buf.refcount})"
        )


class TensorPool(Closable):
    """A pool of fixed-size tensor slots in pre-mapped shared memory.
    ``alloc`` takes a free slot (no allocation, no zeroing); the pool is
    created on first open and shared by every process that opens the same
    ``pool_id`` in the same namespace. Settings left as None adopt the
    existing pool's (defaults when creating: 16 slots of 8 MiB)."""

    def __init__(
        self,
        pool_id: int,
        *,
        slots: Optional[int] = None,
        slot_bytes: Optional[int] = None,
        namespace: Optional[str] = None,
    ) -> None:
        self._native = _horus.RawTensorPool(pool_id, slots=slots, slot_bytes=slot_bytes, namespace=namespace)

    def alloc(self, shape: Union[int, Sequence[int]], dtype: npt.DTypeLike = "float32") -> Tensor:
        """A tensor of ``shape`` and ``dtype`` (contents undefined: whatever
        the slot held). Raises ``TensorPoolError`` when every slot is held."""
        shp, dt = _shape_dtype(shape, dtype)
        return Tensor(self._native.alloc(math.prod(shp) * dt.itemsize), shp, dt)

    def alloc_with_descriptor(
        self,
        shape: Union[int, Sequence[int]],
        dtype: npt.DTypeLike = "float32",
        *,
        kind: int = 0,
        frame_id: str = "",
        stamp_ns: int = 0,
        out: Optional[TensorRef] = None,
    ) -> Tuple[Tensor, TensorRef]:
        """``alloc(shape, dtype)`` and ``to_descriptor(kind=, frame_id=,
        stamp_ns=)`` in one native call: the tensor and the ``TensorRef``
        naming it, for the hot path of a producer that hands each tensor
        over as it is made. With ``out`` (a ``TensorRef``), the descriptor
        is written into it and it is returned (no new message). Keep the
        tensor until the receiver has it."""
        shp, dt, nbytes, dts = _normalised(shape, dtype)
        if out is None:
            buf, raw = self._native.alloc_ref(nbytes, dts, shp, kind, stamp_ns, frame_id)
            return Tensor(buf, shp, dt), _TENSOR_REF._view(np.frombuffer(raw, _TENSOR_REF.DTYPE, count=1))
        if type(out) is not _TENSOR_REF:
            raise TypeError("out must be a TensorRef message")
        buf = self._native.alloc_into(out._a, nbytes, dts, shp, kind, stamp_ns, frame_id)
        return Tensor(buf, shp, dt), out

    @classmethod
    def from_descriptor(cls, ref: TensorRef, *, namespace: Optional[str] = None) -> Tensor:
        """Takes a reference on the tensor a ``TensorRef`` names (mapping its
        pool if needed). Raises ``StaleDescriptorError`` if it was freed."""
        if type(ref) is not _TENSOR_REF:
            raise TypeError("from_descriptor takes a TensorRef message")
        key = (namespace or os.environ.get("HORUS_NAMESPACE") or _USER_NS, int(ref.pool_id))
        pool = _ATTACHED.get(key)
        if pool is None:
            pool = _ATTACHED[key] = _horus.RawTensorPool(key[1], namespace=key[0])
        buf, dtype, shape = pool.attach(ref._a)
        dt = _DTYPES.get(dtype)
        if dt is None:
            dt = _DTYPES[dtype] = np.dtype(dtype)
        shp = tuple(shape)
        if math.prod(shp) * dt.itemsize > buf.nbytes:
            raise ValueError(f"descriptor shape {shp} {dt} exceeds its {buf.nbytes} bytes")
        return Tensor(buf, shp, dt)

    def alloc_numpy(
        self,
        shape: Union[int, Sequence[int]],
        dtype: npt.DTypeLike = "float32",
        *,
        kind: int = 0,
        frame_id: str = "",
        stamp_ns: int = 0,
        out: Optional[TensorRef] = None,
    ) -> Tuple[npt.NDArray[Any], TensorRef]:
        """As ``alloc_with_descriptor``, returning the tensor's NumPy view
        (no copy) instead of a ``Tensor``: the array holds the reference,
        and the slot returns to the pool when it (and every view of it) is
        gone. The quickest way to make a tensor and hand it over."""
        shp, dt, nbytes, dts = _normalised(shape, dtype)
        ref = _TENSOR_REF() if out is None else out
        if type(ref) is not _TENSOR_REF:
            raise TypeError("out must be a TensorRef message")
        view = self._native.alloc_view_into(ref._a, dts, shp, kind, stamp_ns, frame_id)
        if view is None:  # not a plain numeric dtype: the generic path
            t, _ = self.alloc_with_descriptor(shp, dt, kind=kind, frame_id=frame_id, stamp_ns=stamp_ns, out=ref)
            return t.numpy(), ref
        return np.asarray(view), ref

    @classmethod
    def numpy_from_descriptor(cls, ref: TensorRef, *, namespace: Optional[str] = None) -> npt.NDArray[Any]:
        """``from_descriptor(ref).numpy()`` in one native call: the NumPy
        view (no copy) of the tensor a ``TensorRef`` names, holding a
        reference on it while the array (or any view of it) lives. Raises
        ``StaleDescriptorError`` if it was freed."""
        if type(ref) is not _TENSOR_REF:
            raise TypeError("numpy_from_descriptor takes a TensorRef message")
        view = _horus.attach_view(ref._a, namespace)
        if view is None:  # not a plain numeric dtype: the generic path
            return cls.from_descriptor(ref, namespace=namespace).numpy()
        return np.asarray(view)

    @property
    def pool_id(self) -> int:
        """Pool id."""
        return self._native.pool_id

    @property
    def slots(self) -> int:
        """Number of slots."""
        return self._native.slots

    @property
    def slot_bytes(self) -> int:
        """Bytes per slot."""
        return self._native.slot_bytes

    @property
    def free_slots(self) -> int:
        """Slots that no process holds."""
        return self._native.free_slots

    @property
    def holders(self) -> int:
        """Processes that have the pool mapped."""
        return self._native.holders

    def reclaim_dead(self) -> int:
        """Frees the references of processes that died; returns how many
        were reclaimed (also done automatically when the pool is full)."""
        return self._native.reclaim_dead()

    def __repr__(self) -> str:
        return (
            f"TensorPool({self.pool_id}, slots={self.slots}, slot_bytes={self.slot_bytes}, "
            f"free={self.free_slots})"
        )
