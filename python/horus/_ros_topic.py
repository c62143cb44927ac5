"""Topics carrying ROS 2 types (``horus.interfaces`` classes), byte-compatible with ROS 2
and meeting Rust ``Topic<Ros<M>>`` endpoints on the same shared-memory topic::

    from horus.interfaces.sensor_msgs.msg import LaserScan

    topic = horus.RosTopic(LaserScan, "scan")      # also: horus.Topic(LaserScan, "scan")
    pub = topic.publisher()
    pub.send(LaserScan(ranges=np.ones(360, np.float32)))
    scan = topic.subscriber().recv(timeout=1.0)     # scan.ranges: read-only NumPy view

    with pub.loan(LaserScan(range_max=10.0), ranges=360) as scan:   # zero-copy send
        scan.ranges[:] = distances                  # writable view in shared memory
"""

from __future__ import annotations

from types import TracebackType
from typing import TYPE_CHECKING, Generic, Optional, Tuple, Type, TypeVar, Union

from . import _horus
from ._closing import Closable
from ._errors import LoanViewsAliveError
from ._topic import DEFAULT_SPIN, Durability, Overflow, Start, _start

if TYPE_CHECKING:
    from .interfaces._base import RosMessage

__all__ = ["RosTopic", "RosPublisher", "RosLoan", "RosSubscriber"]

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
    """Publishes messages of one ROS 2 type. ``send`` encodes each in Rust straight
    into the pieces of its chunk: large primitive arrays (``PointCloud2.data``,
    ``Image.data``) are copied once, from the NumPy array into shared memory.
    ``loan`` hands those arrays out as writable views of the chunk instead, filled in
    place and sent without any copy."""

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

    def loan(self, msg: Optional[R] = None, /, **lengths: int) -> "RosLoan[R]":
        """Loans shared memory for one message written in place (zero-copy).

        ``msg`` (default: a message with every field at its default) is copied
        (shallowly) and encoded into a loaned chunk; each field named in ``lengths`` —
        a primitive array of the type, e.g. ``data=1 << 20`` for ``PointCloud2`` /
        ``Image``, ``ranges=1080`` for ``LaserScan`` — becomes a writable NumPy view of
        that many elements in the chunk. Fill them in place (``cloud.data[:] = …``,
        ``np.copyto``, a camera driver writing into ``img.data``), then ``send()``: the
        arrays are not copied again. They start with whatever the chunk held (as
        ``numpy.empty``): write every element. The other fields may still be changed
        before the send (they are encoded then). As a context manager it sends on
        success and gives the chunk back on error::

            with pub.loan(PointCloud2(header=h, fields=f, point_step=16, width=n,
                                      height=1, row_step=16 * n), data=16 * n) as cloud:
                cloud.data.view(np.float32)[:] = xyzi.reshape(-1)

        Raises ``TypeError`` for a field the type does not have, ``ValueError`` for
        one that cannot be loaned (not an array of numbers or bytes, or a ``bool``
        array), ``CdrEncodeError`` (a bound, a fixed length, a string: nothing
        loaned), ``LoanError`` when a loan is outstanding or the message exceeds the
        topic's ``max_tail_bytes``, ``PoolExhaustedError``. Views of the loan must be
        gone before ``send()``: see ``RosLoan``."""
        if msg is None:
            msg = self.msg_type()
        elif type(msg) is not self.msg_type:
            raise TypeError(f"expected {self.msg_type.__name__}, got {type(msg).__name__}")
        copy: R = object.__new__(self.msg_type)
        for f, _ in self.msg_type._FIELDS:
            setattr(copy, f, getattr(msg, f))
        native = self._native.loan(self._types, copy, list(lengths.items()))
        return RosLoan(native, self._types, copy)

    @property
    def topic(self) -> str:
        """Topic name."""
        return self._native.topic


class RosLoan(Generic[R]):
    """A ROS 2 message being written in place in shared memory (``RosPublisher.loan``).

    ``msg`` is the message; its loaned fields are writable NumPy views of the chunk.
    ``send()`` encodes ``msg`` into the chunk as it is then (changed fields included),
    the loaned arrays staying where they are, and publishes it.

    Once sent, the chunk belongs to the subscribers (who read it in place); once
    given back, to the pool, which reuses it. So no view of it may outlive the loan:
    ``send()`` / ``discard()`` raise ``LoanViewsAliveError`` while a NumPy array or
    memoryview of it is alive other than ``msg``'s own loaned fields — e.g.
    ``d = msg.data`` or a slice or reshape of it kept in a variable, or put in another
    field: ``del`` it first (the loan stays outstanding meanwhile). Writing in one
    statement (``msg.data[:] = x``) keeps no view. After ``send()`` / ``discard()``
    the loaned fields are empty read-only arrays (the data went with the message),
    and no new view of the chunk can be made. A loan freed unsent gives its chunk
    back, as does closing the publisher."""

    __slots__ = ("_native", "_types", "msg")

    def __init__(self, native: _horus.RosLoan, types: _horus.RosTypes, msg: R) -> None:
        self._native = native
        self._types = types
        self.msg: R = msg
        """The message: its loaned fields are writable views of the chunk until the loan
        is sent or given back."""

    @property
    def active(self) -> bool:
        """Not yet sent nor given back (and the publisher open)."""
        return self._native.active

    @property
    def views(self) -> int:
        """Views of the loaned chunk alive now (``msg``'s loaned fields included)."""
        return self._native.views

    @property
    def fields(self) -> Tuple[Tuple[str, int, int], ...]:
        """The loaned fields: (attribute, offset of the elements in the CDR body, count)."""
        return tuple(self._native.fields)

    def send(self) -> int:
        """Publishes the message; returns the subscribers reached. Raises
        ``LoanViewsAliveError`` while other views of the chunk are alive,
        ``CdrEncodeError`` for a field changed to something the type does not allow,
        ``LoanError`` (it grew past ``max_tail_bytes``, or the loan is over) and the
        ``SendError`` when it is refused; the loan then stays outstanding and ``msg``'s
        loaned fields writable."""
        return self._native.send(self._types, self.msg)

    def discard(self) -> None:
        """Gives the chunk back unsent (nothing if already sent or given back). Raises
        ``LoanViewsAliveError`` while other views of it are alive; the loan then stays
        outstanding."""
        self._native.discard(self._types, self.msg)

    def _discard_quietly(self) -> None:
        """Gives the chunk back; if views of it are still alive, leaves it to be given
        back when they and the loan are freed. Never masks the exception in flight."""
        try:
            self._native.discard(self._types, self.msg)
        except LoanViewsAliveError:
            pass

    def __enter__(self) -> R:
        return self.msg

    def __exit__(
        self,
        exc_type: Optional[Type[BaseException]],
        exc: Optional[BaseException],
        tb: Optional[TracebackType],
    ) -> None:
        if exc_type is None and self._native.active:
            try:
                self._native.send(self._types, self.msg)
            except BaseException:
                self._discard_quietly()  # never leave the publisher blocked by a loan
                raise
        else:
            self._discard_quietly()

    def __repr__(self) -> str:
        state = "active" if self.active else "over"
        return f"RosLoan({type(self.msg).__name__}, {state}, fields={self.fields!r})"


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
