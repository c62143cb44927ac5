"""Checks that a test left nothing of its namespace in /dev/shm."""

from __future__ import annotations

import gc
import os
import time
from typing import List


def leftovers(ns: str, wait: float = 3.0) -> List[str]:
    """Segments of namespace `ns` still in /dev/shm after `wait` seconds at
    most (endpoints of killed peers are reclaimed by the survivors)."""
    gc.collect()
    deadline = time.monotonic() + wait
    while True:
        left = sorted(f for f in os.listdir("/dev/shm") if f.startswith(f"horus.{ns}."))
        if not left or time.monotonic() > deadline:
            return left
        time.sleep(0.05)
