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
  both doing the same work with the same functions: ping writes every byte
  (``ndarray.fill``) and publishes; pong reads every byte once (``checksum`` of the
  received data) and publishes the data back; ping reads every byte of the answer
  (``checksum``) and checks its first and last byte. RTT = ping's fill to ping having
  read and checked the answer, ``time.perf_counter_ns``.

  What differs is only what each system's API offers. horus's ping fills a NumPy buffer
  that ``send()`` copies into the chunk below ``LOAN_MIN`` (128 KiB), and from there
  fills the chunk itself through a loan (``RosPublisher.loan``: no buffer, no copy at
  send; its fixed cost, ~3.7 µs against ``send``'s ~1.3 µs, is repaid by the copy from
  ~100 KiB, measured in one process: 64 KiB 3.4 µs send / 4.4 µs loan, 128 KiB 5.7 /
  5.0 µs); horus's pong sends the received message back (``send(r)``, its data copied
  from the received chunk into a new one: cheaper than copying it into a loan, 24 against
  29 µs at 1 MiB). rclpy has no loans: its ping fills a NumPy view of the message's
  ``array.array`` and publishes, its pong publishes the received message.

  ``checksum`` (the one function both systems call, on the received data as it comes:
  a read-only NumPy view of the chunk for horus, rclpy's ``array.array``) reads every
  byte once, as cheaply as Python allows at each size (measured crossovers): up to
  ``CHECKSUM_ZLIB_MAX`` (6 KiB) ``zlib.adler32`` of the buffer (NumPy's per-call cost,
  ~1.7 µs for a 64-bit word sum, would be most of a 64 B round trip: adler32 takes
  0.09 µs at 64 B, 1.8 µs at 6 KiB, 2.4 µs at 8 KiB, where NumPy takes 1.8–2.2 µs);
  above it the sum of the data as 64-bit words (NumPy). From ``CHECKSUM_SPLIT_MIN``
  (96 KiB) a misaligned buffer is summed as its 8-byte-aligned middle plus adler32 of
  the up to 7 bytes either side: horus's ``uint8[]`` sits where CDR puts it (4-byte
  aligned, 20 bytes into the chunk), and NumPy sums a misaligned ``uint64`` view through
  a buffered copy, 35 µs at 1 MiB against 19 µs split and 15 µs for rclpy's aligned
  ``array.array`` (finding the address costs ~2 µs a call, repaid from ~96 KiB).

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
import zlib
from typing import Any, Dict, List, Optional, Tuple

from bench_util import cores, med, percentiles, pin

HERE = os.path.abspath(__file__)
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
ROS2_PYTHON = os.path.join(ROOT, "scripts", "ros2-python")
CLOUD_POINTS = 65_536  # x y z intensity float32: 16 B a point, 1 MiB of data
SIZES = [64, 4096, 65536, 1 << 20]


CHECKSUM_ZLIB_MAX = 6 * 1024  # zlib.adler32 up to here, NumPy 64-bit words above (measured crossover 6–8 KiB)
CHECKSUM_SPLIT_MIN = 96 * 1024  # a misaligned buffer from here: aligned middle + edges (crossover ~96 KiB)
LOAN_MIN = 128 * 1024  # horus's ping fills a loan from here, a buffer that send() copies below (crossover ~100 KiB)


def checksum(buf: Any) -> int:
    """Reads every byte of `buf` (any 1-D byte buffer: a NumPy uint8 array, an array.array('B')) once.

    Up to CHECKSUM_ZLIB_MAX bytes zlib.adler32 (NumPy's per-call cost, ~1.7 µs, is most of a small
    message's round trip; adler32 of 64 B takes 0.09 µs); above it the sum of the data as 64-bit words
    (NumPy). NumPy sums a misaligned uint64 view through a buffered copy (35 µs at 1 MiB against 15 µs
    aligned), so a misaligned buffer of CHECKSUM_SPLIT_MIN bytes or more is summed as its 8-byte-aligned
    middle plus adler32 of the up to 7 bytes at either end (19 µs at 1 MiB; it costs ~2 µs more per call
    in finding the address, which the smaller sizes do not repay). Also a length not a multiple of 8."""
    n = len(buf)
    if n <= CHECKSUM_ZLIB_MAX:
        return zlib.adler32(buf)
    import numpy as np

    a = np.frombuffer(buf, np.uint8)
    if n & 7 == 0:
        words = a.view(np.uint64)
        if words.flags.aligned or n < CHECKSUM_SPLIT_MIN:
            return int(np.add.reduce(words))
    head = -a.__array_interface__["data"][0] & 7
    k = (n - head) & ~7
    return int(np.add.reduce(a[head:head + k].view(np.uint64))) + zlib.adler32(a[head + k:].data, zlib.adler32(a[:head].data))


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
        loan = size >= LOAN_MIN
        buf = np.zeros(size, np.uint8)
        msg = UInt8MultiArray() if loan else UInt8MultiArray(data=buf)
        clock = time.perf_counter_ns
        samples: List[int] = []
        for i in range(total):
            b = i & 0xFF
            t0 = clock()
            if loan:
                with pub.loan(msg, data=size) as m:
                    m.data.fill(b)  # every byte written, in place in the chunk; sent at the end of the block
            else:
                buf.fill(b)  # every byte written ...
                msg.data = buf
                pub.send(msg)  # ... and copied into the chunk
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
                    checksum(m.data)  # every byte read once (the array.array as it comes)
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
                buf.fill(b)  # every byte written
                msg.data = arr
                pub.publish(msg)
                while not got:
                    rclpy.spin_once(node, timeout_sec=20)
                    if not got and pong.poll() is not None:
                        raise SystemExit(f"rclpy pong exited with {pong.returncode} at {i}")
                r = got.pop(0)
                d = r.data  # array.array
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
        "its threads inherit the CPU); same work and same functions on both sides: ping writes every byte "
        "(ndarray.fill) and publishes, pong reads every byte once (checksum) and publishes the received "
        "message back, ping reads every byte (checksum) and checks the first and last; RTT = "
        "perf_counter_ns from before the fill to after the check. checksum(buf), called on the received "
        f"data as it comes (horus: the read-only NumPy view of the chunk; rclpy: the array.array): up to "
        f"{CHECKSUM_ZLIB_MAX} B zlib.adler32(buf), above it np.add.reduce of the data as uint64 words, from "
        f"{CHECKSUM_SPLIT_MIN} B for a misaligned buffer (horus's: CDR puts a uint8[] 4-byte aligned) of its "
        "8-byte-aligned middle + adler32 of the bytes at either end. horus ping: below "
        f"{LOAN_MIN} B buf.fill(b) of a NumPy array, msg.data = buf, send(msg) (copied into the chunk); "
        f"from {LOAN_MIN} B `with pub.loan(msg, data=n) as m: m.data.fill(b)` (filled in place in the "
        "chunk, sent without a copy); horus pong: send(r), its data copied from the received chunk into a "
        "new one. rclpy ping: buf.fill(b) of a NumPy view of an array.array, msg.data = that array, "
        "publish(msg); rclpy pong: publish(m) of the received message",
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
