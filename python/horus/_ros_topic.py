"""Topics carrying ROS 2 types (``horus.interfaces`` classes), byte-compatible with ROS 2
and meeting Rust ``Topic<Ros<M>>`` endpoints on the same shared-memory topic::

    from horus.interfaces.sensor_msgs.msg import LaserScan

    topic = horus.RosTopic(LaserScan, "scan")      # also: horus.Topic(LaserScan, "scan")
    pub = topic.publisher()
    pub.send(LaserScan(ranges=np.ones(360, np.float32)))
    scan = topic.subscriber().recv(timeout=1.0)     # scan.ranges: read-only NumPy view
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Generic, Optional, Tuple, Type, TypeVar, Union

from . import _horus
from ._closing import Closable
from ._topic import DEFAULT_SPIN, Durability, Overflow, Start, _start

if TYPE_CHECKING:
    from .interfaces._base import RosMessage

__all__ = ["RosTopic", "RosPublisher", "RosSubscriber"]

R = TypeVar("R", bound="RosMessage")


class RosTopic(Closable, Generic[R]):
    """A topic of one ROS 2 type, opened or created. Every message is one shared-memory
    chunk holding the ROS 2 wire bytes (``00 01 00 00`` + CDR body), so Rust's
    ``Topic<Ros<M>>``, recorders and bridges read it as is. Created with the settings
    a Rust ``Topic::<Ros<M>>::open`` uses (largest CDR body ``max_tail_bytes``, default
    1 MiB; ``DROP_OLDEST``) unless given. Opening it with another type raises
    ``SchemaMismatchError``."""

    def __init__(
        self,
        msg_type: Type[R],
        name: str,
        *,
        depth: Optional[int] = None,
        overflow: Optional[Overflow] = None,
        max_tail_bytes: Optional[int] = None,
        namespace: Optional[str] = None,
        durability: Optional[Durability] = None,
    ) -> None:
        from .interfaces import TYPES
        from .interfaces._base import RosMessage

        if not (isinstance(msg_type, type) and issubclass(msg_type, RosMessage)):
            raise TypeError(f"msg_type must be a horus.interfaces class, not {msg_type!r}")
        self.msg_type: Type[R] = msg_type
        self._types = TYPES
        self._native = _horus.RosTopic(
            TYPES,
            msg_type._TYPE,
            name,
            depth=depth,
            overflow=None if overflow is None else overflow.kind.value,
            block_timeout=None if overflow is None else overflow.timeout,
            max_tail_bytes=max_tail_bytes,
            namespace=namespace,
            durability=None if durability is None else durability.depth,
        )

    @property
    def name(self) -> str:
        """Topic name."""
        return self._native.name

    @property
    def type_name(self) -> str:
        """The ROS 2 type name, e.g. ``sensor_msgs/msg/LaserScan``."""
        return self._native.type_name

    def publisher(self) -> "RosPublisher[R]":
        """A publisher (one per thread)."""
        return RosPublisher(self.msg_type, self._types, self._native.publisher())

    @property
    def durability(self) -> Durability:
        """The durability in force (``durability=`` applies when this call creates the
        topic; an explicit one must match an existing topic's, else ``QosMismatchError``)."""
        return Durability(self._native.durability)

    def subscriber(self, *, spin: int = DEFAULT_SPIN, start: Union[Start, str] = Start.DURABILITY) -> "RosSubscriber[R]":
        """A subscriber: sees every message published after it was created and, on a
        transient-local topic, first the latched history. ``recv`` polls ``spin`` times
        (some tens of µs) before it sleeps on a futex, as ``Topic.subscriber``'s (same
        default); ``spin=0`` sleeps at once. ``start`` as for ``Topic.subscriber``."""
        return RosSubscriber(
            self.msg_type, self._types, self._native.subscriber(spin=spin, start=_start(start))
        )

    def observer(self, *, spin: int = DEFAULT_SPIN, start: Union[Start, str] = Start.DURABILITY) -> "RosSubscriber[R]":
        """An observer: reads the same messages, never back-pressures publishers and
        is not counted by them (tools). ``spin`` and ``start`` as for ``subscriber``."""
        return RosSubscriber(
            self.msg_type,
            self._types,
            self._native.subscriber(spin=spin, observer=True, start=_start(start)),
        )

    def __repr__(self) -> str:
        return f"RosTopic({self.msg_type.__name__}, {self.name!r})"


class RosPublisher(Closable, Generic[R]):
    """Publishes messages of one ROS 2 type. Each is encoded in Rust straight into
    the pieces of its chunk: large primitive arrays (``PointCloud2.data``,
    ``Image.data``) are copied once, from the NumPy array into shared memory."""

    __slots__ = ("msg_type", "_types", "_native")

    def __init__(self, msg_type: Type[R], types: _horus.RosTypes, native: _horus.RosPublisher) -> None:
        self.msg_type = msg_type
        self._types = types
        self._native = native

    def send(self, msg: R) -> int:
        """Publishes ``msg``; returns the subscribers reached. Raises
        ``CdrEncodeError`` (naming the field; nothing sent), ``HistoryFullError`` /
        ``SendTimeoutError`` / ``PoolExhaustedError``, or ``LoanError`` when the CDR
        body exceeds the topic's ``max_tail_bytes``."""
        if type(msg) is not self.msg_type:
            raise TypeError(f"expected {self.msg_type.__name__}, got {type(msg).__name__}")
        return self._native.send(self._types, msg)

    @property
    def topic(self) -> str:
        """Topic name."""
        return self._native.topic


class RosSubscriber(Closable, Generic[R]):
    """Receives messages of one ROS 2 type, decoded in Rust: primitive arrays are
    read-only NumPy views into the shared-memory chunk (kept pinned while they live),
    strings ``str``, nested messages objects. A message whose bytes are not a valid
    message of the type raises ``CdrDecodeError`` (it was received: the next call gets
    the next one)."""

    __slots__ = ("msg_type", "_types", "_native", "_type_name")

    def __init__(self, msg_type: Type[R], types: _horus.RosTypes, native: _horus.RosSubscriber) -> None:
        self.msg_type = msg_type
        self._types = types
        self._native = native
        self._type_name = msg_type._TYPE

    def recv(self, timeout: Optional[float] = None) -> R:
        """The next message, waiting at most ``timeout`` s (None: for ever); raises
        ``RecvTimeoutError``."""
        msg: R = self._native.recv_msg(self._types, self._type_name, timeout)
        return msg

    def try_recv(self) -> Optional[R]:
        """The next message if one is ready, else None."""
        msg: Optional[R] = self._native.try_recv_msg(self._types, self._type_name)
        return msg

    def recv_sample(self, timeout: Optional[float] = None) -> _horus.RosSample:
        """The next message undecoded: a read-only buffer of its wire bytes (header
        and CDR body) in place, for recorders and bridges."""
        return self._native.recv(timeout)

    def counts(self) -> Tuple[int, int, int]:
        """(received, overrun, malformed) so far."""
        return self._native.counts()

    @property
    def topic(self) -> str:
        """Topic name."""
        return self._native.topic
