"""Observers from Python: tools that read a topic without back-pressuring it."""

from __future__ import annotations

from typing import List, Tuple

import horus


def _scenario(overflow: horus.Overflow, observe: bool) -> Tuple[List[str], int, int, List[int], int]:
    """A fixed interleaving; with ``observe`` a stalled observer is attached."""
    t = horus.Topic(horus.CmdVel, "scan", depth=4, overflow=overflow)
    tool = t.observer(busy_poll=True) if observe else None
    sub = t.subscriber(busy_poll=True)
    pub = t.publisher()
    outcomes: List[str] = []
    got: List[int] = []
    for seq in range(1, 31):
        try:
            outcomes.append(f"ok {pub.send(horus.CmdVel(stamp_ns=seq))}")
        except horus.SendError as e:
            outcomes.append(type(e).__name__)
        if seq % 3:
            m = sub.try_recv()
            if m is not None:
                got.append(m.stamp_ns)
    ps, ss = pub.stats(), sub.stats()
    tool_total = 0
    if tool is not None:
        while tool.try_recv() is not None:
            pass
        ts = tool.stats()
        tool_total = ts.received + ts.overrun
        assert ts.received == 4
    return outcomes, ps.sent, ss.overrun, got, tool_total


def test_stalled_observer_changes_nothing_under_reject() -> None:
    without = _scenario(horus.Overflow.REJECT, False)
    with_tool = _scenario(horus.Overflow.REJECT, True)
    assert with_tool[:4] == without[:4]
    # Every published message is accounted for at the observer.
    assert with_tool[4] == with_tool[1]


def test_stalled_observer_changes_nothing_under_drop_oldest() -> None:
    without = _scenario(horus.Overflow.DROP_OLDEST, False)
    with_tool = _scenario(horus.Overflow.DROP_OLDEST, True)
    assert with_tool[:4] == without[:4]
    assert with_tool[4] == with_tool[1]


def test_observer_is_not_counted_by_publishers() -> None:
    t = horus.Topic(horus.CmdVel, "count")
    obs = t.observer()
    pub = t.publisher()
    assert pub.send(horus.CmdVel(stamp_ns=1)) == 0
    assert pub.stats().undelivered == 1
    m = obs.recv(timeout=1.0)
    assert m.stamp_ns == 1
    assert all(s["observer"] == 1 for s in t.stats().subscribers)
