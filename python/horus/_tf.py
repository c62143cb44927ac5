"""Transforms (tf), as tf2_ros gives them, from the host's shared transform buffer::

    import horus.tf as tf

    with tf.StaticTransformBroadcaster() as statics:
        statics.send_transform("base_link", "laser", (0.1, 0.0, 0.2), (0.0, 0.0, 0.0, 1.0))
        with tf.Buffer() as buffer:
            t = buffer.lookup_transform("base_link", "laser", timeout=1.0)
            t.translation          # (0.1, 0.0, 0.2)
            t.rotation             # (qx, qy, qz, qw)
            buffer.lookup_transform("base_link", "laser", numpy=True).translation  # ndarray

``Buffer`` reads the host's one buffer in shared memory, filled from ``tf`` and
``tf_static`` by a single process of the host (whichever ``Buffer`` came first; the others
take over when it exits), so a lookup costs no subscription and no decoding of its own.
``Buffer(per_process=True)`` is tf2's way: its own subscription and its own copy.

Times are nanoseconds (``int``) or seconds (``float``) since the epoch, as in message
stamps; ``0`` asks for the latest time every transform of the chain has (tf2's
``Time(0)``). Errors subclass ``LookupError`` (``FrameNotFoundError``,
``ConnectivityError``, ``ExtrapolationError``, ``TransformLoopError``), a timeout is also a
``TimeoutError`` (``TransformTimeoutError``), and a transform tf refuses to broadcast is a
``ValueError`` (``InvalidTransformError``).
"""

from __future__ import annotations

import time as _time
from types import TracebackType
from typing import Any, Iterable, NamedTuple, Optional, Sequence, Tuple, Type, Union

from . import _horus
from ._errors import (
    ConnectivityError,
    ExtrapolationError,
    FrameNotFoundError,
    InvalidTransformError,
    TransformError,
    TransformLoopError,
    TransformTimeoutError,
)

__all__ = [
    "Buffer",
    "ConnectivityError",
    "ExtrapolationError",
    "FrameNotFoundError",
    "InvalidTransformError",
    "StampedTransform",
    "StaticTransformBroadcaster",
    "TransformBroadcaster",
    "TransformError",
    "TransformLoopError",
    "TransformTimeoutError",
    "LATEST",
]

#: The time argument that asks for the latest common time of the chain.
LATEST = 0

Time = Union[int, float]
Vector3 = Tuple[float, float, float]
Quaternion = Tuple[float, float, float, float]


def _ns(t: Time) -> int:
    if isinstance(t, float):
        return round(t * 1e9)
    return int(t)


class StampedTransform(NamedTuple):
    """A looked-up transform: maps ``source`` coordinates into ``target``."""

    translation: Any
    """``(x, y, z)`` in metres (a NumPy array with ``numpy=True``)."""
    rotation: Any
    """Quaternion ``(x, y, z, w)`` (a NumPy array with ``numpy=True``)."""
    stamp_ns: int
    """The time it holds at, ns since the epoch."""


