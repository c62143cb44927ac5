"""A ROS 2 listener of the demo robot's lidar (rclpy): subscribes to /demo/scan
(sensor_msgs/LaserScan, published by the horus sensors process and carried by
`horus ros2`), prints the first scan and every 10th, and on SIGTERM how many it got.

Run by launch/demo_ros2.yaml through scripts/ros2-python (the ROS 2 venv of
`make setup-ros2`).
"""

import math
import signal
import sys
import threading

import rclpy
from rclpy.executors import SingleThreadedExecutor
from rclpy.signals import SignalHandlerOptions
from sensor_msgs.msg import LaserScan

TOPIC = "/demo/scan"


def describe(scan: LaserScan) -> str:
    valid = [
        (r, i)
        for i, r in enumerate(scan.ranges)
        if math.isfinite(r) and scan.range_min <= r <= scan.range_max
    ]
    head = f"{len(scan.ranges)} ranges, frame {scan.header.frame_id!r}"
    if not valid:
        return head + ", nothing in range"
    r, i = min(valid)
    angle = math.degrees(scan.angle_min + i * scan.angle_increment)
    return head + f", nearest {r:.2f} m at {angle:.0f} deg"


def main() -> int:
    rclpy.init(signal_handler_options=SignalHandlerOptions.NO)
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    node = rclpy.create_node("scan_listener")
    got = [0]

    def on_scan(scan: LaserScan) -> None:
        if got[0] % 10 == 0:
            print(f"scan_listener: scan {got[0] + 1}: {describe(scan)}", flush=True)
        got[0] += 1

    node.create_subscription(LaserScan, TOPIC, on_scan, 10)
    executor = SingleThreadedExecutor()
    executor.add_node(node)
    while not stop.is_set():
        executor.spin_once(timeout_sec=0.1)
    print(f"scan_listener: received {got[0]} scans on {TOPIC}", flush=True)
    executor.shutdown()
    node.destroy_node()
    rclpy.shutdown()
    return 0


if __name__ == "__main__":
    sys.exit(main())
