"""``close()`` and the context manager every endpoint class shares.

An endpoint (topic, publisher, subscriber, service, client, server, action
client or server, parameter server or client, tensor pool) holds places in
shared memory. ``close()`` releases them at once, never later when the
garbage collector gets to the object; any use after it raises
``ClosedError`` (a ``ValueError``, as for a closed file); a second
``close()`` does nothing. ``with`` closes on leaving the block::

    with horus.Topic(horus.CmdVel, "cmd_vel") as topic, topic.publisher() as pub:
        pub.send(horus.CmdVel(linear=0.5))
"""

from __future__ import annotations

from types import TracebackType
from typing import Any, Optional, Type, TypeVar, cast

__all__ = ["Closable"]

C = TypeVar("C", bound="Closable")


class Closable:
    """Mixin: ``close()``, ``closed`` and ``with`` over a native endpoint in
    ``self._native``."""

    __slots__ = ()

    def close(self) -> None:
        """Releases the endpoint's shared-memory places now; any use after
        raises ``ClosedError``. Idempotent."""
        cast(Any, self)._native.close()

    @property
    def closed(self) -> bool:
        """Whether ``close()`` was called."""
        closed: bool = cast(Any, self)._native.closed
        return closed

    def __enter__(self: C) -> C:
        return self

    def __exit__(
        self,
        exc_type: Optional[Type[BaseException]],
        exc: Optional[BaseException],
        tb: Optional[TracebackType],
    ) -> None:
        self.close()
