#!/usr/bin/env python3
"""One Python end of the `ros2` benchmark's ping-pong (started by the `ros2` binary).

    endpoint.py --api rclpy|horus --side ping|pong --ping-topic T --pong-topic T
                --size N [--count N --warmup N --timeout S] [--ns NS] [--core C]

Message: ``std_msgs/msg/UInt8MultiArray`` with ``size`` data bytes (no layout dims).
Ping fills every byte with ``seq & 0xff`` and writes ``seq`` (u64, little endian) into the
first 8 bytes, publishes, and waits for the answer carrying the same ``seq``; it reads every
byte of the answer (a NumPy checksum) and checks it. Pong reads every byte of each message
(checksum) and publishes its data back. Reliable QoS: rclpy RELIABLE keep-last 10; horus
``Overflow.block`` depth 16.

Before measuring, ping sends ``seq`` 0, 1, … every 0.2 s until the first answer arrives
(discovery, bridge routes opening); then ``warmup`` untimed and ``count`` timed round trips.
An answer that does not come within ``timeout`` s is counted lost and the next ``seq`` is
sent; after ``MAX_LOST_IN_A_ROW`` losses in a row ping gives up (``aborted``: the rest is not
sent, so a broken path costs seconds, not minutes); answers to an earlier ``seq`` are dropped
and counted ``stale``. Ping prints one line ``RESULT {"samples_ns": [...], "wall_ns": W,
"lost": L, "stale": S, "aborted": A}``; pong prints
``READY`` once its endpoints exist and runs until its stdin closes.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import threading
import time
from typing import Any, Callable, List, Optional

import numpy as np

MAX_LOST_IN_A_ROW = 5

def fill(buf: "np.ndarray[Any, Any]", seq: int) -> None:
    buf[:] = seq & 0xFF  # every byte written
    if buf.size >= 8:
        buf[:8] = np.frombuffer(seq.to_bytes(8, "little"), np.uint8)


def checksum(d: "np.ndarray[Any, Any]") -> int:
    """Reads every byte once."""
    if d.size % 8 == 0:
        return int(d.view(np.uint64).sum(dtype=np.uint64))
    return int(d.sum(dtype=np.uint64))


def seq_of(d: "np.ndarray[Any, Any]") -> int:
    if d.size >= 8:
        return int.from_bytes(d[:8].tobytes(), "little")
    return int(d[0]) if d.size else -1


class Stdin:
    """Whether stdin has closed (the parent's stop signal to a pong)."""

    def __init__(self) -> None:
        self.closed = False
        threading.Thread(target=self._watch, daemon=True).start()

    def _watch(self) -> None:
        sys.stdin.read()
        self.closed = True


def ping_loop(a: argparse.Namespace, send: Callable[[int], None],
              receive: Callable[[float], Optional["np.ndarray[Any, Any]"]]) -> None:
    clock = time.perf_counter_ns
    stale = 0
    seq = 0
    # First contact: discovery and (through the bridge) routes opening.
    deadline = time.monotonic() + 60
    contact = False
    while not contact:
        if time.monotonic() > deadline:
            raise SystemExit("ping: no answer within 60 s")
        send(seq)
        until = time.monotonic() + 0.2
        while time.monotonic() < until:
            d = receive(max(0.0, until - time.monotonic()))
            if d is not None:
                checksum(d)
                contact = True
                break
        seq += 1
    # Answers to the first-contact messages may still come: they are stale, not counted.
    first = seq
    samples: List[int] = []
    lost = 0
    in_a_row = 0
    aborted = False
    started = clock()
    for k in range(a.warmup + a.count):
        seq = first + k
        if k == a.warmup:
            started = clock()
        t0 = clock()
        send(seq)
        ok = False
        until = time.monotonic() + a.timeout
        while True:
            left = until - time.monotonic()
            if left <= 0:
                break
            d = receive(left)
            if d is None:
                continue
            checksum(d)  # every byte read once
            got = seq_of(d)
            if got == seq and d[-1] == seq & 0xFF:
                ok = True
                break
            if got < seq:
                if k >= a.warmup and got >= first + a.warmup:
                    stale += 1
                continue
            raise SystemExit(f"ping: answer carries seq {got}, expected {seq}")
        t1 = clock()
        if k >= a.warmup:
            if ok:
                samples.append(t1 - t0)
            else:
                lost += 1
        in_a_row = 0 if ok else in_a_row + 1
        if in_a_row >= MAX_LOST_IN_A_ROW:
            aborted = True
            break
    wall = clock() - started
    print("RESULT " + json.dumps({"samples_ns": samples, "wall_ns": wall, "lost": lost, "stale": stale,
                                  "aborted": aborted}), flush=True)


def run_rclpy(a: argparse.Namespace) -> None:
    import array

    import rclpy
    from rclpy.qos import HistoryPolicy, QoSProfile, ReliabilityPolicy
    from std_msgs.msg import UInt8MultiArray

    rclpy.init()
    node = rclpy.create_node(f"horus_bench_{a.side}_{os.getpid()}")
    qos = QoSProfile(depth=10, history=HistoryPolicy.KEEP_LAST, reliability=ReliabilityPolicy.RELIABLE)
    out_name, in_name = (a.ping_topic, a.pong_topic) if a.side == "ping" else (a.pong_topic, a.ping_topic)
    pub = node.create_publisher(UInt8MultiArray, out_name, qos)
    got: List[Any] = []
    node.create_subscription(UInt8MultiArray, in_name, got.append, qos)
    try:
        if a.side == "pong":
            stop = Stdin()
            print("READY", flush=True)
            while not stop.closed:
                rclpy.spin_once(node, timeout_sec=0.1)
                while got:
                    m = got.pop(0)
                    checksum(np.frombuffer(m.data, np.uint8))  # every byte read once
                    pub.publish(m)  # the data back (serialized: copied)
            return
        arr = array.array("B", bytes(a.size))
        buf = np.frombuffer(arr, np.uint8)  # writes land in the message's array
        msg = UInt8MultiArray()

        def send(seq: int) -> None:
            fill(buf, seq)
            msg.data = arr
            pub.publish(msg)

        def receive(timeout: float) -> Optional["np.ndarray[Any, Any]"]:
            if not got:
                rclpy.spin_once(node, timeout_sec=timeout)
            if not got:
                return None
            return np.frombuffer(got.pop(0).data, np.uint8)

        ping_loop(a, send, receive)
    finally:
        node.destroy_node()
        rclpy.shutdown()


def run_horus(a: argparse.Namespace) -> None:
    import horus
    from horus.interfaces.std_msgs.msg import UInt8MultiArray

    tail = max(4096, 2 * a.size)
    out_name, in_name = (a.ping_topic, a.pong_topic) if a.side == "ping" else (a.pong_topic, a.ping_topic)

    def topic(name: str) -> Any:
        return horus.RosTopic(UInt8MultiArray, name, depth=16, overflow=horus.Overflow.block(5.0),
                              max_tail_bytes=tail, namespace=a.ns)

    pub = topic(out_name).publisher()
    sub = topic(in_name).subscriber()
    if a.side == "pong":
        stop = Stdin()
        print("READY", flush=True)
        while not stop.closed:
            try:
                r = sub.recv(timeout=0.1)
            except horus.RecvTimeoutError:
                continue
            checksum(r.data)  # every byte read once
            pub.send(r)  # the data back (copied from the received chunk into a new one)
            del r
        return
    buf = np.zeros(a.size, np.uint8)
    msg = UInt8MultiArray(data=buf)

    def send(seq: int) -> None:
        fill(buf, seq)
        msg.data = buf
        pub.send(msg)

    def receive(timeout: float) -> Optional["np.ndarray[Any, Any]"]:
        try:
            return sub.recv(timeout=timeout).data  # type: ignore[no-any-return]
        except horus.RecvTimeoutError:
            return None

    ping_loop(a, send, receive)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--api", choices=("rclpy", "horus"), required=True)
    ap.add_argument("--side", choices=("ping", "pong"), required=True)
    ap.add_argument("--ping-topic", required=True)
    ap.add_argument("--pong-topic", required=True)
    ap.add_argument("--size", type=int, required=True)
    ap.add_argument("--count", type=int, default=0)
    ap.add_argument("--warmup", type=int, default=0)
    ap.add_argument("--timeout", type=float, default=2.0)
    ap.add_argument("--ns", default="")
    ap.add_argument("--core", type=int, default=-1)
    a = ap.parse_args()
    if a.core >= 0:
        os.sched_setaffinity(0, {a.core})  # before any thread starts: they inherit it
    if a.api == "rclpy":
        run_rclpy(a)
    else:
        run_horus(a)


if __name__ == "__main__":
    main()
