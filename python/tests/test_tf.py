"""horus.tf: broadcasters and the shared transform buffer from Python, with lookups compared
to values computed independently with scipy.spatial.transform (Rotation, Slerp), and
tf2's documented semantics: lookups walk the tree through the common ancestor, translation
is interpolated linearly and rotation by slerp between stamped samples, time 0 is the
latest common time, statics hold at every time, extrapolation and unknown or disconnected
frames are errors."""

from __future__ import annotations

import math
import subprocess
import sys
import textwrap
import time
from typing import Dict, List, Sequence, Tuple

import numpy as np
import pytest
from scipy.spatial.transform import Rotation, Slerp

import horus.tf as tf

S = 1_000_000_000
TOL = 1e-9


def wait_feeder(b: tf.TransformBroadcaster) -> None:
    end = time.monotonic() + 20
    while b.subscribers == 0:
        assert time.monotonic() < end, "no feeder subscribed to tf"
        time.sleep(0.005)


def rand_rotation(rng: np.random.Generator) -> Rotation:
    return Rotation.random(random_state=int(rng.integers(1 << 31)))


class Frame:
    """One dynamic frame's samples, as scipy sees them."""

    def __init__(self, parent: str, child: str, stamps: Sequence[int], rng: np.random.Generator) -> None:
        self.parent, self.child = parent, child
        self.stamps = list(stamps)
        self.translations = [rng.uniform(-2, 2, 3) for _ in stamps]
        self.rotations = Rotation.concatenate([rand_rotation(rng) for _ in stamps])

    def at(self, t: int) -> Tuple[np.ndarray, Rotation]:
        """Translation by linear interpolation, rotation by slerp (scipy's)."""
        times = np.array(self.stamps, dtype=float)
        rot = Slerp(times, self.rotations)([float(t)])[0]
        tr = np.array([np.interp(t, times, [v[i] for v in self.translations]) for i in range(3)])
        return tr, rot


def compose(chain: List[Tuple[np.ndarray, Rotation]]) -> Tuple[np.ndarray, Rotation]:
    """T_0_n = T_0_1 ∘ T_1_2 ∘ …"""
    tr, rot = np.zeros(3), Rotation.identity()
    for t, r in chain:
        tr = tr + rot.apply(t)
        rot = rot * r
    return tr, rot


def assert_same(got: tf.StampedTransform, tr: np.ndarray, rot: Rotation) -> None:
    assert np.allclose(got.translation, tr, atol=TOL), (got, tr)
    q = np.array(got.rotation)
    want = rot.as_quat()
    # q and -q are the same rotation.
    assert np.allclose(q, want, atol=TOL) or np.allclose(q, -want, atol=TOL), (q, want)


