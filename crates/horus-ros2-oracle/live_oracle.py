#!/usr/bin/env python3
"""The rclpy side of `make test-ros2` (docs/interfaces.md, "How it is checked").

Run in the ROS 2 venv (`scripts/ros2-python`, which `make setup-ros2` makes):

    scripts/ros2-python crates/horus-ros2-oracle/live_oracle.py \\
        --checker $CARGO_TARGET_DIR/debug/horus-ros2-oracle [--seed S] [--per-type N]

1. asks the Rust checker (`horus-ros2-oracle types`) for every structure of horus's
   standard set and finds rclpy's class for each (messages, services' _Request, _Response
   and _Event); tf2_msgs is in horus's set but in no wheel: its types go through rosbags'
   ROS 2 type system instead (no_wheel_rosbags.py), as steps 2-4 say for rclpy. A type
   of the vendored packages that rclpy has and horus lacks (or the reverse) fails the run:
   the vendored files and the wheels would disagree.
2. makes the default message and --per-type randomised ones of each type from rosidl's
   run-time introspection (SLOT_TYPES): empty, short, long and Unicode strings, empty and
   large sequences, nested sequences of structures, extreme numbers (integer limits, ±0,
   subnormals, the largest floats, ±inf, NaN); bounds and fixed sizes respected. Each is serialized with rclpy.serialization.serialize_message
   (rmw_fastrtps_cpp) and must deserialize to itself.
3. writes values and bytes as JSON lines and runs `horus-ros2-oracle check IN OUT`, which
   encodes each value with horus (equal to rclpy's bytes everywhere but padding, same
   length as the message) and decodes rclpy's bytes (equal value), also through the
   generated types of horus-ros-msgs (decoded, viewed and re-encoded: the same bytes; the
   default message: the type's Default), and writes horus's bytes.
4. deserializes horus's bytes with rclpy: each must give the message back (compared as JSON
   text: -0.0 is not 0.0, NaN is NaN); and rclpy reads
   its own buffer's first `end` bytes (horus's length) as the message but not `end - 1`, so
   horus's length is exactly where rclpy's message ends (rclpy's buffers can run past it).

Prints one summary line; exits non-zero on any difference.
"""

import argparse
import array
import contextlib
import importlib
import json
import math
import os
import random
import struct
import subprocess
import sys
import tempfile
import time

from no_wheel_rosbags import NoWheelTypes, Randomiser
from rclpy.serialization import deserialize_message, serialize_message
from rosidl_parser.definition import (
    AbstractNestedType,
    AbstractSequence,
    AbstractString,
    AbstractWString,
    Array,
    BasicType,
    BoundedSequence,
    NamespacedType,
)

# Packages horus vendors (crates/horus-idl/interfaces) that no ROS 2 wheel ships.
NO_WHEEL = {"tf2_msgs"}

# How each randomised message of a type is made, in turn.
MODES = ["empty", "short", "long", "nested", "edge"]
# Elements of sequences of primitives / of byte-like / of structures, and characters of
# strings, per mode: (least, most).
SEQ = {"empty": (0, 0), "short": (1, 3), "long": (1000, 4000), "nested": (2, 6), "edge": (0, 1)}
BYTES = {"empty": (0, 0), "short": (1, 8), "long": (30000, 70000), "nested": (0, 16), "edge": (0, 1)}
STRUCTS = {"empty": (0, 0), "short": (1, 2), "long": (20, 40), "nested": (2, 5), "edge": (0, 1)}
CHARS = {"empty": (0, 0), "short": (1, 12), "long": (300, 1200), "nested": (0, 20), "edge": (1, 4)}
# The mode of the elements inside a sequence of structures (nested sequences stay bounded).
INNER = {"empty": "empty", "short": "short", "long": "short", "nested": "nested", "edge": "edge"}
MAX_NESTED_DEPTH = 3

