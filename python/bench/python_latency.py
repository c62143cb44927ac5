#!/usr/bin/env python3
"""python_latency: ping-pong round-trip times from Python, side by side.

Two processes, pinned to two cores (ping on the first, pong on the second
of the cores this process may use). The ping process sends a message, the
pong process echoes it, the ping process receives the echo: one round trip
(RTT), timed with ``time.perf_counter_ns`` around the whole exchange. No
send-only timings.

Cases, all in the same run:

* ``horus py-py cmdvel busy``   horus, Python↔Python, CmdVel (16 B), busy-polling
* ``horus py-py cmdvel block``  the same with blocking receives (spin up to
  ``spin`` polls, then sleep on the futex: the default of Python subscribers)
* ``… block spin=0``            blocking receives that sleep at once (pure futex)
* ``horus py-rust cmdvel …``    Python ping, Rust pong (``horus-py-peer``)
* ``horus py-py tensor 1MiB touch1``  a 1 MiB TensorPool tensor handed over by
  descriptor, **touching one element**: ping writes element 0, the pong side
  attaches it and reads element 0 (no payload copy): the cost of the hand-over
  alone, not of using the data
* ``horus py-py tensor 1MiB full``  the same hand-over with **every byte** written
  and read: ping fills the whole tensor with the sequence number, the pong side
  attaches it and sums every element (checked against the expected sum), ping
  sums every element of the echoed tensor (checked) before the sample ends
* ``horus py-rust tensor 1MiB …``  Python ping, Rust pong: the Rust pong echoes
  the descriptor without attaching the tensor, so only the Python side touches
  the payload (one element, or every byte written and read by ping)
* ``iceoryx2 py-py 16B busy``   the ``iceoryx2`` PyPI package, ctypes payload
* ``pyzmq ipc:// 16B block``    ``zmq.PAIR`` over ``ipc://``
* ``mp.Queue 16B block``        ``multiprocessing`` queues

Usage::

    python python/bench/python_latency.py [--quick] [--json [PATH]] [--only SUBSTR]

Cases whose package is not installed (iceoryx2, pyzmq) or whose Rust peer is
not built are reported as skipped. Prints min/p50/p99/p99.9/max in µs.
"""

from __future__ import annotations

import argparse
import ctypes
import json
import multiprocessing as mp
import os
import platform
import subprocess
import sys
import time
from typing import Any, Callable, Dict, List, Optional, Tuple

STOP = 2**64 - 1


def cores() -> Tuple[int, int]:
    avail = sorted(os.sched_getaffinity(0))
    return avail[0], avail[1 % len(avail)]


def pin(core: int) -> None:
    os.sched_setaffinity(0, {core})


def percentiles(samples: List[int]) -> Dict[str, float]:
    s = sorted(samples)
    n = len(s)

    def at(q: float) -> float:
        return s[min(n - 1, int(q * n))] / 1000.0

    return {"min": s[0] / 1000.0, "p50": at(0.5), "p99": at(0.99), "p999": at(0.999), "max": s[-1] / 1000.0}


def peer_path() -> Optional[str]:
    path = os.environ.get("HORUS_PY_PEER") or os.path.join(
        os.environ.get("CARGO_TARGET_DIR", "/root/.cache/horus-target"), "release", "horus-py-peer"
    )
    return path if os.access(path, os.X_OK) else None


# --- horus ------------------------------------------------------------------


def horus_pong(kind: str, busy: bool, ns: str, spin: Optional[int] = None) -> None:
    """Python pong: echo until the stop stamp."""
    import horus

    msg_type = horus.CmdVel if kind == "cmdvel" else horus.TensorRef
    sub = horus.Topic(msg_type, "bench/ping", namespace=ns).subscriber(busy_poll=busy, **({} if spin is None else {'spin': spin}))
    pub = horus.Topic(msg_type, "bench/pong", namespace=ns).publisher()
    if kind == "tensorfull":
        import numpy as np
    print("ready", flush=True)
    while True:
        if busy:
            m = sub.try_recv()
            while m is None:
                m = sub.try_recv()
        else:
            m = sub.recv()
        if m.stamp_ns == STOP:
            return
        if kind == "tensor":
            # Attach (one native call: the NumPy view, no copy) and touch ONE
            # element: the hand-over alone.
            a = horus.TensorPool.numpy_from_descriptor(m, namespace=ns)
            a[0]
            del a
        elif kind == "tensorfull":
            # Attach and read every byte: the sum of all elements, checked.
            # Exact in float64: ping fills with a small integer.
            a = horus.TensorPool.numpy_from_descriptor(m, namespace=ns)
            total = float(a.sum(dtype=np.float64))
            want = float(m.stamp_ns) * a.size
            del a
            if total != want:
                raise SystemExit(f"pong: tensor {m.stamp_ns}: sum {total}, expected {want}")
        pub.send(m)


