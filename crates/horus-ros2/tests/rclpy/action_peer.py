"""The ROS 2 side of tests/action_rclpy.rs (rclpy, through scripts/ros2-python).

    action_peer.py ACTION

ACTION is a horus action (`horus_actions::ros`) bridged by `horus ros2`. rclpy has no
generated Python types for the action-specific messages horus was built with, so this node
uses the two parts of the action whose types every ROS 2 installation has, with rcl_action's
QoS: the status topic (action_msgs/GoalStatusArray, TRANSIENT_LOCAL, as an rclpy
ActionClient subscribes to it) and the cancel service (action_msgs/CancelGoal).

Prints `ready` once the status subscription has matched a publisher and the cancel
service is available; then for every status message `status HEX:CODE ...`; the first goal
seen EXECUTING is canceled (`cancel return_code=N canceling=HEX,...` when the answer
comes); `canceled HEX` when that goal's status is CANCELED (either may come first). Exits 0
once it has both, 1 after 60 s without them.
"""

import sys
import time

import rclpy
from action_msgs.msg import GoalStatus, GoalStatusArray
from action_msgs.srv import CancelGoal
from rclpy.qos import qos_profile_action_status_default

PATIENCE = 60.0


def hexid(goal_id) -> str:
    return bytes(goal_id.uuid).hex()


def main() -> int:
    action = sys.argv[1].rstrip("/")
    rclpy.init()
    node = rclpy.create_node("action_peer")
    statuses = []
    sub = node.create_subscription(
        GoalStatusArray,
        f"{action}/_action/status",
        statuses.append,
        qos_profile_action_status_default,
    )
    cancel = node.create_client(CancelGoal, f"{action}/_action/cancel_goal")
    deadline = time.monotonic() + PATIENCE
    while sub.get_publisher_count() == 0 or not cancel.service_is_ready():
        if time.monotonic() > deadline:
            print(
                f"no server: status publishers {sub.get_publisher_count()}, "
                f"cancel service {cancel.service_is_ready()}",
                flush=True,
            )
            return 1
        rclpy.spin_once(node, timeout_sec=0.1)
    print("ready", flush=True)
    target = None
    pending = None
    canceled = answered = False
    while time.monotonic() < deadline:
        rclpy.spin_once(node, timeout_sec=0.1)
        while statuses:
            msg = statuses.pop(0)
            line = " ".join(f"{hexid(s.goal_info.goal_id)}:{s.status}" for s in msg.status_list)
            print(f"status {line}", flush=True)
            for s in msg.status_list:
                h = hexid(s.goal_info.goal_id)
                if target is None and s.status == GoalStatus.STATUS_EXECUTING:
                    target = h
                    req = CancelGoal.Request()
                    req.goal_info.goal_id.uuid = list(bytes.fromhex(h))
                    pending = cancel.call_async(req)
                if h == target and s.status == GoalStatus.STATUS_CANCELED and not canceled:
                    canceled = True
                    print(f"canceled {h}", flush=True)
        if pending is not None and pending.done():
            r = pending.result()
            ids = ",".join(hexid(g.goal_id) for g in r.goals_canceling)
            print(f"cancel return_code={r.return_code} canceling={ids}", flush=True)
            pending = None
            answered = True
        # The cancel's answer and the CANCELED status travel separately: wait for both.
        if canceled and answered:
            node.destroy_node()
            rclpy.shutdown()
            return 0
    print("timed out", flush=True)
    return 1


if __name__ == "__main__":
    sys.exit(main())