# ASCII, Latin-1, combining marks, CJK, a no-break space, 3-byte € and 4-byte characters
# (emoji, a CJK extension B ideograph), the last BMP code point; no NUL and no surrogates
# (ROS 2 strings are NUL-terminated UTF-8).
UNICODE = "aZ09 _-/.:é漢字ü€\u00a0\u0301Ω\U0001F600\U00020000\uffff\t\n\"\\"
INT_RANGES = {
    "int8": (-(2**7), 2**7 - 1), "uint8": (0, 2**8 - 1), "octet": (0, 255),
    "int16": (-(2**15), 2**15 - 1), "uint16": (0, 2**16 - 1),
    "int32": (-(2**31), 2**31 - 1), "uint32": (0, 2**32 - 1),
    "int64": (-(2**63), 2**63 - 1), "uint64": (0, 2**64 - 1),
}
INF, NAN = float("inf"), float("nan")
FLOAT32_EDGES = [0.0, -0.0, 1.401298464324817e-45, -1.1754942106924411e-38,
                 3.4028234663852886e38, -3.4028234663852886e38, 1.0, -1.5, INF, -INF, NAN]
FLOAT64_EDGES = [0.0, -0.0, 5e-324, -2.2250738585072014e-308,
                 1.7976931348623157e308, -1.7976931348623157e308, 0.1, -1.5, INF, -INF, NAN]
# Floats JSON cannot hold, as the checker reads them.
NON_FINITE = {INF: "inf", -INF: "-inf"}
BYTE_LIKE = {"octet", "uint8", "char"}


def f32(x):
    return struct.unpack("<f", struct.pack("<f", x))[0]


class Generator:
    def __init__(self, seed):
        self.rng = random.Random(seed)

    def count(self, table, mode, bound=None):
        lo, hi = table[mode]
        n = self.rng.randint(lo, hi)
        if bound is not None:
            n = bound if mode == "edge" and self.rng.random() < 0.5 else min(n, bound)
        return n

    def basic(self, name, mode):
        rng, edge = self.rng, mode == "edge"
        if name == "boolean":
            return rng.random() < 0.5
        if name == "float":
            return rng.choice(FLOAT32_EDGES) if edge else f32(rng.uniform(-1e6, 1e6))
        if name in ("double", "long double"):
            if edge:
                return rng.choice(FLOAT64_EDGES)
            return rng.choice([rng.uniform(-1e9, 1e9), rng.uniform(-1, 1) * 1e-300, 1.5])
        if name == "octet":
            return bytes([rng.randrange(256)])
        if name == "char":
            return chr(rng.randrange(128))
        lo, hi = INT_RANGES[name]
        return rng.choice([lo, hi, 0]) if edge else rng.randint(lo, hi)

    def string(self, t, mode, wide):
        bound = getattr(t, "maximum_size", None)
        alphabet = UNICODE if not wide else UNICODE.replace("\U0001F600", "").replace("\U00020000", "")
        n = self.count(CHARS, mode)
        text = "".join(self.rng.choice(alphabet) for _ in range(n))
        if bound is not None:
            # A bound counts UTF-8 bytes on the wire (characters in Python): keep both.
            text = text.encode()[:bound].decode(errors="ignore")[:bound]
            if mode == "edge":
                text = "x" * bound
        return text

    def value(self, t, mode, depth):
        if isinstance(t, BasicType):
            return self.basic(t.typename, mode)
        if isinstance(t, AbstractWString):
            return self.string(t, mode, wide=True)
        if isinstance(t, AbstractString):
            return self.string(t, mode, wide=False)
        if isinstance(t, NamespacedType):
            return self.message(msg_class(t), mode, depth + 1)
        if isinstance(t, AbstractNestedType):
            vt = t.value_type
            if isinstance(t, Array):
                n = t.size
            else:
                bound = t.maximum_size if isinstance(t, BoundedSequence) else None
                if isinstance(vt, NamespacedType):
                    n = self.count(STRUCTS, mode if depth < MAX_NESTED_DEPTH else "short", bound)
                elif isinstance(vt, BasicType) and vt.typename in BYTE_LIKE:
                    n = self.count(BYTES, mode, bound)
                else:
                    n = self.count(SEQ, mode, bound)
            inner = INNER[mode] if depth < MAX_NESTED_DEPTH else "empty"
            if isinstance(vt, BasicType) and vt.typename == "uint8":
                return array.array("B", bytes(self.rng.randrange(256) for _ in range(n)))
            # Strings and structures inside a sequence stay short in "long" messages;
            # numbers keep the mode (extremes in "edge").
            element_mode = inner if isinstance(vt, (NamespacedType, AbstractString)) else mode
            return [self.value(vt, element_mode, depth) for _ in range(n)]
        raise SystemExit(f"live_oracle: unhandled type {t!r}")

    def message(self, cls, mode, depth=0):
        msg = cls()
        for name, t in zip(cls.get_fields_and_field_types(), cls.SLOT_TYPES):
            setattr(msg, name, self.value(t, mode, depth))
        return msg


