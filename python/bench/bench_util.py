"""What the Python benchmarks share: which CPUs to pin to, pinning, percentiles, medians.

Imported by the scripts beside it (``python python/bench/<script>.py`` puts this directory on
``sys.path``): ros_python.py, ros_messages_py.py.
"""

from __future__ import annotations

import os
from typing import Dict, List, Tuple


def cores() -> Tuple[int, int]:
    """The first two CPUs this process may run on (the same one twice on a single CPU)."""
    avail = sorted(os.sched_getaffinity(0))
    return avail[0], avail[1 % len(avail)]


def pin(core: int) -> None:
    """Pins this process to `core` (its threads inherit it); a negative core: unpinned."""
    if core >= 0:
        os.sched_setaffinity(0, {core})


def percentiles(samples: List[int]) -> Dict[str, float]:
    """Nearest-rank percentiles of `samples` (ns), in µs, with their count, none discarded."""
    s = sorted(samples)
    n = len(s)

    def at(q: float) -> float:
        return s[min(n - 1, int(q * n))] / 1000.0

    return {"n": n, "min": s[0] / 1000.0, "p50": at(0.5), "p90": at(0.9), "p99": at(0.99), "max": s[-1] / 1000.0}


def med(v: List[float]) -> float:
    """The median of `v` (NaN when empty)."""
    s = sorted(v)
    n = len(s)
    return float("nan") if n == 0 else s[n // 2] if n % 2 else (s[n // 2 - 1] + s[n // 2]) / 2
