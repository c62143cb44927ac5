#!/usr/bin/env python3
"""Checks that a benchmark's --json document is well formed and complete.

    check_suite_json.py BENCHMARK FILE

Completeness means every row the binary's default (or --quick) run promises is there,
with every statistic present, finite and ordered (min <= median <= p99 <= p99.9 <= max),
and no measurement failed. No timing is asserted: only that the numbers exist and make
sense as numbers. Exit status 1 with the reasons otherwise.
"""

import json
import math
import sys

MESSAGES = ["CmdVel", "BatteryState", "Imu", "Odometry", "LaserScan",
            "PointCloud1k", "PointCloud10k", "Image"]
SWEEP_SIZES = [64, 256, 1024, 4096, 16384, 65536, 262144, 1048576]
PEER_SIZES_QUICK = [16, 1480, 65536, 1048576]
PEER_SIZES_FULL = [16, 64, 256, 1024, 1480, 4096, 16384, 65536, 262144, 1048576]
PEER_SYSTEMS = [("ref:touch", "reference"), ("ref:copy", "reference"),
                ("horus", "loan"), ("horus", "copy"), ("horus:futex", "loan"), ("iceoryx2", "loan"),
                ("zenoh-shm", "loan"), ("zenoh", "copy"), ("uds", "copy")]
ROUTES = ["same thread 1:1", "cross-thread 1:1", "cross-thread 1:1", "cross-thread 4:1",
          "cross-thread 1:4", "cross-thread 4:4", "cross-process 1:1", "cross-process 1:1",
          "cross-process 4:1", "cross-process 1:4", "cross-process 4:4"]

problems = []


def fail(msg):
    problems.append(msg)


def number(v, what):
    if not isinstance(v, (int, float)) or isinstance(v, bool) or not math.isfinite(v):
        fail(f"{what}: not a finite number ({v!r})")
        return False
    return True


def summary(s, what):
    if not isinstance(s, dict):
        fail(f"{what}: missing")
        return
    keys = ["iterations", "min_ns", "median_ns", "p99_ns", "p999_ns", "max_ns", "mean_ns",
            "msgs_per_sec"]
    if not all(number(s.get(k), f"{what}.{k}") for k in keys):
        return
    if s["iterations"] <= 0:
        fail(f"{what}: no iterations")
    order = [s[k] for k in ["min_ns", "median_ns", "p99_ns", "p999_ns", "max_ns"]]
    if order != sorted(order):
        fail(f"{what}: percentiles out of order {order}")


def throughput(t, what):
    if not isinstance(t, dict):
        fail(f"{what}: missing")
        return
    if all(number(t.get(k), f"{what}.{k}") for k in ["messages", "elapsed_ns", "msgs_per_sec"]):
        if t["messages"] <= 0 or t["msgs_per_sec"] <= 0:
            fail(f"{what}: empty burst")


def check_robotics(doc):
    kinds = [r.get("kind") for r in doc["rows"]]
    if kinds != MESSAGES:
        fail(f"message types {kinds}, expected {MESSAGES}")
    for r in doc["rows"]:
        name = r.get("message", "?")
        summary(r.get("rtt_1to1"), f"{name} 1:1 rtt")
        summary(r.get("rtt_nn"), f"{name} 4:4 rtt")
        throughput(r.get("throughput_1to1"), f"{name} 1:1 throughput")
        throughput(r.get("throughput_nn"), f"{name} 4:4 throughput")
        number(r.get("headroom"), f"{name} headroom")
        number(r.get("wire_bytes"), f"{name} wire_bytes")


def check_sweep(doc):
    got = [(r.get("size"), r.get("mode")) for r in doc["rows"]]
    want = [(s, m) for s in SWEEP_SIZES for m in ["copy", "loan"]]
    if got != want:
        fail(f"rows {got}, expected {want}")
    for r in doc["rows"]:
        summary(r.get("rtt"), f"{r.get('size')} {r.get('mode')}")
        number(r.get("bandwidth_mib_s"), f"{r.get('size')} bandwidth")


