#!/usr/bin/env python3
"""Writes tests/fixtures/cdr/*.jsonl: randomised ROS 2 messages as JSON field values and
the CDR bytes rclpy serializes them to (rmw_fastrtps_cpp), for tests/cdr_oracle.rs.

Run with the venv holding ros-kilted-rclpy and the common interfaces (no environment
variables needed):

    /root/.cache/ros2-venv/bin/python crates/horus-idl/tests/oracle/make_cdr_fixtures.py

Each line: {"type": "pkg/msg/Name", "case": "...", "value": {...}, "cdr": "<hex>",
"message_end": N}: N is the length of the shortest prefix of the bytes that rclpy still
deserializes to the message (its buffers can carry bytes past the message).
Floats are finite and float32 fields hold float32 values, so JSON carries them exactly.
"""

import array
import importlib
import json
import os
import random
import struct
import sys

from rclpy.serialization import deserialize_message, serialize_message
from rosidl_parser.definition import (
    AbstractNestedType,
    AbstractString,
    AbstractWString,
    Array,
    BasicType,
    BoundedSequence,
    NamespacedType,
)

TYPES = [
    "std_msgs/msg/String",
    "std_msgs/msg/Empty",
    "std_msgs/msg/Bool",
    "std_msgs/msg/Char",
    "std_msgs/msg/Byte",
    "std_msgs/msg/UInt8MultiArray",
    "sensor_msgs/msg/Imu",
    "sensor_msgs/msg/LaserScan",
    "sensor_msgs/msg/JointState",
    "sensor_msgs/msg/PointCloud2",
    "nav_msgs/msg/Odometry",
    "geometry_msgs/msg/TransformStamped",
    "visualization_msgs/msg/MarkerArray",
    "diagnostic_msgs/msg/DiagnosticArray",
]
# Sequence lengths per case; "long" is capped so the files stay a few KB.
MODES = {"empty": (0, 0), "small": (1, 3), "long": (20, 60)}
# Sequences inside sequence elements stay short in "long" cases.
NESTED_MODE = {"empty": "empty", "small": "small", "long": "small"}
CASES_PER_MODE = 2
UNICODE = "aZ09 _-/é漢字ü€😀\u00a0\u0301Ω"
INT_RANGES = {
    "int8": (-(2**7), 2**7 - 1), "uint8": (0, 2**8 - 1), "octet": (0, 255),
    "char": (0, 255), "int16": (-(2**15), 2**15 - 1), "uint16": (0, 2**16 - 1),
    "int32": (-(2**31), 2**31 - 1), "uint32": (0, 2**32 - 1),
    "int64": (-(2**63), 2**63 - 1), "uint64": (0, 2**64 - 1),
}


def msg_class(ns_type):
    mod = importlib.import_module(".".join(ns_type.namespaces))
    return getattr(mod, ns_type.name)


def rand_basic(t, rng):
    name = t.typename
    if name == "boolean":
        return rng.random() < 0.5
    if name == "float":
        return struct.unpack("<f", struct.pack("<f", rng.uniform(-1e6, 1e6)))[0]
    if name in ("double", "long double"):
        return rng.choice([0.0, -0.0, 1.5, rng.uniform(-1e9, 1e9), rng.uniform(-1, 1) * 1e-300])
    if name == "octet":
        return bytes([rng.randrange(256)])
    if name == "char":
        return rng.randrange(256)
    lo, hi = INT_RANGES[name]
    return rng.choice([lo, hi, 0, rng.randint(lo, hi)])


def rand_string(t, rng, mode):
    lo, hi = MODES[mode]
    n = min(rng.randint(lo, hi * 2), 40)
    if getattr(t, "maximum_size", None) is not None:
        n = min(n, t.maximum_size)
        return "".join(rng.choice("abcXYZ019") for _ in range(n))
    return "".join(rng.choice(UNICODE) for _ in range(n))


def rand_value(t, rng, mode):
    if isinstance(t, BasicType):
        return rand_basic(t, rng)
    if isinstance(t, AbstractWString):
        raise SystemExit("no wstring expected in the chosen types")
    if isinstance(t, AbstractString):
        return rand_string(t, rng, mode)
    if isinstance(t, NamespacedType):
        return rand_message(msg_class(t), rng, mode)
    if isinstance(t, AbstractNestedType):
        if isinstance(t, Array):
            n = t.size
        else:
            lo, hi = MODES[mode]
            n = rng.randint(lo, hi)
            if isinstance(t, BoundedSequence):
                n = min(n, t.maximum_size)
        inner = mode if isinstance(t, Array) else NESTED_MODE[mode]
        items = [rand_value(t.value_type, rng, inner) for _ in range(n)]
        return items
    raise SystemExit(f"unhandled type {t!r}")


def rand_message(cls, rng, mode):
    msg = cls()
    for name, t in zip(cls.get_fields_and_field_types().keys(), cls.SLOT_TYPES):
        setattr(msg, name, rand_value(t, rng, mode))
    return msg


def ok_prefix(data, cls, msg):
    try:
        return deserialize_message(data, cls) == msg
    except Exception:
        return False


def to_json(v):
    if hasattr(v, "get_fields_and_field_types"):
        return {k: to_json(getattr(v, k)) for k in v.get_fields_and_field_types()}
    if isinstance(v, bytes):
        return list(v) if len(v) != 1 else v[0]
    if isinstance(v, (list, tuple, array.array)):
        return [to_json(x) for x in v]
    if hasattr(v, "tolist"):  # numpy arrays and scalars
        return to_json(v.tolist())
    if isinstance(v, (bool, int, float, str)):
        return v
    raise SystemExit(f"cannot write {type(v)} as JSON")


def main():
    out_dir = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fixtures", "cdr")
    os.makedirs(out_dir, exist_ok=True)
    rng = random.Random(20261127)
    for type_name in TYPES:
        pkg, _, name = type_name.split("/")
        cls = getattr(importlib.import_module(f"{pkg}.msg"), name)
        lines = []
        for mode in MODES:
            for i in range(CASES_PER_MODE):
                msg = rand_message(cls, rng, mode)
                cdr = serialize_message(msg)
                # The bytes must mean the message (catches a generator mistake).
                assert deserialize_message(cdr, cls) == msg, type_name
                # rclpy's buffer can run on past the message (its size is Fast CDR's
                # estimate, which counts alignment that empty sequences do not get):
                # the message ends where the shortest prefix rclpy still reads ends.
                end = len(cdr)
                while end > 4 and ok_prefix(cdr[:end - 1], cls, msg):
                    end -= 1
                lines.append(json.dumps(
                    {"type": type_name, "case": f"{mode}-{i}", "value": to_json(msg),
                     "cdr": cdr.hex(), "message_end": end},
                    ensure_ascii=False, allow_nan=False))
        path = os.path.join(out_dir, f"{pkg}__{name}.jsonl")
        with open(path, "w", encoding="utf-8") as f:
            f.write("\n".join(lines) + "\n")
        print(f"{path}: {len(lines)} cases, {os.path.getsize(path)} bytes", file=sys.stderr)


if __name__ == "__main__":
    main()
