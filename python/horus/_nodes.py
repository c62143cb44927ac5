"""Nodes made of plain functions, and Rust nodes, for ``Scheduler.add``."""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable, Optional, Type

from ._horus import RustNode, TickInfo

if TYPE_CHECKING:
    from ._messages import Message

__all__ = ["FnNode", "RustNode", "rust_relay"]


def rust_relay(
    msg_type: "Type[Message]", src: str, dst: str, *, name: str = "relay", namespace: Optional[str] = None
) -> RustNode:
    """A node written in Rust that republishes every ``msg_type`` message
    of topic ``src`` on topic ``dst`` (tails included). Add it to a
    ``Scheduler`` like a Python node, with the same options: it runs in
    the same scheduler as the Python nodes, ticking without the GIL."""
    return RustNode.relay(msg_type.SCHEMA.name, src, dst, name=name, namespace=namespace)


class FnNode:
    """A node from functions: ``tick(ctx)``, and optionally ``init()``,
    ``shutdown()`` and ``enter_safe_state()``. (A bare function passed to
    ``Scheduler.add`` is used as ``tick``.)"""

    def __init__(
        self,
        name: str,
        tick: Callable[[TickInfo], None],
        *,
        init: Optional[Callable[[], None]] = None,
        shutdown: Optional[Callable[[], None]] = None,
        enter_safe_state: Optional[Callable[[], None]] = None,
    ) -> None:
        self.name = name
        self._tick = tick
        self._init = init
        self._shutdown = shutdown
        self._safe = enter_safe_state

    def init(self) -> None:
        if self._init is not None:
            self._init()

    def tick(self, ctx: TickInfo) -> None:
        self._tick(ctx)

    def shutdown(self) -> None:
        if self._shutdown is not None:
            self._shutdown()

    def enter_safe_state(self) -> None:
        if self._safe is not None:
            self._safe()