def check_paths(doc):
    got = [r.get("route") for r in doc["rows"]]
    if got != ROUTES:
        fail(f"routes {got}, expected {ROUTES}")
    for r in doc["rows"]:
        summary(r.get("rtt"), f"{r.get('route')} {r.get('wait')}")
        summary(r.get("send_only"), f"{r.get('route')} {r.get('wait')} send-only")


def check_scalability(doc):
    got = [(r.get("sweep"), r["result"].get("topics"), r["result"].get("subs"))
           for r in doc["rows"]]
    want = [("fanout", 1, k) for k in [1, 2, 4, 8, 16]] + \
           [("topics", t, 1) for t in [1, 4, 8, 64, 256]]
    if got != want:
        fail(f"points {got}, expected {want}")
    for r in doc["rows"]:
        x = r["result"]
        what = f"{r.get('sweep')} {x.get('topics')}x{x.get('subs')}"
        summary(x.get("latency"), what)
        for k in ["sent", "expected", "received", "lost", "publisher_cpu_percent"]:
            number(x.get(k), f"{what}.{k}")
        if x.get("received", 0) + x.get("lost", 0) != x.get("expected"):
            fail(f"{what}: received + lost != expected")
        cpus = x.get("subscriber_cpu_percent")
        if not isinstance(cpus, list) or len(cpus) != x.get("subs"):
            fail(f"{what}: one CPU figure per subscriber expected")


def check_peers(doc):
    sizes = PEER_SIZES_QUICK if doc.get("quick") else PEER_SIZES_FULL
    rows = doc["rows"]
    have = {(r["system"], r["mode"], r.get("size")) for r in rows}
    want = {(s, m, n) for (s, m) in PEER_SYSTEMS for n in sizes}
    want.add(("floor:cacheline", "reference", None))
    if have != want:
        fail(f"missing rows {sorted(map(str, want - have))}, unexpected {sorted(map(str, have - want))}")
    for r in rows:
        summary(r.get("rtt"), f"{r['system']} {r['mode']} {r.get('size')}")


# interleaved: every round measures these at every size, horus and its peer waiting alike.
INTERLEAVED_SIZES = [16, 1480, 65536, 1048576]
INTERLEAVED_SYSTEMS = {"horus": ("loan", "busy-poll"), "horus:futex": ("loan", "blocking"),
                       "iceoryx2": ("loan", "busy-poll"), "uds": ("copy", "blocking"),
                       "zenoh-shm": ("loan", "blocking"), "zenoh": ("copy", "blocking")}
INTERLEAVED_ROUNDS_QUICK = 2   # --quick's default
INTERLEAVED_ROUNDS_FULL = 5    # the default, and the fewest a verdict is drawn from


def check_interleaved(doc):
    # --rounds may ask for more than the default; never fewer than the mode's default.
    rows = doc["rows"]
    least = INTERLEAVED_ROUNDS_QUICK if doc.get("quick") else INTERLEAVED_ROUNDS_FULL
    rounds = max([least] + [r["round"] + 1 for r in rows])
    have = sorted((r["round"], r["size"], r["system"]) for r in rows)
    want = sorted((k, n, s) for k in range(rounds) for n in INTERLEAVED_SIZES
                  for s in INTERLEAVED_SYSTEMS)
    if have != want:
        fail(f"missing rows {sorted(map(str, set(want) - set(have)))}, "
             f"unexpected {sorted(map(str, set(have) - set(want)))}")
    for r in rows:
        what = f"round {r['round']} {r['system']} {r['size']}"
        mode_wait = INTERLEAVED_SYSTEMS.get(r["system"])
        if mode_wait and (r.get("mode"), r.get("wait")) != mode_wait:
            fail(f"{what}: mode/wait {(r.get('mode'), r.get('wait'))}, expected {mode_wait}")
        if r.get("pinned") is not True:
            fail(f"{what}: not pinned")
        summary(r.get("rtt"), what)
    # Within a round and size, each system once, at positions 0..n-1; horus first in
    # even rounds, the peers first in odd rounds (the order alternates).
    for k in range(rounds):
        for n in INTERLEAVED_SIZES:
            group = sorted((r["order"], r["system"]) for r in rows
                           if r["round"] == k and r["size"] == n)
            if [o for o, _ in group] != list(range(len(group))):
                fail(f"round {k} size {n}: order {group}")
            elif group:
                first_is_horus = group[0][1].startswith("horus")
                if first_is_horus != (k % 2 == 0):
                    fail(f"round {k} size {n}: order does not alternate {group}")


