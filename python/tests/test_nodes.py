"""Python nodes run by the horus scheduler."""

from __future__ import annotations

from typing import List

import numpy as np
import pytest

import horus


class Counter:
    def __init__(self) -> None:
        self.calls: List[str] = []
        self.times: List[float] = []

    def init(self) -> None:
        self.calls.append("init")

    def tick(self, ctx: horus.TickInfo) -> None:
        self.calls.append("tick")
        self.times.append(ctx.now)
        assert ctx.is_simulated and ctx.period == pytest.approx(0.1)

    def shutdown(self) -> None:
        self.calls.append("shutdown")


def test_class_node_lifecycle_on_simulated_time() -> None:
    sched = horus.Scheduler(deterministic=True)
    node = Counter()
    sched.add(node, name="counter", rate=10)
    assert sched.run_for(1.0) == "elapsed"
    assert node.calls[0] == "init" and node.calls[-1] == "shutdown"
    assert node.calls.count("tick") == 11  # t = 0, 0.1, ..., 1.0 s
    assert node.times[:3] == pytest.approx([0.0, 0.1, 0.2])
    (stats,) = sched.stats()
    assert stats["name"] == "counter" and stats["ticks"] == 11


def test_function_nodes_and_request_stop() -> None:
    seen: List[int] = []

    def tick(ctx: horus.TickInfo) -> None:
        seen.append(ctx.tick_index)
        if ctx.tick_index == 4:
            ctx.request_stop()

    done: List[bool] = []
    sched = horus.Scheduler(deterministic=True)
    sched.add(horus.FnNode("fn", tick, shutdown=lambda: done.append(True)), rate=100)
    assert sched.run_for(10.0) == "requested"
    assert seen == [0, 1, 2, 3, 4] and done == [True]


def test_python_nodes_talk_over_topics_in_real_time() -> None:
    topic = horus.Topic(horus.CmdVel, "nodes/cmd")
    pub, sub = topic.publisher(), topic.subscriber()
    got: List[float] = []

    def produce(ctx: horus.TickInfo) -> None:
        pub.send(horus.CmdVel(stamp_ns=ctx.tick_index, linear=1.0))

    def consume(ctx: horus.TickInfo) -> None:
        while (m := sub.try_recv()) is not None:
            got.append(m.linear)

    sched = horus.Scheduler()
    sched.add(produce, name="producer", rate=200, order=0)
    sched.add(consume, name="consumer", rate=200, order=1)
    assert sched.run_for(0.2) == "elapsed"
    assert len(got) > 10 and set(got) == {1.0}


def test_rust_node_mixed_with_python_nodes() -> None:
    # Python producer -> Rust relay -> Python consumer, one scheduler, one
    # tick each in order: every message crosses the Rust node in its tick.
    src = horus.Topic(horus.CmdVel, "mix/in")
    dst = horus.Topic(horus.CmdVel, "mix/out")
    pub, sub = src.publisher(), dst.subscriber()
    got: List[int] = []

    def produce(ctx: horus.TickInfo) -> None:
        pub.send(horus.CmdVel(stamp_ns=ctx.tick_index, linear=0.5))

    def consume(ctx: horus.TickInfo) -> None:
        while (m := sub.try_recv()) is not None:
            got.append(int(m.stamp_ns))

    relay = horus.rust_relay(horus.CmdVel, "mix/in", "mix/out")
    assert relay.kind == "relay" and relay.name == "relay" and not relay.added
    sched = horus.Scheduler(deterministic=True)
    sched.add(produce, name="producer", rate=100, order=0)
    sched.add(relay, rate=100, order=1, budget=0.001, on_failure="restart")
    sched.add(consume, name="consumer", rate=100, order=2)
    assert sched.run_for(0.095) == "elapsed"
    assert got == list(range(10))
    assert [n["name"] for n in sched.stats()] == ["producer", "relay", "consumer"]
    assert next(n for n in sched.stats() if n["name"] == "relay")["ticks"] == 10
    # A Rust node runs in one scheduler only.
    assert relay.added
    with pytest.raises(RuntimeError, match="already added"):
        horus.Scheduler().add(relay)
    # Tails (point clouds) are relayed too; unknown schemas are refused.
    cin = horus.Topic(horus.PointCloud, "mix/cloud-in")
    cout = horus.Topic(horus.PointCloud, "mix/cloud-out")
    cpub, csub = cin.publisher(), cout.subscriber()
    sched2 = horus.Scheduler(deterministic=True)
    sched2.add(horus.rust_relay(horus.PointCloud, "mix/cloud-in", "mix/cloud-out", name="clouds"), rate=10)
    pts = np.arange(12, dtype=np.float32).reshape(4, 3)
    cpub.send(horus.PointCloud.from_points(pts, frame_id="lidar"))
    sched2.run_for(0.05)
    cloud = csub.try_recv()
    assert cloud is not None and cloud.frame_id_str == "lidar"
    assert (np.asarray(cloud.points).reshape(4, 3) == pts).all()
    with pytest.raises(ValueError, match="schema name"):
        horus.RustNode.relay("nope/Nothing", "a", "b")


def test_failing_node_is_restarted_by_policy() -> None:
    class Flaky:
        def __init__(self) -> None:
            self.inits = 0
            self.ticks = 0

        def init(self) -> None:
            self.inits += 1

        def tick(self, ctx: horus.TickInfo) -> None:
            self.ticks += 1
            if self.ticks == 3:
                raise RuntimeError("sensor glitch")

    node = Flaky()
    sched = horus.Scheduler(deterministic=True)
    sched.add(node, rate=10, on_failure="restart", max_failures=2, backoff=0.0)
    sched.run_for(1.0)
    (stats,) = sched.stats()
    assert stats["failures"] == 1 and stats["restarts"] == 1
    assert node.inits == 2


def test_bad_node_and_options_are_rejected() -> None:
    sched = horus.Scheduler()
    with pytest.raises(ValueError):
        sched.add(object(), name="x")
    with pytest.raises(ValueError, match="on_miss"):
        sched.add(lambda ctx: None, name="y", on_miss="explode")


def test_module_level_scheduler_does_not_leak_segments_at_exit(ns: str) -> None:
    """Regression: nodes reach their scheduler back through module globals;
    without garbage-collector support that cycle kept every endpoint of the
    script alive at exit, leaving its /dev/shm segments behind."""
    import os
    import subprocess
    import sys
    import textwrap

    code = textwrap.dedent(
        """
        import horus
        pub = horus.Topic(horus.CmdVel, "leak/check").publisher()
        class Node:
            def tick(self, ctx):
                pub.send(horus.CmdVel())
        sched = horus.Scheduler(deterministic=True)
        sched.add(Node(), name="node", rate=10)
        sched.run_for(0.5)
        """
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=30)
    assert [f for f in os.listdir("/dev/shm") if f.startswith(f"horus.{ns}.")] == []
