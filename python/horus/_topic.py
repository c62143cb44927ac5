"""Topics, publishers and subscribers over the native endpoints."""

from __future__ import annotations

import enum
import sys
from dataclasses import dataclass
from types import TracebackType
from typing import Any, ClassVar, Generic, Iterator, Optional, Tuple, Type, TypeVar, Union, cast

import numpy as np
import numpy.typing as npt

from . import _horus
from ._closing import Closable
from ._errors import LoanViewsAliveError
from ._messages import Message

__all__ = [
    "Durability",
    "DurabilityKind",
    "Overflow",
    "OverflowKind",
    "Start",
    "Topic",
    "Publisher",
    "Subscriber",
    "Loan",
]

M = TypeVar("M", bound=Message)

DEFAULT_SPIN = 1000
"""Polls a blocking ``recv`` makes before sleeping. Larger than the Rust
default (64): a Python peer takes microseconds to answer, and a reply that
arrives while we spin costs no futex wake-up (tens of µs)."""


class OverflowKind(str, enum.Enum):
    """The kinds of ``Overflow``. A ``str`` enum: each member equals the
    string the API took before (``OverflowKind.REJECT == "reject"``), and
    ``Overflow("reject")`` still works."""

    DROP_OLDEST = "drop_oldest"
    REJECT = "reject"
    BLOCK = "block"


@dataclass(frozen=True)
class Overflow:
    """What a publisher does when a subscriber has not read the oldest
    message of the history. A property of the topic: every endpoint agrees
    on it, and adding a subscriber never changes it.

    * ``Overflow.DROP_OLDEST`` — overwrite the oldest (sensors); lapped
      subscribers count the loss as ``overrun``.
    * ``Overflow.REJECT`` — ``send`` raises ``HistoryFullError``.
    * ``Overflow.block(timeout)`` — wait up to ``timeout`` s for room, then
      raise ``SendTimeoutError``.

    ``kind`` is an ``OverflowKind`` (a string given is converted; an unknown
    one is a ``ValueError``); ``timeout`` is set for ``BLOCK`` only.
    """

    kind: OverflowKind
    timeout: Optional[float] = None

    DROP_OLDEST: ClassVar["Overflow"]
    REJECT: ClassVar["Overflow"]

    def __post_init__(self) -> None:
        try:
            kind = OverflowKind(self.kind)
        except ValueError:
            kinds = ", ".join(repr(k.value) for k in OverflowKind)
            raise ValueError(f"overflow kind must be one of {kinds}, not {self.kind!r}") from None
        object.__setattr__(self, "kind", kind)

    @classmethod
    def block(cls, timeout: float = 1.0) -> "Overflow":
        """Wait up to ``timeout`` seconds per send."""
        return cls(OverflowKind.BLOCK, float(timeout))


Overflow.DROP_OLDEST = Overflow(OverflowKind.DROP_OLDEST)
Overflow.REJECT = Overflow(OverflowKind.REJECT)


class DurabilityKind(str, enum.Enum):
    """The kinds of ``Durability`` (a ``str`` enum: ``DurabilityKind.VOLATILE
    == "volatile"``, as ``Durability.kind`` returned before)."""

    VOLATILE = "volatile"
    TRANSIENT_LOCAL = "transient_local"


@dataclass(frozen=True)
class Durability:
    """Whether a subscriber that joins late gets messages published before it
    joined (ROS 2's durability). A property of the topic, like ``Overflow``:
    an explicit one must match the topic's (else ``QosMismatchError``).

    * ``Durability.VOLATILE`` — a subscriber starts at the next message.
    * ``Durability.transient_local(depth)`` — "latched": each publisher keeps
      its last ``depth`` messages (1..the topic's depth) and a subscriber that
      joins gets them first, then the live stream, with no gap and no
      duplicate. A publisher's history ends when it exits (or dies).
    """

    depth: int = 0

    VOLATILE: ClassVar["Durability"]

    @classmethod
    def transient_local(cls, depth: int = 1) -> "Durability":
        """Keep the last ``depth`` messages of each publisher for late joiners."""
        if depth < 1:
            raise ValueError(f"a transient-local history keeps at least 1 message, not {depth}")
        return cls(int(depth))

    @property
    def kind(self) -> DurabilityKind:
        """``DurabilityKind.VOLATILE`` or ``DurabilityKind.TRANSIENT_LOCAL``."""
        return DurabilityKind.VOLATILE if self.depth == 0 else DurabilityKind.TRANSIENT_LOCAL


