"""Message classes, generated at import time from the Rust schema tables.

The native module exports, for every message type, its schema id (name,
version, size, alignment, layout hash) and its field table (name, Rust type,
offset, size) exactly as the Rust ``message!`` macro computed them. From
that single source this module builds a NumPy structured dtype per message
(explicit offsets, little-endian) and a class with one property per field:

* scalar fields read and write Python numbers;
* array fields (``[f64; 36]``, ``[[u8; 32]; 16]``) are NumPy views;
* nested messages (``Pose`` in ``Odometry``) are message views;
* ``[u8; N]`` fields (NUL-padded UTF-8 names) also get ``<name>_str``.

The layout hash is recomputed here from the field table and must equal the
one Rust computed, so a field table that does not describe the Rust layout
fails at import rather than on the wire.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar, Dict, Iterator, List, Optional, Tuple, Type, TypeVar

import numpy as np
import numpy.typing as npt

from . import _horus

__all__ = ["Message", "MESSAGE_TYPES", "message_type", "layout_hash"]

_SCALARS: Dict[str, str] = {
    "u8": "u1",
    "i8": "i1",
    "u16": "<u2",
    "i16": "<i2",
    "u32": "<u4",
    "i32": "<i4",
    "u64": "<u8",
    "i64": "<i8",
    "f32": "<f4",
    "f64": "<f8",
}

_FNV_OFFSET = 0xCBF29CE484222325
_FNV_PRIME = 0x100000001B3
_MASK = (1 << 64) - 1


class _Hasher:
    """FNV-1a 64 over the same stream as Rust's ``LayoutHasher``."""

    def __init__(self) -> None:
        self.state = _FNV_OFFSET

    def _bytes(self, data: bytes) -> None:
        s = self.state
        for b in data:
            s = ((s ^ b) * _FNV_PRIME) & _MASK
        self.state = s

    def text(self, text: str) -> "_Hasher":
        self._bytes(text.encode() + b"\xff")
        return self

    def type_name(self, ty: str) -> "_Hasher":
        return self.text("".join(ty.split()))

    def u64(self, value: int) -> "_Hasher":
        self._bytes(value.to_bytes(8, "little"))
        return self


def layout_hash(schema: _horus.SchemaInfo) -> int:
    """Recomputes a schema's layout hash from its field table (as Rust does)."""
    h = _Hasher().text(schema.name).u64(schema.version)
    for f in schema.fields:
        h.text(f.name).type_name(f.ty).u64(f.offset).u64(f.size)
    return h.u64(schema.size).u64(schema.align).u64(int(schema.has_tail)).state


def _split_array(ty: str) -> Optional[Tuple[str, int]]:
    """``[T; N]`` -> ``(T, N)`` (the last top-level ``;``), else None."""
    if not (ty.startswith("[") and ty.endswith("]")):
        return None
    depth = 0
    for i in range(len(ty) - 2, 0, -1):
        c = ty[i]
        if c == "]":
            depth += 1
        elif c == "[":
            depth -= 1
        elif c == ";" and depth == 0:
            return ty[1:i], int(ty[i + 1 : -1])
    raise ValueError(f"cannot parse array type {ty!r}")


M = TypeVar("M", bound="Message")


