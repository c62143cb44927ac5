"""The ROS 2 side of tests/action_fibonacci.rs's horus-client test (rclpy, through
scripts/ros2-python).

    fibonacci_server.py ACTION [SECONDS]

An rclpy ActionServer of test_msgs/action/Fibonacci on ACTION, called by a horus
RosActionClient through `horus ros2`. Prints `ready` once the server exists; for each goal
prints `goal ORDER`, publishes one feedback per new number (the sequence so far), waits
SECONDS (default 0; more than a call timeout makes a goal outlast it), and succeeds with the whole
sequence, printing `succeeded HEX` (the goal's UUID). Runs until stdin closes.
"""

import sys
import threading
import time

import rclpy
from rclpy.action import ActionServer
from rclpy.executors import SingleThreadedExecutor
from test_msgs.action import Fibonacci


def main() -> int:
    action = sys.argv[1].rstrip("/")
    seconds = float(sys.argv[2]) if len(sys.argv) > 2 else 0.0
    rclpy.init()
    node = rclpy.create_node("fibonacci_server")

    def execute(handle):
        order = handle.request.order
        print(f"goal {order}", flush=True)
        sequence = [0, 1]
        for i in range(1, order):
            sequence.append(sequence[i] + sequence[i - 1])
            handle.publish_feedback(Fibonacci.Feedback(sequence=sequence))
        time.sleep(seconds)
        handle.succeed()
        print(f"succeeded {bytes(handle.goal_id.uuid).hex()}", flush=True)
        return Fibonacci.Result(sequence=sequence)

    ActionServer(node, Fibonacci, action, execute)
    done = threading.Event()

    def wait_stdin():
        sys.stdin.read()
        done.set()

    threading.Thread(target=wait_stdin, daemon=True).start()
    executor = SingleThreadedExecutor()
    executor.add_node(node)
    print("ready", flush=True)
    while not done.is_set():
        executor.spin_once(timeout_sec=0.05)
    node.destroy_node()
    rclpy.shutdown()
    return 0


if __name__ == "__main__":
    sys.exit(main())
