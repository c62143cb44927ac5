"""Helpers of the action and parameter tests: nothing of a namespace left in
/dev/shm, and a peer's remaining output."""

from __future__ import annotations

import json
import os
import time
from typing import Any, Dict, List


def leftovers(ns: str, wait: float = 3.0) -> List[str]:
    """Segments of namespace `ns` still in /dev/shm after `wait` seconds at
    most (endpoints of killed peers are reclaimed by the survivors)."""
    deadline = time.monotonic() + wait
    while True:
        left = sorted(f for f in os.listdir("/dev/shm") if f.startswith(f"horus.{ns}."))
        if not left or time.monotonic() > deadline:
            return left
        time.sleep(0.05)


def rest(peer: Any, timeout: float = 30.0) -> List[Dict[str, Any]]:
    """The JSON lines a peer prints until it exits (status 0 required).
    Unlike ``Proc.finish``, reads through the text buffer that ``Proc``'s
    first ``readline`` may already have filled with later lines."""
    out: List[Dict[str, Any]] = []
    while text := peer.p.stdout.readline():
        if text.strip():
            out.append(json.loads(text))
    assert peer.p.wait(timeout=timeout) == 0, peer.p.stderr.read()
    return out
