"""An rclpy node for horus-ros2's tests (run through scripts/ros2-python).

    node.py pub   TOPIC:TYPE[:latched] ...   publish one built message per topic once each
                                              publisher is matched; print `sent TOPIC HEX`
    node.py sub   TOPIC:TYPE[:latched] ...   print `got TOPIC HEX` for every message (raw CDR)
                                              (`:deadline`: the subscription requests a 1 s
                                              deadline)
    node.py hold  TOPIC:TYPE[:latched] ...   create the publishers and never publish (a
                                              writer whose QoS the bridge must match)
    node.py talk  TOPIC                       publish std_msgs/String "0", "1", ... (50 Hz)
    node.py graph TOPIC ...                   watch the ROS 2 graph (10 Hz), printing each
                                              line once: `node FQN` for every node,
                                              `enclave FQN ENCLAVE` with its participant's
                                              enclave (`(none)` when it announced none),
                                              `pub FQN TOPIC TYPE` / `sub FQN TOPIC TYPE` for
                                              every node's publishers and subscriptions, and
                                              `pubinfo TOPIC FQN` / `subinfo TOPIC FQN` for
                                              the endpoints on each TOPIC given, and
                                              `pubhash TOPIC FQN HASH` / `subhash …` with
                                              the type hash ROS 2 has for each
                                              (`RIHS01_<hex>`, or `INVALID`)
    node.py stream TOPIC COUNT SIZE           once a subscriber matched, publish COUNT
                                              std_msgs/UInt8MultiArray of SIZE data bytes
                                              (the first 8: the index, little-endian) at
                                              100 Hz; print `streamed COUNT`
    node.py flood  TOPIC COUNT SIZE [TAG [go]] the same from a reliable KEEP_ALL publisher, as
                                              fast as publish returns: a publish that raises
                                              (Fast DDS: the writer's history is full of
                                              samples a reliable reader has not acknowledged
                                              for longer than max_blocking_time, 100 ms;
                                              rclpy: RCLError "cannot publish data") is
                                              retried with the same message; print `held N`
                                              at the first such raise (N: the index) and
                                              `flooded COUNT held RAISES` at the end; TAG
                                              (0-255, default 0): the 9th data byte, to
                                              tell several such publishers apart; `go`:
                                              start only once a `go` line came on stdin

Every mode prints `ready` once its endpoints exist and runs until stdin closes (lines
other than `go` are ignored) or its parent process (scripts/ros2-python, started by the
test) is gone; a node whose callbacks keep it from ending within 5 s of that leaves
without rclpy's shutdown.
Messages are built deterministically (build()) so both sides can compare bytes.
"""
import os
import sys
import threading
import time

import rclpy
from rclpy.duration import Duration
from rclpy.node import Node
from rclpy.qos import QoSProfile, ReliabilityPolicy, DurabilityPolicy, HistoryPolicy
from rclpy.serialization import serialize_message
from sensor_msgs.msg import LaserScan, Imu, Image, PointCloud2, PointField
from std_msgs.msg import String, Int32, UInt8MultiArray

TYPES = {
    'sensor_msgs/msg/LaserScan': LaserScan,
    'sensor_msgs/msg/Imu': Imu,
    'sensor_msgs/msg/Image': Image,
    'sensor_msgs/msg/PointCloud2': PointCloud2,
    'std_msgs/msg/String': String,
    'std_msgs/msg/Int32': Int32,
}


def type_hash_text(info):
    """The endpoint's type hash as ROS 2 prints it (`RIHS01_<hex>`), or `INVALID`."""
    h = info.topic_type_hash
    if h.version != 1:
        return 'INVALID'
    return 'RIHS01_' + bytes(h.value).hex()


def pattern(n, seed):
    return bytes(((i * 31 + seed) & 0xFF) for i in range(n))


def build(type_name):
    cls = TYPES[type_name]
    m = cls()
    if cls is LaserScan:
        m.header.frame_id = 'laser'
        m.header.stamp.sec, m.header.stamp.nanosec = 12, 345
        m.angle_min, m.angle_max, m.angle_increment = -3.125, 3.125, 0.0175
        m.range_min, m.range_max = 0.1, 30.0
        m.ranges = [i * 0.01 for i in range(360)]
        m.intensities = [float(i % 7) for i in range(360)]
    elif cls is Imu:
        m.header.frame_id = 'imu_link'
        m.orientation.x, m.orientation.w = 0.5, 0.75
        m.orientation_covariance = [float(i) for i in range(9)]
        m.angular_velocity.z = 0.25
        m.linear_acceleration.z = 9.81
        m.linear_acceleration_covariance = [0.5 * i for i in range(9)]
    elif cls is Image:
        m.header.frame_id = 'camera'
        m.height, m.width, m.encoding, m.step = 480, 640, 'rgb8', 1920
        m.data = pattern(480 * 1920, 7)
    elif cls is PointCloud2:
        m.header.frame_id = 'lidar'
        m.height, m.width = 1, 65536
        m.fields = [PointField(name=n, offset=4 * k, datatype=PointField.FLOAT32, count=1)
                    for k, n in enumerate(['x', 'y', 'z', 'intensity'])]
        m.point_step, m.row_step, m.is_dense = 16, 16 * 65536, True
        m.data = pattern(16 * 65536, 3)
    elif cls is String:
        m.data = 'hello from rclpy'
    elif cls is Int32:
        m.data = 42
    return m


def qos(flag):
    latched = flag == 'latched'
    q = QoSProfile(
        history=HistoryPolicy.KEEP_LAST, depth=10 if not latched else 1,
        reliability=ReliabilityPolicy.RELIABLE,
        durability=DurabilityPolicy.TRANSIENT_LOCAL if latched else DurabilityPolicy.VOLATILE)
    if flag == 'deadline':
        q.deadline = Duration(seconds=1)
    return q


