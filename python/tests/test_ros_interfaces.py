"""ROS 2 types as Python classes (horus.interfaces): generated modules up to date,
CDR round trips of every standard type, the rclpy fixtures, NumPy views, typed errors
for hostile bytes and bad values, a user's package, and the stubs under mypy."""

from __future__ import annotations

import importlib
import json
import random
import re
import subprocess
import sys
from pathlib import Path
from typing import Any, Dict, List, Type

import numpy as np
import pytest

import horus
from horus.interfaces import STANDARD_PACKAGES, TYPES, generate_sources, load_package
from horus.interfaces._base import RosMessage

REPO = Path(__file__).resolve().parents[2]
GENERATED = REPO / "python" / "horus" / "interfaces"
FIXTURES = REPO / "crates" / "horus-idl" / "tests" / "fixtures" / "cdr"

TYPE_RE = re.compile(r"^(?P<base>[^\[]+?)(?:\[(?P<arr><=\d+|\d+)?\])?$")
PRIMS = {
    "bool": np.bool_, "byte": np.uint8, "char": np.uint8, "uint8": np.uint8,
    "int8": np.int8, "int16": np.int16, "uint16": np.uint16, "int32": np.int32,
    "uint32": np.uint32, "int64": np.int64, "uint64": np.uint64,
    "float32": np.float32, "float64": np.float64,
}
ALPHABET = "aZ9 _-/ü€Ω漢😀"


def class_of(type_name: str) -> Type[RosMessage]:
    pkg, ns, name = type_name.split("/")
    mod = importlib.import_module(f"horus.interfaces.{pkg}.{ns}")
    cls: Type[RosMessage] = getattr(mod, name)
    return cls


def rand_string(rng: random.Random, bound: int | None) -> str:
    s = "".join(rng.choice(ALPHABET) for _ in range(rng.randint(0, 6)))
    if bound is not None:
        while len(s.encode()) > bound:
            s = s[:-1]
    return s


def rand_scalar(rng: random.Random, base: str) -> Any:
    if base == "bool":
        return rng.random() < 0.5
    if base.startswith("float"):
        v = rng.choice([0.0, -1.5, rng.uniform(-1e6, 1e6), float("inf")])
        return float(np.float32(v)) if base == "float32" else v
    info = np.iinfo(PRIMS[base])
    return rng.choice([int(info.min), int(info.max), rng.randint(int(info.min), int(info.max))])


def rand_value(rng: random.Random, ros_type: str, depth: int) -> Any:
    m = TYPE_RE.match(ros_type)
    assert m, ros_type
    base, arr = m.group("base"), m.group("arr")
    is_array = "[" in ros_type
    if is_array:
        if arr is None:
            n = rng.randint(0, 3 if depth < 3 else 0)
        elif arr.startswith("<="):
            n = rng.randint(0, min(int(arr[2:]), 3))
        else:
            n = int(arr)
        if base in PRIMS:
            return np.array([rand_scalar(rng, base) for _ in range(n)], dtype=PRIMS[base])
        return [rand_value(rng, base, depth + 1) for _ in range(n)]
    if base in PRIMS:
        return rand_scalar(rng, base)
    if base.startswith("string") or base.startswith("wstring"):
        bound = int(base.split("<=")[1]) if "<=" in base else None
        return rand_string(rng, bound)
    return rand_message(rng, class_of(base), depth + 1)


def rand_message(rng: random.Random, cls: Type[RosMessage], depth: int = 0) -> RosMessage:
    return cls(**{f: rand_value(rng, t, depth) for f, t in cls._FIELDS})


def all_structs() -> List[str]:
    return sorted(TYPES.type_names())


# --- generated modules ------------------------------------------------------------


def test_generated_modules_are_up_to_date() -> None:
    stale = []
    for package in STANDARD_PACKAGES:
        for rel, src in generate_sources(package).items():
            path = GENERATED / rel
            if not path.exists() or path.read_text(encoding="utf-8") != src:
                stale.append(rel)
    assert not stale, (
        f"regenerate with `python -m horus.interfaces._generate python/horus/interfaces`: {stale}"
    )


def test_every_standard_type_has_a_class() -> None:
    for name in all_structs():
        cls = class_of(name)
        assert cls.ros_type_name() == name
        assert cls.ros_type_hash().startswith("RIHS01_")


def test_classes_have_slots_defaults_and_constants() -> None:
    from horus.interfaces.sensor_msgs.msg import Image, PointField
    from horus.interfaces.visualization_msgs.msg import Marker

    img = Image()
    assert img.encoding == "" and img.height == 0 and img.data.dtype == np.uint8
    assert img.header.frame_id == ""
    with pytest.raises(AttributeError):
        img.no_such_field = 1  # type: ignore[attr-defined]
    assert PointField.FLOAT32 == 7 and Marker.DELETEALL == 3
    assert "encoding='rgb8'" in repr(Image(encoding="rgb8"))


