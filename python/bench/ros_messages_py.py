#!/usr/bin/env python3
"""ros_messages_py: the ROS 2 messages of ``ros_messages`` between two Python processes on horus.

Issue 19 item 7's Python rows: ``sensor_msgs/Image`` 640×480 ``rgb8``, ``PointCloud2`` of
10 K and 100 K points, ``LaserScan`` of 360 and 1,080 ranges, ``JointState`` of 30 joints and
``tf2_msgs/TFMessage`` of 50 transforms, with the contents the Rust benchmark gives them
(``crates/horus-bench-ros/src/ros_loads.rs``: the same frame ids, encodings, fields, names and
counts, so the same CDR body sizes, printed and checked against the Rust table's).

Ping-pong between two Python processes (ping pinned to the first CPU, pong to the second;
``--unpinned``: neither), ``horus.RosTopic`` publisher and subscriber on each side,
blocking ``recv``:

* **ping builds** the message every round trip as a Python user would: a new message object
  with its header (stamp = the sequence number, frame id set), its scalar fields and strings,
  and its primitive sequences as NumPy arrays, every element written (``ndarray.fill`` of the
  producer's array, assigned to the field: no Python loop over elements); ``JointState``'s 30
  names are a list of ``str``; ``TFMessage``'s 50 transforms are 50 ``TransformStamped``
  Python objects (each with its ``Header``, ``Time``, ``Transform``, ``Vector3`` and
  ``Quaternion``) built in a list comprehension. Then ``send(msg)`` (which encodes it into the
  chunk, copying each array once). The ``loan`` rows (Image and PointCloud2 only: the loan
  hands out top-level primitive arrays, docs/interfaces.md "Loans") build the same message
  without its data and fill ``data`` in place in the chunk: ``with pub.loan(msg, data=n) as m:
  m.data.fill(b)``, sent without a copy.
* **pong reads** the received message (decoded: strings as ``str``, nested messages as objects,
  primitive sequences as read-only NumPy views of the chunk) with ``read_message``: every
  primitive array's bytes once (``read_bytes``), every string (the decoder has read its bytes
  to make the ``str``; ``hash`` reads its characters again, unless CPython cached the hash of
  a one-character string), every scalar of the message and of each nested message (all 50
  transforms); then sends the received message back (``send(r)``: encoded again, its arrays
  copied from the received chunk into a new one).
* **ping reads** the answer the same way (``read_message``) and checks its stamp is the one
  it sent. RTT = ``time.perf_counter_ns`` from before the build to after that check.

``read_bytes(a)`` — the one read-every-byte function, used on both sides for every array —
reads each byte of the array's buffer once, as cheaply as Python allows (the crossovers
measured for ``ros_python.py``'s ``checksum``): up to 6 KiB ``zlib.adler32`` of the buffer
(NumPy's per-call cost, ~1.7 µs, would dominate a small array); above it ``np.add.reduce`` of
the 8-byte-aligned middle viewed as ``uint64`` plus ``adler32`` of the up to 7 bytes at
either end (CDR puts a ``uint8[]`` only 4-byte aligned, and NumPy sums a misaligned ``uint64``
view through a buffered copy).

Interleaved rounds (default 5): in each round every case runs once, in a fresh pair of
processes, the order reversed every other round. Reported per case and round: p50, p90, p99,
min of the round trips (nearest rank, none discarded); the summary gives each figure's range
over rounds. Usage::

    python python/bench/ros_messages_py.py [--quick] [--rounds R] [--unpinned] [--json PATH]
                                           [--messages image,cloud10k,...] [--no-loan] [--spin N]

``--spin N``: the subscribers poll N times before a blocking ``recv`` yields and sleeps on the
futex (default: the library's, 1,000 polls; ``--spin 1000000`` makes the receiver effectively
busy-poll, as the Rust rows do: past the spin, a wake costs ~50–80 µs on the 2-vCPU VM).

``--quick``: one round of 20 round trips per case (a smoke run, a few seconds). Each run uses
its own ``HORUS_NAMESPACE``-style namespace and closes every endpoint, so nothing stays in
``/dev/shm``.
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
from typing import Any, Callable, Dict, List, Tuple

from bench_util import cores, med, percentiles, pin

HERE = os.path.abspath(__file__)
MAX_TAIL = 2 << 20  # the largest body here: PointCloud2 100 K points, 1,200,109 B

# Message kind -> (label, CDR body size of the Rust benchmark's message: docs/benchmarks.md,
# "Round trips: ROS 2 messages against the same bytes, fixed layout").
KINDS: Dict[str, Tuple[str, int]] = {
    "image": ("Image 640x480 rgb8", 921_656),
    "cloud10k": ("PointCloud2 10K", 120_109),
    "cloud100k": ("PointCloud2 100K", 1_200_109),
    "scan360": ("LaserScan 360", 2_936),
    "scan1080": ("LaserScan 1080", 8_696),
    "joints30": ("JointState 30", 1_368),
    "tf50": ("TFMessage 50", 4_800),
}
LOAN_KINDS = ("image", "cloud10k", "cloud100k")

READ_ZLIB_MAX = 6 * 1024


def read_bytes(a: Any) -> int:
    """Reads every byte of the C-contiguous array (or buffer) `a` once; returns a checksum.

    Up to READ_ZLIB_MAX bytes: zlib.adler32 of the buffer. Above: the sum of its 8-byte-aligned
    middle as uint64 words (np.add.reduce, wrapping) plus adler32 of the bytes before and after."""
    import numpy as np

    b = np.frombuffer(a, np.uint8) if not isinstance(a, np.ndarray) else a.reshape(-1).view(np.uint8)
    n = b.nbytes
    if n <= READ_ZLIB_MAX:
        return zlib.adler32(b.data)
    head = -b.__array_interface__["data"][0] & 7
    k = (n - head) & ~7
    return int(np.add.reduce(b[head:head + k].view(np.uint64))) + zlib.adler32(b[head + k:].data, zlib.adler32(b[:head].data))


# --- the messages: built by ping, read by both ---------------------------------------------


def read_header(h: Any) -> int:
    """The header's stamp as the sequence number; the frame id read (hash of a fresh str)."""
    hash(h.frame_id)
    return int(h.stamp.sec)


