"""ROS 2 types on horus topics from Python: Python ↔ Python and Python ↔ Rust across
processes (the Rust peer decodes with horus_idl's own CDR codec), zero-copy receive
from shared memory, and refusals (wrong type, encode errors, body too large)."""

from __future__ import annotations

import gc
from typing import Any, Tuple

import numpy as np
import pytest

import horus
from horus.interfaces.sensor_msgs.msg import LaserScan, PointCloud2, PointField
from horus.interfaces.std_msgs.msg import String

N = 5
# Every message must arrive (the default, DROP_OLDEST, would let a slow peer lose some).
RELIABLE = dict(overflow=horus.Overflow.block(10.0), depth=8)


def scan(i: int) -> LaserScan:
    s = LaserScan(angle_min=-1.5, angle_max=1.5, range_max=30.0,
                  ranges=np.arange(360, dtype=np.float32) + i,
                  intensities=np.full(360, i, dtype=np.float32))
    s.header.frame_id = f"laser{i}"
    s.header.stamp.sec = i
    return s


def cloud(i: int, n: int = 65536) -> PointCloud2:
    pts = (np.arange(n * 4, dtype=np.float32).reshape(n, 4) + i)
    return PointCloud2(
        height=1, width=n, point_step=16, row_step=16 * n, is_dense=True,
        fields=[PointField(name=c, offset=4 * k, datatype=PointField.FLOAT32, count=1)
                for k, c in enumerate("xyzi")],
        data=pts,
    )


def test_python_to_rust_laser_scan(rust: Any) -> None:
    topic = horus.RosTopic(LaserScan, "ros/scan", **RELIABLE)  # type: ignore[arg-type]
    pub = topic.publisher()
    peer = rust("ros-sub", "sensor_msgs/msg/LaserScan", "ros/scan", str(N))
    for i in range(N):
        assert pub.send(scan(i)) == 1
    lines = peer.finish()
    assert [line["cdr"] for line in lines[:N]] == [scan(i).to_cdr().hex() for i in range(N)]
    assert all(line["zero_copy"] and line["body_aligned"] for line in lines[:N])
    assert lines[N] == {"received": N, "overrun": 0, "malformed": 0}


def test_python_to_rust_point_cloud_of_a_mebibyte(rust: Any) -> None:
    pub = horus.RosTopic(PointCloud2, "ros/points", max_tail_bytes=2 << 20, **RELIABLE).publisher()  # type: ignore[arg-type]
    peer = rust("ros-sub", "sensor_msgs/msg/PointCloud2", "ros/points", "2")
    for i in range(2):
        assert pub.send(cloud(i)) == 1
    lines = peer.finish()
    assert [line["cdr"] for line in lines[:2]] == [cloud(i).to_cdr().hex() for i in range(2)]


def test_python_to_typed_rust_laser_scan(rust: Any) -> None:
    """The Rust side is a typed Topic<Ros<LaserScan>> with horus-ros-msgs' generated type."""
    pub = horus.RosTopic(LaserScan, "ros/scan", **RELIABLE).publisher()  # type: ignore[arg-type]
    peer = rust("ros-typed-sub", "laserscan", "ros/scan", str(N))
    for i in range(N):
        assert pub.send(scan(i)) == 1
    lines = peer.finish()
    for i, line in enumerate(lines[:N]):
        assert line["cdr"] == scan(i).to_cdr().hex()
        assert (line["frame_id"], line["sec"], line["ranges"]) == (f"laser{i}", i, 360)
        assert line["last_range"] == 359.0 + i
        assert line["zero_copy"] and line["in_chunk"]
    assert lines[N] == {"received": N, "overrun": 0, "malformed": 0}


def test_typed_rust_to_python_laser_scan(rust: Any) -> None:
    sub = horus.RosTopic(LaserScan, "ros/scan", **RELIABLE).subscriber()  # type: ignore[arg-type]
    peer = rust("ros-typed-pub", "laserscan", "ros/scan", str(N))
    got = [sub.recv(timeout=10) for _ in range(N)]
    peer.finish()
    assert got == [scan(i) for i in range(N)]
    assert sub.counts() == (N, 0, 0)