class Message:
    """Base class of every message. Instances wrap one element of a NumPy
    structured array (``self.array``), either owned or a view of shared
    memory (received or loaned messages); messages with a tail
    (``PointCloud``, ``Image``) also carry ``self.tail`` (``uint8`` view)."""

    __slots__ = ("_a", "_tail")

    SCHEMA: ClassVar[_horus.SchemaInfo]
    """Schema name, version, size, alignment, layout hash, field table."""
    DTYPE: ClassVar[np.dtype[Any]]
    """NumPy structured dtype with the Rust layout."""
    HAS_TAIL: ClassVar[bool] = False
    """Whether a variable-size tail follows the fixed part."""
    _FIELD_NAMES: ClassVar[Tuple[str, ...]] = ()

    _a: npt.NDArray[Any]
    _tail: Optional[npt.NDArray[np.uint8]]

    # Fields are generated properties: type checkers read them from the classes of
    # horus/_message_classes.pyi (horus.CmdVel, ...), so a misspelt field is an error
    # there; code holding a plain ``Message`` reads fields with ``getattr`` or ``fields()``.

    def __init__(self, **fields: Any) -> None:
        """A zeroed message with the given fields set."""
        self._a = np.zeros(1, self.DTYPE)
        self._tail = None
        for name, value in fields.items():
            if name not in self._FIELD_NAMES and not hasattr(type(self), name):
                raise TypeError(f"{type(self).__name__} has no field {name!r}")
            setattr(self, name, value)

    @classmethod
    def _view(cls: Type[M], array: npt.NDArray[Any], tail: Optional[npt.NDArray[np.uint8]] = None) -> M:
        m = cls.__new__(cls)
        m._a = array
        m._tail = tail
        return m

    @classmethod
    def from_buffer(cls: Type[M], buffer: Any, tail_offset: Optional[int] = None) -> M:
        """A view (no copy) of a message stored in ``buffer`` (any object
        with the buffer protocol). With ``tail_offset``, the bytes from there
        on are the tail. Read-only buffers give read-only messages."""
        a = np.frombuffer(buffer, cls.DTYPE, count=1)
        tail = None
        if tail_offset is not None:
            tail = np.frombuffer(buffer, np.uint8, offset=tail_offset)
        return cls._view(a, tail)

    @classmethod
    def from_bytes(cls: Type[M], data: bytes) -> M:
        """A message from exactly ``SCHEMA.size`` bytes (copied)."""
        if len(data) != cls.SCHEMA.size:
            raise ValueError(f"{cls.__name__} has {cls.SCHEMA.size} bytes, got {len(data)}")
        return cls._view(np.frombuffer(bytearray(data), cls.DTYPE, count=1))

    def to_bytes(self) -> bytes:
        """The fixed part, as it travels (``SCHEMA.size`` bytes)."""
        return self._a.tobytes()

    @property
    def array(self) -> npt.NDArray[Any]:
        """The 1-element structured array this message wraps (a view)."""
        return self._a

    @property
    def tail(self) -> Optional[npt.NDArray[np.uint8]]:
        """The variable-size tail (``uint8``), or None."""
        return self._tail

    @property
    def is_readonly(self) -> bool:
        """Whether this is a read-only view (a received message)."""
        return not self._a.flags.writeable

    def copy(self: M) -> M:
        """An owned, writable copy (tail included)."""
        tail = None if self._tail is None else self._tail.copy()
        return type(self)._view(self._a.copy(), tail)

    # ``copy.copy`` must not give a second message over the same array: the
    # two would write each other's fields (and a copy of a loaned message
    # would view the loan's shared memory).
    def __copy__(self: M) -> M:
        return self.copy()

    def __deepcopy__(self: M, memo: Dict[int, Any]) -> M:
        return self.copy()

    def fields(self) -> Dict[str, Any]:
        """Every field by name (arrays as views)."""
        return {n: getattr(self, n) for n in self._FIELD_NAMES}

    def __eq__(self, other: object) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        assert isinstance(other, Message)
        if self._a.tobytes() != other._a.tobytes():
            return False
        a, b = self._tail, other._tail
        if a is None or b is None:
            return (a is None or len(a) == 0) and (b is None or len(b) == 0)
        return bool(np.array_equal(a, b))

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        parts = []
        for n in self._FIELD_NAMES:
            v = getattr(self, n)
            if isinstance(v, np.ndarray):
                r = np.array2string(v, threshold=6, edgeitems=2, separator=", ")
                parts.append(f"{n}={r}")
            else:
                parts.append(f"{n}={v!r}")
        if self._tail is not None:
            parts.append(f"tail=<{len(self._tail)} bytes>")
        return f"{type(self).__name__}({', '.join(parts)})"

    # Messages with a tail override these.
    def tail_len(self) -> int:
        """Bytes of tail the header describes (0 for messages without one)."""
        return 0


def _scalar_property(name: str, doc: str) -> property:
    def get(self: Message) -> Any:
        return self._a[name].item()

    def set(self: Message, value: Any) -> None:
        self._a[name] = value

    return property(get, set, doc=doc)


def _array_property(name: str, doc: str) -> property:
    def get(self: Message) -> Any:
        return self._a[name][0]

    def set(self: Message, value: Any) -> None:
        if isinstance(value, str):
            _set_str(self, name, value)
        else:
            self._a[name][0] = value

    return property(get, set, doc=doc)


def _set_str(self: Message, name: str, value: str) -> None:
    buf = self._a[name][0]
    data = value.encode()
    if len(data) > buf.shape[-1]:
        raise ValueError(f"{name}: {len(data)} bytes do not fit in {buf.shape[-1]}")
    if b"\0" in data:
        raise ValueError(f"{name}: string contains a NUL byte")
    buf[...] = 0
    buf[: len(data)] = np.frombuffer(data, np.uint8)


