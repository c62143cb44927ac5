"""Figures for docs/foxglove.md: bridge CPU while a client subscribes to the running demo's
topics, and publish → client-receive latency of a 1 MiB point cloud.

    HORUS_PYTHON=.venv/bin/python .venv/bin/python crates/horus-foxglove/measure/measure.py cpu
    .venv/bin/python crates/horus-foxglove/measure/measure.py latency [--count 300]

`cpu` expects the demo running in namespace `fox` (horus launch ... namespace:=fox); it
starts `horus foxglove` (release build), subscribes a client to every channel for
`--seconds`, and reads the bridge's utime+stime from /proc. `latency` publishes clouds of
65,536 XyzI points (1 MiB) from this process, stamped with the wall clock just before
`send`, and compares with the wall clock when the client's `recv()` returns (same host, same
clock). Not a test: it prints, and asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import threading
import time
from typing import Any, Dict, List

import numpy as np
from websockets.sync.client import connect

TARGET = os.environ.get("CARGO_TARGET_DIR", os.path.expanduser("~/.cache/horus-target"))
HORUS = os.environ.get("HORUS_BIN", os.path.join(TARGET, "release/horus"))
TICK = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid: int) -> float:
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK


def start_bridge(ns: str) -> "tuple[subprocess.Popen[str], str]":
    p = subprocess.Popen([HORUS, "--json", "foxglove", "--port", "0", "--namespace", ns],
                         stdout=subprocess.PIPE, text=True)
    assert p.stdout is not None
    first = json.loads(p.stdout.readline())
    threading.Thread(target=lambda: [None for _ in p.stdout], daemon=True).start()  # type: ignore[union-attr]
    return p, "ws://" + first["address"]


def cpu(seconds: float) -> None:
    p, url = start_bridge("fox")
    counts: Dict[str, int] = {}
    with connect(url, subprotocols=["foxglove.websocket.v1"], max_size=None) as ws:  # type: ignore[list-item]
        topics: Dict[int, str] = {}
        subs = 0
        # Subscribe to everything advertised in the first second (and anything later).
        t_end = None
        c0 = None
        while True:
            try:
                m = ws.recv(timeout=0.2)
            except TimeoutError:
                m = None
            now = time.monotonic()
            if isinstance(m, str):
                j = json.loads(m)
                if j["op"] == "advertise":
                    for c in j["channels"]:
                        topics[c["id"]] = c["topic"]
                        ws.send(json.dumps({"op": "subscribe", "subscriptions": [{"id": c["id"], "channelId": c["id"]}]}))
                        subs += 1
            elif isinstance(m, bytes):
                sub = int.from_bytes(m[1:5], "little")
                counts[topics[sub]] = counts.get(topics[sub], 0) + 1
            if subs and c0 is None:
                c0, w0 = cpu_seconds(p.pid), now
                t_end = now + seconds
            if t_end is not None and now >= t_end:
                c1, w1 = cpu_seconds(p.pid), now
                break
    p.terminate()
    p.wait()
    print(f"bridge CPU: {100 * (c1 - c0) / (w1 - w0):.1f} % of one core over {w1 - w0:.1f} s")
    for t, n in sorted(counts.items()):
        print(f"  {t}: {n} messages ({n / (w1 - w0):.1f}/s)")


def latency(count: int, hz: float) -> None:
    import horus

    ns = f"foxlat-{os.getpid()}"
    os.environ["HORUS_NAMESPACE"] = ns
    n = 65536
    t = horus.Topic(horus.PointCloud, "lat/cloud", max_tail_bytes=16 * n)
    pub = t.publisher()
    p, url = start_bridge(ns)
    pts = np.random.default_rng(1).random((n, 4), dtype=np.float32)
    tail = pts.reshape(-1).view(np.uint8)
    lat: List[float] = []
    stamp_re = re.compile(rb'"sec":(\d+),"nsec":(\d+)')
    with connect(url, subprotocols=["foxglove.websocket.v1"], max_size=None) as ws:  # type: ignore[list-item]
        cid = None
        while cid is None:
            j = json.loads(ws.recv())
            if j["op"] == "advertise":
                cid = j["channels"][0]["id"]
        ws.send(json.dumps({"op": "subscribe", "subscriptions": [{"id": 1, "channelId": cid}]}))
        stop = threading.Event()

        def publish() -> None:
            seq = 0
            while not stop.is_set():
                seq += 1
                hdr = horus.PointCloud(num_points=n, point_step=16, seq=seq, stamp_ns=time.time_ns())
                pub.send(hdr, tail)
                time.sleep(1 / hz)

        th = threading.Thread(target=publish)
        th.start()
        while len(lat) < count:
            m = ws.recv(timeout=10)
            now = time.time_ns()
            if isinstance(m, bytes):
                g = stamp_re.search(m, 13, 200)
                assert g is not None
                sent = int(g.group(1)) * 1_000_000_000 + int(g.group(2))
                lat.append((now - sent) / 1e6)
        stop.set()
        th.join()
        size = len(m)
    p.terminate()
    p.wait()
    lat.sort()
    print(f"1 MiB PointCloud → foxglove.PointCloud JSON frame of {size / 1e6:.2f} MB, {count} messages at {hz} Hz")
    print(f"publish → client recv: median {statistics.median(lat):.2f} ms, "
          f"p90 {lat[int(0.9 * len(lat))]:.2f} ms, max {lat[-1]:.2f} ms, min {lat[0]:.2f} ms")


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("what", choices=["cpu", "latency"])
    ap.add_argument("--seconds", type=float, default=20.0)
    ap.add_argument("--count", type=int, default=300)
    ap.add_argument("--hz", type=float, default=30.0)
    a = ap.parse_args()
    if a.what == "cpu":
        cpu(a.seconds)
    else:
        latency(a.count, a.hz)
