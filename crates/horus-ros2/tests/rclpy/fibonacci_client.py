"""The ROS 2 side of tests/action_fibonacci.rs (rclpy, through scripts/ros2-python).

    fibonacci_client.py ACTION ORDER

An rclpy ActionClient of test_msgs/action/Fibonacci on ACTION (a horus action server
bridged by `horus ros2`). Prints `ready` once wait_for_server succeeded and the feedback
topic has a publisher (the bridge's route is open, so no feedback is published to nobody);
then sends one goal of ORDER and prints `accepted BOOL HEX`, each feedback as
`feedback N,N,...` in the order received (the first may come before `accepted`: the
feedback topic and the send_goal reply travel separately), and `result STATUS N,N,...`.
Exits 0 once it has the result, 1 after 60 s without it.

rclpy's ActionClient calls a goal's feedback callback only until the goal's result is in
(it removes the callback then): feedback this node has received but not yet handled when it
handles the result is dropped. So the test has the server end the goal only once it has seen
every feedback line.
"""

import sys
import time

import rclpy
from rclpy.action import ActionClient
from test_msgs.action import Fibonacci

PATIENCE = 60.0


def spin_until(node, done, deadline) -> bool:
    while not done():
        if time.monotonic() > deadline:
            return False
        rclpy.spin_once(node, timeout_sec=0.05)
    return True


def main() -> int:
    action, order = sys.argv[1].rstrip("/"), int(sys.argv[2])
    rclpy.init()
    node = rclpy.create_node("fibonacci_client")
    client = ActionClient(node, Fibonacci, action)
    probe = node.create_subscription(
        Fibonacci.Impl.FeedbackMessage, f"{action}/_action/feedback", lambda _: None, 10
    )
    deadline = time.monotonic() + PATIENCE
    if not client.wait_for_server(timeout_sec=PATIENCE) or not spin_until(
        node, lambda: probe.get_publisher_count() > 0, deadline
    ):
        print("no server", flush=True)
        return 1
    print("ready", flush=True)

    def on_feedback(msg):
        print("feedback " + ",".join(map(str, msg.feedback.sequence)), flush=True)

    sent = client.send_goal_async(Fibonacci.Goal(order=order), feedback_callback=on_feedback)
    if not spin_until(node, sent.done, deadline):
        print("timed out", flush=True)
        return 1
    handle = sent.result()
    print(f"accepted {handle.accepted} {bytes(handle.goal_id.uuid).hex()}", flush=True)
    result = handle.get_result_async()
    if not spin_until(node, result.done, deadline):
        print("timed out", flush=True)
        return 1
    r = result.result()
    print(f"result {r.status} " + ",".join(map(str, r.result.sequence)), flush=True)
    node.destroy_node()
    rclpy.shutdown()
    return 0


if __name__ == "__main__":
    sys.exit(main())