def test_a_5_deep_chain_is_interpolated_as_scipy_computes_it() -> None:
    rng = np.random.default_rng(7)
    now = time.time_ns()
    stamps = [now - 3 * S, now - 2 * S, now - S]
    names = ["map", "odom", "base_link", "arm", "wrist", "tool"]
    frames = [Frame(p, c, stamps, rng) for p, c in zip(names, names[1:])]
    with tf.Buffer() as buffer, tf.TransformBroadcaster() as b:
        assert buffer.is_shared
        wait_feeder(b)
        for i, stamp in enumerate(stamps):
            b.send_transforms(
                [(f.parent, f.child, tuple(f.translations[i]), tuple(f.rotations[i].as_quat()), stamp) for f in frames]
            )
        buffer.wait_for_transform("map", "tool", stamps[-1], timeout=20)
        for t in [stamps[0], now - 5 * S // 2, now - 6 * S // 5, stamps[-1]]:
            t = int(t)
            got = buffer.lookup_transform("map", "tool", t)
            tr, rot = compose([f.at(t) for f in frames])
            assert_same(got, tr, rot)
            assert got.stamp_ns == t
        # Time 0: the latest common time, here the newest stamp.
        latest = buffer.lookup_transform("map", "tool")
        assert latest.stamp_ns == stamps[-1]
        # Seconds as a float are the same time (to the ns rounding).
        t = now - 2 * S
        by_float = buffer.lookup_transform("map", "tool", t / 1e9)
        assert np.allclose(by_float.translation, buffer.lookup_transform("map", "tool", t).translation, atol=1e-6)


def test_a_lookup_between_branches_goes_through_the_common_ancestor() -> None:
    rng = np.random.default_rng(11)
    laser_t, imu_t = rng.uniform(-1, 1, 3), rng.uniform(-1, 1, 3)
    laser_r, imu_r = rand_rotation(rng), rand_rotation(rng)
    with tf.Buffer() as buffer, tf.StaticTransformBroadcaster() as statics:
        statics.send_transform("base_link", "laser", tuple(laser_t), tuple(laser_r.as_quat()), 0)
        statics.send_transform("base_link", "imu", tuple(imu_t), tuple(imu_r.as_quat()), 0)
        got = buffer.lookup_transform("laser", "imu", timeout=20)
        # T_laser_imu = inverse(T_base_laser) ∘ T_base_imu
        inv_r = laser_r.inv()
        tr = inv_r.apply(imu_t - laser_t)
        assert_same(got, tr, inv_r * imu_r)
        # Statics hold at every time.
        assert_same(buffer.lookup_transform("laser", "imu", 12345 * S), tr, inv_r * imu_r)


def test_static_and_dynamic_mixed_with_numpy_results() -> None:
    now = time.time_ns()
    q = Rotation.from_euler("z", 90, degrees=True)
    with tf.Buffer() as buffer, tf.StaticTransformBroadcaster() as statics, tf.TransformBroadcaster() as b:
        statics.send_transform("base_link", "laser", (0.1, 0.0, 0.2), (0, 0, 0, 1), 0)
        wait_feeder(b)
        b.send_transform("odom", "base_link", (0.0, 0.0, 0.0), tuple(q.as_quat()), now - 2 * S)
        b.send_transform("odom", "base_link", (2.0, 0.0, 0.0), tuple(q.as_quat()), now - S)
        buffer.wait_for_transform("odom", "laser", now - S, timeout=20)
        got = buffer.lookup_transform("odom", "laser", now - 3 * S // 2, numpy=True)
        assert isinstance(got.translation, np.ndarray) and isinstance(got.rotation, np.ndarray)
        # base at x = 1 (halfway), yawed 90°: the laser's (0.1, 0, 0.2) becomes (0, 0.1, 0.2).
        assert np.allclose(got.translation, [1.0, 0.1, 0.2], atol=TOL)
        plain = buffer.lookup("odom", "laser", now - S)
        assert plain[2] == now - S and math.isclose(plain[0][0], 2.0)


def test_errors_are_typed_lookup_errors_with_the_range_held() -> None:
    now = time.time_ns()
    with tf.Buffer() as buffer, tf.TransformBroadcaster() as b:
        wait_feeder(b)
        b.send_transform("odom", "base_link", (0, 0, 0), (0, 0, 0, 1), now - 2 * S)
        b.send_transform("odom", "base_link", (1, 0, 0), (0, 0, 0, 1), now - S)
        b.send_transform("elsewhere", "other", (0, 0, 0), (0, 0, 0, 1), now - S)
        buffer.wait_for_transform("odom", "base_link", now - S, timeout=20)
        buffer.wait_for_transform("elsewhere", "other", timeout=20)
        with pytest.raises(tf.FrameNotFoundError):
            buffer.lookup_transform("odom", "nowhere")
        with pytest.raises(tf.ConnectivityError):
            buffer.lookup_transform("odom", "other")
        with pytest.raises(tf.ExtrapolationError, match="past"):
            buffer.lookup_transform("odom", "base_link", now - 3 * S)
        with pytest.raises(tf.ExtrapolationError, match="future") as e:
            buffer.lookup_transform("odom", "base_link", now)
        assert str(now - S) in str(e.value)  # the newest stamp held
        assert isinstance(e.value, LookupError)
        assert not buffer.can_transform("odom", "base_link", now)
        assert buffer.can_transform("odom", "base_link", now - S)
        with pytest.raises(tf.TransformTimeoutError) as t:
            buffer.lookup_transform("odom", "nowhere", timeout=0.2)
        assert isinstance(t.value, TimeoutError) and isinstance(t.value, LookupError)
        assert "nowhere" in str(t.value)


def test_transforms_tf_refuses_are_not_sent() -> None:
    with tf.TransformBroadcaster() as b:
        with pytest.raises(tf.InvalidTransformError, match="NaN"):
            b.send_transform("odom", "base_link", (math.nan, 0, 0))
        with pytest.raises(tf.InvalidTransformError, match="unit quaternion"):
            b.send_transform("odom", "base_link", (0, 0, 0), (0, 0, 0, 2))
        with pytest.raises(tf.InvalidTransformError, match="own parent"):
            b.send_transform("odom", "odom", (0, 0, 0))
        with pytest.raises(ValueError):
            b.send_transform("", "base_link", (0, 0, 0))


def test_transform_stamped_messages_are_broadcast_as_they_are() -> None:
    from horus.interfaces.geometry_msgs.msg import TransformStamped

    m = TransformStamped()
    m.header.frame_id = "map"
    m.header.stamp.sec = 5
    m.child_frame_id = "odom"
    m.transform.translation.x = 3.0
    m.transform.rotation.w = 1.0
    with tf.Buffer() as buffer, tf.StaticTransformBroadcaster() as statics:
        statics.send_transforms([m])
        got = buffer.lookup_transform("map", "odom", timeout=20)
        assert got.translation == (3.0, 0.0, 0.0)


def test_another_python_process_broadcasts_and_the_per_process_buffer_sees_it() -> None:
    child = textwrap.dedent(
        """
        import sys, time
        import horus.tf as tf
        with tf.StaticTransformBroadcaster() as s:
            s.send_transform("base_link", "laser", (0.5, 0.0, 0.0))
            print("sent", flush=True)
            sys.stdin.readline()
        """
    )
    with subprocess.Popen(
        [sys.executable, "-c", child], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    ) as p:
        assert p.stdout is not None and p.stdin is not None
        try:
            assert p.stdout.readline().strip() == "sent"
            # Joined after the send: the statics are latched.
            for per_process in (False, True):
                with tf.Buffer(per_process=per_process) as buffer:
                    assert buffer.is_shared != per_process
                    got = buffer.lookup_transform("base_link", "laser", timeout=20)
                    assert got.translation == (0.5, 0.0, 0.0)
        finally:
            p.stdin.close()
            assert p.wait(timeout=20) == 0
