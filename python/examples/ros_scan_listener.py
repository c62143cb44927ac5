"""Receives three sensor_msgs/msg/LaserScan on ``robot/scan`` (docs/interfaces.md).

Run it beside ``cargo run -p horus --example ros_scan``; the ranges arrive as a read-only
NumPy view of the shared-memory chunk the Rust publisher wrote.
"""

import horus
from horus.interfaces.sensor_msgs.msg import LaserScan

subscriber = horus.RosTopic(LaserScan, "robot/scan").subscriber()
for _ in range(3):
    scan = subscriber.recv(timeout=10.0)
    r = scan.ranges
    print(
        f"{scan.ros_type_name()} frame={scan.header.frame_id} "
        f"stamp={scan.header.stamp.sec}s ranges: {type(r).__name__} {r.dtype} "
        f"x{len(r)} {r[0]:.2f}..{r[-1]:.2f} writeable={r.flags.writeable}"
    )