def test_service_and_action_holders() -> None:
    from horus.interfaces.std_srvs.srv import SetBool, SetBool_Request
    from horus.interfaces.tf2_msgs.action import LookupTransform

    assert SetBool.Request is SetBool_Request
    req = SetBool.Request(data=True)
    assert SetBool.Request.from_cdr(req.to_cdr()) == req
    goal = LookupTransform.Goal(target_frame="map", source_frame="base")
    assert LookupTransform.Goal.from_cdr(goal.to_cdr()) == goal
    assert LookupTransform.SendGoal.Request.ros_type_name() == "tf2_msgs/action/LookupTransform_SendGoal_Request"


# --- round trips ----------------------------------------------------------------


@pytest.mark.parametrize("seed", range(3))
def test_every_standard_type_round_trips_with_random_content(seed: int) -> None:
    rng = random.Random(seed)
    for name in all_structs():
        cls = class_of(name)
        msg = rand_message(rng, cls)
        data = msg.to_cdr()
        assert TYPES.encoded_size(name, msg) == len(data)
        # horus_idl's dynamic codec reads the same message and writes the same bytes.
        assert TYPES._reference_reencode(name, data) == data, name
        back = cls.from_cdr(data)
        assert back == msg, name
        assert back.to_cdr() == data, name


def _plain(v: Any) -> Any:
    if isinstance(v, RosMessage):
        return {f: _plain(getattr(v, f)) for f, _ in v._FIELDS}
    if isinstance(v, np.ndarray):
        return v.tolist()
    if isinstance(v, list):
        return [_plain(x) for x in v]
    return v


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    if isinstance(a, float) or isinstance(b, float):
        return (a != a and b != b) or a == b
    return bool(a == b)


def test_rclpy_fixtures_decode_to_their_values_and_reencode() -> None:
    files = sorted(FIXTURES.glob("*.jsonl"))
    assert files
    n = 0
    for f in files:
        for line in f.read_text(encoding="utf-8").splitlines():
            case = json.loads(line)
            cls = class_of(case["type"])
            raw = bytes.fromhex(case["cdr"])
            msg = cls.from_cdr(raw)
            assert _same(_plain(msg), case["value"]), (f.name, case["case"])
            # Same bytes as horus_idl (zero padding; rclpy's padding is not zeros).
            assert msg.to_cdr() == TYPES._reference_reencode(case["type"], raw)
            assert len(msg.to_cdr()) == case["message_end"]
            n += 1
    assert n >= 80


# --- NumPy -----------------------------------------------------------------------


def test_received_arrays_are_read_only_zero_copy_views() -> None:
    from horus.interfaces.sensor_msgs.msg import Image, LaserScan

    img = Image(height=1, width=4, encoding="mono8", step=4, data=b"\x01\x02\x03\x04")
    data = img.to_cdr()
    back = Image.from_cdr(data)
    assert isinstance(back.data, np.ndarray) and back.data.dtype == np.uint8
    assert not back.data.flags.writeable
    with pytest.raises(ValueError):
        back.data[0] = 9
    assert np.shares_memory(back.data, np.frombuffer(data, np.uint8))
    assert isinstance(back.data.base, memoryview) and back.data.base.obj is data
    # A writable source still gives read-only views.
    buf = bytearray(LaserScan(ranges=[1.0, 2.0]).to_cdr())
    scan = LaserScan.from_cdr(buf)
    assert not scan.ranges.flags.writeable and scan.ranges.tolist() == [1.0, 2.0]
    assert np.shares_memory(scan.ranges, np.frombuffer(buf, np.uint8))


def test_decoding_at_an_offset_of_a_larger_buffer() -> None:
    from horus.interfaces.geometry_msgs.msg import Vector3

    v = Vector3(x=1.0, y=2.0, z=3.0)
    buf = b"\xff" * 8 + v.to_cdr()
    assert Vector3.from_cdr(buf, 8) == v


def test_point_cloud_built_from_a_numpy_array() -> None:
    from horus.interfaces.sensor_msgs.msg import PointCloud2, PointField

    pts = np.random.default_rng(1).random((5000, 4), dtype=np.float32)
    pc = PointCloud2(
        height=1, width=len(pts), point_step=16, row_step=16 * len(pts), is_dense=True,
        fields=[PointField(name=n, offset=4 * i, datatype=PointField.FLOAT32, count=1)
                for i, n in enumerate("xyzi")],
        data=pts,
    )
    assert np.shares_memory(pc.data, pts)  # kept as a byte view, not copied
    back = PointCloud2.from_cdr(pc.to_cdr())
    assert back.data.tobytes() == pts.tobytes()
    assert np.array_equal(back.data.view(np.float32).reshape(-1, 4), pts)