def specs(args):
    out = []
    for a in args:
        parts = a.split(':')
        out.append((parts[0], parts[1], parts[2] if len(parts) > 2 else None))
    return out


def say(*words):
    print(*words, flush=True)


def end_with_parent(done):
    """Sets `done` when the parent process is gone (this process was re-parented: the test
    was killed, or it killed scripts/ros2-python), then, if the main loop has not ended the
    process 5 s later, ends it: an orphaned node must never keep running (it would keep
    whatever the test's command held, such as a build lock)."""
    parent = os.getppid()
    while not done.wait(0.5):
        if os.getppid() != parent:
            done.set()
    time.sleep(5)
    os._exit(3)


def main():
    mode, args = sys.argv[1], sys.argv[2:]
    rclpy.init()
    node = Node('horus_ros2_test_' + mode)
    done = threading.Event()
    go = threading.Event()

    def read_stdin():
        for line in sys.stdin:
            if line.strip() == 'go':
                go.set()
        done.set()
    threading.Thread(target=read_stdin, daemon=True).start()
    threading.Thread(target=end_with_parent, args=(done,), daemon=True).start()
    if mode == 'pub':
        pubs = [(t, ty, node.create_publisher(TYPES[ty], t, qos(l))) for t, ty, l in specs(args)]
        say('ready')
        while not done.is_set() and any(p.get_subscription_count() == 0 for _, _, p in pubs):
            rclpy.spin_once(node, timeout_sec=0.05)
        for t, ty, p in pubs:
            m = build(ty)
            p.publish(m)
            say('sent', t, serialize_message(m).hex())
    elif mode == 'sub':
        for t, ty, l in specs(args):
            node.create_subscription(TYPES[ty], t, lambda b, t=t: say('got', t, bytes(b).hex()),
                                     qos(l), raw=True)
        say('ready')
    elif mode == 'hold':
        held = [node.create_publisher(TYPES[ty], t, qos(l)) for t, ty, l in specs(args)]
        say('ready')
    elif mode == 'graph':
        say('ready')
        seen = set()

        def once(*words):
            if words not in seen:
                seen.add(words)
                say(*words)

        def fqn(name, ns):
            return ns.rstrip('/') + '/' + name

        def watch():
            for name, ns, enclave in node.get_node_names_and_namespaces_with_enclaves():
                once('enclave', fqn(name, ns), enclave or '(none)')
            for name, ns in node.get_node_names_and_namespaces():
                once('node', fqn(name, ns))
                for kind, get in (('pub', node.get_publisher_names_and_types_by_node),
                                  ('sub', node.get_subscriber_names_and_types_by_node)):
                    try:
                        endpoints = get(name, ns)
                    except Exception:  # the node left meanwhile
                        continue
                    for topic, types in endpoints:
                        for ty in types:
                            once(kind, fqn(name, ns), topic, ty)
            for t in args:
                for kind, get in (('pubinfo', node.get_publishers_info_by_topic),
                                  ('subinfo', node.get_subscriptions_info_by_topic)):
                    for info in get(t):
                        who = fqn(info.node_name, info.node_namespace)
                        once(kind, t, who)
                        once(kind.replace('info', 'hash'), t, who, type_hash_text(info))
        node.create_timer(0.1, watch)
    elif mode == 'talk':
        p = node.create_publisher(String, args[0], qos(None))
        say('ready')
        n = 0

        def tick():
            nonlocal n
            p.publish(String(data=str(n)))
            n += 1
        node.create_timer(0.02, tick)
    elif mode == 'stream':
        count, size = int(args[1]), int(args[2])
        p = node.create_publisher(UInt8MultiArray, args[0], qos(None))
        say('ready')
        while not done.is_set() and p.get_subscription_count() == 0:
            rclpy.spin_once(node, timeout_sec=0.05)
        pad = bytes(size - 8)
        sent = 0

        def tick():
            nonlocal sent
            if sent < count:
                p.publish(UInt8MultiArray(data=sent.to_bytes(8, 'little') + pad))
                sent += 1
                if sent == count:
                    say('streamed', count)
        node.create_timer(0.01, tick)
    elif mode == 'flood':
        count, size = int(args[1]), int(args[2])
        tag = int(args[3]) if len(args) > 3 else 0
        wait_go = len(args) > 4 and args[4] == 'go'
        keep_all = QoSProfile(history=HistoryPolicy.KEEP_ALL, depth=1,
                              reliability=ReliabilityPolicy.RELIABLE)
        p = node.create_publisher(UInt8MultiArray, args[0], keep_all)
        say('ready')
        while not done.is_set() and p.get_subscription_count() == 0:
            rclpy.spin_once(node, timeout_sec=0.05)
        while wait_go and not done.is_set() and not go.is_set():
            rclpy.spin_once(node, timeout_sec=0.05)
        pad = bytes([tag]) + bytes(size - 9)
        sent, raises = 0, 0
        while not done.is_set() and sent < count:
            try:
                p.publish(UInt8MultiArray(data=sent.to_bytes(8, 'little') + pad))
            except Exception as e:  # rclpy's RCLError: the history stayed full
                raises += 1
                if raises == 1:
                    say('held', sent, type(e).__name__)
                continue
            sent += 1
        if sent == count:
            say('flooded', count, 'held', raises)
    elif mode == 'make':
        say('ready')
        for t, ty, _ in specs(args):
            say('msg', t, serialize_message(build(ty)).hex())
        node.destroy_node()
        rclpy.shutdown()
        return
    while not done.is_set():
        rclpy.spin_once(node, timeout_sec=0.05)
    node.destroy_node()
    rclpy.shutdown()


if __name__ == '__main__':
    main()