Durability.VOLATILE = Durability(0)


class Start(str, enum.Enum):
    """Where a new subscriber starts reading (``start=`` of ``subscriber`` and
    ``observer``). A ``str`` enum: the strings taken before (``"next"``, ...)
    are still accepted.

    * ``Start.DURABILITY`` — the topic's durability decides (the default).
    * ``Start.NEXT`` — skip any latched history.
    * ``Start.OLDEST`` — the oldest message each publisher's ring still holds,
      whatever the durability.
    """

    DURABILITY = "durability"
    NEXT = "next"
    OLDEST = "oldest"


def _start(start: Union[Start, str]) -> str:
    try:
        return Start(start).value
    except ValueError:
        starts = ", ".join(repr(k.value) for k in Start)
        raise ValueError(f"start must be one of {starts}, not {start!r}") from None


class Topic(Closable, Generic[M]):
    """A typed topic: a name, a message type and the QoS every endpoint on
    it shares. Opens the topic, creating it if it does not exist; settings
    left as None adopt the existing topic's (explicit ones must match it,
    else ``QosMismatchError``). Opening it with another message type than
    it carries raises ``SchemaMismatchError`` naming both schemas.
    """

    def __new__(cls, msg_type: Any, *args: Any, **kwargs: Any) -> Any:
        # A ROS 2 type (a horus.interfaces class) travels as CDR: RosTopic.
        base = sys.modules.get("horus.interfaces._base")
        if (
            cls is Topic
            and base is not None
            and isinstance(msg_type, type)
            and issubclass(msg_type, base.RosMessage)
        ):
            from ._ros_topic import RosTopic

            return RosTopic(msg_type, *args, **kwargs)
        return super().__new__(cls)

    def __init__(
        self,
        msg_type: Type[M],
        name: str,
        *,
        depth: Optional[int] = None,
        overflow: Optional[Overflow] = None,
        max_publishers: Optional[int] = None,
        max_subscribers: Optional[int] = None,
        max_tail_bytes: Optional[int] = None,
        loan_pool: Optional[int] = None,
        namespace: Optional[str] = None,
        durability: Optional[Durability] = None,
    ) -> None:
        if not (isinstance(msg_type, type) and issubclass(msg_type, Message)):
            raise TypeError(f"msg_type must be a horus message class, not {msg_type!r}")
        self.msg_type: Type[M] = msg_type
        self._native = _horus.Topic(
            msg_type.SCHEMA.name,
            name,
            depth=depth,
            overflow=None if overflow is None else overflow.kind.value,
            block_timeout=None if overflow is None else overflow.timeout,
            max_publishers=max_publishers,
            max_subscribers=max_subscribers,
            max_tail_bytes=max_tail_bytes,
            loan_pool=loan_pool,
            namespace=namespace,
            durability=None if durability is None else durability.depth,
        )

    @property
    def name(self) -> str:
        """Topic name."""
        return self._native.name

    @property
    def overflow(self) -> Overflow:
        """The overflow policy in force."""
        return Overflow(OverflowKind(self._native.overflow), self._native.block_timeout)

    @property
    def durability(self) -> Durability:
        """The durability in force."""
        return Durability(self._native.durability)

    def publisher(self) -> "Publisher[M]":
        """A publisher (one per thread)."""
        return Publisher(self.msg_type, self._native.publisher())

    def subscriber(
        self, *, busy_poll: bool = False, spin: int = DEFAULT_SPIN, start: Union[Start, str] = Start.DURABILITY
    ) -> "Subscriber[M]":
        """A subscriber. It sees every message published after it was
        created and, on a transient-local topic, first the latched history.
        ``busy_poll=True`` spins while waiting (lowest latency, one
        core busy); otherwise ``recv`` polls ``spin`` times (some tens of µs)
        and then sleeps on a futex in shared memory (no CPU while idle).
        ``spin=0`` sleeps at once. ``start``: ``"durability"`` (the topic's
        durability decides), ``"next"`` (skip any latched history) or
        ``"oldest"`` (the oldest message each publisher's ring still holds,
        whatever the durability)."""
        return Subscriber(
            self.msg_type,
            self._native.subscriber(busy_poll=busy_poll, spin=spin, start=_start(start)),
        )

    def observer(
        self, *, busy_poll: bool = False, spin: int = DEFAULT_SPIN, start: Union[Start, str] = Start.DURABILITY
    ) -> "Subscriber[M]":
        """An observer: a subscriber for tools (echo, rate meters, recorders).
        It reads the same messages, but a ``Reject``/``Block`` publisher never
        waits for it or refuses a message because of it, and publishers do
        not count it as a subscriber. What it misses because it fell behind
        it counts as its own ``overrun``. Attaching one changes nothing the
        other endpoints observe. ``start`` as for ``subscriber`` (a recorder
        joining late asks for ``"oldest"``)."""
        return Subscriber(
            self.msg_type,
            self._native.subscriber(
                busy_poll=busy_poll, spin=spin, observer=True, start=_start(start)
            ),
        )

    def stats(self) -> _horus.TopicStats:
        """Counters of every endpoint of the topic, in every process."""
        return self._native.stats()

    def __repr__(self) -> str:
        return f"Topic({self.msg_type.__name__}, {self.name!r}, overflow={self.overflow})"


