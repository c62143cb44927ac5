"""Nodes made of plain functions, for ``Scheduler.add``."""

from __future__ import annotations

from typing import Callable, Optional

from ._horus import TickInfo

__all__ = ["FnNode"]


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