def msg_class(ns_type):
    mod = importlib.import_module(".".join(ns_type.namespaces))
    return getattr(mod, ns_type.name)


def rclpy_class(type_name):
    """rclpy's class of `pkg/kind/Name` (`Name_Request`, `Name_SendGoal_Event`, …) or None."""
    pkg, kind, name = type_name.split("/")
    try:
        mod = importlib.import_module(f"{pkg}.{kind}")
    except ModuleNotFoundError:
        return None
    cls = getattr(mod, name, None)
    if cls is None:
        # An action's implied types live in the module of the action's class.
        base = getattr(mod, name.split("_", 1)[0], None)
        if base is not None:
            cls = getattr(sys.modules[base.__module__], name, None)
    return cls if hasattr(cls, "get_fields_and_field_types") else None


def rclpy_types(package):
    """Every structure rclpy has in `package` (messages; services' and actions' structures)."""
    names = set()
    for kind in ("msg", "srv", "action"):
        try:
            mod = importlib.import_module(f"{package}.{kind}")
        except ModuleNotFoundError:
            continue
        for attr in dir(mod):
            obj = getattr(mod, attr)
            if hasattr(obj, "get_fields_and_field_types"):
                names.add(f"{package}/{kind}/{attr}")
            # Services and actions: their structures hang off the class.
            mod_of = sys.modules.get(getattr(obj, "__module__", ""), None)
            if mod_of is not None and mod_of is not mod and attr[:1].isupper():
                for inner in dir(mod_of):
                    o = getattr(mod_of, inner)
                    if inner.startswith(attr + "_") and hasattr(o, "get_fields_and_field_types"):
                        names.add(f"{package}/{kind}/{inner}")
    return names


def to_json(v, t):
    """A field's value as JSON; byte-like arrays and sequences as hex."""
    if isinstance(t, NamespacedType):
        return {k: to_json(getattr(v, k), st)
                for k, st in zip(v.get_fields_and_field_types(), type(v).SLOT_TYPES)}
    if isinstance(t, AbstractNestedType):
        vt = t.value_type
        if isinstance(vt, BasicType) and vt.typename in BYTE_LIKE:
            if vt.typename == "octet":
                return b"".join(v).hex() if not isinstance(v, bytes) else v.hex()
            return bytes(v.tolist() if hasattr(v, "tolist") else v).hex()
        if hasattr(v, "tolist"):  # numpy arrays
            v = v.tolist()
        return [to_json(x, vt) for x in v]
    if isinstance(t, BasicType):
        if t.typename == "octet":
            return v[0]
        if t.typename == "char":
            return ord(v)
        v = v.item() if hasattr(v, "item") else v
        if isinstance(v, float) and not math.isfinite(v):
            return "nan" if math.isnan(v) else NON_FINITE[v]
        return v
    if isinstance(t, AbstractString):
        return v
    raise SystemExit(f"live_oracle: cannot write {type(v)} as JSON")


def as_json(msg):
    """A message as JSON text: two messages are the same message when their texts are equal
    (unlike ==, this tells -0.0 from 0.0 and finds NaN equal to NaN)."""
    cls = type(msg)
    pkg, kind = cls.__module__.split(".")[:2]
    return json.dumps(to_json(msg, NamespacedType([pkg, kind], cls.__name__)),
                      ensure_ascii=False, allow_nan=False)


def reads_as(data, cls, text):
    try:
        return as_json(deserialize_message(data, cls)) == text
    except Exception:
        return False


