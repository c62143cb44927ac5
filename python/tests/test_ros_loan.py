"""Loans of ROS 2 messages (``RosPublisher.loan``): a variable-length message written in
place in shared memory, its primitive arrays filled through writable NumPy views of the
chunk and sent without a copy; no view outlives the loan, no chunk is lost."""

from __future__ import annotations

import gc
import pathlib
import subprocess
import sys
import textwrap
from typing import Any

import numpy as np
import pytest

import horus
from horus.interfaces.sensor_msgs.msg import Image, LaserScan, NavSatFix, PointCloud2, PointField

N = 4


def reliable() -> Any:
    # Every message must arrive (the default, DROP_OLDEST, would let a slow peer lose some).
    return dict(overflow=horus.Overflow.block(10.0), depth=8)


def scan(i: int) -> LaserScan:
    s = LaserScan(angle_min=-1.5, angle_max=1.5, range_max=30.0,
                  ranges=np.arange(360, dtype=np.float32) + i,
                  intensities=np.full(360, i, dtype=np.float32))
    s.header.frame_id = f"laser{i}"
    s.header.stamp.sec = i
    return s


def cloud_header(n: int) -> PointCloud2:
    return PointCloud2(
        height=1, width=n, point_step=16, row_step=16 * n, is_dense=True,
        fields=[PointField(name=c, offset=4 * k, datatype=PointField.FLOAT32, count=1)
                for k, c in enumerate("xyzi")],
    )


def addr(a: Any) -> int:
    return int(a.__array_interface__["data"][0])


def test_a_loaned_scan_reaches_rust_byte_identical_to_send(rust: Any) -> None:
    """Two loaned arrays (ranges, intensities), strings and scalars set before and after
    the loan: the Rust peer (horus_idl's own decoder) gets exactly the bytes `send`
    would have sent, in place in shared memory."""
    pub = horus.RosTopic(LaserScan, "ros/scan", **reliable()).publisher()
    peer = rust("ros-sub", "sensor_msgs/msg/LaserScan", "ros/scan", str(N))
    for i in range(N):
        template = scan(i)
        loan = pub.loan(template, ranges=360, intensities=360)
        msg = loan.msg
        assert msg is not template and template.ranges[0] == i  # the template is untouched
        msg.ranges[:] = template.ranges
        msg.intensities[:] = template.intensities
        msg.header.stamp.nanosec = 5  # changed after the loan: sent as it is now
        template.header.stamp.nanosec = 5  # (the copy is shallow: the header is shared)
        assert loan.send() == 1
    lines = peer.finish()
    assert [line["cdr"] for line in lines[:N]] == [scan_ns(i).to_cdr().hex() for i in range(N)]
    assert all(line["zero_copy"] and line["body_aligned"] for line in lines[:N])
    assert lines[N] == {"received": N, "overrun": 0, "malformed": 0}


def scan_ns(i: int) -> LaserScan:
    s = scan(i)
    s.header.stamp.nanosec = 5
    return s


def test_a_mebibyte_cloud_is_filled_in_the_chunk_the_subscriber_reads() -> None:
    """Zero-copy both ways: the subscriber's `data` is the very memory the loan's view
    wrote (same address), and its bytes are what `send` of the same message gives."""
    n = 65536
    topic = horus.RosTopic(PointCloud2, "ros/points", max_tail_bytes=2 << 20)
    pub, sub = topic.publisher(), topic.subscriber()
    pts = np.arange(n * 4, dtype=np.float32).reshape(n, 4)
    with pub.loan(cloud_header(n), data=16 * n) as cloud:
        view = cloud.data
        assert view.dtype == np.uint8 and view.shape == (16 * n,)
        assert view.flags.writeable and view.flags.c_contiguous and view.flags.aligned
        written_at = addr(view)
        assert written_at % 4 == 0  # after its 4-byte count: float32 views of it are aligned
        del view
        cloud.data.view(np.float32).reshape(n, 4)[:] = pts  # one statement: no view kept
    got = sub.recv(1.0)
    assert addr(got.data) == written_at  # the chunk itself
    assert not got.data.flags.writeable
    assert np.array_equal(got.data.view(np.float32).reshape(n, 4), pts)
    want = cloud_header(n)
    want.data = pts
    assert got.to_cdr() == want.to_cdr()
    # After the send the loaned field is an empty read-only array: the data went.
    assert cloud.data.size == 0 and not cloud.data.flags.writeable


