"""Topics from Python: QoS, counters, typed errors, GIL release, loans."""

from __future__ import annotations

import signal
import subprocess
import sys
import textwrap
import threading
import time

import numpy as np
import pytest

import horus


def test_publish_subscribe_cmdvel() -> None:
    t = horus.Topic(horus.CmdVel, "base/cmd_vel", depth=8)
    pub, sub = t.publisher(), t.subscriber()
    assert pub.send(horus.CmdVel(stamp_ns=1, linear=0.5, angular=0.1)) == 1
    m = sub.recv(timeout=1.0)
    assert (m.stamp_ns, m.linear) == (1, 0.5)
    assert m.is_readonly
    with pytest.raises(ValueError):
        m.linear = 1.0
    assert pub.stats().sent == 1 and sub.stats().received == 1
    assert t.overflow == horus.Overflow.DROP_OLDEST


def test_try_recv_and_latest() -> None:
    t = horus.Topic(horus.CmdVel, "t")
    pub, sub = t.publisher(), t.subscriber()
    assert sub.try_recv() is None
    for i in range(5):
        pub.send(horus.CmdVel(stamp_ns=i))
    latest = sub.latest()
    assert latest is not None and latest.stamp_ns == 4
    assert sub.stats().skipped == 4
    assert sub.latest() is None


def test_send_without_subscribers_is_counted_undelivered() -> None:
    pub = horus.Topic(horus.CmdVel, "nobody").publisher()
    assert pub.send(horus.CmdVel()) == 0
    assert pub.stats().undelivered == 1


def test_drop_oldest_counts_overrun() -> None:
    t = horus.Topic(horus.CmdVel, "drop", depth=4, overflow=horus.Overflow.DROP_OLDEST)
    pub, sub = t.publisher(), t.subscriber()
    for i in range(10):
        pub.send(horus.CmdVel(stamp_ns=i))
    got = []
    while (m := sub.try_recv()) is not None:
        got.append(m.stamp_ns)
    assert got == [6, 7, 8, 9]
    assert sub.stats().overrun == 6
    assert t.stats().lost == 6


def test_reject_raises_and_never_reports_success() -> None:
    t = horus.Topic(horus.CmdVel, "rej", depth=2, overflow=horus.Overflow.REJECT)
    pub, sub = t.publisher(), t.subscriber()
    pub.send(horus.CmdVel(stamp_ns=0))
    pub.send(horus.CmdVel(stamp_ns=1))
    with pytest.raises(horus.HistoryFullError, match="not sent"):
        pub.send(horus.CmdVel(stamp_ns=2))
    assert isinstance(horus.HistoryFullError("x"), horus.SendError)
    assert pub.stats().rejected == 1 and pub.stats().sent == 2
    assert t.stats().refused == 1
    assert [sub.recv(1.0).stamp_ns for _ in range(2)] == [0, 1]
    pub.send(horus.CmdVel(stamp_ns=3))  # room again


def test_block_waits_then_raises_timeout() -> None:
    t = horus.Topic(horus.CmdVel, "blk", depth=1, overflow=horus.Overflow.block(0.05))
    assert t.overflow == horus.Overflow.block(0.05)
    pub, sub = t.publisher(), t.subscriber()
    pub.send(horus.CmdVel())
    start = time.monotonic()
    with pytest.raises(horus.SendTimeoutError):
        pub.send(horus.CmdVel())
    assert time.monotonic() - start >= 0.05
    assert pub.stats().timed_out == 1
    # A reader making room lets a blocked send through (GIL released while blocked).
    threading.Timer(0.02, lambda: sub.recv(1.0)).start()
    pub.send(horus.CmdVel(stamp_ns=5))