def horus_ping(
    kind: str, busy: bool, n: int, warmup: int, ns: str, pong_cmd: List[str], spin: Optional[int] = None
) -> List[int]:
    import horus
    import numpy as np

    msg_type = horus.CmdVel if kind == "cmdvel" else horus.TensorRef
    pub = horus.Topic(msg_type, "bench/ping", namespace=ns).publisher()
    sub = horus.Topic(msg_type, "bench/pong", namespace=ns).subscriber(busy_poll=busy, **({} if spin is None else {'spin': spin}))
    child = subprocess.Popen(pong_cmd, stdout=subprocess.PIPE, text=True)
    try:
        assert child.stdout is not None and child.stdout.readline().strip() == "ready"
        pub.wait_for_subscribers()
        pool = horus.TensorPool(7, slots=4, slot_bytes=1 << 20, namespace=ns) if kind != "cmdvel" else None
        full = kind == "tensorfull"
        samples: List[int] = []
        msg = horus.CmdVel(linear=1.0) if kind == "cmdvel" else None
        ref = horus.TensorRef()
        clock = time.perf_counter_ns
        for i in range(n + warmup):
            if pool is not None:
                t0 = clock()
                # 1 MiB, not copied anywhere: one native call allocates it,
                # writes its descriptor into `ref` (reused) and returns the
                # NumPy view, which holds the tensor.
                t, _ = pool.alloc_numpy(1 << 18, np.float32, stamp_ns=i, out=ref)
                if full:
                    t.fill(i)  # every byte written
                else:
                    t[0] = i  # one element written
                pub.send(ref)
            else:
                assert msg is not None
                msg.stamp_ns = i
                t0 = clock()
                pub.send(msg)
            if busy:
                r = sub.try_recv()
                spins = 0
                while r is None:
                    r = sub.try_recv()
                    spins += 1
                    if spins & 0xFFFFF == 0 and child.poll() is not None:
                        raise RuntimeError(f"pong exited with {child.returncode}")
            else:
                r = sub.recv(timeout=10)
            if full:
                # Every byte of the echoed tensor read (checked) before the sample ends.
                total = float(t.sum(dtype=np.float64))
                if total != float(i) * t.size:
                    raise RuntimeError(f"tensor {i}: sum {total}, expected {float(i) * t.size}")
            t1 = clock()
            if pool is not None:
                del t
            if i >= warmup:
                samples.append(t1 - t0)
        stop = horus.CmdVel(stamp_ns=STOP) if kind == "cmdvel" else horus.TensorRef(stamp_ns=STOP)
        pub.send(stop)
        child.wait(timeout=10)
        return samples
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()


# --- iceoryx2 -----------------------------------------------------------------


class Payload16(ctypes.Structure):
    _fields_ = [("stamp", ctypes.c_uint64), ("linear", ctypes.c_float), ("angular", ctypes.c_float)]


def iox_ports(ns: str, ping_side: bool) -> Tuple[Any, Any, Any]:
    import iceoryx2 as iox2

    iox2.set_log_level_from_env_or(iox2.LogLevel.Warn)
    node = iox2.NodeBuilder.new().create(iox2.ServiceType.Ipc)

    def service(name: str) -> Any:
        return node.service_builder(iox2.ServiceName.new(f"{ns}/{name}")).publish_subscribe(Payload16).open_or_create()

    out_name, in_name = ("ping", "pong") if ping_side else ("pong", "ping")
    pub = service(out_name).publisher_builder().create()
    sub = service(in_name).subscriber_builder().create()
    return node, pub, sub


def iox_send(pub: Any, stamp: int) -> None:
    sample = pub.loan_uninit()
    sample = sample.write_payload(Payload16(stamp=stamp, linear=1.0, angular=0.0))
    sample.send()


def iox_recv(sub: Any) -> int:
    while True:
        s = sub.receive()
        if s is not None:
            stamp: int = s.payload().contents.stamp
            return stamp


def iox_pong(ns: str) -> None:
    node, pub, sub = iox_ports(ns, ping_side=False)
    print("ready", flush=True)
    while True:
        stamp = iox_recv(sub)
        if stamp == STOP:
            return
        iox_send(pub, stamp)


