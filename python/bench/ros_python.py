#!/usr/bin/env python3
"""ros_python: ROS 2 messages from Python — horus against rclpy on Fast DDS.

Two measurements, interleaved rounds in one run (the order of the systems alternates
between rounds; every figure is a range over rounds, never one run):

* ``recv``: a Python subscriber getting the data of a 1 MiB ``sensor_msgs/PointCloud2``
  (65,536 ``x y z intensity`` points) as a NumPy view, against a Python ``CmdVel``
  receive (16 B, fixed layout). A feeder process (pinned to the second CPU) publishes
  one message, then waits for the subscriber's acknowledgement before the next; the
  subscriber (pinned to the first CPU) polls ``try_recv`` and times only the call that
  returns the message — for the cloud, ``try_recv()`` plus ``.data`` (the NumPy view
  of the points in shared memory): the cost of receiving, not of waiting.
* ``pingpong``: ``std_msgs/UInt8MultiArray`` of 64 B – 1 MiB between two Python
  processes (ping pinned to the first CPU, pong to the second), horus
  (``horus.RosTopic``, blocking ``recv``) and rclpy + rmw_fastrtps_cpp (reliable, keep
  last 10, ``spin_once``; run through ``scripts/ros2-python``, localhost discovery),
  both doing the same work: ping writes every byte (a NumPy fill of its buffer) and
  publishes; pong reads every byte once (a NumPy checksum of the received data) and
  publishes the data back; ping reads every byte of the answer (checksum) and checks
  its first and last byte. RTT = ping's publish to ping having read the answer,
  ``time.perf_counter_ns``.
* ``build``: a Python publisher producing a 1 MiB ``PointCloud2`` (65,536 points) or a
  640×480 ``rgb8`` ``Image`` (900 KiB) from a source frame (one NumPy ``copyto``, every
  byte written), through ``send()`` (filled into the message's own array, which ``send``
  copies into the chunk) against ``loan()`` (filled in place in the chunk through the
  loan's view, sent without a copy). One process pinned to the first CPU; timed: the
  fill and the send (the loan's making included); a subscriber in the same process
  receives each message after the timed part and checks its first and last byte.

Usage::

    python python/bench/ros_python.py [--quick] [--rounds R] [--json PATH] [--no-rclpy]

rclpy runs only where ``scripts/ros2-python`` finds the ROS 2 venv (``make
setup-ros2``); otherwise its rows are reported as skipped.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import time
from typing import Any, Dict, List, Optional, Tuple

HERE = os.path.abspath(__file__)
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
ROS2_PYTHON = os.path.join(ROOT, "scripts", "ros2-python")
CLOUD_POINTS = 65_536  # x y z intensity float32: 16 B a point, 1 MiB of data
SIZES = [64, 4096, 65536, 1 << 20]


def cores() -> Tuple[int, int]:
    avail = sorted(os.sched_getaffinity(0))
    return avail[0], avail[1 % len(avail)]


def pin(core: int) -> None:
    """Pins this process to `core` (its threads inherit it); a negative core: unpinned."""
    if core >= 0:
        os.sched_setaffinity(0, {core})


def percentiles(samples: List[int]) -> Dict[str, float]:
    s = sorted(samples)
    n = len(s)

    def at(q: float) -> float:
        return s[min(n - 1, int(q * n))] / 1000.0

    return {"n": n, "min": s[0] / 1000.0, "p50": at(0.5), "p99": at(0.99), "max": s[-1] / 1000.0}


def checksum(a: Any) -> int:
    """Reads every byte once: the sum of the data as 64-bit words (bytes if not a multiple of 8)."""
    import numpy as np

    if a.size % 8 == 0:
        return int(a.view(np.uint64).sum(dtype=np.uint64))
    return int(a.sum(dtype=np.uint64))


def report(line: Dict[str, Any]) -> None:
    print("RESULT " + json.dumps(line), flush=True)


def wait_line(child: "subprocess.Popen[str]", want: str) -> None:
    assert child.stdout is not None
    line = child.stdout.readline().strip()
    if line != want:
        raise RuntimeError(f"child said {line!r}, expected {want!r} (exit {child.poll()})")


# --- recv: PointCloud2 NumPy view vs CmdVel ------------------------------------------------


def recv_feeder(kind: str, ns: str, count: int) -> None:
    import horus
    import numpy as np

    if kind == "cloud":
        from horus.interfaces.sensor_msgs.msg import PointCloud2, PointField

        topic = horus.RosTopic(PointCloud2, "bench/data", max_tail_bytes=2 << 20, namespace=ns)
        data = np.zeros(CLOUD_POINTS * 16, np.uint8)
        msg: Any = PointCloud2(
            height=1, width=CLOUD_POINTS, point_step=16, row_step=16 * CLOUD_POINTS, data=data, is_dense=True,
            fields=[PointField(name=n, offset=4 * k, datatype=PointField.FLOAT32, count=1)
                    for k, n in enumerate(("x", "y", "z", "intensity"))],
        )
    else:
        topic = horus.Topic(horus.CmdVel, "bench/data", namespace=ns)
        msg = horus.CmdVel(linear=1.0)
    pub = topic.publisher()
    ack = horus.Topic(horus.CmdVel, "bench/ack", namespace=ns).subscriber()
    print("ready", flush=True)
    for i in range(count):
        if kind == "cloud":
            data[:] = i & 0xFF  # every byte written
            msg.header.stamp.sec = i
        else:
            msg.stamp_ns = i
        pub.send(msg)
        a = ack.recv(timeout=20)
        if a.stamp_ns != i:
            raise SystemExit(f"feeder: ack {a.stamp_ns}, expected {i}")


def recv_main(kind: str, ns: str, count: int, warmup: int, feeder_core: int) -> None:
    import horus

    if kind == "cloud":
        from horus.interfaces.sensor_msgs.msg import PointCloud2

        sub: Any = horus.RosTopic(PointCloud2, "bench/data", max_tail_bytes=2 << 20, namespace=ns).subscriber()
    else:
        sub = horus.Topic(horus.CmdVel, "bench/data", namespace=ns).subscriber(busy_poll=True)
    ack_pub = horus.Topic(horus.CmdVel, "bench/ack", namespace=ns).publisher()
    ack = horus.CmdVel()
    feeder = subprocess.Popen(
        [sys.executable, HERE, "--role", "recv-feeder", "--kind", kind, "--ns", ns,
         "--count", str(count + warmup), "--core", str(feeder_core)],
        stdout=subprocess.PIPE, text=True,
    )
    try:
        wait_line(feeder, "ready")
        clock = time.perf_counter_ns
        samples: List[int] = []
        for i in range(count + warmup):
            while True:
                t0 = clock()
                r = sub.try_recv()
                if r is not None:
                    if kind == "cloud":
                        d = r.data  # the points as a read-only NumPy view in shared memory
                    t1 = clock()
                    break
            if kind == "cloud":
                if d.nbytes != CLOUD_POINTS * 16 or r.header.stamp.sec != i:
                    raise SystemExit(f"cloud {i}: {d.nbytes} B, stamp {r.header.stamp.sec}")
                del d
            elif r.stamp_ns != i:
                raise SystemExit(f"cmdvel {i}: stamp {r.stamp_ns}")
            del r
            if i >= warmup:
                samples.append(t1 - t0)
            ack.stamp_ns = i
            ack_pub.send(ack)
        feeder.wait(timeout=20)
        report({"samples": samples})
    finally:
        if feeder.poll() is None:
            feeder.kill()
            feeder.wait()


# --- build: a large message filled through send() vs through a loan ------------------------


BUILD_KINDS = ("cloud", "image")


def build_main(kind: str, how: str, ns: str, count: int, warmup: int) -> None:
    import horus
    import numpy as np

    msg: Any
    if kind == "cloud":
        from horus.interfaces.sensor_msgs.msg import PointCloud2, PointField

        msg = PointCloud2(
            height=1, width=CLOUD_POINTS, point_step=16, row_step=16 * CLOUD_POINTS, is_dense=True,
            fields=[PointField(name=n, offset=4 * k, datatype=PointField.FLOAT32, count=1)
                    for k, n in enumerate(("x", "y", "z", "intensity"))],
        )
        nbytes = CLOUD_POINTS * 16
    else:
        from horus.interfaces.sensor_msgs.msg import Image

        msg = Image(height=480, width=640, encoding="rgb8", step=640 * 3)
        nbytes = 640 * 480 * 3
    msg.header.frame_id = "sensor"
    topic = horus.RosTopic(type(msg), "bench/build", max_tail_bytes=2 << 20, namespace=ns)
    pub, sub = topic.publisher(), topic.subscriber()
    frames = [np.full(nbytes, v, np.uint8) for v in (1, 2)]  # the producer's source frames
    buf = np.empty(nbytes, np.uint8)
    msg.data = buf
    clock = time.perf_counter_ns
    samples: List[int] = []
    for i in range(count + warmup):
        src = frames[i & 1]
        msg.header.stamp.sec = i
        if how == "send":
            t0 = clock()
            np.copyto(buf, src)  # every byte written into the message's array ...
            pub.send(msg)  # ... which send copies into the chunk
            t1 = clock()
        else:
            t0 = clock()
            with pub.loan(msg, data=nbytes) as m:
                np.copyto(m.data, src)  # every byte written in the chunk, sent as it is
            t1 = clock()
        r = sub.try_recv()
        if r is None or r.header.stamp.sec != i or r.data[0] != src[0] or r.data[-1] != src[-1]:
            raise SystemExit(f"build {kind} {how} {i}: wrong message")
        del r
        if i >= warmup:
            samples.append(t1 - t0)
    report({"samples": samples})


# --- pingpong: horus ---------------------------------------------------------------------


def horus_side(ping: bool, busy: bool, size: int, ns: str, count: int, warmup: int, pong_cmd: List[str]) -> None:
    import horus
    import numpy as np
    from horus.interfaces.std_msgs.msg import UInt8MultiArray

    out_name, in_name = ("bench/ping", "bench/pong") if ping else ("bench/pong", "bench/ping")
    tail = max(4096, 2 * size)
    pub = horus.RosTopic(UInt8MultiArray, out_name, max_tail_bytes=tail, namespace=ns).publisher()
    sub = horus.RosTopic(UInt8MultiArray, in_name, max_tail_bytes=tail, namespace=ns).subscriber()
    total = count + warmup

    def receive() -> Any:
        if not busy:
            return sub.recv(timeout=20)
        r = sub.try_recv()
        while r is None:
            r = sub.try_recv()
        return r

    if not ping:
        print("ready", flush=True)
        for _ in range(total):
            r = receive()
            checksum(r.data)  # every byte read once
            pub.send(r)  # the message back, as rclpy's pong does (data copied into the chunk)
            del r
        return
    pong = subprocess.Popen(pong_cmd, stdout=subprocess.PIPE, text=True)
    try:
        wait_line(pong, "ready")
        buf = np.zeros(size, np.uint8)
        msg = UInt8MultiArray(data=buf)
        clock = time.perf_counter_ns
        samples: List[int] = []
        for i in range(total):
            b = i & 0xFF
            t0 = clock()
            buf[:] = b  # every byte written
            msg.data = buf
            pub.send(msg)
            r = receive()
            d = r.data
            checksum(d)  # every byte read once
            ok = d[0] == b and d[-1] == b
            t1 = clock()
            if not ok:
                raise SystemExit(f"horus ping {i}: answer carries {d[0]}/{d[-1]}")
            del d, r
            if i >= warmup:
                samples.append(t1 - t0)
        pong.wait(timeout=20)
        report({"samples": samples})
    finally:
        if pong.poll() is None:
            pong.kill()
            pong.wait()


# --- pingpong: rclpy ---------------------------------------------------------------------


def rclpy_side(ping: bool, size: int, count: int, warmup: int, pong_cmd: List[str], topic: str) -> None:
    import array

    import numpy as np
    import rclpy
    from rclpy.qos import QoSProfile, ReliabilityPolicy
    from std_msgs.msg import UInt8MultiArray

    rclpy.init()
    node = rclpy.create_node(("ping_" if ping else "pong_") + topic)
    qos = QoSProfile(depth=10, reliability=ReliabilityPolicy.RELIABLE)
    out_name, in_name = (f"{topic}_ping", f"{topic}_pong") if ping else (f"{topic}_pong", f"{topic}_ping")
    pub = node.create_publisher(UInt8MultiArray, out_name, qos)
    got: List[Any] = []
    node.create_subscription(UInt8MultiArray, in_name, got.append, qos)
    total = count + warmup
    try:
        if not ping:
            print("ready", flush=True)
            done = 0
            while done < total:
                rclpy.spin_once(node, timeout_sec=20)
                while got:
                    m = got.pop(0)
                    checksum(np.frombuffer(m.data, np.uint8))  # every byte read once
                    pub.publish(m)  # the data back (serialized: copied)
                    done += 1
            sys.stdin.read()  # stay (and keep delivering) until ping has every answer
            return
        pong = subprocess.Popen(pong_cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        try:
            wait_line(pong, "ready")
            deadline = time.monotonic() + 30
            while (pub.get_subscription_count() < 1 or node.count_publishers(in_name) < 1) and time.monotonic() < deadline:
                rclpy.spin_once(node, timeout_sec=0.05)
            arr = array.array("B", bytes(size))
            buf = np.frombuffer(arr, np.uint8)  # writes land in the message's array
            msg = UInt8MultiArray()
            clock = time.perf_counter_ns
            samples: List[int] = []
            for i in range(total):
                b = i & 0xFF
                t0 = clock()
                buf[:] = b  # every byte written
                msg.data = arr
                pub.publish(msg)
                while not got:
                    rclpy.spin_once(node, timeout_sec=20)
                    if not got and pong.poll() is not None:
                        raise SystemExit(f"rclpy pong exited with {pong.returncode} at {i}")
                r = got.pop(0)
                d = np.frombuffer(r.data, np.uint8)
                checksum(d)  # every byte read once
                ok = d[0] == b and d[-1] == b
                t1 = clock()
                if not ok:
                    raise SystemExit(f"rclpy ping {i}: answer carries {d[0]}/{d[-1]}")
                if i >= warmup:
                    samples.append(t1 - t0)
            assert pong.stdin is not None
            pong.stdin.close()
            pong.wait(timeout=30)
            report({"samples": samples})
        finally:
            if pong.poll() is None:
                pong.kill()
                pong.wait()
    finally:
        node.destroy_node()
        rclpy.shutdown()


# --- driver ------------------------------------------------------------------------------


def run_child(cmd: List[str], timeout: float) -> List[int]:
    p = subprocess.run(cmd, stdout=subprocess.PIPE, text=True, timeout=timeout)
    lines = [line for line in p.stdout.splitlines() if line.startswith("RESULT ")]
    if p.returncode != 0 or not lines:
        raise RuntimeError(f"{' '.join(cmd[:4])}…: exit {p.returncode}, no result")
    samples: List[int] = json.loads(lines[-1][len("RESULT "):])["samples"]
    return samples


def child_main(a: argparse.Namespace) -> None:
    pin(a.core)
    if a.role == "recv":
        recv_main(a.kind, a.ns, a.count, a.warmup, a.other_core)
    elif a.role == "build":
        kind, how = a.kind.split("-")
        build_main(kind, how, a.ns, a.count, a.warmup)
    elif a.role == "recv-feeder":
        recv_feeder(a.kind, a.ns, a.count)
    elif a.role in ("horus-ping", "horus-pong", "horus-busy-ping", "horus-busy-pong"):
        ping = a.role.endswith("-ping")
        busy = "-busy-" in a.role
        pong_cmd = [sys.executable, HERE, "--role", "horus-busy-pong" if busy else "horus-pong", "--core", str(a.other_core), "--ns", a.ns,
                    "--size", str(a.size), "--count", str(a.count), "--warmup", str(a.warmup)]
        horus_side(ping, busy, a.size, a.ns, a.count, a.warmup, pong_cmd)
    elif a.role in ("rclpy-ping", "rclpy-pong"):
        ping = a.role == "rclpy-ping"
        pong_cmd = [ROS2_PYTHON, HERE, "--role", "rclpy-pong", "--core", str(a.other_core), "--ns", a.ns,
                    "--size", str(a.size), "--count", str(a.count), "--warmup", str(a.warmup)]
        rclpy_side(ping, a.size, a.count, a.warmup, pong_cmd, a.ns.replace("-", "_"))


def counts(system: str, size: int, quick: bool) -> Tuple[int, int]:
    """(timed, warm-up) round trips: about a second or two per measurement."""
    if quick:
        return 20, 5
    if system == "rclpy":
        n = 2000 if size <= 4096 else 1000 if size <= 65536 else 150
    else:
        n = 5000 if size <= 65536 else 1000
    return n, max(20, n // 10)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="one round, two sizes, tiny counts (smoke run)")
    ap.add_argument("--rounds", type=int, default=None, help="interleaved rounds (default 5; --quick 1)")
    ap.add_argument("--json", metavar="PATH", help="write the results as JSON")
    ap.add_argument("--no-rclpy", action="store_true", help="horus only")
    ap.add_argument("--unpinned", action="store_true", help="run every process unpinned (default: CPUs 0 and 1)")
    ap.add_argument("--sizes", default="", help="ping-pong sizes in bytes, comma-separated (default 64,4096,65536,1048576)")
    ap.add_argument("--no-recv", action="store_true", help="skip the recv (PointCloud2 view vs CmdVel) case")
    ap.add_argument("--no-pingpong", action="store_true", help="skip the ping-pong case")
    ap.add_argument("--no-build", action="store_true", help="skip the build (send() vs loan()) case")
    ap.add_argument("--role", default="", help=argparse.SUPPRESS)
    ap.add_argument("--kind", default="", help=argparse.SUPPRESS)
    ap.add_argument("--core", type=int, default=0, help=argparse.SUPPRESS)
    ap.add_argument("--other-core", type=int, default=1, help=argparse.SUPPRESS)
    ap.add_argument("--ns", default="", help=argparse.SUPPRESS)
    ap.add_argument("--size", type=int, default=0, help=argparse.SUPPRESS)
    ap.add_argument("--count", type=int, default=0, help=argparse.SUPPRESS)
    ap.add_argument("--warmup", type=int, default=0, help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.role:
        child_main(a)
        return 0

    c0, c1 = (-1, -1) if a.unpinned else cores()
    rounds = a.rounds or (1 if a.quick else 5)
    sizes = [int(x) for x in a.sizes.split(",")] if a.sizes else [64, 1 << 20] if a.quick else SIZES
    rclpy_ok = not a.no_rclpy and os.access(ROS2_PYTHON, os.X_OK) and subprocess.run(
        [ROS2_PYTHON, "-c", "import rclpy, std_msgs.msg"], capture_output=True).returncode == 0
    def where(core: int) -> str:
        return "unpinned" if core < 0 else f"pinned to CPU {core}"

    method = [
        f"interleaved rounds: {rounds}; in each round every case is measured once, the order of the "
        "systems alternating between rounds; reported: the range over rounds of each case's median, and "
        "per round the ratio of the medians (its median and range)",
        f"recv: feeder process {where(c1)} publishes one message and waits for the ack; the "
        f"subscriber {where(c0)} polls try_recv and times only the call that returns the message "
        "(PointCloud2 1 MiB: try_recv() + .data, the NumPy view in shared memory; CmdVel: try_recv())",
        f"pingpong: ping {where(c0)}, pong {where(c1)} (each process pinned before it starts, so "
        "its threads inherit the CPU); ping writes every byte (NumPy fill) and publishes, pong reads every "
        "byte once (NumPy checksum) and publishes the received message back (rclpy: publish(m); horus: "
        "send(r), its data copied from the received chunk into a new one), ping reads every byte "
        "(checksum) and checks it; RTT = perf_counter_ns from before the fill to after the check",
        "horus: horus.RosTopic(std_msgs.msg.UInt8MultiArray), `horus` = blocking recv (RosSubscriber.recv: "
        "1000 polls as a Topic subscriber's, a few yields, then the futex), "
        "`horus-busy` = try_recv spin on both sides; "
        "rclpy: ROS 2 kilted wheels, rmw_fastrtps_cpp, reliable keep-last 10, spin_once, "
        "ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST (scripts/ros2-python)",
        f"build: one process {where(c0)} fills a 1 MiB PointCloud2 / 640x480 rgb8 Image from a source "
        "frame (np.copyto, every byte) and publishes it: `send` = into the message's own array, then "
        "RosPublisher.send (which copies it into the chunk); `loan` = `with pub.loan(msg, data=n) as m: "
        "np.copyto(m.data, src)` (in place in the chunk, no copy at send); timed: fill + send (loan made "
        "and sent included); a subscriber in the same process checks each message after the timed part",
        "percentiles nearest-rank over all timed samples, none discarded",
    ]
    print(f"ros_python{' (quick)' if a.quick else ''} | Python {platform.python_version()} | {platform.machine()}")
    for m in method:
        print(f"method: {m}")
    rows: List[Dict[str, Any]] = []
    errors: List[str] = []

    def measure(case: str, system: str, size: int, rnd: int, order: int, cmd: List[str], timeout: float) -> None:
        try:
            s = percentiles(run_child(cmd, timeout))
            rows.append({"case": case, "system": system, "size": size, "round": rnd, "order": order, **s})
            print(f"  round {rnd} {case:10s} {system:14s} {size:8d} B  p50 {s['p50']:10.2f} µs  "
                  f"(min {s['min']:.2f}, p99 {s['p99']:.2f}, n={s['n']})", flush=True)
        except Exception as e:  # recorded, the run goes on
            errors.append(f"round {rnd} {case} {system} {size} B: {e}")
            print(f"  FAILED {errors[-1]}", file=sys.stderr, flush=True)

    py = sys.executable
    for rnd in range(rounds):
        print(f"round {rnd + 1}/{rounds}", flush=True)
        kinds = [] if a.no_recv else ["cloud", "cmdvel"] if rnd % 2 == 0 else ["cmdvel", "cloud"]
        for order, kind in enumerate(kinds):
            n, w = (50, 5) if a.quick else (2000, 200)
            ns = f"rospy-{os.getpid()}-{rnd}-{kind}"
            measure("recv", "PointCloud2 1 MiB view" if kind == "cloud" else "CmdVel", 1 << 20 if kind == "cloud" else 16,
                    rnd, order, [py, HERE, "--role", "recv", "--kind", kind, "--ns", ns, "--count", str(n),
                                 "--warmup", str(w), "--core", str(c0), "--other-core", str(c1)], 120)
        for kind in [] if a.no_build else BUILD_KINDS:
            hows = ["send", "loan"] if rnd % 2 == 0 else ["loan", "send"]
            for order, how in enumerate(hows):
                n, w = (50, 5) if a.quick else (2000, 200)
                ns = f"rospy-{os.getpid()}-{rnd}-build-{kind}-{how}"
                size = CLOUD_POINTS * 16 if kind == "cloud" else 640 * 480 * 3
                measure("build", f"{kind} {how}", size, rnd, order,
                        [py, HERE, "--role", "build", "--kind", f"{kind}-{how}", "--ns", ns, "--count", str(n),
                         "--warmup", str(w), "--core", str(c0)], 120)
        for size in [] if a.no_pingpong else sizes:
            systems = ["horus", "horus-busy"] + (["rclpy"] if rclpy_ok else [])
            if rnd % 2 == 1:
                systems.reverse()
            for order, system in enumerate(systems):
                n, w = counts(system, size, a.quick)
                ns = f"rospy-{os.getpid()}-{rnd}-{size}"
                exe = [ROS2_PYTHON, HERE] if system == "rclpy" else [py, HERE]
                measure("pingpong", system, size, rnd, order,
                        exe + ["--role", f"{system}-ping", "--ns", ns, "--size", str(size), "--count", str(n),
                               "--warmup", str(w), "--core", str(c0), "--other-core", str(c1)], 300)
    if not rclpy_ok:
        errors_note = "rclpy skipped: no ROS 2 venv (make setup-ros2) or --no-rclpy"
        print(errors_note)
        method.append(errors_note)
    doc = {"benchmark": "ros_python", "quick": a.quick, "python": platform.python_version(),
           "machine": platform.machine(), "cpus": None if a.unpinned else [c0, c1], "method": method, "rows": rows, "errors": errors}
    summary = summarise(rows)
    doc["summary"] = summary
    for line in summary["lines"]:
        print(line)
    if a.json:
        with open(a.json, "w") as f:
            f.write(json.dumps(doc, indent=2) + "\n")
        print(f"wrote {a.json}")
    return 1 if errors else 0


def med(v: List[float]) -> float:
    s = sorted(v)
    n = len(s)
    return float("nan") if n == 0 else s[n // 2] if n % 2 else (s[n // 2 - 1] + s[n // 2]) / 2


def summarise(rows: List[Dict[str, Any]]) -> Dict[str, Any]:
    """Per-round ratios: cloud view ÷ CmdVel receive, and rclpy ÷ horus at each size."""
    def p50(case: str, system: str, size: int, rnd: int) -> Optional[float]:
        for r in rows:
            if (r["case"], r["system"], r["size"], r["round"]) == (case, system, size, rnd):
                return float(r["p50"])
        return None

    rounds = sorted({r["round"] for r in rows})
    out: Dict[str, Any] = {"lines": [], "recv": None, "pingpong": [], "build": []}
    for kind in BUILD_KINDS:
        sizes = {r["size"] for r in rows if r["case"] == "build" and r["system"].startswith(kind)}
        for size in sizes:
            pairs = [(p50("build", f"{kind} loan", size, k), p50("build", f"{kind} send", size, k)) for k in rounds]
            both = [(lo, se) for lo, se in pairs if lo is not None and se is not None]
            if not both:
                continue
            rs = [lo / se for lo, se in both]
            out["build"].append({"kind": kind, "size": size, "loan_p50": [lo for lo, _ in both],
                                 "send_p50": [se for _, se in both], "ratios": rs, "median": med(rs),
                                 "min": min(rs), "max": max(rs)})
            out["lines"].append(
                f"build {kind} {size} B: loan ÷ send per round: median {med(rs):.2f}, range {min(rs):.2f}–{max(rs):.2f} "
                f"(p50 loan {med([lo for lo, _ in both]):.1f} µs, send {med([se for _, se in both]):.1f} µs)")
    pairs = [(p50("recv", "PointCloud2 1 MiB view", 1 << 20, k), p50("recv", "CmdVel", 16, k)) for k in rounds]
    ratios = [c / v for c, v in pairs if c is not None and v is not None]
    if ratios:
        out["recv"] = {"ratios": ratios, "median": med(ratios), "min": min(ratios), "max": max(ratios),
                       "cloud_p50": [c for c, _ in pairs if c is not None], "cmdvel_p50": [v for _, v in pairs if v is not None]}
        out["lines"].append(f"recv: PointCloud2 1 MiB view ÷ CmdVel receive, per round: median {med(ratios):.2f}, "
                            f"range {min(ratios):.2f}–{max(ratios):.2f} (target ≤ 2)")
    for system in ("horus", "horus-busy"):
        for size in sorted({r["size"] for r in rows if r["case"] == "pingpong"}):
            pairs = [(p50("pingpong", system, size, k), p50("pingpong", "rclpy", size, k)) for k in rounds]
            both = [(h, r) for h, r in pairs if h is not None and r is not None]
            entry: Dict[str, Any] = {"system": system, "size": size, "horus_p50": [h for h, _ in pairs if h is not None],
                                     "rclpy_p50": [r for _, r in pairs if r is not None]}
            if both:
                sp = [r / h for h, r in both]
                entry.update(speedups=sp, median=med(sp), min=min(sp), max=max(sp))
                out["lines"].append(f"pingpong {size} B: rclpy ÷ {system} per round: median {med(sp):.1f}×, "
                                    f"range {min(sp):.1f}–{max(sp):.1f}× (target ≥ 50×)")
            out["pingpong"].append(entry)
    return out


if __name__ == "__main__":
    sys.exit(main())
