"""The horus end of the ROS 2 teleop: subscribes to the horus topic demo/cmd_vel_teleop
(geometry_msgs/Twist, carried from ROS 2 by `horus ros2`) and prints the first command
and every 10th, and on SIGTERM how many it got.

A horus subscriber, not an observer: `horus ros2` carries a ROS 2 topic into horus only
while a horus subscriber exists. The demo's controller keeps the authority over
demo/cmd_vel (see docs/ros2-bridge.md, "make demo-ros2").
"""

import signal
import sys
import threading

import horus
from horus.interfaces.geometry_msgs.msg import Twist

TOPIC = "demo/cmd_vel_teleop"


def main() -> int:
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    got = 0
    with horus.RosTopic(
        Twist, TOPIC, depth=16, overflow=horus.Overflow.DROP_OLDEST, max_tail_bytes=1024
    ).subscriber() as sub:
        print(f"teleop_listener: subscribed to {TOPIC}", flush=True)
        while not stop.wait(0.05):
            while (cmd := sub.try_recv()) is not None:
                if got % 10 == 0:
                    print(
                        f"teleop_listener: Twist {got + 1}: linear.x {cmd.linear.x:.2f} m/s, "
                        f"angular.z {cmd.angular.z:+.2f} rad/s",
                        flush=True,
                    )
                got += 1
    print(f"teleop_listener: received {got} Twist commands from ROS 2", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