def test_an_image_filled_through_a_reshaped_view_in_one_statement() -> None:
    topic = horus.RosTopic(Image, "cam")
    pub, sub = topic.publisher(), topic.subscriber()
    frame = np.random.default_rng(1).integers(0, 256, (48, 64, 3), dtype=np.uint8)
    img = Image(height=48, width=64, encoding="rgb8", step=64 * 3)
    img.header.frame_id = "camera"
    with pub.loan(img, data=frame.size) as m:
        m.data.reshape(48, 64, 3)[:] = frame
    got = sub.recv(1.0)
    assert got.encoding == "rgb8" and got.header.frame_id == "camera"
    assert np.array_equal(got.data.reshape(48, 64, 3), frame)


def test_a_view_kept_past_send_is_refused_and_never_writes_into_the_sent_message() -> None:
    topic = horus.RosTopic(LaserScan, "ros/scan")
    pub, sub = topic.publisher(), topic.subscriber()
    loan = pub.loan(ranges=8)
    kept = loan.msg.ranges[2:].reshape(2, 3)  # a view derived from the loan's
    kept[:] = 1.0
    with pytest.raises(horus.LoanViewsAliveError, match="alive") as e:
        loan.send()
    assert e.value.views == 1  # `kept` (the message's own view was put back)
    assert loan.active and sub.try_recv() is None  # nothing was published
    assert loan.msg.ranges.flags.writeable  # still the loan's view
    loan.msg.ranges[:2] = 2.0
    kept[:] = 3.0  # still our loan: lands before the send
    del kept
    assert loan.send() == 1
    got = sub.recv(1.0)
    assert list(got.ranges) == [2.0, 2.0, 3.0, 3.0, 3.0, 3.0, 3.0, 3.0]
    # Nothing reaches the sent memory any more: every route raises.
    assert not loan.active and loan.views == 0
    with pytest.raises(ValueError):
        loan.msg.ranges[:] = 9.0
    with pytest.raises(horus.LoanError):
        np.frombuffer(loan._native, np.uint8)
    with pytest.raises(horus.LoanError):
        loan.send()
    assert list(got.ranges) == [2.0, 2.0, 3.0, 3.0, 3.0, 3.0, 3.0, 3.0]


def test_every_view_of_the_chunk_is_counted() -> None:
    pub = horus.RosTopic(LaserScan, "ros/scan").publisher()
    loan = pub.loan(ranges=16, intensities=4)
    assert loan.views == 2  # the message's two loaned fields
    held = [
        np.asarray(loan.msg.ranges)[1:],
        loan.msg.intensities[::2],
        memoryview(loan._native),
        loan.msg.ranges.reshape(4, 4).T,
    ]
    assert loan.views == 3  # only the memoryview is a new export
    for i in range(len(held)):
        with pytest.raises(horus.LoanViewsAliveError):
            loan.send()
        held[i] = None
    held.clear()
    assert loan.send() == 0
    assert loan.views == 0


def test_fields_changed_after_the_loan_are_sent_as_they_are_at_send() -> None:
    """A string grown after the loan moves the loaned arrays (laid out again, one copy);
    a loaned array cut to a prefix is sent shorter; one replaced by an ordinary array is
    copied like `send` does."""
    topic = horus.RosTopic(LaserScan, "ros/scan")
    pub, sub = topic.publisher(), topic.subscriber()
    loan = pub.loan(scan(0), ranges=360, intensities=360)
    msg = loan.msg
    msg.ranges[:] = np.arange(360)
    msg.intensities[:] = 7.0
    msg.header.frame_id = "a much longer frame id than before"
    (_, before, _), _ = loan.fields
    assert loan.send() == 1
    want = scan(0)
    want.header.frame_id = "a much longer frame id than before"
    want.ranges = np.arange(360, dtype=np.float32)
    want.intensities = np.full(360, 7.0, np.float32)
    assert sub.recv(1.0).to_cdr() == want.to_cdr()

    loan = pub.loan(scan(1), ranges=360, intensities=360)
    loan.msg.ranges[:] = 4.0
    loan.msg.ranges = loan.msg.ranges[:10]  # a prefix of the loaned view
    loan.msg.intensities = np.ones(3, np.float32)  # an ordinary array instead
    loan.msg.header.frame_id = ""  # shorter: the arrays move back
    assert loan.send() == 1
    got = sub.recv(1.0)
    assert list(got.ranges) == [4.0] * 10 and list(got.intensities) == [1.0] * 3
    assert got.header.frame_id == "" and before > 0