def test_primitive_arrays_from_lists_buffers_and_arrays() -> None:
    from horus.interfaces.std_msgs.msg import Float64MultiArray, Int16MultiArray

    a = Float64MultiArray(data=[1, 2.5, -3])
    b = Float64MultiArray(data=np.array([1, 2.5, -3]))
    assert a.to_cdr() == b.to_cdr()
    c = Int16MultiArray(data=np.arange(6, dtype=np.int16).reshape(2, 3))
    assert Int16MultiArray.from_cdr(c.to_cdr()).data.tolist() == [0, 1, 2, 3, 4, 5]
    # A non-contiguous array is read element by element (still no Python loop).
    c.data = np.arange(12, dtype=np.int16)[::2]
    assert Int16MultiArray.from_cdr(c.to_cdr()).data.tolist() == [0, 2, 4, 6, 8, 10]


# --- encoding errors ---------------------------------------------------------------


def encode_error(msg: RosMessage) -> horus.CdrEncodeError:
    with pytest.raises(horus.CdrEncodeError) as e:
        msg.to_cdr()
    return e.value


def test_wrong_field_type_names_the_field() -> None:
    from horus.interfaces.sensor_msgs.msg import Image

    img = Image()
    img.height = "480"  # type: ignore[assignment]
    e = encode_error(img)
    assert e.path == "height" and e.kind == "wrong_type" and "sensor_msgs/msg/Image" in str(e)
    img = Image()
    img.header.stamp.sec = 1.5  # type: ignore[assignment]
    assert encode_error(img).path == "header.stamp.sec"
    img = Image()
    img.header = "x"  # type: ignore[assignment]
    assert encode_error(img).kind == "wrong_type"


def test_nested_sequence_errors_name_the_element() -> None:
    from horus.interfaces.geometry_msgs.msg import Point
    from horus.interfaces.visualization_msgs.msg import Marker, MarkerArray

    arr = MarkerArray(markers=[Marker(), Marker(points=[Point(), Point(x="no")])])  # type: ignore[arg-type]
    e = encode_error(arr)
    assert e.path == "markers[1].points[1].x" and e.kind == "wrong_type"


def test_integer_out_of_range_and_float32_overflow() -> None:
    from horus.interfaces.std_msgs.msg import Float32, Int64, UInt8

    assert encode_error(UInt8(data=256)).kind == "out_of_range"
    assert encode_error(UInt8(data=-1)).kind == "out_of_range"
    assert encode_error(Int64(data=2**63)).kind == "out_of_range"
    assert encode_error(Float32(data=1e39)).kind == "out_of_range"
    assert Float32.from_cdr(Float32(data=float("inf")).to_cdr()).data == float("inf")


def test_bound_exceeded_on_send() -> None:
    from horus.interfaces.std_srvs.srv import SetBool_Event, SetBool_Request

    ev = SetBool_Event(request=[SetBool_Request(), SetBool_Request()])
    e = encode_error(ev)
    assert e.kind == "over_bound" and e.path == "request"


def test_fixed_array_length_string_nul_and_dtype() -> None:
    from horus.interfaces.sensor_msgs.msg import Imu, LaserScan
    from horus.interfaces.std_msgs.msg import String

    imu = Imu()
    imu.orientation_covariance = np.zeros(8)
    assert encode_error(imu).kind == "fixed_length"
    assert encode_error(String(data="a\0b")).kind == "contains_nul"
    scan = LaserScan()
    scan.ranges = np.zeros(3, dtype=np.float64)  # float32[] field: no silent conversion
    e = encode_error(scan)
    assert e.kind == "wrong_type" and e.path == "ranges"
    scan.ranges = "abc"  # type: ignore[assignment]
    assert encode_error(scan).kind == "wrong_type"


# --- hostile bytes ---------------------------------------------------------------


def decode_error(cls: Type[RosMessage], data: bytes) -> horus.CdrDecodeError:
    with pytest.raises(horus.CdrDecodeError) as e:
        cls.from_cdr(data)
    return e.value


def test_truncation_at_every_length_is_a_typed_error() -> None:
    from horus.interfaces.diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus, KeyValue

    msg = DiagnosticArray(status=[DiagnosticStatus(name="n", values=[KeyValue(key="k", value="v")])])
    data = msg.to_cdr()
    for n in range(len(data)):
        e = decode_error(DiagnosticArray, data[:n])
        assert e.kind in ("truncated", "count_too_large", "bad_header"), (n, e.kind)


