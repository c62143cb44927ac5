"""Messages: generated from the Rust schema tables, same ids and layouts."""

from __future__ import annotations

import numpy as np
import pytest

import horus
from horus import _horus

STANDARD = {
    "Time", "Header", "Vector3", "Quaternion", "Pose2D", "Pose", "Twist", "CmdVel",
    "EmergencyStop", "Imu", "LaserScan", "BatteryState", "Odometry", "JointState",
    "PointCloud", "Image",
}  # fmt: skip


def test_every_standard_rust_message_is_a_python_class() -> None:
    assert STANDARD <= set(horus.MESSAGE_TYPES)
    for name in STANDARD:
        cls = getattr(horus, name)
        assert cls is horus.MESSAGE_TYPES[name]
        assert cls.SCHEMA.name == f"horus/{name}"
        assert horus.message_type(cls.SCHEMA.name) is cls


@pytest.mark.parametrize("name", sorted(horus.MESSAGE_TYPES))
def test_layout_hash_recomputed_from_field_table_matches_rust(name: str) -> None:
    cls = horus.MESSAGE_TYPES[name]
    assert horus.layout_hash(cls.SCHEMA) == cls.SCHEMA.layout_hash


@pytest.mark.parametrize("name", sorted(horus.MESSAGE_TYPES))
def test_dtype_has_the_rust_size_and_offsets(name: str) -> None:
    cls = horus.MESSAGE_TYPES[name]
    assert cls.DTYPE.itemsize == cls.SCHEMA.size
    for f in cls.SCHEMA.fields:
        dt, offset = cls.DTYPE.fields[f.name][:2]
        assert offset == f.offset
        assert dt.itemsize == f.size


def test_known_sizes_and_schema_display() -> None:
    sizes = {"CmdVel": 16, "Imu": 304, "LaserScan": 1480, "Odometry": 736, "JointState": 912,
             "BatteryState": 104, "PointCloud": 56, "Image": 64}  # fmt: skip
    for name, size in sizes.items():
        assert horus.MESSAGE_TYPES[name].SCHEMA.size == size
    s = horus.CmdVel.SCHEMA
    assert str(s) == f"horus/CmdVel v1 (16 B, layout {s.layout_hash:#018x})"
    assert horus.PointCloud.HAS_TAIL and not horus.CmdVel.HAS_TAIL


def test_scalar_fields_are_attributes_with_the_rust_byte_layout() -> None:
    m = horus.CmdVel(stamp_ns=7, linear=0.5, angular=-1.25)
    assert (m.stamp_ns, m.linear, m.angular) == (7, 0.5, -1.25)
    raw = m.to_bytes()
    assert raw == (7).to_bytes(8, "little") + np.float32(0.5).tobytes() + np.float32(-1.25).tobytes()
    assert horus.CmdVel.from_bytes(raw) == m
    m.linear = 2.0
    assert m.linear == 2.0


def test_array_fields_are_numpy_views() -> None:
    scan = horus.LaserScan(num_ranges=3)
    r = scan.ranges
    assert r.shape == (360,) and r.dtype == np.float32
    assert np.shares_memory(r, scan.array)
    r[:3] = [1.0, 2.0, 3.0]
    assert list(scan.ranges[:3]) == [1.0, 2.0, 3.0]
    js = horus.JointState()
    assert js.names.shape == (16, 32)
    scan.ranges = np.full(360, 4.0, np.float32)
    assert scan.ranges[359] == 4.0


def test_nested_messages_are_views_into_the_parent() -> None:
    odom = horus.Odometry()
    odom.pose.position.x = 3.0
    odom.twist.angular.z = -1.0
    assert odom.pose.position.x == 3.0
    assert odom.twist.angular.z == -1.0
    p = horus.Pose()
    p.orientation.w = 1.0
    odom.pose = p
    assert odom.pose.orientation.w == 1.0 and odom.pose.position.x == 0.0
    with pytest.raises(TypeError):
        odom.pose = horus.Twist()


def test_fixed_strings() -> None:
    h = horus.Header(frame_id="base_link")
    assert h.frame_id_str == "base_link"
    assert bytes(h.frame_id[:10]) == b"base_link\0"
    with pytest.raises(ValueError, match="do not fit"):
        h.frame_id_str = "x" * 33
    with pytest.raises(ValueError, match="NUL"):
        h.frame_id_str = "a\0b"


def test_unknown_field_is_an_error() -> None:
    with pytest.raises(TypeError, match="no field"):
        horus.CmdVel(speed=1.0)


def test_constants_come_from_rust() -> None:
    assert horus.PointCloud.POINT_STEP_XYZ == 12
    assert horus.PointCloud.POINT_STEP_XYZI == 16
    assert horus.Image.RGB8 == 3 and horus.Image.DEPTH32F == 8
    assert horus.EmergencyStop.REASON_WATCHDOG == 3
    codes = {name: bpp for _, name, bpp in _horus.image_encodings()}
    assert codes["rgb8"] == 3 and codes["mono16"] == 2


def test_point_cloud_points_view_the_tail() -> None:
    pts = np.arange(12, dtype=np.float32).reshape(4, 3)
    cloud = horus.PointCloud.from_points(pts, seq=2)
    assert cloud.num_points == 4 and cloud.point_step == 12 and cloud.tail_len() == 48
    assert np.array_equal(cloud.points, pts)
    assert np.shares_memory(cloud.points, cloud.tail)
    xyzi = horus.PointCloud.from_points(np.ones((2, 4)))
    assert xyzi.point_step == 16 and xyzi.points.shape == (2, 4)
    bad = horus.PointCloud(num_points=10, point_step=12)
    with pytest.raises(ValueError, match="needs 120"):
        bad.points


def test_image_pixels_view_skips_row_padding() -> None:
    h, w, step = 2, 3, 12  # 9 pixel bytes per row + 3 padding bytes
    img = horus.Image(width=w, height=h, step=step, encoding=horus.Image.RGB8)
    tail = np.arange(h * step, dtype=np.uint8)
    view = horus.Image.from_buffer(np.concatenate([img.array.view(np.uint8), tail]), tail_offset=64)
    px = view.pixels
    assert px.shape == (2, 3, 3)
    assert px[1, 0, 0] == 12 and px[0, 2, 2] == 8
    assert np.shares_memory(px, view.tail)
    depth = horus.Image.from_pixels(np.full((4, 5), 1.5, np.float32), horus.Image.DEPTH32F)
    assert depth.pixels.dtype == np.float32 and depth.pixels.shape == (4, 5)
    assert depth.encoding_name == "32FC1"


def test_copy_and_equality() -> None:
    a = horus.Imu(stamp_ns=1)
    a.orientation = [0, 0, 0, 1]
    b = a.copy()
    assert a == b and b.array is not a.array
    b.stamp_ns = 2
    assert a != b
    assert "Imu(stamp_ns=1" in repr(a)