def test_rust_to_python_laser_scan_zero_copy(rust: Any) -> None:
    sub = horus.Topic(LaserScan, "ros/scan", **RELIABLE).subscriber()  # horus.Topic takes ROS types too
    assert isinstance(sub, horus.RosSubscriber)
    peer = rust("ros-pub", "sensor_msgs/msg/LaserScan", "ros/scan", scan(7).to_cdr().hex(), str(N))
    got = [sub.recv(timeout=10) for _ in range(N)]
    peer.finish()
    assert all(m == scan(7) for m in got)
    m = got[0]
    assert not m.ranges.flags.writeable
    # The array views the shared-memory chunk, which the sample keeps pinned.
    # (the sample itself is the base: the array is made natively, no memoryview)
    base = m.ranges.base
    assert isinstance(base, horus._horus.RosSample)
    assert base.zero_copy
    with pytest.raises(ValueError):  # the sample exports its bytes read-only
        m.ranges.flags.writeable = True
    assert m.ranges.ctypes.data % 4 == 0
    assert sub.counts() == (N, 0, 0)


def test_a_received_array_alone_keeps_its_chunk_pinned() -> None:
    """The decoder makes NumPy arrays natively with the received sample as their base:
    an array that outlives its message still pins the chunk, which the publisher does not
    reuse however many messages follow."""
    topic = horus.RosTopic(LaserScan, "ros/pinned", depth=2)
    pub, sub = topic.publisher(), topic.subscriber()
    pub.send(LaserScan(ranges=np.full(64, 7.0, np.float32)))
    ranges = sub.recv(timeout=5).ranges
    gc.collect()
    assert isinstance(ranges.base, horus._horus.RosSample)
    for i in range(40):
        pub.send(LaserScan(ranges=np.full(64, float(i), np.float32)))
        assert sub.recv(timeout=5).ranges[0] == float(i)
    assert ranges.tolist() == [7.0] * 64


def test_python_to_python_point_cloud(python: Any) -> None:
    sub = horus.RosTopic(PointCloud2, "ros/points", max_tail_bytes=2 << 20, **RELIABLE).subscriber()  # type: ignore[arg-type]
    peer = python(
        f"""
        import numpy as np, horus
        from horus.interfaces.sensor_msgs.msg import PointCloud2, PointField
        pub = horus.RosTopic(PointCloud2, "ros/points").publisher()
        print("ready", flush=True)
        for i in range({N}):
            n = 65536
            pts = np.arange(n * 4, dtype=np.float32).reshape(n, 4) + i
            pub.send(PointCloud2(height=1, width=n, point_step=16, row_step=16 * n, is_dense=True,
                fields=[PointField(name=c, offset=4 * k, datatype=PointField.FLOAT32, count=1)
                        for k, c in enumerate("xyzi")], data=pts))
        """
    )
    got = [sub.recv(timeout=10) for _ in range(N)]
    peer.finish()
    for i, m in enumerate(got):
        assert m == cloud(i)
        assert np.array_equal(m.data.view(np.float32).reshape(-1, 4)[:, 0], np.arange(65536) * 4.0 + i)


def test_python_to_python_strings_and_try_recv() -> None:
    topic = horus.RosTopic(String, "ros/chatter")
    sub = topic.subscriber()
    assert sub.try_recv() is None
    topic.publisher().send(String(data="hello ü 😀"))
    assert sub.recv(timeout=5).data == "hello ü 😀"
    with pytest.raises(horus.RecvTimeoutError):
        sub.recv(timeout=0.01)