def _str_property(name: str) -> property:
    def get(self: Message) -> str:
        raw = self._a[name][0].tobytes()
        return str(raw.split(b"\0", 1)[0].decode())

    def set(self: Message, value: str) -> None:
        _set_str(self, name, value)

    return property(get, set, doc=f"``{name}`` as a string (UTF-8, NUL-padded).")


def _nested_property(name: str, cls: Type[Message], doc: str) -> property:
    def get(self: Message) -> Message:
        return cls._view(self._a[name])

    def set(self: Message, value: Message) -> None:
        if not isinstance(value, cls):
            raise TypeError(f"{name} must be a {cls.__name__}")
        self._a[name] = value._a

    return property(get, set, doc=doc)


MESSAGE_TYPES: Dict[str, Type[Message]] = {}
"""Every message class by Rust type name (``"CmdVel"``)."""

_BY_SCHEMA: Dict[str, Type[Message]] = {}


def message_type(schema_name: str) -> Type[Message]:
    """The message class whose schema is called ``schema_name``."""
    try:
        return _BY_SCHEMA[schema_name]
    except KeyError:
        raise ValueError(f"no message type has the schema name {schema_name!r}") from None


def _dtype_of(ty: str) -> np.dtype[Any]:
    ty = "".join(ty.split())
    arr = _split_array(ty)
    if arr is not None:
        inner, n = arr
        return np.dtype((_dtype_of(inner), (n,)))
    if ty in _SCALARS:
        return np.dtype(_SCALARS[ty])
    if ty in MESSAGE_TYPES:
        return MESSAGE_TYPES[ty].DTYPE
    raise TypeError(f"unsupported field type {ty!r}")


def _build(schema: _horus.SchemaInfo, mixins: Dict[str, type]) -> Type[Message]:
    names: List[str] = []
    formats: List[Any] = []
    offsets: List[int] = []
    ns: Dict[str, Any] = {}
    base = mixins.get(schema.type_name, Message)
    for f in schema.fields:
        if hasattr(base, f.name) and not isinstance(getattr(base, f.name, None), property):
            raise TypeError(f"{schema.name}: field {f.name!r} collides with a Message attribute")
        dt = _dtype_of(f.ty)
        if dt.itemsize != f.size:
            raise TypeError(f"{schema.name}.{f.name}: {f.ty} is {f.size} B in Rust, {dt.itemsize} B here")
        names.append(f.name)
        formats.append(dt)
        offsets.append(f.offset)
        doc = f"``{f.ty}`` at byte {f.offset}."
        ty = "".join(f.ty.split())
        if ty in MESSAGE_TYPES:
            ns[f.name] = _nested_property(f.name, MESSAGE_TYPES[ty], doc)
        elif dt.subdtype is not None:
            ns[f.name] = _array_property(f.name, doc)
            if dt.subdtype[0] == np.uint8:
                ns[f.name + "_str"] = _str_property(f.name)
        else:
            ns[f.name] = _scalar_property(f.name, doc)
    dtype = np.dtype({"names": names, "formats": formats, "offsets": offsets, "itemsize": schema.size})
    if layout_hash(schema) != schema.layout_hash:
        raise TypeError(f"{schema}: the field table does not reproduce the layout hash")
    ns.update(
        __slots__=(),
        __doc__=f"``{schema}``: generated from the Rust definition.",
        __module__="horus",
        SCHEMA=schema,
        DTYPE=dtype,
        HAS_TAIL=schema.has_tail,
        _FIELD_NAMES=tuple(names),
    )
    cls = type(schema.type_name, (base,), ns)
    for ty_name, const, value in _horus.message_constants():
        if ty_name == schema.type_name:
            setattr(cls, const, value)
    return cls


# --- behaviour of the messages with a tail -------------------------------

_ENCODINGS = {code: (name, bpp) for code, name, bpp in _horus.image_encodings()}
_ENCODING_DTYPE = {"mono16": "<u2", "32FC1": "<f4"}
_ENCODING_CHANNELS = {"mono8": 1, "mono16": 1, "32FC1": 1, "rgb8": 3, "bgr8": 3, "rgba8": 4, "bgra8": 4, "yuyv": 2}