def test_count_too_large_is_refused_before_allocating() -> None:
    from horus.interfaces.sensor_msgs.msg import PointCloud2

    data = bytearray(PointCloud2().to_cdr())
    # fields count is the u32 after header (stamp 8, frame_id 4+1 → 16), height, width.
    off = 4 + 8 + 8 + 4 + 4
    data[off:off + 4] = (0xFFFFFFFF).to_bytes(4, "little")
    e = decode_error(PointCloud2, bytes(data))
    assert e.kind == "count_too_large" and e.path == "fields"


def test_bad_utf8_bad_bool_bad_header_unterminated_string() -> None:
    from horus.interfaces.std_msgs.msg import Bool, String

    good = String(data="ab").to_cdr()
    bad = good[:8] + b"\xff\xfe" + good[10:]
    assert decode_error(String, bad).kind == "not_utf8"
    assert decode_error(String, good[:-1] + b"x").kind == "not_terminated"
    assert decode_error(Bool, b"\x00\x01\x00\x00\x02").kind == "invalid_bool"
    assert decode_error(Bool, b"\x00\x00\x00\x00\x01").kind == "bad_header"
    assert decode_error(Bool, b"").kind == "bad_header"


def test_bound_exceeded_on_receive() -> None:
    from horus.interfaces.std_srvs.srv import SetBool_Event, SetBool_Request

    data = bytearray(SetBool_Event(request=[SetBool_Request()]).to_cdr())
    # The request count sits after info (ServiceEventInfo): find the 1 and make it 2.
    idx = data.rindex((1).to_bytes(4, "little"), 0, len(data) - 4)
    data[idx] = 2
    e = decode_error(SetBool_Event, bytes(data))
    assert e.kind in ("over_bound", "count_too_large")


def test_random_corruptions_raise_only_decode_errors() -> None:
    from horus.interfaces.sensor_msgs.msg import JointState, LaserScan
    from horus.interfaces.visualization_msgs.msg import MarkerArray

    rng = random.Random(7)
    for cls in (JointState, LaserScan, MarkerArray):
        data = rand_message(rng, cls).to_cdr()
        for _ in range(1500):
            b = bytearray(data)
            for _ in range(rng.randint(1, 4)):
                if b:
                    b[rng.randrange(len(b))] = rng.randrange(256)
            if rng.random() < 0.3:
                b = b[: rng.randrange(len(b) + 1)]
            try:
                cls.from_cdr(bytes(b))
            except horus.CdrDecodeError:
                pass


# --- a user's package ---------------------------------------------------------------


def test_load_package_of_a_user(tmp_path: Path) -> None:
    pkg = tmp_path / "horus_test_msgs"
    (pkg / "msg").mkdir(parents=True)
    (pkg / "srv").mkdir()
    (pkg / "msg" / "Reading.msg").write_text(
        "uint8 OK=0\nstd_msgs/Header header\nfloat32[] values\nstring<=8 label \"x\"\nint32 from\n"
    )
    (pkg / "srv" / "Calibrate.srv").write_text("Reading reading\n---\nbool ok\n")
    load_package("horus_test_msgs", pkg)
    from horus.interfaces.horus_test_msgs.msg import Reading  # type: ignore[import-not-found]
    from horus.interfaces.horus_test_msgs.srv import Calibrate  # type: ignore[import-not-found]

    r = Reading(values=[1.0, 2.0], from_=3)
    assert r.label == "x" and Reading.OK == 0
    assert Reading.from_cdr(r.to_cdr()) == r
    req = Calibrate.Request(reading=r)
    assert Calibrate.Request.from_cdr(req.to_cdr()) == req
    r.label = "123456789"
    assert encode_error(r).kind == "over_bound"
    with pytest.raises(horus.InterfaceError):
        load_package("horus_test_msgs", pkg)
    bad = tmp_path / "horus_bad_msgs"
    (bad / "msg").mkdir(parents=True)
    (bad / "msg" / "Bad.msg").write_text("no_such_pkg/Thing t\n")
    with pytest.raises(horus.InterfaceError):
        load_package("horus_bad_msgs", bad)