class Publisher(Closable, Generic[M]):
    """Publishes messages of one type. Every failed send raises a
    ``SendError`` subclass, or ``SegmentLostError`` once another process
    truncated the topic's shared memory; a send that returns has published
    the message."""

    __slots__ = ("msg_type", "_native", "_send")

    def __init__(self, msg_type: Type[M], native: _horus.Publisher) -> None:
        self.msg_type = msg_type
        self._native = native
        self._send = native.send

    def send(self, msg: M, tail: Any = None) -> int:
        """Publishes ``msg`` by copy (and its tail: ``tail``, else the
        message's own, e.g. from ``PointCloud.from_points``). Returns the
        number of subscribers reached (0: nobody listened; counted as
        undelivered). Raises ``HistoryFullError`` / ``SendTimeoutError`` /
        ``PoolExhaustedError`` when the message was not published, and
        ``SegmentLostError`` when the topic's shared memory was truncated
        (open the topic again). A tail shorter than the header describes
        (``msg.tail_len()``) is a ``ValueError``, and nothing is sent."""
        if type(msg) is not self.msg_type:
            raise TypeError(f"expected {self.msg_type.__name__}, got {type(msg).__name__}")
        if tail is None:
            tail = msg._tail
        if tail is None:
            if msg.HAS_TAIL and msg.tail_len():
                raise ValueError(
                    f"{type(msg).__name__} header describes {msg.tail_len()} tail bytes but no tail was given"
                )
            return self._send(msg._a)
        tail = np.ascontiguousarray(tail)
        # A receiver reads the header's `tail_len()` bytes of tail (PointCloud's
        # points, Image's rows) and refuses a shorter one: refuse it here, before
        # anything is sent. Bytes past it are allowed (receivers ignore them).
        if msg.HAS_TAIL and tail.nbytes < msg.tail_len():
            raise ValueError(
                f"{type(msg).__name__} header describes {msg.tail_len()} tail bytes "
                f"but the tail has {tail.nbytes}"
            )
        return self._send(msg._a, tail)

    def loan(self, header: M, tail_len: Optional[int] = None) -> "Loan[M]":
        """Loans shared memory for one message, initialised with ``header``
        and a tail of ``tail_len`` bytes (default: what the header describes,
        e.g. ``num_points * point_step``). Write the tail in place through
        ``loan.msg`` (``points``, ``pixels``, ``tail``), then ``send()``.
        As a context manager it sends on success and discards on error.
        Arrays kept from ``loan.msg`` must be gone (``del``) by then: see
        ``Loan``."""
        if type(header) is not self.msg_type:
            raise TypeError(f"expected {self.msg_type.__name__}, got {type(header).__name__}")
        n = header.tail_len() if tail_len is None else tail_len
        if n < header.tail_len():
            raise ValueError(
                f"{type(header).__name__} header describes {header.tail_len()} tail bytes "
                f"but the loan's tail has {n}"
            )
        native = self._native.loan(header._a, n)
        return Loan(native, self.msg_type._view(*_loan_arrays(native, self.msg_type)))

    @property
    def subscribers(self) -> int:
        """Subscribers active now."""
        return self._native.subscribers

    @property
    def max_tail(self) -> int:
        """Largest tail a message may carry (0 for messages without one)."""
        return self._native.max_tail

    @property
    def topic(self) -> str:
        """Topic name."""
        return self._native.topic

    def wait_for_subscribers(self, n: int = 1, timeout: float = 10.0) -> None:
        """Waits until at least ``n`` subscribers are active (raises
        ``TimeoutError`` after ``timeout`` s)."""
        import time

        if not timeout >= 0:  # NaN too; inf waits for ever
            raise ValueError(f"timeout must be a number of seconds >= 0, not {timeout}")
        end = time.monotonic() + timeout
        while self._native.subscribers < n:
            if time.monotonic() > end:
                raise TimeoutError(f"{self.topic}: fewer than {n} subscribers after {timeout} s")
            time.sleep(0.001)

    def check(self) -> None:
        """Raises ``SegmentLostError`` if another process truncated the
        topic's shared memory (this publisher is then dead; open the topic
        again). ``send`` raises it too."""
        self._native.check()

    def stats(self) -> _horus.PublisherStats:
        """This publisher's counters."""
        return self._native.stats()

    def topic_stats(self) -> _horus.TopicStats:
        """Counters of every endpoint of the topic, in every process."""
        return self._native.topic_stats()


