"""A ROS 2 "teleop" of the demo robot (rclpy): publishes geometry_msgs/Twist on
/demo/cmd_vel_teleop at 5 Hz until SIGTERM, then prints how many it sent.

Run by launch/demo_ros2.yaml through scripts/ros2-python (the ROS 2 venv of
`make setup-ros2`); `horus ros2` carries the commands to the horus topic
demo/cmd_vel_teleop, where the horus node teleop_listener.py reads them.
"""

import signal
import sys
import threading

import rclpy
from geometry_msgs.msg import Twist
from rclpy.signals import SignalHandlerOptions

TOPIC = "/demo/cmd_vel_teleop"
RATE_HZ = 5.0


def main() -> int:
    # Our own SIGTERM handler (horus launch stops with SIGTERM): exit 0 after the summary.
    rclpy.init(signal_handler_options=SignalHandlerOptions.NO)
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    node = rclpy.create_node("teleop")
    pub = node.create_publisher(Twist, TOPIC, 10)
    sent = 0
    while not stop.wait(1.0 / RATE_HZ):
        msg = Twist()
        msg.linear.x = 0.2
        msg.angular.z = 0.5 if (sent // 10) % 2 == 0 else -0.5
        pub.publish(msg)
        if sent == 0:
            print(f"teleop: publishing Twist on {TOPIC} at {RATE_HZ:g} Hz", flush=True)
        sent += 1
    print(f"teleop: sent {sent} Twist commands", flush=True)
    node.destroy_node()
    rclpy.shutdown()
    return 0


if __name__ == "__main__":
    sys.exit(main())
