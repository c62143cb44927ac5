"""Cross-language end-to-end tests: separate processes on one topic.

Every pairing (Rust→Python, Python→Rust, Python→Python) for a POD message
(CmdVel), a PointCloud and a tensor, plus a schema mismatch between a Python
and a Rust endpoint, and a SIGKILLed Python subscriber next to a Rust
publisher. The Rust side is `horus-py-peer` (crates/horus-py/src/bin/peer.rs).
"""

from __future__ import annotations

import os
import signal
import time
from typing import Any

import numpy as np
import pytest

import horus

N = 20

# The receiving side creates the topic with flow control, so that a fast
# publisher waits for a slow reader instead of overwriting (DropOldest would
# count the loss as overrun); the peers adopt the topic's QoS.
RELIABLE = dict(depth=4, overflow=horus.Overflow.block(5.0))


def test_rust_to_python_cmdvel(rust: Any) -> None:
    sub = horus.Topic(horus.CmdVel, "x/cmd", **RELIABLE).subscriber()
    peer = rust("pub", "cmdvel", "x/cmd", str(N))
    got = [sub.recv(timeout=10) for _ in range(N)]
    assert [m.stamp_ns for m in got] == list(range(N))
    assert [m.linear for m in got] == [i * 0.5 for i in range(N)]
    assert [m.angular for m in got] == [-float(i) for i in range(N)]
    assert all(line["subscribers"] == 1 for line in peer.finish())
    assert sub.stats().overrun == 0
    # The policy is the topic's; the timeout is per publisher (default 1 s).
    assert horus.Topic(horus.CmdVel, "x/cmd").overflow.kind == "block"


def test_python_to_rust_cmdvel(rust: Any) -> None:
    pub = horus.Topic(horus.CmdVel, "x/cmd", **RELIABLE).publisher()
    peer = rust("sub", "cmdvel", "x/cmd", str(N))
    pub.wait_for_subscribers()
    for i in range(N):
        assert pub.send(horus.CmdVel(stamp_ns=i, linear=i / 4, angular=1.5)) == 1
    lines = peer.finish()
    assert [(d["stamp_ns"], d["linear"], d["angular"]) for d in lines[:N]] == [
        (i, i / 4, 1.5) for i in range(N)
    ]
    assert lines[N] == {"received": N, "overrun": 0}


def test_python_to_python_cmdvel(python: Any) -> None:
    sub = horus.Topic(horus.CmdVel, "x/cmd", **RELIABLE).subscriber()
    peer = python(
        f"""
        import horus
        pub = horus.Topic(horus.CmdVel, "x/cmd").publisher()
        print("ready", flush=True)
        pub.wait_for_subscribers()
        assert pub.topic == "x/cmd"
        for i in range({N}):
            pub.send(horus.CmdVel(stamp_ns=i, linear=2.0 * i))
        """
    )
    got = [sub.recv(timeout=10) for _ in range(N)]
    assert [(m.stamp_ns, m.linear) for m in got] == [(i, 2.0 * i) for i in range(N)]
    peer.finish()


def _expected_points(i: int) -> np.ndarray:
    k = np.arange(1000 + i, dtype=np.float32)
    return np.stack([i + k, 2 * k, -k], axis=1)


def test_rust_to_python_pointcloud(rust: Any) -> None:
    sub = horus.Topic(horus.PointCloud, "x/points", **RELIABLE).subscriber()
    peer = rust("pub", "pointcloud", "x/points", "5")
    for i in range(5):
        cloud = sub.recv(timeout=10)
        assert (cloud.seq, cloud.num_points, cloud.frame_id_str) == (i, 1000 + i, "lidar")
        assert np.array_equal(cloud.points, _expected_points(i))
        assert cloud.is_readonly  # a view of the publisher's chunk, not a copy
        del cloud
    peer.finish()


def test_python_to_rust_pointcloud_by_loan(rust: Any) -> None:
    pub = horus.Topic(horus.PointCloud, "x/points", **RELIABLE).publisher()
    peer = rust("sub", "pointcloud", "x/points", "3")
    pub.wait_for_subscribers()
    for i in range(3):
        with pub.loan(horus.PointCloud(num_points=1000 + i, point_step=12, seq=i, frame_id="py")) as c:
            c.points[:] = _expected_points(i)
    lines = peer.finish()
    for i, d in enumerate(lines):
        pts = _expected_points(i)
        assert (d["seq"], d["num_points"], d["frame_id"], d["zero_copy"]) == (i, 1000 + i, "py", True)
        assert d["last"] == pts[-1].tolist()
        assert d["sum"] == pytest.approx(float(pts.astype(np.float64).sum()))