# many_to_many: every round measures horus and iceoryx2 for every message, 4 publishers x
# 4 subscribers, busy-poll; pinned (8 distinct CPUs) or unpinned, the same in every row.
NN_MESSAGES_QUICK = ["CmdVel", "LaserScan"]
NN_MESSAGES_FULL = ["CmdVel", "BatteryState", "Imu", "Odometry", "LaserScan"]
NN_SYSTEMS = ["horus", "iceoryx2"]
NN_ROUNDS_QUICK = 2
NN_ROUNDS_FULL = 5


def check_many_to_many(doc):
    rows = doc["rows"]
    quick = doc.get("quick")
    least = NN_ROUNDS_QUICK if quick else NN_ROUNDS_FULL
    rounds = max([least] + [r["round"] + 1 for r in rows])
    messages = NN_MESSAGES_QUICK if quick else NN_MESSAGES_FULL
    have = sorted((r["round"], r["message"], r["system"]) for r in rows)
    want = sorted((k, m, s) for k in range(rounds) for m in messages for s in NN_SYSTEMS)
    if have != want:
        fail(f"missing rows {sorted(map(str, set(want) - set(have)))}, "
             f"unexpected {sorted(map(str, set(have) - set(want)))}")
    if len({(r.get("pinned"), tuple(r.get("cpus") or [])) for r in rows}) > 1:
        fail("rows differ in pinning")
    for r in rows:
        what = f"round {r['round']} {r['system']} {r['message']}"
        if (r.get("pubs"), r.get("subs"), r.get("wait")) != (4, 4, "busy-poll"):
            fail(f"{what}: {r.get('pubs')}:{r.get('subs')} {r.get('wait')}, expected 4:4 busy-poll")
        cpus = r.get("cpus") or []
        if r.get("pinned") is True:
            if len(cpus) != 8 or len(set(cpus)) != 8:
                fail(f"{what}: pinned to {cpus}, expected 8 distinct CPUs")
        elif r.get("pinned") is not False or cpus:
            fail(f"{what}: pinned {r.get('pinned')!r} with CPUs {cpus}")
        summary(r.get("rtt"), what)
    for k in range(rounds):
        for m in messages:
            group = sorted((r["order"], r["system"]) for r in rows
                           if r["round"] == k and r["message"] == m)
            if [o for o, _ in group] != list(range(len(group))):
                fail(f"round {k} {m}: order {group}")
            elif group and (group[0][1] == "horus") != (k % 2 == 0):
                fail(f"round {k} {m}: order does not alternate {group}")


# rpc: every round, pinned (and unpinned unless --pinned-only), every system at every size.
RPC_SYSTEMS = ["horus", "horus-blocking", "iceoryx2", "zenoh", "grpc-tcp", "grpc-uds"]
RPC_SIZES = [64, 512, 1024, 2048, 4096, 65536, 1048576]
RPC_IN_FLIGHT = [1, 2, 4, 8]
RPC_ROUNDS_QUICK = 1
RPC_ROUNDS_FULL = 3


