"""Views of a loan never outlive it: no NumPy array or memoryview of a
loan's memory can write into it once it is sent (the subscribers' message)
or discarded (a chunk the pool recycles)."""

from __future__ import annotations

import gc

import numpy as np
import pytest

import horus


def _cloud(n: int = 4, **fields: int) -> horus.Message:
    return horus.PointCloud(num_points=n, point_step=12, **fields)


def test_loan_view_kept_past_send_never_writes_into_the_sent_message() -> None:
    # Issue 8: `pts` kept writing into the chunk after send() while
    # subscribers read it in place.
    t = horus.Topic(horus.PointCloud, "lv-send")
    pub, sub = t.publisher(), t.subscriber()
    loan = pub.loan(_cloud(seq=1))
    pts = loan.msg.points.reshape(-1)[::1]  # a view derived from the loan's
    pts[:] = 1.0
    with pytest.raises(horus.LoanError, match="alive"):
        loan.send()  # refused: `pts` could write into the sent message
    assert loan.active and sub.try_recv() is None  # nothing was published
    pts[:] = 2.0  # still our loan: lands before the send
    del pts
    assert loan.send() == 1
    got = sub.recv(1.0)
    assert got.seq == 1 and np.all(got.points == 2.0)
    # Nothing reaches the sent memory any more: every route raises.
    with pytest.raises(ValueError):
        loan.msg.points[:] = 9.0
    with pytest.raises(ValueError):
        loan.msg.seq = 9
    with pytest.raises(horus.LoanError):
        np.frombuffer(loan._native, np.uint8)
    assert got.seq == 1 and np.all(got.points == 2.0)


def test_every_view_of_a_loan_is_counted() -> None:
    pub = horus.Topic(horus.PointCloud, "lv-count").publisher()
    loan = pub.loan(_cloud())
    base = loan.views
    assert base == 2  # msg's own header and tail arrays
    held = [
        np.asarray(loan.msg.points)[1:].T,
        loan.msg.tail[::2],
        loan.msg.array,
        memoryview(loan._native),
        np.frombuffer(loan._native, np.float32, offset=loan._native.tail_offset),
    ]
    assert loan.views == base + 2  # the last two exported anew
    for i in range(len(held)):
        with pytest.raises(horus.LoanViewsAliveError) as e:
            loan.send()
        assert e.value.views >= 1
        held[i] = None
    held.clear()
    assert loan.send() == 0
    assert loan.views == 0


def test_reading_a_loan_before_send_and_its_header_after() -> None:
    t = horus.Topic(horus.PointCloud, "lv-read")
    pub, sub = t.publisher(), t.subscriber()
    with pub.loan(_cloud(seq=5)) as cloud:
        cloud.points[:] = np.arange(12, dtype=np.float32).reshape(4, 3)
        assert cloud.points[3, 2] == 11.0 and cloud.seq == 5 and not cloud.is_readonly
    assert cloud.is_readonly and cloud.seq == 5  # a read-only copy of the header
    with pytest.raises(ValueError):
        cloud.points[:] = 0.0  # its tail went with the message
    with pytest.raises(ValueError):
        cloud.num_points = 1
    got = sub.recv(1.0)
    assert got.seq == 5 and got.points[3, 2] == 11.0


def test_discard_with_live_views_keeps_the_chunk_from_being_recycled() -> None:
    t = horus.Topic(horus.PointCloud, "lv-discard")
    pub, sub = t.publisher(), t.subscriber()
    loan = pub.loan(_cloud())
    pts = loan.msg.points
    with pytest.raises(horus.LoanViewsAliveError):
        loan.discard()
    assert loan.active and not loan.msg.is_readonly
    with pytest.raises(horus.LoanError, match="outstanding"):
        pub.loan(_cloud())  # the memory is still this loan's
    pts[:] = 3.0
    del pts
    loan.discard()
    assert not loan.active and sub.try_recv() is None
    with pytest.raises(ValueError):
        loan.msg.points[:] = 4.0


def test_loan_freed_unsent_is_discarded_once_its_views_are_gone() -> None:
    t = horus.Topic(horus.PointCloud, "lv-freed")
    pub, sub = t.publisher(), t.subscriber()
    loan = pub.loan(_cloud())
    pts = loan.msg.points
    del loan
    pts[:] = 5.0  # the loan is still outstanding: never a recycled chunk
    with pytest.raises(horus.LoanError, match="outstanding"):
        pub.send(horus.PointCloud())
    del pts
    assert pub.send(horus.PointCloud(seq=7)) == 1  # the loan went back unsent
    assert sub.recv(1.0).seq == 7 and sub.try_recv() is None


def test_with_block_keeping_a_view_sends_nothing() -> None:
    t = horus.Topic(horus.PointCloud, "lv-with")
    pub, sub = t.publisher(), t.subscriber()
    with pytest.raises(horus.LoanViewsAliveError, match="del pts"):
        with pub.loan(_cloud()) as cloud:
            pts = cloud.points
            pts[:] = 1.0
    assert sub.try_recv() is None and cloud.is_readonly
    pts[:] = 2.0  # the unsent loan's memory, held until `pts` goes
    del pts
    gc.collect()  # the exception pytest kept references the loan in a cycle
    assert pub.send(horus.PointCloud(seq=3)) == 1
    assert sub.recv(1.0).seq == 3


def test_refused_send_leaves_the_loan_writable() -> None:
    t = horus.Topic(horus.PointCloud, "lv-refused", depth=1, overflow=horus.Overflow.REJECT)
    pub, sub = t.publisher(), t.subscriber()
    pub.send(horus.PointCloud(seq=1))
    loan = pub.loan(_cloud(seq=2))
    with pytest.raises(horus.HistoryFullError):
        loan.send()
    assert loan.active and not loan.msg.is_readonly
    loan.msg.points[:] = 6.0
    assert sub.recv(1.0).seq == 1
    assert loan.send() == 1
    got = sub.recv(1.0)
    assert got.seq == 2 and np.all(got.points == 6.0)


def test_small_message_loan_views_are_counted_too() -> None:
    # Small messages are staged and copied into the ring: the staging
    # buffer is reused by the next loan, so the same rule holds.
    t = horus.Topic(horus.CmdVel, "lv-small")
    pub, sub = t.publisher(), t.subscriber()
    loan = pub.loan(horus.CmdVel(linear=1.0))
    a = loan.msg.array
    with pytest.raises(horus.LoanViewsAliveError):
        loan.send()
    a["linear"] = 2.0
    del a
    assert loan.send() == 1
    assert sub.recv(1.0).linear == 2.0
    with pytest.raises(ValueError):
        loan.msg.linear = 3.0