def test_ros_subscriber_recv_spins_like_a_topic_subscriber() -> None:
    """RosSubscriber.recv polled only 16 times before the futex while Topic subscribers
    poll DEFAULT_SPIN times: both now take the same ``spin`` knob with the same default."""
    import inspect
    import threading

    from horus._topic import DEFAULT_SPIN

    for method in ("subscriber", "observer"):
        ros = inspect.signature(getattr(horus.RosTopic, method)).parameters["spin"]
        plain = inspect.signature(getattr(horus.Topic, method)).parameters["spin"]
        assert ros.kind is inspect.Parameter.KEYWORD_ONLY
        assert ros.default == plain.default == DEFAULT_SPIN
    topic = horus.RosTopic(String, "ros/spin")
    subs = [topic.subscriber(), topic.subscriber(spin=0), topic.subscriber(spin=100_000),
            topic.observer(spin=0)]
    sender = threading.Thread(target=lambda: topic.publisher().send(String(data="late")))
    sender.start()
    try:
        assert [s.recv(timeout=5).data for s in subs] == ["late"] * 4
    finally:
        sender.join()
    with pytest.raises(OverflowError):
        topic.subscriber(spin=-1)


def test_refusals_name_the_problem() -> None:
    horus.RosTopic(LaserScan, "ros/scan")
    with pytest.raises(horus.SchemaMismatchError):
        horus.RosTopic(String, "ros/scan")
    pub = horus.RosTopic(LaserScan, "ros/scan").publisher()
    with pytest.raises(TypeError):
        pub.send(String())  # type: ignore[arg-type]
    bad = scan(0)
    bad.ranges = np.zeros(3)  # float64 for a float32[] field
    with pytest.raises(horus.CdrEncodeError) as e:
        pub.send(bad)
    assert e.value.path == "ranges"
    small = horus.RosTopic(PointCloud2, "ros/small", max_tail_bytes=4096).publisher()
    with pytest.raises(horus.LoanError):
        small.send(cloud(0, 1024))


def test_a_string_that_is_not_utf8_is_refused_on_send_and_nothing_is_sent() -> None:
    # A ROS string is UTF-8 on the wire; a Python str holding a lone surrogate has no
    # UTF-8 form: a typed error naming the field, before anything reaches the topic.
    from horus.interfaces.sensor_msgs.msg import JointState

    topic = horus.RosTopic(String, "ros/not_utf8")
    sub = topic.subscriber()
    pub = topic.publisher()
    with pytest.raises(horus.CdrEncodeError) as e:
        pub.send(String(data="ok \ud800 not"))
    assert (e.value.kind, e.value.path) == ("not_utf8", "data")
    assert sub.try_recv() is None
    # Nested and in a sequence of strings, the path names the element.
    bad_scan = scan(1)
    bad_scan.header.frame_id = "laser\udfff"
    assert encode_error_of(bad_scan) == ("not_utf8", "header.frame_id")
    joints = JointState(name=["a", "b\ud83d", "c"])
    assert encode_error_of(joints) == ("not_utf8", "name[1]")
    # The publisher carries on: the next message is sent and is the only one received.
    assert pub.send(String(data="after")) == 1
    got = sub.recv(timeout=5.0)
    assert got.data == "after"
    assert sub.try_recv() is None
    assert sub.counts() == (1, 0, 0)


def encode_error_of(msg: Any) -> Tuple[str, str]:
    with pytest.raises(horus.CdrEncodeError) as e:
        msg.to_cdr()
    return (e.value.kind, e.value.path)


def test_hostile_bytes_on_a_topic_raise_typed_errors_and_lose_nothing_else(rust: Any) -> None:
    sub = horus.RosTopic(LaserScan, "ros/scan", **RELIABLE).subscriber()  # type: ignore[arg-type]
    good = scan(3).to_cdr()
    bad = [
        good[: len(good) // 2],                        # truncated
        good[:12] + b"\xff\xff\xff\x7f" + good[16:],  # a huge frame_id length after the stamp
        b"\x00\x01\x00\x00",                           # header only
    ]
    for b in bad:
        rust("ros-pub-unchecked", "sensor_msgs/msg/LaserScan", "ros/scan", b.hex(), "1").finish()
        with pytest.raises(horus.CdrDecodeError) as e:
            sub.recv(timeout=10)
        assert e.value.kind in ("truncated", "count_too_large")
    rust("ros-pub", "sensor_msgs/msg/LaserScan", "ros/scan", good.hex(), "1").finish()
    assert sub.recv(timeout=10) == scan(3)
    assert sub.counts() == (len(bad) + 1, 0, 0)