def iox_ping(n: int, warmup: int, ns: str, pong_cmd: List[str]) -> List[int]:
    node, pub, sub = iox_ports(ns, ping_side=True)
    child = subprocess.Popen(pong_cmd, stdout=subprocess.PIPE, text=True)
    try:
        assert child.stdout is not None and child.stdout.readline().strip() == "ready"
        time.sleep(0.2)  # let the pong's subscriber connect
        samples = []
        clock = time.perf_counter_ns
        for i in range(n + warmup):
            t0 = clock()
            iox_send(pub, i)
            iox_recv(sub)
            t1 = clock()
            if i >= warmup:
                samples.append(t1 - t0)
        iox_send(pub, STOP)
        child.wait(timeout=10)
        return samples
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()


# --- pyzmq and multiprocessing ----------------------------------------------


def zmq_pong(addr: str) -> None:
    import zmq

    sock = zmq.Context.instance().socket(zmq.PAIR)
    sock.connect(addr)
    print("ready", flush=True)
    while True:
        m = sock.recv()
        if m == b"stop":
            return
        sock.send(m)


def zmq_ping(n: int, warmup: int, addr: str, pong_cmd: List[str]) -> List[int]:
    import zmq

    sock = zmq.Context.instance().socket(zmq.PAIR)
    sock.bind(addr)
    child = subprocess.Popen(pong_cmd, stdout=subprocess.PIPE, text=True)
    try:
        assert child.stdout is not None and child.stdout.readline().strip() == "ready"
        payload = bytes(16)
        samples = []
        clock = time.perf_counter_ns
        for i in range(n + warmup):
            t0 = clock()
            sock.send(payload)
            sock.recv()
            t1 = clock()
            if i >= warmup:
                samples.append(t1 - t0)
        sock.send(b"stop")
        child.wait(timeout=10)
        return samples
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()


def _mp_pong(core: int, q_in: Any, q_out: Any) -> None:
    pin(core)
    while True:
        m = q_in.get()
        if m is None:
            return
        q_out.put(m)


def mp_ping(n: int, warmup: int, pong_core: int) -> List[int]:
    ctx = mp.get_context("spawn")
    q_in, q_out = ctx.Queue(), ctx.Queue()
    proc = ctx.Process(target=_mp_pong, args=(pong_core, q_in, q_out))
    proc.start()
    try:
        payload = bytes(16)
        q_in.put(payload)
        q_out.get()
        samples = []
        clock = time.perf_counter_ns
        for i in range(n + warmup):
            t0 = clock()
            q_in.put(payload)
            q_out.get()
            t1 = clock()
            if i >= warmup:
                samples.append(t1 - t0)
        q_in.put(None)
        proc.join(timeout=10)
        return samples
    finally:
        if proc.is_alive():
            proc.kill()


# --- driver -------------------------------------------------------------------