_SPENT_TAIL: npt.NDArray[np.uint8] = np.zeros(0, np.uint8)
_SPENT_TAIL.flags.writeable = False


def _loan_arrays(
    native: _horus.Loan, msg_type: Type[Message]
) -> Tuple[npt.NDArray[Any], Optional[npt.NDArray[np.uint8]]]:
    """The header and tail arrays of a loan (each one counted view of it)."""
    buf = cast(memoryview, native)  # exports the buffer protocol
    header = np.frombuffer(buf, msg_type.DTYPE, count=1)
    tail = np.frombuffer(buf, np.uint8, offset=native.tail_offset) if native.tail_len else None
    return header, tail


class Loan(Generic[M]):
    """A message being written in place in shared memory (zero-copy).

    Once sent, the memory belongs to the subscribers (Rust ones read it in
    place); once discarded, to the pool, which recycles it for the next
    loan. So no view of it may outlive the loan. Every NumPy array or
    memoryview made from it counts — ``pts = loan.msg.points``, and every
    slice, reshape or ``np.asarray`` of it — and ``send()`` / ``discard()``
    raise ``LoanViewsAliveError`` while one is alive: ``del`` them first
    (the loan stays outstanding meanwhile). Writing in place in one
    statement (``msg.points[:] = data``) leaves no view behind::

        with pub.loan(horus.PointCloud(num_points=n, point_step=12)) as cloud:
            cloud.points[:] = xyz          # no view kept: sent at the end

    ``send()`` and ``discard()`` end ``msg``'s own views: afterwards it is a
    read-only copy of the header with an empty tail, and writing to it
    raises ``ValueError``. A loan freed unsent is discarded.
    """

    __slots__ = ("_native", "msg")

    def __init__(self, native: _horus.Loan, msg: M) -> None:
        self._native = native
        self.msg: M = msg
        """The message, a writable view of the loaned memory until the
        loan is sent or discarded."""

    @property
    def active(self) -> bool:
        """Not yet sent nor discarded."""
        return self._native.active

    @property
    def views(self) -> int:
        """Views of the loaned memory alive now (``msg``'s own included)."""
        return self._native.views

    def send(self) -> int:
        """Publishes the loan; returns the subscribers reached. Raises
        ``LoanViewsAliveError`` while views of it are alive, and the
        ``SendError`` when it is refused; the loan then stays outstanding
        and ``msg`` writable."""
        self._release_msg()
        try:
            return self._native.send()
        except BaseException:
            self._restore_msg()
            raise

    def discard(self) -> None:
        """Returns the memory to the pool unsent. Raises
        ``LoanViewsAliveError`` while views of it are alive; the loan then
        stays outstanding and ``msg`` writable."""
        self._release_msg()
        try:
            self._native.discard()
        except BaseException:
            self._restore_msg()
            raise

    def _release_msg(self) -> None:
        """Ends ``msg``'s views of the loan: a read-only copy of the header
        and an empty tail take their place."""
        msg = self.msg
        header = msg._a.copy()
        header.flags.writeable = False
        msg._a = header
        if msg._tail is not None:
            msg._tail = _SPENT_TAIL

    def _restore_msg(self) -> None:
        """``msg`` views the loan again, if it is still outstanding."""
        try:
            if not self._native.active:
                return
        except RuntimeError:  # the publisher is busy in another thread
            return
        self.msg._a, self.msg._tail = _loan_arrays(self._native, type(self.msg))

    def _discard_quietly(self) -> None:
        """Discards the loan; if views of it are still alive, leaves it to be
        discarded when it and they are freed. Never masks the exception in
        flight."""
        try:
            self._native.discard()
        except LoanViewsAliveError:
            pass

    def __enter__(self) -> M:
        return self.msg

    def __exit__(
        self,
        exc_type: Optional[Type[BaseException]],
        exc: Optional[BaseException],
        tb: Optional[TracebackType],
    ) -> None:
        self._release_msg()
        if exc_type is None and self._native.active:
            try:
                self._native.send()
            except BaseException:
                self._discard_quietly()  # never leave the publisher blocked by a loan
                raise
        else:
            self._discard_quietly()


