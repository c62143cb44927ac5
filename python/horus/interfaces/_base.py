"""The base class of every generated ROS 2 type, and the helpers generated code uses."""

from __future__ import annotations

from typing import Any, ClassVar, Dict, Optional, Sequence, Tuple, Type, TypeVar, Union

import numpy as np
import numpy.typing as npt

from . import TYPES

__all__ = ["ArrayInput", "RosMessage", "array_field", "register"]

ArrayInput = Union["npt.NDArray[Any]", bytes, bytearray, memoryview, Sequence[float]]
"""What a primitive array field accepts: a NumPy array (any shape: it is flattened; a
byte field takes the raw bytes of any C-contiguous array, e.g. a float32 point array for
``PointCloud2.data``), ``bytes``/``bytearray``/``memoryview``, or a sequence of
numbers."""

T = TypeVar("T", bound="RosMessage")

_BYTE = np.dtype(np.uint8)


def array_field(
    value: Optional[ArrayInput],
    dtype: Any,
    default: Optional[Tuple[Any, ...]],
    fixed: Optional[int],
) -> npt.NDArray[Any]:
    """The NumPy array a primitive array field holds. Arrays of the field's dtype are
    kept as given (no copy); a byte field views any contiguous array or buffer as bytes
    (no copy); other arrays are converted (``astype`` with ``same_kind`` casting) and
    sequences read by NumPy (``np.asarray``: no Python loop)."""
    dt = np.dtype(dtype)
    if value is None:
        if default is not None:
            return np.array(default, dtype=dt)
        return np.zeros(fixed or 0, dtype=dt)
    if isinstance(value, np.ndarray):
        if value.ndim != 1:
            value = value.reshape(-1)
        if value.dtype == dt:
            return value
        if dt == _BYTE and value.flags.c_contiguous:
            return value.view(np.uint8)
        return value.astype(dt, casting="same_kind")
    if dt == _BYTE and isinstance(value, (bytes, bytearray, memoryview)):
        return np.frombuffer(value, dtype=np.uint8)
    return np.asarray(value, dtype=dt)


def _equal(a: Any, b: Any) -> bool:
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return bool(np.array_equal(np.asarray(a), np.asarray(b)))
    return bool(a == b)


class RosMessage:
    """Base class of the ROS 2 types: CDR encoding (``to_cdr``), decoding
    (``from_cdr``), equality field by field, and a ``repr`` naming every field."""

    __slots__ = ()
    _TYPE: ClassVar[str]
    _FIELDS: ClassVar[Tuple[Tuple[str, str], ...]]

    @classmethod
    def ros_type_name(cls) -> str:
        """The ROS 2 type name, e.g. ``sensor_msgs/msg/Image``."""
        return cls._TYPE

    @classmethod
    def ros_type_hash(cls) -> str:
        """The RIHS01 type hash ROS 2 computes for the type."""
        return TYPES.type_hash(cls._TYPE)

    @classmethod
    def ros_definition(cls) -> str:
        """The complete ``ros2msg`` definition text (the type's own, then every type it
        uses), as MCAP and ROS 2 tools store it."""
        return TYPES.definition(cls._TYPE)

    @classmethod
    def get_fields_and_field_types(cls) -> Dict[str, str]:
        """{attribute: ROS type} of every field, in order (as rclpy's classes have it;
        a field named as a Python keyword or as one of these methods has a trailing
        ``_``)."""
        return dict(cls._FIELDS)

    def to_cdr(self) -> bytes:
        """The CDR bytes of this message, as ROS 2 puts them on the wire (the 4-byte
        encapsulation header, then the little-endian body). Raises
        ``CdrEncodeError`` (with ``path`` naming the field) for a field of the wrong
        type, an integer out of range, a bound exceeded, a fixed array of another
        length, or a string containing NUL."""
        return TYPES.encode(self._TYPE, self)

    @classmethod
    def from_cdr(cls: Type[T], data: Any, offset: int = 0) -> T:
        """Reads a message from CDR bytes (any buffer; the header at ``offset``). Its
        primitive arrays are read-only NumPy views into ``data`` (no copy). Raises
        ``CdrDecodeError`` (``path``, ``kind``) for bytes that are not a valid
        message of this type; never reads past ``data``."""
        msg: T = TYPES.decode(cls._TYPE, data, offset)
        return msg

    def __eq__(self, other: object) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        return all(_equal(getattr(self, f), getattr(other, f)) for f, _ in self._FIELDS)

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        fields = ", ".join(f"{f}={getattr(self, f, '<unset>')!r}" for f, _ in self._FIELDS)
        return f"{type(self).__name__}({fields})"


def register(*classes: Type[RosMessage]) -> None:
    """Binds generated classes to their types (decoding makes objects of them)."""
    for cls in classes:
        TYPES.bind(cls._TYPE, cls)