def test_qos_and_schema_mismatch_are_typed_errors() -> None:
    first = horus.Topic(horus.CmdVel, "q", depth=8)
    keep = first.publisher()  # the topic exists while an endpoint does
    with pytest.raises(horus.QosMismatchError):
        horus.Topic(horus.CmdVel, "q", depth=16)
    with pytest.raises(horus.SchemaMismatchError) as e:
        horus.Topic(horus.Twist, "q")
    assert "horus/CmdVel" in str(e.value) and "horus/Twist" in str(e.value)
    assert "horus/Twist" in e.value.expected and "horus/CmdVel" in e.value.found  # type: ignore[attr-defined]
    with pytest.raises(horus.InvalidTopicError):
        horus.Topic(horus.CmdVel, "bad name")
    keep.close()
    first.close()


def test_recv_timeout_raises() -> None:
    sub = horus.Topic(horus.CmdVel, "quiet").subscriber()
    start = time.monotonic()
    with pytest.raises(horus.RecvTimeoutError):
        sub.recv(timeout=0.12)
    assert time.monotonic() - start >= 0.12


def test_blocking_recv_releases_the_gil() -> None:
    t = horus.Topic(horus.CmdVel, "gil")
    sub = t.subscriber()
    ticks = []

    def publish_later() -> None:
        for i in range(20):  # runs only if recv released the GIL
            ticks.append(i)
            time.sleep(0.005)
        t.publisher().send(horus.CmdVel(stamp_ns=99))

    threading.Thread(target=publish_later).start()
    assert sub.recv(timeout=5.0).stamp_ns == 99
    assert len(ticks) == 20


def test_ctrl_c_interrupts_blocking_recv() -> None:
    code = textwrap.dedent(
        """
        import signal
        import horus
        # As in a terminal, even when started from a shell that ignores SIGINT.
        signal.signal(signal.SIGINT, signal.default_int_handler)
        sub = horus.Topic(horus.CmdVel, "sigint").subscriber()
        print("ready", flush=True)
        try:
            sub.recv()
        except KeyboardInterrupt:
            print("interrupted", flush=True)
        """
    )
    p = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    assert p.stdout is not None and p.stdout.readline().strip() == "ready"
    time.sleep(0.1)
    p.send_signal(signal.SIGINT)
    out, _ = p.communicate(timeout=5)
    assert out.strip() == "interrupted"


def test_busy_poll_subscriber() -> None:
    t = horus.Topic(horus.CmdVel, "busy")
    sub = t.subscriber(busy_poll=True)
    threading.Timer(0.02, lambda: t.publisher().send(horus.CmdVel(stamp_ns=3))).start()
    assert sub.recv(timeout=2.0).stamp_ns == 3


def test_wrong_message_type_is_refused() -> None:
    pub = horus.Topic(horus.CmdVel, "typed").publisher()
    with pytest.raises(TypeError):
        pub.send(horus.Twist())  # type: ignore[arg-type]


def test_point_cloud_round_trip_is_zero_copy_on_receive() -> None:
    t = horus.Topic(horus.PointCloud, "cloud")
    pub, sub = t.publisher(), t.subscriber()
    pts = np.random.default_rng(1).random((1000, 3), dtype=np.float32)
    pub.send(horus.PointCloud.from_points(pts, seq=4, frame_id="lidar"))
    got = sub.recv(1.0)
    assert got.seq == 4 and got.frame_id_str == "lidar"
    assert np.array_equal(got.points, pts)
    assert not got.points.flags.writeable
    assert np.shares_memory(got.points, got.tail)


def test_held_samples_pin_chunks_until_the_pool_is_exhausted() -> None:
    t = horus.Topic(horus.PointCloud, "pin", depth=1, loan_pool=3, max_tail_bytes=1200)
    pub, sub = t.publisher(), t.subscriber()
    cloud = horus.PointCloud.from_points(np.zeros((100, 3)))
    held = []
    with pytest.raises(horus.PoolExhaustedError):
        for _ in range(10):
            pub.send(cloud)
            held.append(sub.recv(1.0))
    assert pub.stats().pool_exhausted == 1
    held.clear()  # dropping the samples returns the chunks
    pub.send(cloud)


