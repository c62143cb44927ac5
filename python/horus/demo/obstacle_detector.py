"""The demo robot's Python node: an obstacle detector.

Reads the newest ``demo/scan`` (a ROS 2 ``sensor_msgs/msg/LaserScan``, as
``horus.interfaces.sensor_msgs.msg.LaserScan`` whose ``ranges`` is a read-only
NumPy view into the shared-memory message) and, for every new scan,
publishes a stop flag on ``demo/stop``: an
``EmergencyStop`` message (the standard Rust message, reused) that is
*engaged* while something is closer than ``STOP_AT`` m in the sector
ahead and *released* otherwise. The Rust controller honours it: it
commands zero forward speed while the flag is engaged.

Run by the Rust monitor (``horus-demo``) as ``python -m
horus.demo.obstacle_detector`` in the robot's namespace
(``HORUS_NAMESPACE``); it runs a ``horus.Scheduler`` named ``python`` that
publishes its statistics, so the monitor shows the node like the Rust ones.
SIGTERM stops it cleanly: the scheduler stops, the node's ``shutdown``
runs, and the process exits 0.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
import time
from types import FrameType
from typing import List, Optional

import numpy as np

import horus
from horus.interfaces.sensor_msgs.msg import LaserScan

#: Topics (the Rust side: ``crates/horus-demo/src/topics.rs``).
SCAN = "demo/scan"
STOP = "demo/stop"
#: ``demo/scan``'s settings, as every Rust endpoint opens it (history, largest CDR body).
SCAN_DEPTH = 8
SCAN_MAX_BYTES = 4096
#: Engage the flag when an obstacle ahead is closer than this, m (the Rust
#: controller's own reflex stops at 0.6 m; the detector is more cautious).
STOP_AT = 1.0
#: Half-width of the sector watched ahead, rad (±30°).
AHEAD = 0.52
#: ``EmergencyStop.REASON_COLLISION`` (constants come from the Rust tables).
REASON_COLLISION: int = getattr(horus.EmergencyStop, "REASON_COLLISION")
#: The flag's ``source``.
SOURCE = "py-detector"
#: The scheduler's name: the process column of the monitor's table.
SCHEDULER = "python"


def nearest_ahead(scan: LaserScan) -> float:
    """Nearest valid return within ±``AHEAD`` rad, m (inf when clear)."""
    ranges = np.asarray(scan.ranges, dtype=np.float32)
    n = len(ranges)
    angles = float(scan.angle_min) + float(scan.angle_increment) * np.arange(n, dtype=np.float32)
    valid = (
        np.isfinite(ranges)
        & (ranges >= float(scan.range_min))
        & (ranges <= float(scan.range_max))
        & (np.abs(angles) <= AHEAD)
    )
    return float(ranges[valid].min()) if valid.any() else float("inf")


class ObstacleDetector:
    """Publishes an engaged/released stop flag for every new scan."""

    name = "detector"

    def __init__(self) -> None:
        self.scans = horus.RosTopic(
            LaserScan,
            SCAN,
            depth=SCAN_DEPTH,
            overflow=horus.Overflow.DROP_OLDEST,
            max_tail_bytes=SCAN_MAX_BYTES,
        ).subscriber()
        self.flags = horus.Topic(horus.EmergencyStop, STOP).publisher()
        self.parent = int(os.environ.get("HORUS_DEMO_PARENT", "0"))
        self.sent = 0
        self.engaged = 0

    def tick(self, ctx: horus.TickInfo) -> None:
        # The monitor died: stop (the Rust processes get SIGTERM instead).
        if self.parent and os.getppid() != self.parent:
            ctx.request_stop()
            return
        # The newest scan: older ones waiting are passed over (each is decoded in place,
        # its ranges a view: cheap).
        scan: Optional[LaserScan] = None
        while (newer := self.scans.try_recv()) is not None:
            scan = newer
        if scan is None:
            return
        engaged = nearest_ahead(scan) < STOP_AT
        flag = horus.EmergencyStop(
            reason=REASON_COLLISION if engaged else 0,
            engaged=int(engaged),
            source=SOURCE,
        )
        # Stamp last, right before the send (the monitor's latency).
        flag.stamp_ns = time.time_ns()
        self.flags.send(flag)
        self.sent += 1
        self.engaged += int(engaged)

    def shutdown(self) -> None:
        print(
            f"detector: shut down after {self.sent} stop flags "
            f"({self.engaged} of them engaged)",
            flush=True,
        )


def main() -> int:
    sched = horus.Scheduler(name=SCHEDULER, publish_stats=True)
    detector = ObstacleDetector()
    # Twice the lidar's rate: every scan is seen soon after it is published.
    sched.add(detector, rate=20, watchdog=0.25, watchdog_action="warn")

    # The scheduler ticks its nodes on threads of its own, and Python runs
    # signal handlers on the main thread only: run it on a thread, and keep
    # the main thread free to take SIGTERM/SIGINT and ask it to stop.
    def on_signal(signum: int, frame: Optional[FrameType]) -> None:
        sched.stop()

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    result: List[str] = []
    runner = threading.Thread(target=lambda: result.append(sched.run()), name="scheduler")
    runner.start()
    while runner.is_alive():
        runner.join(0.1)
    # run() has run the node's shutdown and removed the statistics file.
    print(f"detector: scheduler stopped ({result[0] if result else 'failed'})", flush=True)
    return 0 if result else 1


if __name__ == "__main__":
    sys.exit(main())