def pong_main(args: argparse.Namespace) -> None:
    pin(args.core)
    if args.case.startswith("horus-"):
        _, kind, mode = args.case.split("-")
        horus_pong(kind, mode == "busy", args.ns, 0 if mode == "futexonly" else None)
    elif args.case == "iceoryx2":
        iox_pong(args.ns)
    elif args.case == "zmq":
        zmq_pong(args.addr)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="fewer round trips (smoke run)")
    ap.add_argument("--json", nargs="?", const="-", metavar="PATH", help="write JSON results (stdout if no PATH)")
    ap.add_argument("--only", default="", help="run only cases whose name contains this")
    ap.add_argument("--role", default="ping", help=argparse.SUPPRESS)
    ap.add_argument("--case", default="", help=argparse.SUPPRESS)
    ap.add_argument("--core", type=int, default=0, help=argparse.SUPPRESS)
    ap.add_argument("--ns", default="", help=argparse.SUPPRESS)
    ap.add_argument("--addr", default="", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.role == "pong":
        pong_main(args)
        return 0

    ping_core, pong_core = cores()
    pin(ping_core)
    n, warmup = (2000, 200) if args.quick else (20000, 2000)
    print(
        f"method: round trip (ping sends, pong echoes, ping receives the echo), two processes "
        f"pinned to CPUs {ping_core} (ping) and {pong_core} (pong), timed with perf_counter_ns "
        f"around the whole exchange; {warmup} untimed warm-up round trips, then up to {n} timed "
        f"(fewer for the blocking peers); p50 = median" + (" — quick mode" if args.quick else ""),
        flush=True,
    )
    ns = f"bench-{os.getpid()}"
    me = [sys.executable, os.path.abspath(__file__), "--role", "pong", "--core", str(pong_core), "--ns", ns]
    peer = peer_path()
    rust_env = {**os.environ, "HORUS_NAMESPACE": ns}

    def rust_pong(kind: str, mode: str) -> List[str]:
        assert peer is not None
        return ["taskset", "-c", str(pong_core), peer, "pong", kind, "bench/ping", "bench/pong", mode]

    cases: List[Tuple[str, str, Optional[Callable[[], List[int]]]]] = []
    for mode in ("busy", "block"):
        busy = mode == "busy"
        cases.append((f"horus py-py cmdvel {mode}", "horus", lambda b=busy, m=mode: horus_ping("cmdvel", b, n, warmup, ns, me + ["--case", f"horus-cmdvel-{m}"])))
    cases.append(
        (
            "horus py-py cmdvel block spin=0",
            "horus",
            lambda: horus_ping("cmdvel", False, n // 4, warmup // 4, ns, me + ["--case", "horus-cmdvel-futexonly"], 0),
        )
    )
    for mode in ("busy", "block"):
        busy = mode == "busy"
        fn = None if peer is None else (lambda b=busy, m=mode: horus_ping("cmdvel", b, n, warmup, ns, rust_pong("cmdvel", "busy" if b else "futex")))
        cases.append((f"horus py-rust cmdvel {mode}", "horus", fn))
    # Two tensor cases: the hand-over touching one element, and every byte written and read.
    for kind, label in (("tensor", "touch1"), ("tensorfull", "full")):
        cases.append((f"horus py-py tensor 1MiB {label} busy", "horus", lambda k=kind: horus_ping(k, True, n // 4, warmup // 4, ns, me + ["--case", f"horus-{k}-busy"])))
        fn = None if peer is None else (lambda k=kind: horus_ping(k, True, n // 4, warmup // 4, ns, rust_pong("tensor", "busy")))
        cases.append((f"horus py-rust tensor 1MiB {label} busy", "horus", fn))
    cases.append(("iceoryx2 py-py 16B busy", "iceoryx2", lambda: iox_ping(n, warmup, ns, me + ["--case", "iceoryx2"])))
    addr = f"ipc:///tmp/horus-bench-{os.getpid()}.ipc"
    cases.append(("pyzmq ipc:// 16B block", "zmq", lambda: zmq_ping(n // 4, warmup // 4, addr, me + ["--case", "zmq", "--addr", addr])))
    cases.append(("mp.Queue 16B block", "multiprocessing", lambda: mp_ping(n // 4, warmup // 4, pong_core)))

    results: List[Dict[str, Any]] = []
    for name, module, fn in cases:
        if args.only and args.only not in name:
            continue
        entry: Dict[str, Any] = {"case": name}
        try:
            if fn is None:
                raise RuntimeError("horus-py-peer not built (make py-peer)")
            if module not in ("horus", "multiprocessing"):
                __import__(module)
            os.environ["HORUS_NAMESPACE"] = ns
            samples = fn()
            entry.update(n=len(samples), **percentiles(samples))
        except ImportError as e:
            entry["skipped"] = f"{module} not installed ({e})"
        except Exception as e:  # report and go on with the other cases
            entry["skipped"] = f"failed: {e!r}"
        results.append(entry)
        if not args.json or args.json != "-":
            if "skipped" in entry:
                print(f"{name:40s} skipped: {entry['skipped']}", flush=True)
            else:
                print(
                    f"{name:40s} n={entry['n']:6d}  min {entry['min']:8.2f}  p50 {entry['p50']:8.2f}  "
                    f"p99 {entry['p99']:8.2f}  p99.9 {entry['p999']:8.2f}  max {entry['max']:9.2f} µs",
                    flush=True,
                )
    meta = {
        "method": "ping-pong RTT between two processes pinned to cores "
        f"{ping_core} (ping) and {pong_core} (pong); perf_counter_ns around send+receive of the echo; "
        "tensor touch1 = one element written and read (the hand-over alone); tensor full = every "
        "byte written by ping, read by a Python pong (checked sum) and read again by ping; py-rust "
        "tensor: the Rust pong echoes the descriptor without reading the payload",
        "python": platform.python_version(),
        "machine": platform.machine(),
        "quick": args.quick,
    }
    if args.json:
        doc = json.dumps({"meta": meta, "results": results}, indent=2)
        if args.json == "-":
            print(doc)
        else:
            with open(args.json, "w") as f:
                f.write(doc + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