class Buffer:
    """Transform lookups with tf2's semantics (interpolation, extrapolation errors) from
    the host's shared buffer, or with ``per_process=True`` from a buffer of this process
    fed by its own subscription."""

    def __init__(self, *, namespace: Optional[str] = None, per_process: bool = False) -> None:
        self._native = _horus.TfBuffer(namespace, per_process)

    def lookup_transform(
        self,
        target: str,
        source: str,
        time: Time = LATEST,
        *,
        timeout: Optional[float] = None,
        numpy: bool = False,
    ) -> StampedTransform:
        """The transform that maps ``source`` coordinates into ``target`` at ``time``;
        with ``timeout`` (seconds) waits for it. Tuples, or NumPy arrays with ``numpy``."""
        if timeout is None:
            t, q, stamp = self._native.lookup(target, source, _ns(time))
        else:
            t, q, stamp = self._native.wait(target, source, _ns(time), timeout)
        if numpy:
            import numpy as np

            return StampedTransform(np.array(t), np.array(q), stamp)
        return StampedTransform(t, q, stamp)

    def lookup(self, target: str, source: str, time_ns: int = LATEST) -> Tuple[Vector3, Quaternion, int]:
        """The fastest lookup: ``((x, y, z), (qx, qy, qz, qw), stamp_ns)``, time in ns."""
        return self._native.lookup(target, source, time_ns)

    def can_transform(self, target: str, source: str, time: Time = LATEST) -> bool:
        """Whether ``lookup_transform`` would succeed now."""
        return self._native.can_transform(target, source, _ns(time))

    def wait_for_transform(
        self, target: str, source: str, time: Time = LATEST, timeout: float = 1.0
    ) -> StampedTransform:
        """``lookup_transform`` once it succeeds, within ``timeout`` seconds."""
        return self.lookup_transform(target, source, time, timeout=timeout)

    @property
    def is_shared(self) -> bool:
        """Whether this is the host's shared buffer."""
        return self._native.is_shared

    def frames(self) -> list[str]:
        """Frame ids in the buffer."""
        return self._native.frames()

    def close(self) -> None:
        """Stops feeding and leaves the buffer (idempotent)."""
        self._native.close()

    def __enter__(self) -> "Buffer":
        return self

    def __exit__(
        self,
        exc_type: Optional[Type[BaseException]],
        exc: Optional[BaseException],
        tb: Optional[TracebackType],
    ) -> None:
        self.close()


_TransformArg = Tuple[str, str, int, Vector3, Quaternion]


def _arg(
    parent: str, child: str, translation: Sequence[float], rotation: Sequence[float], stamp: Optional[Time]
) -> _TransformArg:
    x, y, z = (float(v) for v in translation)
    qx, qy, qz, qw = (float(v) for v in rotation)
    ns = _time.time_ns() if stamp is None else _ns(stamp)
    return (parent, child, ns, (x, y, z), (qx, qy, qz, qw))


def _from_message(t: Any) -> _TransformArg:
    """A ``geometry_msgs/TransformStamped`` (``horus.interfaces`` class) as an argument."""
    tr, q, st = t.transform.translation, t.transform.rotation, t.header.stamp
    return (
        t.header.frame_id,
        t.child_frame_id,
        int(st.sec) * 1_000_000_000 + int(st.nanosec),
        (tr.x, tr.y, tr.z),
        (q.x, q.y, q.z, q.w),
    )


class TransformBroadcaster:
    """Publishes transforms on ``tf`` (tf2_ros's ``TransformBroadcaster``)."""

    _static = False

    def __init__(self, *, namespace: Optional[str] = None) -> None:
        self._native = _horus.TfBroadcaster(namespace, self._static)

    def send_transform(
        self,
        parent: str,
        child: str,
        translation: Sequence[float],
        rotation: Sequence[float] = (0.0, 0.0, 0.0, 1.0),
        stamp: Optional[Time] = None,
    ) -> None:
        """Publishes the transform of ``child`` in ``parent``: ``translation`` (x, y, z)
        and ``rotation`` (quaternion x, y, z, w) at ``stamp`` (default: now)."""
        self._native.send([_arg(parent, child, translation, rotation, stamp)])

    def send_transforms(self, transforms: Iterable[Any]) -> None:
        """Publishes several in one message: ``geometry_msgs/TransformStamped`` objects
        (``horus.interfaces``) or ``(parent, child, translation, rotation, stamp)``
        tuples."""
        args = [
            _arg(*t) if isinstance(t, tuple) else _from_message(t) for t in transforms
        ]
        self._native.send(args)

    @property
    def subscribers(self) -> int:
        """Processes reading ``tf`` now (0 for a static broadcaster).
        ``ClosedError`` after ``close()``."""
        return self._native.subscribers()

    def close(self) -> None:
        """Leaves the topic (idempotent); any use after raises ``ClosedError``."""
        self._native.close()

    def __enter__(self) -> "TransformBroadcaster":
        return self

    def __exit__(
        self,
        exc_type: Optional[Type[BaseException]],
        exc: Optional[BaseException],
        tb: Optional[TracebackType],
    ) -> None:
        self.close()


class StaticTransformBroadcaster(TransformBroadcaster):
    """Publishes static transforms on ``tf_static`` (latched: processes that join later
    receive them while this broadcaster is open). It keeps every transform it was given,
    one per child frame, and each call publishes the whole set."""

    _static = True
