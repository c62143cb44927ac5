"""Message classes are typed for mypy and IDEs: the horus messages through
``horus/_message_classes.pyi`` (generated from the Rust schema tables, checked
up to date here), the ROS 2 ones through their generated modules. mypy
--strict runs over a small script that uses both and over one with mistakes
it must report."""

from __future__ import annotations

import pathlib
import re
import subprocess
import sys
import textwrap
from typing import Dict, List

import numpy as np
import pytest

import horus
from horus._message_typing import field_types, render

STUB = pathlib.Path(__file__).resolve().parents[1] / "horus" / "_message_classes.pyi"

GOOD = """
from typing import List, Optional

import numpy as np
import numpy.typing as npt

import horus
from horus.interfaces.sensor_msgs.msg import LaserScan as RosLaserScan


def speeds(sub: "horus.Subscriber[horus.CmdVel]") -> float:
    cmd = sub.recv(timeout=1.0)
    stamp: int = cmd.stamp_ns
    return cmd.linear + float(stamp)


def build() -> List[float]:
    imu = horus.Imu(stamp_ns=3)
    imu.orientation = [0.0, 0.0, 0.0, 1.0]
    q: npt.NDArray[np.float64] = imu.orientation
    odom = horus.Odometry(frame_id="odom")
    odom.pose.position.x = 1.5
    name: str = odom.frame_id_str
    scan = horus.LaserScan(num_ranges=3)
    ranges: npt.NDArray[np.float32] = scan.ranges
    stop_reason: int = horus.EmergencyStop.REASON_MANUAL
    cloud = horus.PointCloud.from_points(np.zeros((4, 3), np.float32), frame_id="lidar")
    pts: npt.NDArray[np.float32] = cloud.points
    n: int = cloud.num_points
    ros = RosLaserScan(ranges=np.arange(4, dtype=np.float32))
    ros_ranges: npt.NDArray[np.float32] = ros.ranges
    frame: str = ros.header.frame_id
    return [float(q[3]), float(ranges.sum()), float(pts.sum()), float(ros_ranges[0]),
            float(n + stop_reason + len(name) + len(frame))]


topic = horus.Topic(horus.CmdVel, "typed/cmd")
latest: Optional[horus.CmdVel] = topic.subscriber().try_recv()
"""

# (line, what mypy must say) for each mistake; line numbers within BAD.
BAD = """
import horus

cmd = horus.CmdVel(linear=0.5)
cmd.linaer = 1.0
cmd.linear = "fast"
x: str = cmd.stamp_ns
horus.Imu(orientaton=[0.0])
imu = horus.Imu()
imu.orientation.upper()
"""
BAD_ERRORS = {
    5: r'"CmdVel" has no attribute "linaer"',
    6: r'Incompatible types in assignment \(expression has type "str", variable has type "float"\)',
    7: r'Incompatible types in assignment \(expression has type "int", variable has type "str"\)',
    8: r'Unexpected keyword argument "orientaton" for "Imu"',
    10: r'has no attribute "upper"',
}


def test_the_message_stub_is_what_the_schema_tables_give() -> None:
    assert STUB.read_text(encoding="utf-8") == render(), (
        "regenerate with `python -m horus._message_typing python/horus/_message_classes.pyi`"
    )


def test_every_field_of_every_message_class_has_a_python_type() -> None:
    for name, cls in horus.MESSAGE_TYPES.items():
        for f in cls.SCHEMA.fields:
            read, _ = field_types(f.ty)
            value = getattr(cls(), f.name)
            if read == "int":
                assert isinstance(value, int), (name, f.name)
            elif read == "float":
                assert isinstance(value, float), (name, f.name)
            elif read.startswith("npt.NDArray"):
                dtype = read[len("npt.NDArray[np.") : -1]
                assert isinstance(value, np.ndarray) and value.dtype.name == dtype, (name, f.name)
            else:
                assert type(value) is horus.MESSAGE_TYPES[read], (name, f.name)


def mypy(tmp_path: pathlib.Path, files: Dict[str, str]) -> List[str]:
    for name, text in files.items():
        (tmp_path / name).write_text(textwrap.dedent(text), encoding="utf-8")
    r = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--no-error-summary", "--show-error-codes",
         "--cache-dir", str(tmp_path / "cache"), *files],
        cwd=tmp_path, capture_output=True, text=True, timeout=600,
    )
    assert r.returncode in (0, 1), r.stderr
    return r.stdout.splitlines()


def test_mypy_sees_the_fields_of_horus_and_ros_messages(tmp_path: pathlib.Path) -> None:
    pytest.importorskip("mypy")
    lines = mypy(tmp_path, {"good.py": GOOD, "bad.py": BAD})
    good = [line for line in lines if line.startswith("good.py")]
    assert good == [], "\n".join(good)
    bad: Dict[int, List[str]] = {}
    for line in lines:
        m = re.match(r"bad\.py:(\d+): error: (.*)", line)
        if m:
            bad.setdefault(int(m.group(1)), []).append(m.group(2))
    assert sorted(bad) == sorted(BAD_ERRORS), "\n".join(lines)
    for n, pattern in BAD_ERRORS.items():
        assert any(re.search(pattern, e) for e in bad[n]), (n, bad[n])