def make_builder(kind: str, loan: bool) -> Tuple[type, Callable[[int], Any], Dict[str, int]]:
    """(message class, build(seq) -> message, loan lengths). build writes every byte: the
    NumPy arrays are filled with the sequence number (the loan's data is filled in its block)."""
    import numpy as np
    from horus.interfaces.builtin_interfaces.msg import Time
    from horus.interfaces.std_msgs.msg import Header

    def header(seq: int, frame: str) -> Any:
        return Header(stamp=Time(sec=seq, nanosec=seq), frame_id=frame)

    if kind == "image":
        from horus.interfaces.sensor_msgs.msg import Image

        n = 640 * 480 * 3
        pixels = np.empty(n, np.uint8)

        def build_image(seq: int) -> Any:
            m = Image(header=header(seq, "camera_optical"), height=480, width=640, encoding="rgb8",
                      is_bigendian=0, step=640 * 3)
            if not loan:
                pixels.fill(seq & 0xFF)
                m.data = pixels
            return m

        return Image, build_image, {"data": n}
    if kind.startswith("cloud"):
        from horus.interfaces.sensor_msgs.msg import PointCloud2, PointField

        points = 10_000 if kind == "cloud10k" else 100_000
        xyz = np.empty((points, 3), np.float32)  # the driver's points; sent as their bytes
        data = xyz.reshape(-1).view(np.uint8)

        def build_cloud(seq: int) -> Any:
            m = PointCloud2(
                header=header(seq, "lidar"), height=1, width=points,
                fields=[PointField(name=nm, offset=4 * k, datatype=PointField.FLOAT32, count=1)
                        for k, nm in enumerate(("x", "y", "z"))],
                is_bigendian=False, point_step=12, row_step=12 * points, is_dense=True,
            )
            if not loan:
                xyz.fill(float(seq))
                m.data = data
            return m

        return PointCloud2, build_cloud, {"data": points * 12}
    if kind.startswith("scan"):
        from horus.interfaces.sensor_msgs.msg import LaserScan

        n = 360 if kind == "scan360" else 1080
        step = 2 * np.pi / n
        ranges = np.empty(n, np.float32)
        intensities = np.empty(n, np.float32)

        def build_scan(seq: int) -> Any:
            ranges.fill(1.0 + (seq & 0xFF) * 0.01)
            intensities.fill(float(seq & 0xFF))
            return LaserScan(header=header(seq, "laser"), angle_min=-np.pi, angle_max=np.pi - step,
                             angle_increment=step, time_increment=1e-4, scan_time=0.1, range_min=0.05,
                             range_max=30.0, ranges=ranges, intensities=intensities)

        return LaserScan, build_scan, {}
    if kind == "joints30":
        from horus.interfaces.sensor_msgs.msg import JointState

        names = [f"arm_joint_{k:02d}" for k in range(30)]
        pos, vel, eff = np.empty(30), np.empty(30), np.empty(30)

        def build_joints(seq: int) -> Any:
            pos.fill(seq * 0.01)
            vel.fill(seq * 0.1)
            eff.fill(seq * 1.5)
            return JointState(header=header(seq, "base_link"), name=names, position=pos, velocity=vel, effort=eff)

        return JointState, build_joints, {}
    if kind == "tf50":
        from horus.interfaces.geometry_msgs.msg import Quaternion, Transform, TransformStamped, Vector3
        from horus.interfaces.tf2_msgs.msg import TFMessage

        children = [f"link_{k:02d}" for k in range(50)]

        def build_tf(seq: int) -> Any:
            return TFMessage(transforms=[
                TransformStamped(
                    header=header(seq, "odom" if k == 0 else "base_link"), child_frame_id=children[k],
                    transform=Transform(translation=Vector3(x=float(k), y=0.5, z=0.25),
                                        rotation=Quaternion(x=0.0, y=0.0, z=0.0, w=1.0)))
                for k in range(50)])

        return TFMessage, build_tf, {}
    raise SystemExit(f"unknown message {kind!r}")