def test_unsent_loans_give_their_chunk_back() -> None:
    """Discarded, freed unsent, or ended by an exception in `with`: the chunk goes back
    each time, so far more loans than the pool has chunks never exhaust it."""
    topic = horus.RosTopic(PointCloud2, "ros/points", depth=1)  # a pool of 6 chunks
    pub, sub = topic.publisher(), topic.subscriber()
    for i in range(30):
        loan = pub.loan(cloud_header(4), data=64)
        if i % 3 == 0:
            loan.discard()
            assert not loan.active and loan.msg.data.size == 0
        elif i % 3 == 1:
            del loan
            gc.collect()
        else:
            with pytest.raises(RuntimeError):
                with loan as m:
                    m.data[:] = 1
                    raise RuntimeError("producer failed")
            assert not loan.active
    with pub.loan(cloud_header(4), data=64) as m:
        m.data[:] = 5
    assert np.all(sub.recv(1.0).data == 5)
    # A discard with a view alive is refused; the loan stays usable.
    loan = pub.loan(cloud_header(4), data=64)
    d = loan.msg.data
    with pytest.raises(horus.LoanViewsAliveError):
        loan.discard()
    assert loan.active and loan.msg.data.flags.writeable
    del d
    loan.discard()


def test_bad_loans_are_typed_errors_and_loan_nothing() -> None:
    topic = horus.RosTopic(LaserScan, "ros/scan", max_tail_bytes=4096)
    pub = topic.publisher()
    with pytest.raises(TypeError, match="no field \"rangez\""):
        pub.loan(rangez=3)
    with pytest.raises(ValueError, match="cannot be loaned"):
        pub.loan(range_max=3)  # a scalar
    with pytest.raises(ValueError, match="cannot be loaned"):
        pub.loan(header=3)  # a nested message
    with pytest.raises(TypeError, match="expected LaserScan"):
        pub.loan(Image(), ranges=3)  # type: ignore[arg-type]
    with pytest.raises(horus.LoanError, match="at most"):
        pub.loan(ranges=2000)  # 8000 bytes > max_tail_bytes
    bad = LaserScan()
    bad.header.frame_id = "nul\0inside"
    with pytest.raises(horus.CdrEncodeError) as e:
        pub.loan(bad, ranges=3)
    assert e.value.kind == "contains_nul"
    with pytest.raises(OverflowError):
        pub.loan(ranges=-1)
    with pytest.raises(horus.CdrEncodeError) as e:
        pub.loan(ranges=1 << 40)  # more elements than CDR's u32 count
    assert e.value.kind == "too_long"
    with pytest.raises(horus.CdrEncodeError) as e:
        pub.loan(ranges=1 << 62)  # count x element size past the address space
    assert e.value.kind == "too_long"
    with pytest.raises(horus.LoanError, match="at most"):
        pub.loan(ranges=(1 << 32) - 1)  # 16 GiB: measured, never allocated
    # Fixed-length arrays: exactly their length.
    fix = horus.RosTopic(NavSatFix, "gps").publisher()
    with pytest.raises(horus.CdrEncodeError) as e:
        fix.loan(position_covariance=8)
    assert e.value.kind == "fixed_length"
    with fix.loan(position_covariance=9) as f:
        f.position_covariance[:] = np.eye(3).reshape(-1)
    # One loan at a time; nothing above was left loaned.
    loan = pub.loan(ranges=3)
    with pytest.raises(horus.LoanError, match="outstanding"):
        pub.loan(ranges=3)
    loan.msg.ranges[:] = 0.0
    assert loan.send() == 0
    # A field changed at send to something the type refuses: nothing sent, loan kept.
    loan = pub.loan(ranges=3)
    loan.msg.ranges[:] = 1.0
    loan.msg.header.frame_id = 5  # type: ignore[assignment]
    with pytest.raises(horus.CdrEncodeError):
        loan.send()
    assert loan.active and loan.msg.ranges.flags.writeable
    loan.msg.header.frame_id = "x" * 5000  # past max_tail_bytes
    with pytest.raises(horus.LoanError, match="at most"):
        loan.send()
    loan.msg.header.frame_id = "ok"
    assert loan.send() == 0