class _PointCloudBase(Message):
    """Points follow the header in the tail: ``point_step`` 12 (x, y, z) or
    16 (x, y, z, intensity), little-endian ``f32``."""

    __slots__ = ()
    num_points: int
    point_step: int

    def tail_len(self) -> int:
        return int(self.num_points) * int(self.point_step)

    @property
    def points(self) -> npt.NDArray[np.float32]:
        """``(num_points, 3)`` or ``(num_points, 4)`` ``float32`` view of the
        tail (no copy). Validated against the header like Rust's
        ``PointCloud::points``."""
        step = int(self.point_step)
        if step not in (12, 16):
            raise ValueError(f"point_step is {step}, expected 12 or 16")
        n = int(self.num_points)
        tail = self._tail if self._tail is not None else np.zeros(0, np.uint8)
        if len(tail) < n * step:
            raise ValueError(f"point cloud tail is {len(tail)} bytes, needs {n * step}")
        return tail[: n * step].view("<f4").reshape(n, step // 4)

    @classmethod
    def from_points(cls: Type[M], points: npt.ArrayLike, **fields: Any) -> M:
        """A cloud owning a copy of ``points`` (``(n, 3)`` or ``(n, 4)``)."""
        pts = np.ascontiguousarray(points, dtype="<f4")
        if pts.ndim != 2 or pts.shape[1] not in (3, 4):
            raise ValueError(f"points must be (n, 3) or (n, 4), not {pts.shape}")
        m = cls(num_points=pts.shape[0], point_step=4 * pts.shape[1], **fields)
        m._tail = pts.reshape(-1).view(np.uint8)
        return m


class _ImageBase(Message):
    """Pixel rows follow the header in the tail: ``height`` rows of ``step``
    bytes, each starting with ``width * bytes_per_pixel`` pixel bytes."""

    __slots__ = ()
    width: int
    height: int
    step: int
    encoding: int

    def tail_len(self) -> int:
        return int(self.step) * int(self.height)

    @property
    def encoding_name(self) -> str:
        """``rgb8``, ``mono16`` …"""
        enc = _ENCODINGS.get(int(self.encoding))
        if enc is None:
            raise ValueError(f"unknown image encoding {int(self.encoding)}")
        return enc[0]

    @property
    def pixels(self) -> npt.NDArray[Any]:
        """``(height, width)`` or ``(height, width, channels)`` view of the
        tail (no copy; row padding skipped through strides)."""
        name = self.encoding_name
        bpp = _ENCODINGS[int(self.encoding)][1]
        h, w, step = int(self.height), int(self.width), int(self.step)
        if step < w * bpp:
            raise ValueError(f"image step {step} is smaller than a row of pixels ({w * bpp})")
        tail = self._tail if self._tail is not None else np.zeros(0, np.uint8)
        if len(tail) < step * h:
            raise ValueError(f"image tail is {len(tail)} bytes, needs {step * h}")
        dt = np.dtype(_ENCODING_DTYPE.get(name, "u1"))
        ch = _ENCODING_CHANNELS[name]
        rows = tail[: step * h].reshape(h, step)[:, : w * bpp]
        px = rows.view(dt) if dt.itemsize > 1 else rows
        if ch == 1:
            return px
        return px.reshape(h, w, ch)

    @classmethod
    def from_pixels(cls: Type[M], pixels: npt.ArrayLike, encoding: int, **fields: Any) -> M:
        """An image owning a copy of ``pixels`` (``(h, w)`` or ``(h, w, c)``)."""
        enc = _ENCODINGS.get(int(encoding))
        if enc is None:
            raise ValueError(f"unknown image encoding {encoding}")
        name, bpp = enc
        px = np.ascontiguousarray(pixels, dtype=_ENCODING_DTYPE.get(name, "u1"))
        if px.ndim not in (2, 3):
            raise ValueError(f"pixels must be (h, w) or (h, w, c), not {px.shape}")
        h, w = px.shape[:2]
        if px.nbytes != h * w * bpp:
            raise ValueError(f"{px.shape} {px.dtype} is not {name} ({bpp} B per pixel)")
        m = cls(width=w, height=h, step=w * bpp, encoding=encoding, **fields)
        m._tail = px.reshape(-1).view(np.uint8)
        return m


def _build_all() -> None:
    mixins: Dict[str, type] = {"PointCloud": _PointCloudBase, "Image": _ImageBase}
    for schema in _horus.message_schemas():
        cls = _build(schema, mixins)
        MESSAGE_TYPES[schema.type_name] = cls
        _BY_SCHEMA[schema.name] = cls


_build_all()


def iter_types() -> Iterator[Type[Message]]:
    """Every message class."""
    return iter(MESSAGE_TYPES.values())