def read_message(kind: str, m: Any) -> int:
    """Reads every byte of a received message once: arrays through read_bytes, strings by
    hashing them, every scalar field (of the nested messages too). Returns the stamp's sec."""
    if kind == "tf50":
        seq = -1
        for t in m.transforms:
            s = read_header(t.header)
            hash(t.child_frame_id)
            tr, q = t.transform.translation, t.transform.rotation
            (tr.x, tr.y, tr.z, q.x, q.y, q.z, q.w, t.header.stamp.nanosec)
            if seq < 0:
                seq = s
        return seq
    seq = read_header(m.header)
    m.header.stamp.nanosec
    if kind == "image":
        (m.height, m.width, hash(m.encoding), m.is_bigendian, m.step)
        read_bytes(m.data)
    elif kind.startswith("cloud"):
        for f in m.fields:
            (hash(f.name), f.offset, f.datatype, f.count)
        (m.height, m.width, m.is_bigendian, m.point_step, m.row_step, m.is_dense)
        read_bytes(m.data)
    elif kind.startswith("scan"):
        (m.angle_min, m.angle_max, m.angle_increment, m.time_increment, m.scan_time, m.range_min, m.range_max)
        read_bytes(m.ranges)
        read_bytes(m.intensities)
    elif kind == "joints30":
        for s in m.name:
            hash(s)
        read_bytes(m.position)
        read_bytes(m.velocity)
        read_bytes(m.effort)
    return seq


# --- the two processes ---------------------------------------------------------------------


def side(ping: bool, kind: str, loan: bool, ns: str, count: int, warmup: int, spin: int, pong_cmd: List[str]) -> None:
    import horus

    cls, build, lengths = make_builder(kind, loan)
    out_name, in_name = ("bench/ping", "bench/pong") if ping else ("bench/pong", "bench/ping")
    out_topic: Any = horus.RosTopic(cls, out_name, max_tail_bytes=MAX_TAIL, namespace=ns)
    in_topic: Any = horus.RosTopic(cls, in_name, max_tail_bytes=MAX_TAIL, namespace=ns)
    pub = out_topic.publisher()
    sub = in_topic.subscriber() if spin < 0 else in_topic.subscriber(spin=spin)
    total = count + warmup
    try:
        if not ping:
            print("ready", flush=True)
            for _ in range(total):
                r = sub.recv(timeout=20)
                read_message(kind, r)
                pub.send(r)
                del r
            return
        body = len(build(0).to_cdr()) - 4 if not loan else -1  # without the 4-byte encapsulation header
        pong = subprocess.Popen(pong_cmd, stdout=subprocess.PIPE, text=True)
        try:
            assert pong.stdout is not None
            line = pong.stdout.readline().strip()
            if line != "ready":
                raise SystemExit(f"pong said {line!r} (exit {pong.poll()})")
            clock = time.perf_counter_ns
            samples: List[int] = []
            for i in range(total):
                t0 = clock()
                msg = build(i)
                if loan:
                    with pub.loan(msg, **lengths) as m:
                        m.data.fill(i & 0xFF)  # every byte written, in place in the chunk
                else:
                    pub.send(msg)
                r = sub.recv(timeout=20)
                seq = read_message(kind, r)
                t1 = clock()
                if seq != i:
                    raise SystemExit(f"{kind} ping {i}: answer carries stamp {seq}")
                del r, msg
                if i >= warmup:
                    samples.append(t1 - t0)
            pong.wait(timeout=20)
            if pong.returncode != 0:
                raise SystemExit(f"pong exited with {pong.returncode}")
            print("RESULT " + json.dumps({"samples": samples, "body": body}), flush=True)
        finally:
            if pong.poll() is None:
                pong.kill()
                pong.wait()
    finally:
        pub.close()
        sub.close()
        out_topic.close()
        in_topic.close()