def test_kept_mid_size_messages_pin_nothing() -> None:
    # LaserScan (1,480 B) travels in a loan chunk since INLINE_MAX went down to 512 B, but
    # fixed-size messages up to 2 KiB still reach Python as copies: a program that keeps
    # them (here 40, on a pool of 2 x 1 + 4 chunks) never makes the publisher's loan fail.
    t = horus.Topic(horus.LaserScan, "scans-kept", depth=1)
    pub, sub = t.publisher(), t.subscriber()
    kept = []
    for i in range(40):
        pub.send(horus.LaserScan(stamp_ns=i + 1))
        kept.append(sub.recv(1.0))
    assert [m.stamp_ns for m in kept] == list(range(1, 41))
    assert pub.stats().pool_exhausted == 0


def test_loan_writes_in_place_and_sends() -> None:
    t = horus.Topic(horus.PointCloud, "loan")
    pub, sub = t.publisher(), t.subscriber()
    with pub.loan(horus.PointCloud(num_points=500, point_step=12, seq=9)) as cloud:
        assert not cloud.is_readonly
        cloud.points[:] = np.arange(1500, dtype=np.float32).reshape(500, 3)
    got = sub.recv(1.0)
    assert got.seq == 9 and got.points[499, 2] == 1499.0


def test_loan_is_discarded_on_error_and_blocks_other_sends() -> None:
    t = horus.Topic(horus.PointCloud, "loan2")
    pub, sub = t.publisher(), t.subscriber()
    loan = pub.loan(horus.PointCloud(num_points=1, point_step=12))
    with pytest.raises(horus.LoanError, match="outstanding"):
        pub.send(horus.PointCloud())
    loan.discard()
    assert not loan.active
    with pytest.raises(horus.LoanError):
        loan.send()
    with pytest.raises(RuntimeError):
        with pub.loan(horus.PointCloud(num_points=1, point_step=12)):
            raise RuntimeError("boom")
    assert sub.try_recv() is None
    with pytest.raises(horus.LoanError, match="at most"):
        pub.loan(horus.PointCloud(num_points=10**6, point_step=12))


def test_tailed_message_without_its_tail_is_refused() -> None:
    pub = horus.Topic(horus.PointCloud, "notail").publisher()
    with pytest.raises(ValueError, match="no tail"):
        pub.send(horus.PointCloud(num_points=3, point_step=12))
    assert pub.send(horus.PointCloud()) == 0  # an empty cloud needs none


def test_refused_loan_in_a_with_block_is_discarded() -> None:
    t = horus.Topic(horus.PointCloud, "loanrej", depth=1, overflow=horus.Overflow.REJECT)
    pub, sub = t.publisher(), t.subscriber()
    pub.send(horus.PointCloud())
    with pytest.raises(horus.HistoryFullError):
        with pub.loan(horus.PointCloud(num_points=1, point_step=12)):
            pass
    sub.recv(1.0)
    assert pub.send(horus.PointCloud()) == 1  # no loan left outstanding


def test_image_round_trip() -> None:
    t = horus.Topic(horus.Image, "cam")
    pub, sub = t.publisher(), t.subscriber()
    px = np.random.default_rng(2).integers(0, 255, (48, 64, 3), dtype=np.uint8)
    pub.send(horus.Image.from_pixels(px, horus.Image.RGB8, seq=1))
    got = sub.recv(1.0)
    assert got.encoding_name == "rgb8" and np.array_equal(got.pixels, px)


def test_stats_objects() -> None:
    t = horus.Topic(horus.CmdVel, "stats")
    pub, sub = t.publisher(), t.subscriber()
    pub.send(horus.CmdVel())
    s = t.stats()
    assert len(s.publishers) == 1 and len(s.subscribers) == 1
    assert s.publishers[0]["sent"] == 1 and s.subscribers[0]["backlog"] == 1
    assert "sent=1" in repr(pub.stats()) and sub.publishers == 1 and pub.subscribers == 1
