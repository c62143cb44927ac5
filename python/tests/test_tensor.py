"""TensorPool: pre-mapped shared-memory tensors, refcounts, descriptors, DLPack."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from typing import Any

import numpy as np
import pytest

import horus


def small_pool(pool_id: int = 1, slots: int = 2) -> horus.TensorPool:
    return horus.TensorPool(pool_id, slots=slots, slot_bytes=1 << 16)


def test_alloc_and_numpy_view_is_zero_copy() -> None:
    pool = small_pool()
    t = pool.alloc([64, 64], "float32")
    a, b = t.numpy(), t.numpy()
    assert a.shape == (64, 64) and a.dtype == np.float32
    assert np.shares_memory(a, b)
    a[3, 4] = 5.0
    assert b[3, 4] == 5.0
    assert a.ctypes.data % 4096 == 0  # slots are page aligned


def test_alloc_reuses_memory_without_zeroing() -> None:
    pool = small_pool(slots=1)
    t = pool.alloc(16, np.uint8)
    t.numpy()[:] = 9
    del t
    again = pool.alloc(16, np.uint8)
    assert (again.numpy() == 9).all()  # no zeroing on the hot path


def test_slot_returns_when_the_last_reference_drops() -> None:
    pool = small_pool()
    t = pool.alloc(10, np.float64)
    view = t.numpy()
    assert pool.free_slots == 1
    del t
    assert pool.free_slots == 1, "the NumPy view still references the tensor"
    del view
    assert pool.free_slots == 2


def test_exhausted_pool_and_too_large_tensor_raise() -> None:
    pool = small_pool(slots=1)
    keep = pool.alloc(1)
    with pytest.raises(horus.TensorPoolError, match="in use"):
        pool.alloc(1)
    with pytest.raises(ValueError, match="does not fit"):
        small_pool(pool_id=2).alloc(1 << 20)
    del keep


def test_descriptor_round_trip_and_stale_descriptor() -> None:
    pool = small_pool()
    t = pool.alloc((2, 3), np.int32)
    t.numpy()[:] = [[1, 2, 3], [4, 5, 6]]
    ref = t.to_descriptor(frame_id="cam")
    assert type(ref) is horus.TensorRef and ref.frame_id_str == "cam"
    u = horus.TensorPool.from_descriptor(ref)
    assert u.shape == (2, 3) and u.dtype == np.int32
    assert np.shares_memory(u.numpy(), t.numpy())
    del t, u
    with pytest.raises(horus.StaleDescriptorError):
        horus.TensorPool.from_descriptor(ref)


def test_fused_alloc_with_descriptor_and_numpy_from_descriptor() -> None:
    pool = small_pool()
    t, ref = pool.alloc_with_descriptor((2, 3), np.int32, frame_id="cam", stamp_ns=7)
    assert type(ref) is horus.TensorRef and ref.frame_id_str == "cam" and ref.stamp_ns == 7
    assert ref.to_bytes() == t.to_descriptor(frame_id="cam", stamp_ns=7).to_bytes()
    t.numpy()[:] = [[1, 2, 3], [4, 5, 6]]
    a = horus.TensorPool.numpy_from_descriptor(ref)
    assert a.shape == (2, 3) and a.dtype == np.int32 and a.flags.c_contiguous
    assert np.shares_memory(a, t.numpy()) and a[1, 2] == 6
    # The descriptor written into a reused message (no new message).
    out = horus.TensorRef()
    u, same = pool.alloc_with_descriptor([4], "float64", stamp_ns=9, out=out)
    assert same is out and out.stamp_ns == 9 and out.slot == u.slot
    assert horus.TensorPool.numpy_from_descriptor(out).shape == (4,)
    # The array alone keeps the tensor referenced.
    slot = t.slot
    del t, u
    assert pool.free_slots == 1  # u's slot is back; t's is held by `a`
    a[0, 0] = 42
    del a
    assert pool.free_slots == 2
    with pytest.raises(horus.StaleDescriptorError):
        horus.TensorPool.numpy_from_descriptor(ref)
    # 0-d tensors, and dtypes without a buffer format take the generic path.
    t0, r0 = pool.alloc_with_descriptor((), np.float64)
    assert horus.TensorPool.numpy_from_descriptor(r0).shape == ()
    ts, rs = pool.alloc_with_descriptor(3, np.dtype("datetime64[ns]"))
    assert horus.TensorPool.numpy_from_descriptor(rs).dtype == np.dtype("datetime64[ns]")
    assert slot in (t0.slot, ts.slot)
    with pytest.raises(TypeError):
        horus.TensorPool.numpy_from_descriptor(horus.CmdVel())  # type: ignore[arg-type]


def test_alloc_numpy_hands_over_the_array_and_its_descriptor() -> None:
    pool = small_pool()
    a, ref = pool.alloc_numpy((8, 2), np.uint16, stamp_ns=5)
    assert a.shape == (8, 2) and a.dtype == np.uint16 and a.flags.writeable
    assert a.ctypes.data % 4096 == 0 and ref.stamp_ns == 5
    a[:] = 3
    b = horus.TensorPool.numpy_from_descriptor(ref)
    assert np.shares_memory(a, b) and (b == 3).all()
    out = horus.TensorRef()
    c, same = pool.alloc_numpy(4, "datetime64[ns]", out=out)  # generic path
    assert same is out and c.dtype == np.dtype("datetime64[ns]")
    assert pool.free_slots == 0
    del a, b, c
    assert pool.free_slots == 2  # the arrays held the references
    with pytest.raises(horus.StaleDescriptorError):
        horus.TensorPool.numpy_from_descriptor(ref)


def test_config_mismatch_is_an_error() -> None:
    pool = small_pool(pool_id=5)
    with pytest.raises(horus.TensorPoolError):
        horus.TensorPool(5, slots=3)
    assert horus.TensorPool(5).slots == pool.slots


def test_dlpack_hands_the_memory_to_numpy_without_copy() -> None:
    t = small_pool().alloc((8, 8), np.float32)
    t.numpy()[:] = 1.5
    assert t.__dlpack_device__() == (1, 0)
    d = np.from_dlpack(t)
    assert d.shape == (8, 8) and np.shares_memory(d, t.numpy())
    d[0, 0] = 2.5
    assert t.numpy()[0, 0] == 2.5


def test_dead_holder_is_reclaimed(python: Any) -> None:
    pool = small_pool(pool_id=7)
    t = pool.alloc(100, np.uint8)
    pub = horus.Topic(horus.TensorRef, "holder").publisher()
    child = python(
        """
        import time, horus
        sub = horus.Topic(horus.TensorRef, "holder").subscriber()
        print("ready", flush=True)
        t = horus.TensorPool.from_descriptor(sub.recv(timeout=10))
        print('{"refcount": %d}' % t.refcount, flush=True)
        time.sleep(60)
        """
    )
    pub.wait_for_subscribers()
    pub.send(t.to_descriptor())
    assert child.line() == {"refcount": 2}
    os.kill(child.p.pid, signal.SIGKILL)
    child.p.wait()
    assert t.refcount == 2  # the dead process's reference is still recorded ...
    assert pool.reclaim_dead() == 1  # ... until someone notices it died
    assert t.refcount == 1
    del t
    assert pool.free_slots == pool.slots


def test_exit_with_a_live_dlpack_view_leaves_no_pool_in_dev_shm(ns: str) -> None:
    """Regression (issue 22): a script that exited while a NumPy or DLPack view
    of a tensor was alive left its whole pool (128 MiB with the default one) in
    /dev/shm: the interpreter never freed the view, so the pool's last holder
    never left. At exit the package now leaves every pool, views alive or not."""
    script = textwrap.dedent(
        """
        import os
        import numpy as np
        import horus
        pool = horus.TensorPool(4243)
        h = pool.alloc([256, 256], 'float32')
        b = np.from_dlpack(h)
        a = h.numpy()
        b[0, 0] = 1.0
        print(sorted(n for n in os.listdir('/dev/shm') if '.%s.' % os.environ['HORUS_NAMESPACE'] in n))
        """
    )
    run = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    assert f"horus.{ns}.tp.4243" in run.stdout, "the pool existed while the script ran"
    assert [n for n in os.listdir("/dev/shm") if f".{ns}." in n] == []


def test_image_published_by_descriptor() -> None:
    pool = horus.TensorPool(9, slots=2, slot_bytes=1 << 20)
    t = pool.alloc((120, 160, 3), np.uint8)
    t.numpy()[:] = np.random.default_rng(3).integers(0, 255, (120, 160, 3), dtype=np.uint8)
    topic = horus.Topic(horus.TensorRef, "camera/by_ref")
    pub, sub = topic.publisher(), topic.subscriber()
    pub.send(t.to_descriptor(kind=horus.Image.RGB8, frame_id="cam0"))
    ref = sub.recv(timeout=1)
    assert ref.kind == horus.Image.RGB8 and ref.frame_id_str == "cam0"
    img = horus.TensorPool.from_descriptor(ref).numpy()
    assert img.shape == (120, 160, 3)
    assert np.shares_memory(img, t.numpy())  # same pages, no copy of the pixels
    assert ref.nbytes == 120 * 160 * 3


def test_points_published_by_descriptor() -> None:
    t = horus.TensorPool(10, slots=1, slot_bytes=1 << 20).alloc((5000, 3), np.float32)
    t.numpy()[:] = 1.0
    ref = t.to_descriptor(kind=horus.TensorRef.POINTS)
    assert ref.kind == horus.TensorRef.POINTS and list(ref.shape[:2]) == [5000, 3]
    assert horus.TensorPool.from_descriptor(ref).numpy().sum() == 15000.0