def check_rpc(doc):
    rows = doc["rows"]
    least = RPC_ROUNDS_QUICK if doc.get("quick") else RPC_ROUNDS_FULL
    rounds = max([least] + [r["round"] + 1 for r in rows])
    pinnings = sorted({r["pinned"] for r in rows})
    if True not in pinnings:
        fail("no pinned rows")
    have = sorted((r["round"], r["pinned"], r["kind"], r["system"], r["size"], r["in_flight"],
                   r["touch"]) for r in rows)
    want = []
    for k in range(rounds):
        for p in pinnings:
            for s in RPC_SYSTEMS:
                for n in RPC_SIZES:
                    want.append((k, p, "latency", s, n, 1, "full"))
                    want.append((k, p, "stress", s, n, 8, "full"))
                for f in RPC_IN_FLIGHT:
                    want.append((k, p, "in-flight", s, 64, f, "full"))
            for n in [64, 1048576]:
                want.append((k, p, "latency", "horus", n, 1, "touch"))
            want.append((k, p, "topic", "horus-topic", 16, 1, "full"))
            want.append((k, p, "wake", "ref:wake", 0, 1, "full"))
    want.sort()
    if have != want:
        fail(f"missing rows {sorted(map(str, set(want) - set(have)))[:10]}, "
             f"unexpected {sorted(map(str, set(have) - set(want)))[:10]}")
    for r in rows:
        what = f"round {r['round']} {r['kind']} {r['system']} {r['size']} x{r['in_flight']}"
        if r["kind"] == "stress":
            if number(r.get("calls_per_sec"), f"{what}.calls_per_sec") and r["calls_per_sec"] <= 0:
                fail(f"{what}: no calls")
        else:
            summary(r.get("rtt"), what)


ROS_KINDS = ["Image", "Cloud10k", "Cloud100k", "Cloud1MiB", "Scan360", "Scan1080", "Joints30", "Tf50"]
ROS_BUILD_METHODS = ["memcpy", "write", "publish", "memcpy-no-loan"]


def check_ros(doc):
    """ros_messages: each round has both paths of every kind (pinned; --quick is pinned only)
    and every loan-build method."""
    rounds = sorted({r["round"] for r in doc["rows"]})
    for k in rounds:
        rtt = [r for r in doc["rows"] if r["row"] == "round-trip" and r["round"] == k and r["pinned"]]
        for kind in ROS_KINDS:
            for path in ["ros", "fixed"]:
                got = [r for r in rtt if r["kind"] == kind and r["path"] == path]
                if len(got) != 1:
                    fail(f"round {k}: {len(got)} pinned {path} rows for {kind}")
                else:
                    summary(got[0]["rtt"], f"round {k} {kind} {path}")
        builds = [r for r in doc["rows"] if r["row"] == "loan-build" and r["round"] == k]
        if sorted(r["method"] for r in builds) != sorted(ROS_BUILD_METHODS):
            fail(f"round {k}: loan-build methods {[r['method'] for r in builds]}")
        for r in builds:
            summary(r["per_batch"], f"round {k} build {r['method']}")


CHECKS = {
    "robotics_messages": check_robotics,
    "payload_sweep": check_sweep,
    "all_paths": check_paths,
    "scalability": check_scalability,
    "peers": check_peers,
    "interleaved": check_interleaved,
    "many_to_many": check_many_to_many,
    "rpc": check_rpc,
    "ros_messages": check_ros,
}


def main():
    if len(sys.argv) != 3 or sys.argv[1] not in CHECKS:
        sys.exit(f"usage: {sys.argv[0]} {{{'|'.join(CHECKS)}}} FILE")
    bench, path = sys.argv[1], sys.argv[2]
    with open(path) as f:
        doc = json.load(f)
    if doc.get("benchmark") != bench:
        fail(f"benchmark is {doc.get('benchmark')!r}, expected {bench!r}")
    if doc.get("errors"):
        fail(f"errors reported: {doc['errors']}")
    machine = doc.get("machine") or {}
    if not machine.get("cpu_model") or not machine.get("kernel") or not machine.get("cores"):
        fail("machine description incomplete")
    if not doc.get("method") or not all(isinstance(m, str) and m for m in doc["method"]):
        fail("method missing")
    if not isinstance(doc.get("rows"), list) or not doc["rows"]:
        fail("no rows")
    else:
        try:
            CHECKS[bench](doc)
        except (KeyError, TypeError, AttributeError) as e:
            fail(f"malformed row: {e!r}")
    if problems:
        print(f"{path}: INCOMPLETE", file=sys.stderr)
        for p in problems:
            print(f"  {p}", file=sys.stderr)
        sys.exit(1)
    print(f"{path}: well-formed and complete, {len(doc['rows'])} rows")


if __name__ == "__main__":
    main()