def test_python_to_python_pointcloud(python: Any) -> None:
    sub = horus.Topic(horus.PointCloud, "x/points", **RELIABLE).subscriber()
    peer = python(
        """
        import numpy as np, horus
        pub = horus.Topic(horus.PointCloud, "x/points").publisher()
        print("ready", flush=True)
        pub.wait_for_subscribers()
        pts = np.arange(3000, dtype=np.float32).reshape(1000, 3)
        pub.send(horus.PointCloud.from_points(pts, seq=1))
        """
    )
    cloud = sub.recv(timeout=10)
    assert cloud.seq == 1 and cloud.points[999, 2] == 2999.0
    peer.finish()


def test_schema_mismatch_between_python_and_rust(rust: Any) -> None:
    peer = rust("pub", "twist", "x/mixed", "1")
    with pytest.raises(horus.SchemaMismatchError) as e:
        horus.Topic(horus.CmdVel, "x/mixed")
    msg = str(e.value)
    assert "horus/Twist" in msg and "horus/CmdVel" in msg and "x/mixed" in msg
    peer.finish()


def test_sigkill_of_python_subscriber_does_not_disturb_rust_publisher(rust: Any, python: Any) -> None:
    victim = python(
        """
        import horus
        sub = horus.Topic(horus.CmdVel, "x/kill").subscriber()
        print("ready", flush=True)
        while True:
            m = sub.recv()
            print('{"stamp_ns": %d}' % m.stamp_ns, flush=True)
        """
    )
    publisher = rust("pub-for", "cmdvel", "x/kill", "1.5")
    assert "stamp_ns" in victim.line()  # it is receiving
    os.kill(victim.p.pid, signal.SIGKILL)
    victim.p.wait()
    # A surviving Python subscriber keeps receiving from the same publisher.
    sub = horus.Topic(horus.CmdVel, "x/kill").subscriber()
    assert sub.recv(timeout=5).linear == 1.0
    (stats,) = publisher.finish()
    assert stats["failed"] == 0
    assert stats["sent"] == stats["stats_sent"] > 100


def test_tensor_python_to_rust_and_back(rust: Any) -> None:
    peer = rust("tensor-echo", "x/t/in", "x/t/out", "2")
    pub = horus.Topic(horus.TensorRef, "x/t/in").publisher()
    sub = horus.Topic(horus.TensorRef, "x/t/out").subscriber()
    pool = horus.TensorPool(41, slots=4, slot_bytes=1 << 20)
    pub.wait_for_subscribers()
    for _ in range(2):
        t = pool.alloc((256, 1024), np.float32)  # 1 MiB
        a = t.numpy()
        a[:] = np.arange(a.size, dtype=np.float32).reshape(a.shape) % 7
        total = float(a.astype(np.float64).sum())
        pub.send(t.to_descriptor())
        back = sub.recv(timeout=10)
        assert (back.slot, back.generation) == (t.slot, t.generation)
        line = peer.line()
        assert line["sum"] == pytest.approx(total) and line["refcount"] == 2
        assert float(a.astype(np.float64).sum()) == pytest.approx(2 * total)  # doubled in place
        assert t.refcount == 1  # Rust dropped its reference
    peer.finish()


def test_tensor_rust_to_python(rust: Any) -> None:
    sub = horus.Topic(horus.TensorRef, "x/t/pub").subscriber()
    ack = horus.Topic(horus.CmdVel, "x/t/ack").publisher()
    peer = rust("tensor-pub", "42", "x/t/pub", "x/t/ack")
    ref = sub.recv(timeout=10)
    t = horus.TensorPool.from_descriptor(ref)
    assert t.shape == (1024,) and t.dtype == np.float32
    assert np.array_equal(t.numpy(), np.arange(1024, dtype=np.float32))
    assert t.refcount == 2
    ack.wait_for_subscribers()
    ack.send(horus.CmdVel())
    assert peer.line() == {"refcount_before_drop": 2}
    peer.finish()
    assert t.refcount == 1  # the Rust holder is gone; ours keeps it
    assert t.numpy()[1023] == 1023.0


def test_tensor_python_to_python(python: Any) -> None:
    pool = horus.TensorPool(43, slots=2, slot_bytes=1 << 16)
    t = pool.alloc((100, 100), np.uint16)
    t.numpy()[:] = 7
    pub = horus.Topic(horus.TensorRef, "x/t/pp").publisher()
    peer = python(
        """
        import horus
        sub = horus.Topic(horus.TensorRef, "x/t/pp").subscriber()
        print("ready", flush=True)
        t = horus.TensorPool.from_descriptor(sub.recv(timeout=10))
        a = t.numpy()
        print('{"shape": %r, "sum": %d, "refcount": %d}' % (list(t.shape), int(a.sum()), t.refcount), flush=True)
        a[0, 0] = 1
        """
    )
    pub.wait_for_subscribers()
    pub.send(t.to_descriptor())
    line = peer.line()
    assert line == {"shape": [100, 100], "sum": 7 * 100 * 100, "refcount": 2}
    peer.finish()
    assert t.numpy()[0, 0] == 1 and t.refcount == 1