def truncated_fails(data, cls, text):
    """Whether rclpy refuses (or misreads) `data`, a message cut short. Its C side prints
    "sequence size exceeds remaining buffer" to stderr for those: silenced here."""
    sys.stderr.flush()
    saved = os.dup(2)
    try:
        with open(os.devnull, "w") as null:
            os.dup2(null.fileno(), 2)
        return not reads_as(data, cls, text)
    finally:
        os.dup2(saved, 2)
        os.close(saved)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--checker", required=True, help="the horus-ros2-oracle binary")
    ap.add_argument("--seed", type=int, default=20261127)
    ap.add_argument("--per-type", type=int, default=10, help="messages per type")
    ap.add_argument("--keep", help="write the exchanged files into this directory")
    args = ap.parse_args()
    started = time.monotonic()

    listed = subprocess.run([args.checker, "types"], check=True, capture_output=True, text=True)
    horus_types = listed.stdout.split()
    failures = []
    classes, no_wheel = {}, []
    for name in horus_types:
        cls = rclpy_class(name)
        if cls is not None:
            classes[name] = cls
        elif name.split("/")[0] in NO_WHEEL:
            no_wheel.append(name)
        else:
            failures.append(f"{name}: in horus's standard set, not in rclpy's")
    packages = {n.split("/")[0] for n in horus_types} - NO_WHEEL
    for package in sorted(packages):
        for name in sorted(rclpy_types(package) - set(horus_types)):
            failures.append(f"{name}: in rclpy's {package}, not in horus's standard set")
    if failures:
        print("\n".join(failures), file=sys.stderr)
        sys.exit(f"live_oracle: the vendored packages and the wheels disagree ({len(failures)})")

    # The packages no wheel ships go through rosbags' ROS 2 type system instead
    # (no_wheel_rosbags.py): every one of their types must be made there with ROS 2's hash.
    no_wheel_types = NoWheelTypes(no_wheel)
    if no_wheel_types.failures:
        print("\n".join(no_wheel_types.failures), file=sys.stderr)
        sys.exit(f"live_oracle: rosbags cannot check the no-wheel types ({len(no_wheel_types.failures)})")

    gen = Generator(args.seed)
    tables = dict(SEQ=SEQ, BYTES=BYTES, STRUCTS=STRUCTS, CHARS=CHARS, INNER=INNER,
                  MAX_NESTED_DEPTH=MAX_NESTED_DEPTH, UNICODE=UNICODE, INT_RANGES=INT_RANGES,
                  FLOAT32_EDGES=FLOAT32_EDGES, FLOAT64_EDGES=FLOAT64_EDGES)
    randomiser = Randomiser(no_wheel_types, gen, tables)
    messages = {}  # (type, case) -> (class, message, rclpy's bytes)
    rosbags_messages = {}  # (type, case) -> (message as JSON text, rosbags' bytes)
    with tempfile.TemporaryDirectory(prefix="horus-ros2-oracle-") as tmp:
        work = args.keep or tmp
        os.makedirs(work, exist_ok=True)
        rclpy_path, horus_path = os.path.join(work, "rclpy.jsonl"), os.path.join(work, "horus.jsonl")
        with open(rclpy_path, "w", encoding="utf-8") as f:
            for name, cls in classes.items():
                # First the message rclpy makes with the type's defaults, then random ones.
                for i in range(-1, args.per_type):
                    mode = "default" if i < 0 else MODES[i % len(MODES)]
                    msg = cls() if i < 0 else gen.message(cls, mode)
                    cdr = serialize_message(msg)
                    case = mode if i < 0 else f"{mode}-{i}"
                    text = as_json(msg)
                    if not reads_as(cdr, cls, text):
                        failures.append(f"{name} {case}: rclpy does not read its own bytes back")
                        continue
                    messages[(name, case)] = (cls, text, cdr)
                    f.write(f'{{"type": "{name}", "case": "{case}", "value": {text}, '
                            f'"cdr": "{cdr.hex()}"}}\n')
            for name in no_wheel_types.names:
                for i in range(-1, args.per_type):
                    mode = "default" if i < 0 else MODES[i % len(MODES)]
                    msg = randomiser.default(name) if i < 0 else randomiser.message(name, mode)
                    cdr = no_wheel_types.serialize(msg, name)
                    case = mode if i < 0 else f"{mode}-{i}"
                    text = no_wheel_types.as_json(msg, name)
                    if no_wheel_types.as_json(no_wheel_types.deserialize(cdr, name), name) != text:
                        failures.append(f"{name} {case}: rosbags does not read its own bytes back")
                        continue
                    rosbags_messages[(name, case)] = (text, cdr)
                    f.write(f'{{"type": "{name}", "case": "{case}", "value": {text}, '
                            f'"cdr": "{cdr.hex()}"}}\n')
        generated = time.monotonic()
        checker = subprocess.run([args.checker, "check", rclpy_path, horus_path])
        checked = time.monotonic()
        if checker.returncode != 0:
            failures.append(f"horus-ros2-oracle check exited {checker.returncode}")

        answered, answered_rosbags, compared, padding, overrun = 0, 0, 0, 0, set()
        # The checker writes the messages it found equal; none if it stopped early.
        exists = os.path.exists(horus_path)
        with open(horus_path, encoding="utf-8") if exists else contextlib.nullcontext([]) as f:
            for line in f:
                a = json.loads(line)
                what = f"{a['type']} case {a['case']}"
                horus, end = bytes.fromhex(a["horus"]), a["end"]
                if (a["type"], a["case"]) in rosbags_messages:
                    text, cdr = rosbags_messages.pop((a["type"], a["case"]))
                    try:
                        back = no_wheel_types.as_json(no_wheel_types.deserialize(horus, a["type"]), a["type"])
                    except Exception as e:  # rosbags raises its own errors on bad bytes
                        failures.append(f"{what}: rosbags cannot deserialize horus's bytes: {e}")
                        continue
                    if back != text:
                        failures.append(f"{what}: rosbags reads horus's bytes as another message")
                    if end != len(cdr):
                        failures.append(f"{what}: rosbags' message is {len(cdr)} bytes, horus's {end}")
                    answered_rosbags += 1
                    compared += a["compared"]
                    padding += a["padding"]
                    continue
                cls, text, cdr = messages.pop((a["type"], a["case"]))
                try:
                    back = deserialize_message(horus, cls)
                except Exception as e:  # rclpy raises a plain RuntimeError on bad bytes
                    failures.append(f"{what}: rclpy cannot deserialize horus's bytes: {e}")
                    continue
                if as_json(back) != text:
                    failures.append(f"{what}: rclpy reads horus's bytes as another message")
                if not reads_as(cdr[:end], cls, text) or not truncated_fails(cdr[:end - 1], cls, text):
                    failures.append(f"{what}: rclpy's message does not end at byte {end}")
                if len(cdr) > end:
                    overrun.add(a["type"])
                answered += 1
                compared += a["compared"]
                padding += a["padding"]
    if (messages or rosbags_messages) and checker.returncode == 0:
        failures.append(f"{len(messages) + len(rosbags_messages)} messages got no answer from the checker")
    if failures:
        print("\n".join(failures[:20]), file=sys.stderr)
        sys.exit(f"live_oracle: FAILED: {len(failures)} problems (first 20 above; seed {args.seed})")
    print(f"live_oracle: {len(classes)} types, {answered} messages (seed {args.seed}; the "
          f"default and {args.per_type} random ones per type): horus's bytes (horus_idl::cdr and "
          f"the generated types) equal rclpy's, "
          f"{compared} bytes compared ({padding} padding bytes skipped; rclpy's buffer ran past the message for "
          f"{len(overrun)} types), rclpy reads each of horus's encodings back; "
          f"{', '.join(sorted(NO_WHEEL))} (no wheel): {len(no_wheel_types.names)} types, "
          f"{answered_rosbags} messages through rosbags instead (its RIHS01 equal to ROS 2's, "
          f"its bytes equal to horus's, horus's read back); "
          f"{generated - started:.1f}s rclpy, {checked - generated:.1f}s horus, "
          f"{time.monotonic() - checked:.1f}s rclpy reading")


if __name__ == "__main__":
    main()