class Subscriber(Closable, Generic[M]):
    """Receives messages of one type. Small messages are copied out of the
    ring on receipt; large ones and those with a tail are read-only views
    of shared memory, pinned while the message (or a view of it) lives."""

    __slots__ = ("msg_type", "_native", "_dtype", "_view")

    def __init__(self, msg_type: Type[M], native: _horus.Subscriber) -> None:
        self.msg_type = msg_type
        self._native = native
        self._dtype = msg_type.DTYPE
        self._view = msg_type._view

    def _wrap(self, raw: Any) -> M:
        if type(raw) is bytes:
            return self._view(np.frombuffer(raw, self._dtype, count=1))
        a = np.frombuffer(raw, self._dtype, count=1)
        tail = np.frombuffer(raw, np.uint8, offset=raw.tail_offset) if raw.tail_len else None
        return self._view(a, tail)

    def recv(self, timeout: Optional[float] = None) -> M:
        """The next message, waiting at most ``timeout`` s (None: for ever).
        Releases the GIL while waiting; Ctrl-C interrupts it. Raises
        ``RecvTimeoutError`` on timeout, ``SegmentLostError`` if another
        process truncated the topic's shared memory."""
        return self._wrap(self._native.recv(timeout))

    def try_recv(self) -> Optional[M]:
        """The next message if one is ready, else None. Never blocks. Also
        None once the topic's shared memory was truncated: ``check()`` tells
        that apart."""
        raw = self._native.try_recv()
        return None if raw is None else self._wrap(raw)

    def latest(self) -> Optional[M]:
        """The newest message, skipping (and counting as skipped) older
        ones; None if nothing new was published."""
        raw = self._native.latest()
        return None if raw is None else self._wrap(raw)

    def __iter__(self) -> Iterator[M]:
        """Receives for ever."""
        while True:
            yield self.recv()

    @property
    def publishers(self) -> int:
        """Publishers active now."""
        return self._native.publishers

    @property
    def topic(self) -> str:
        """Topic name."""
        return self._native.topic

    def check(self) -> None:
        """Raises ``SegmentLostError`` if another process truncated the
        topic's shared memory (this subscriber is then dead; open the topic
        again)."""
        self._native.check()

    def stats(self) -> _horus.SubscriberStats:
        """This subscriber's counters."""
        return self._native.stats()

    def topic_stats(self) -> _horus.TopicStats:
        """Counters of every endpoint of the topic, in every process."""
        return self._native.topic_stats()