def test_a_refused_send_keeps_the_loan_and_its_views() -> None:
    topic = horus.RosTopic(LaserScan, "ros/scan", depth=1, overflow=horus.Overflow.REJECT)
    pub, sub = topic.publisher(), topic.subscriber()
    assert pub.send(scan(0)) == 1  # the subscriber's one-deep history is full now
    loan = pub.loan(scan(1), ranges=360)
    loan.msg.ranges[:] = 9.0
    with pytest.raises(horus.HistoryFullError):
        loan.send()
    assert loan.active and loan.msg.ranges.flags.writeable and loan.msg.ranges[0] == 9.0
    assert sub.recv(1.0).header.frame_id == "laser0"
    assert loan.send() == 1
    assert np.all(sub.recv(1.0).ranges == 9.0)


def test_closing_the_publisher_refuses_while_views_live_then_gives_the_chunk_back() -> None:
    pub = horus.RosTopic(LaserScan, "ros/scan").publisher()
    loan = pub.loan(ranges=4)
    with pytest.raises(horus.LoanViewsAliveError):
        pub.close()
    assert not pub.closed and loan.active
    loan.discard()
    loan = pub.loan(ranges=4)
    del loan  # freed unsent; then close with nothing outstanding
    pub.close()
    assert pub.closed
    with pytest.raises(horus.ClosedError):
        pub.loan(ranges=4)


def test_an_array_of_one_loan_sent_in_another_message_is_copied_and_counted() -> None:
    """Loan A's view put in loan B's message (another publisher): B copies it as any
    array; A refuses to send while B's message still holds it."""
    ta, tb = horus.RosTopic(LaserScan, "a"), horus.RosTopic(LaserScan, "b")
    pa, pb, sb = ta.publisher(), tb.publisher(), tb.subscriber()
    a = pa.loan(ranges=4)
    a.msg.ranges[:] = 6.0
    b = pb.loan(ranges=2)
    b.msg.intensities = a.msg.ranges
    assert b.send() == 1
    assert list(sb.recv(1.0).intensities) == [6.0] * 4
    with pytest.raises(horus.LoanViewsAliveError):
        a.send()
    b.msg.intensities = np.zeros(0, np.float32)
    assert a.send() == 0
    with pytest.raises(TypeError):
        horus._horus.LoanedArray()  # type: ignore[call-arg]


def test_mypy_sees_the_loaned_message_type(tmp_path: pathlib.Path) -> None:
    pytest.importorskip("mypy")
    (tmp_path / "loan.py").write_text(textwrap.dedent("""
        import numpy as np
        import numpy.typing as npt

        import horus
        from horus.interfaces.sensor_msgs.msg import Image

        pub = horus.RosTopic(Image, "cam").publisher()
        loan: "horus.RosLoan[Image]" = pub.loan(Image(width=2), data=6)
        with pub.loan(data=6) as img:
            pixels: npt.NDArray[np.uint8] = img.data
            w: int = img.width
        n: int = loan.send()
        bad: str = loan.msg.width
    """))
    r = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--no-error-summary", "--show-error-codes",
         "loan.py"], cwd=tmp_path, capture_output=True, text=True)
    lines = [line for line in r.stdout.splitlines() if "error" in line]
    assert len(lines) == 1 and "loan.py:14" in lines[0] and '"int", variable has type "str"' in lines[0], r.stdout