def test_type_and_field_names_that_shadow_names_generated_code_uses(tmp_path: Path) -> None:
    """A type named Sequence/List and fields named list/range/int/float once broke the
    generated module (its own `list(...)`, `range(...)`, typing names were shadowed)."""
    pkg = tmp_path / "horus_shadow_msgs"
    (pkg / "msg").mkdir(parents=True)
    (pkg / "msg" / "List.msg").write_text("float32 x\n")
    (pkg / "msg" / "Sequence.msg").write_text(
        "string[] list\nint32 int\nfloat64 float\nList[2] range\nfloat64 inf -inf\n"
        "List[] optional\n"
    )
    load_package("horus_shadow_msgs", pkg)
    from horus.interfaces.horus_shadow_msgs.msg import List as L, Sequence as Seq  # type: ignore[import-not-found]

    q = Seq(list=["a", "b"], int_=3, float_=1.5, optional=[L(x=1.0)])
    assert len(q.range) == 2 and q.inf == float("-inf")
    assert Seq.from_cdr(q.to_cdr()) == q


# --- stubs -----------------------------------------------------------------------


def test_mypy_sees_field_names_and_types(tmp_path: Path) -> None:
    example = tmp_path / "typed_example.py"
    example.write_text(
        "import numpy as np\n"
        "import numpy.typing as npt\n"
        "from horus.interfaces.sensor_msgs.msg import Image\n"
        "img = Image(height=480, width=640, encoding='rgb8', data=np.zeros(10, np.uint8))\n"
        "h: int = img.height\n"
        "enc: str = img.encoding\n"
        "frame: str = img.header.frame_id\n"
        "px: npt.NDArray[np.uint8] = img.data\n"
        "data: bytes = img.to_cdr()\n"
        "back: Image = Image.from_cdr(data)\n"
        "bad: str = img.height\n"
        "img.no_such_field\n"
    )
    r = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--no-error-summary", str(example)],
        capture_output=True, text=True, cwd=Path(__file__).parent,
    )
    errors = [line for line in r.stdout.splitlines() if ": error:" in line]
    assert len(errors) == 2, r.stdout + r.stderr
    assert 'typed_example.py:11: error: Incompatible types in assignment (expression has type "int", variable has type "str")' in errors[0]
    assert "typed_example.py:12:" in errors[1] and "no_such_field" in errors[1]


def test_encode_into_a_buffer_at_an_offset() -> None:
    from horus.interfaces.sensor_msgs.msg import LaserScan

    scan = LaserScan(ranges=np.arange(10, dtype=np.float32))
    want = scan.to_cdr()
    buf = bytearray(len(want) + 16)
    assert TYPES.encode_into("sensor_msgs/msg/LaserScan", scan, buf, 8) == len(want)
    assert bytes(buf[8:8 + len(want)]) == want
    with pytest.raises(ValueError):
        TYPES.encode_into("sensor_msgs/msg/LaserScan", scan, bytearray(len(want) - 1))
    with pytest.raises(KeyError):
        TYPES.encode("no_pkg/msg/Nothing", scan)


def test_decoded_fields_go_where_setattr_would_put_them() -> None:
    """The decoder stores fields straight into ``__slots__`` (cached per class version);
    a class whose field is a property, that defines ``__setattr__``, has no slots, or was
    changed after a decode gets its fields through ``setattr`` as before."""
    from horus.interfaces.std_msgs.msg import String

    wire = String(data="hi").to_cdr()
    seen: List[str] = []

    class Slotted(String):
        __slots__ = ()

    class Prop(String):
        __slots__ = ()

        @property  # type: ignore[misc]
        def data(self) -> str:
            return "prop:" + seen[-1]

        @data.setter
        def data(self, v: str) -> None:
            seen.append(v)

    class Hooked(String):
        __slots__ = ()

        def __setattr__(self, k: str, v: Any) -> None:
            seen.append(f"{k}={v}")
            object.__setattr__(self, k, v)

    class Plain:
        pass

    try:
        for cls in (Slotted, Prop, Hooked, Plain):
            TYPES.bind(String._TYPE, cls)
            for _ in range(3):  # the first decode computes the layout, the next use it
                m = TYPES.decode(String._TYPE, wire)
                assert type(m) is cls
                assert m.data == ("prop:hi" if cls is Prop else "hi")
        assert seen == ["hi"] * 3 + ["data=hi"] * 3
        # Changed after decodes: a property now shadows the slot, and is used.
        TYPES.bind(String._TYPE, Slotted)
        assert TYPES.decode(String._TYPE, wire).data == "hi"
        Slotted.data = property(lambda self: "new", lambda self, v: seen.append("new:" + v))  # type: ignore[assignment]
        assert TYPES.decode(String._TYPE, wire).data == "new"
        assert seen[-1] == "new:hi"
    finally:
        TYPES.bind(String._TYPE, String)
    assert type(TYPES.decode(String._TYPE, wire)) is String