# --- driver --------------------------------------------------------------------------------


def run_child(cmd: List[str], timeout: float) -> Dict[str, Any]:
    p = subprocess.run(cmd, stdout=subprocess.PIPE, text=True, timeout=timeout)
    lines = [line for line in p.stdout.splitlines() if line.startswith("RESULT ")]
    if p.returncode != 0 or not lines:
        raise RuntimeError(f"exit {p.returncode}, no result")
    out: Dict[str, Any] = json.loads(lines[-1][len("RESULT "):])
    return out


def counts(kind: str, quick: bool) -> Tuple[int, int]:
    """(timed, warm-up) round trips: about a second per measurement here."""
    if quick:
        return 20, 5
    n = 1000 if kind in ("image", "cloud100k") else 2000
    return n, n // 10


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="one round of 20 round trips per case (smoke run)")
    ap.add_argument("--rounds", type=int, default=None, help="interleaved rounds (default 5; --quick 1)")
    ap.add_argument("--json", metavar="PATH", help="write the results as JSON")
    ap.add_argument("--unpinned", action="store_true", help="run both processes unpinned (default: CPUs 0 and 1)")
    ap.add_argument("--messages", default="", help=f"comma-separated subset of {','.join(KINDS)}")
    ap.add_argument("--no-loan", action="store_true", help="skip the loan rows")
    ap.add_argument("--spin", type=int, default=-1,
                    help="polls before a blocking recv yields and sleeps (default: the library's, 1000)")
    ap.add_argument("--role", default="", help=argparse.SUPPRESS)
    ap.add_argument("--kind", default="", help=argparse.SUPPRESS)
    ap.add_argument("--loan", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--core", type=int, default=-1, help=argparse.SUPPRESS)
    ap.add_argument("--other-core", type=int, default=-1, help=argparse.SUPPRESS)
    ap.add_argument("--ns", default="", help=argparse.SUPPRESS)
    ap.add_argument("--count", type=int, default=0, help=argparse.SUPPRESS)
    ap.add_argument("--warmup", type=int, default=0, help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.role:
        pin(a.core)
        pong_cmd = [sys.executable, HERE, "--role", "pong", "--kind", a.kind, "--ns", a.ns, "--core", str(a.other_core),
                    "--count", str(a.count), "--warmup", str(a.warmup), "--spin", str(a.spin)] + (["--loan"] if a.loan else [])
        side(a.role == "ping", a.kind, a.loan, a.ns, a.count, a.warmup, a.spin, pong_cmd)
        return 0

    kinds = [k for k in a.messages.split(",") if k] if a.messages else list(KINDS)
    for k in kinds:
        if k not in KINDS:
            ap.error(f"unknown message {k!r} (known: {', '.join(KINDS)})")
    cases = [(k, False) for k in kinds] + ([] if a.no_loan else [(k, True) for k in kinds if k in LOAN_KINDS])
    c0, c1 = (-1, -1) if a.unpinned else cores()
    rounds = a.rounds or (1 if a.quick else 5)
    where = "unpinned" if a.unpinned else f"ping pinned to CPU {c0}, pong to CPU {c1}"
    method = [
        f"interleaved rounds: {rounds}; each round runs every case once in a fresh pair of processes, "
        "the order reversed every other round; per case and round: p50/p90/p99/min of the timed round trips "
        "(nearest rank, none discarded); summary: each figure's range over rounds",
        f"ping-pong between two Python processes ({where}), horus.RosTopic publisher/subscriber, blocking recv "
        f"(spin: {'the default, 1000 polls' if a.spin < 0 else a.spin} before it yields and sleeps on the futex)",
        "ping: builds a new message each round trip (header with stamp = sequence and frame id, every scalar "
        "and string, primitive sequences as NumPy arrays filled with ndarray.fill and assigned, no Python loop "
        "over elements; TFMessage: 50 TransformStamped objects built in a list comprehension) and send()s it "
        "(each array copied into the chunk once); `loan` rows: the same message without data, "
        "`with pub.loan(msg, data=n) as m: m.data.fill(b)` (filled in place in the chunk, no copy at send)",
        "pong: recv (decoded: arrays as read-only NumPy views of the chunk, strings as str, nested messages "
        "as objects), read_message (every array's bytes once with read_bytes, every string hashed, every "
        "scalar of every nested message), send(r) back (re-encoded, arrays copied into a new chunk)",
        "ping: recv, read_message, checks the answer's stamp; RTT = perf_counter_ns before the build to after the check",
        f"read_bytes(a): up to {READ_ZLIB_MAX} B zlib.adler32 of the buffer, above it np.add.reduce of the "
        "8-byte-aligned middle as uint64 + adler32 of the bytes at either end",
        "messages as crates/horus-bench-ros/src/ros_loads.rs builds them (frame ids, rgb8, x y z float32 fields "
        "for the clouds, arm_joint_NN names, link_NN child frames): same CDR body sizes as the Rust rows",
    ]
    print(f"ros_messages_py{' (quick)' if a.quick else ''} | Python {platform.python_version()} | {platform.machine()}")
    for m in method:
        print(f"method: {m}")
    rows: List[Dict[str, Any]] = []
    errors: List[str] = []
    bodies: Dict[str, int] = {}
    for rnd in range(rounds):
        order = cases if rnd % 2 == 0 else list(reversed(cases))
        print(f"round {rnd + 1}/{rounds}", flush=True)
        for kind, loan in order:
            n, w = counts(kind, a.quick)
            ns = f"rosmsgpy-{os.getpid()}-{rnd}-{kind}{'-loan' if loan else ''}"
            cmd = [sys.executable, HERE, "--role", "ping", "--kind", kind, "--ns", ns, "--count", str(n),
                   "--warmup", str(w), "--core", str(c0), "--other-core", str(c1), "--spin", str(a.spin)] + (["--loan"] if loan else [])
            case = f"{KINDS[kind][0]}{' (loan)' if loan else ''}"
            try:
                out = run_child(cmd, 300)
                s = percentiles(out["samples"])
                if not loan:
                    bodies[kind] = out["body"]
                rows.append({"message": kind, "label": KINDS[kind][0], "loan": loan, "round": rnd,
                             "pinned": not a.unpinned, **s})
                print(f"  {case:28s} p50 {s['p50']:9.1f} µs  p90 {s['p90']:9.1f}  p99 {s['p99']:9.1f}  "
                      f"min {s['min']:9.1f}  (n={s['n']})", flush=True)
            except Exception as e:  # recorded, the run goes on
                errors.append(f"round {rnd + 1} {case}: {e}")
                print(f"  FAILED {errors[-1]}", file=sys.stderr, flush=True)
    for kind, body in bodies.items():
        if body != KINDS[kind][1]:
            errors.append(f"{KINDS[kind][0]}: CDR body {body} B, the Rust rows' is {KINDS[kind][1]} B")
            print(f"FAILED {errors[-1]}", file=sys.stderr)
    summary = []
    print("summary: range over rounds (µs)")
    for kind, loan in cases:
        rs = [r for r in rows if r["message"] == kind and r["loan"] == loan]
        if not rs:
            continue
        entry: Dict[str, Any] = {"message": kind, "label": KINDS[kind][0], "loan": loan, "body": bodies.get(kind),
                                 "rounds": len(rs)}
        for q in ("p50", "p90", "p99", "min"):
            v = [r[q] for r in rs]
            entry[q] = {"min": min(v), "median": med(v), "max": max(v)}
        summary.append(entry)
        print(f"  {KINDS[kind][0] + (' (loan)' if loan else ''):28s} body {bodies.get(kind, '?')!s:>8} B  "
              + "  ".join(f"{q} {entry[q]['min']:.1f}–{entry[q]['max']:.1f}" for q in ("p50", "p90", "p99", "min")))
    if a.json:
        doc = {"benchmark": "ros_messages_py", "quick": a.quick, "python": platform.python_version(),
               "machine": platform.machine(), "spin": None if a.spin < 0 else a.spin, "cpus": None if a.unpinned else [c0, c1], "method": method,
               "rows": rows, "summary": summary, "errors": errors}
        with open(a.json, "w") as f:
            f.write(json.dumps(doc, indent=2) + "\n")
        print(f"wrote {a.json}")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
