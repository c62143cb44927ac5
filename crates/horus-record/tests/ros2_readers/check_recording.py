"""Checks a horus recording of ROS-typed topics with three independent ROS 2 readers.

Run in the ROS 2 venv (rclpy wheels + `mcap-ros2-support` + `rosbags`):

    python check_recording.py RECORDING.mcap EXPECTED.json
    python check_recording.py --agree RECORDING.mcap

With `--agree` (a recording whose values are not known in advance, such as `make demo`'s)
every ROS-typed channel of the file is checked: the three readers must decode the same values
field by field (those of `mcap_ros2` taken as the reference) and rosbags must accept every
`topic_type_hash`; a file without any ROS-typed channel fails.

EXPECTED.json (written by the Rust test that published the messages):

    {"topics": [{"topic": "robot/scan", "type": "sensor_msgs/msg/LaserScan",
                 "hash": "RIHS01_…", "messages": [{field: value, …}, …]}, …]}

Every message is a complete value: nested messages as objects, arrays and sequences as
lists (byte sequences as lists of ints), float32 values as the float64 of the float32.

For each topic and each reader, the messages decoded from the file must equal the expected
ones field by field, in order:

- `mcap_ros2.reader.read_ros2_messages` (Foxglove's MCAP ROS 2 library): decodes with the
  `ros2msg` definition stored in the file; the schema name must be the ROS type;
- `rosbags.highlevel.AnyReader`: builds its type store from the file's definitions, checks
  each channel's `topic_type_hash` against the RIHS01 it computes from them (a wrong hash is
  an error), then deserializes the CDR;
- rclpy's `rclpy.serialization.deserialize_message` with the compiled type of the ROS 2
  wheels (rmw_fastrtps_cpp's type support), on the raw message bytes read with `mcap`.

A type whose Python package the ROS 2 wheels do not ship is reported as skipped for rclpy
(one line `skipped: …`), never silently. Exit status 0 when everything matched, 1 otherwise.
"""

from __future__ import annotations

import array
import dataclasses
import importlib
import json
import math
import sys
from typing import Any, Dict, List, Tuple


def norm(v: Any) -> Any:
    """A decoded value as plain JSON-like data (each reader has its own containers)."""
    if isinstance(v, bool) or v is None:
        return v
    if isinstance(v, (int, float, str)):
        return v
    if isinstance(v, (bytes, bytearray, memoryview)):
        return list(bytes(v))
    if isinstance(v, array.array):
        return list(v)
    if hasattr(v, "tolist") and hasattr(v, "dtype"):  # numpy arrays and scalars
        return norm(v.tolist())
    if isinstance(v, (list, tuple)):
        return [norm(x) for x in v]
    if dataclasses.is_dataclass(v):
        # rosbags: `__msgtype__` names the type, and constants are fields too (upper-case
        # names, which a ROS 2 field cannot have).
        return {
            f.name: norm(getattr(v, f.name))
            for f in dataclasses.fields(v)
            if f.name != "__msgtype__" and not f.name.isupper()
        }
    if hasattr(v, "get_fields_and_field_types"):  # rclpy
        return {k: norm(getattr(v, k)) for k in v.get_fields_and_field_types()}
    if hasattr(v, "__slots__"):  # mcap_ros2's generated classes
        return {k: norm(getattr(v, k)) for k in v.__slots__}
    raise TypeError(f"cannot normalise {type(v)!r}")


def diff(path: str, got: Any, want: Any, out: List[str]) -> None:
    """Appends one line per differing field."""
    if isinstance(want, dict):
        if not isinstance(got, dict):
            out.append(f"{path}: expected a message, got {type(got).__name__}")
            return
        if set(got) != set(want):
            out.append(f"{path}: fields {sorted(got)} != expected {sorted(want)}")
        for k in want:
            if k in got:
                diff(f"{path}.{k}", got[k], want[k], out)
    elif isinstance(want, list):
        if not isinstance(got, list) or len(got) != len(want):
            n = len(got) if isinstance(got, list) else type(got).__name__
            out.append(f"{path}: {n} elements, expected {len(want)}")
            return
        for i, (g, w) in enumerate(zip(got, want)):
            diff(f"{path}[{i}]", g, w, out)
    elif isinstance(want, float) and isinstance(got, (int, float)):
        if not (got == want or (math.isnan(want) and math.isnan(got))):
            out.append(f"{path}: {got!r} != expected {want!r}")
    elif got != want or isinstance(got, bool) != isinstance(want, bool):
        out.append(f"{path}: {got!r} != expected {want!r}")


def check(reader: str, topic: str, got: List[Any], want: List[Any], errors: List[str]) -> None:
    if len(got) != len(want):
        errors.append(f"{reader} {topic}: {len(got)} messages, expected {len(want)}")
    for i, (g, w) in enumerate(zip(got, want)):
        out: List[str] = []
        diff(f"{topic}[{i}]", norm(g), w, out)
        errors.extend(f"{reader} {line}" for line in out)


def with_mcap_ros2(path: str, expected: Dict[str, Dict[str, Any]], errors: List[str]) -> None:
    from mcap_ros2.reader import read_ros2_messages

    got: Dict[str, List[Any]] = {t: [] for t in expected}
    for m in read_ros2_messages(path, topics=list(expected)):
        want_type = expected[m.channel.topic]["type"]
        if m.schema.name != want_type or m.schema.encoding != "ros2msg":
            errors.append(f"mcap_ros2 {m.channel.topic}: schema {m.schema.name} ({m.schema.encoding})")
        if m.channel.message_encoding != "cdr":
            errors.append(f"mcap_ros2 {m.channel.topic}: encoding {m.channel.message_encoding}")
        got[m.channel.topic].append(m.ros_msg)
    for t, e in expected.items():
        check("mcap_ros2", t, got[t], e["messages"], errors)
    print(f"mcap_ros2: {sum(len(v) for v in got.values())} messages decoded")


def with_rosbags(path: str, expected: Dict[str, Dict[str, Any]], errors: List[str]) -> None:
    from pathlib import Path

    from rosbags.highlevel import AnyReader

    got: Dict[str, List[Any]] = {t: [] for t in expected}
    # Opening registers the file's definitions and checks every topic_type_hash against
    # the RIHS01 rosbags computes from them.
    with AnyReader([Path(path)]) as reader:
        conns = [c for c in reader.connections if c.topic in expected]
        for c in conns:
            e = expected[c.topic]
            if c.msgtype != e["type"]:
                errors.append(f"rosbags {c.topic}: type {c.msgtype}")
            digest = reader.typestore.hash_rihs01(c.msgtype)
            if digest != e["hash"]:
                errors.append(f"rosbags {c.topic}: RIHS01 from the definition {digest} != {e['hash']}")
        for conn, _t, raw in reader.messages(connections=conns):
            got[conn.topic].append(reader.deserialize(raw, conn.msgtype))
    for t, e in expected.items():
        check("rosbags", t, got[t], e["messages"], errors)
    print(f"rosbags: {sum(len(v) for v in got.values())} messages decoded, hashes verified")


def with_rclpy(path: str, expected: Dict[str, Dict[str, Any]], errors: List[str]) -> None:
    from mcap.reader import make_reader
    from rclpy.serialization import deserialize_message

    classes: Dict[str, Any] = {}
    for t, e in expected.items():
        pkg, kind, name = e["type"].split("/")
        try:
            classes[t] = getattr(importlib.import_module(f"{pkg}.{kind}"), name)
        except ImportError as err:
            print(f"skipped: rclpy {e['type']} on {t} (the ROS 2 wheels have no {pkg}: {err})")
    got: Dict[str, List[Any]] = {t: [] for t in classes}
    with open(path, "rb") as f:
        for _schema, channel, message in make_reader(f).iter_messages(topics=list(classes)):
            got[channel.topic].append(deserialize_message(message.data, classes[channel.topic]))
    for t in classes:
        check("rclpy", t, got[t], expected[t]["messages"], errors)
    print(f"rclpy: {sum(len(v) for v in got.values())} messages deserialized")


def agreed(path: str) -> Dict[str, Any]:
    """Without expected values (`--agree`, e.g. `make demo`'s recording): every ROS-typed
    channel (`ros2msg` schema, `cdr` messages) of the file, with what `mcap_ros2` decodes as
    the values the other two readers must equal; its hash is the one `rosbags` computes from
    the definition (checked against `topic_type_hash` when the file states one)."""
    from mcap.reader import make_reader
    from mcap_ros2.reader import read_ros2_messages
    from rosbags.highlevel import AnyReader
    from pathlib import Path

    topics: Dict[str, Any] = {}
    with open(path, "rb") as f:
        summary = make_reader(f).get_summary()
    assert summary is not None, "no summary section"
    for ch in summary.channels.values():
        schema = summary.schemas.get(ch.schema_id)
        if ch.message_encoding == "cdr" and schema is not None and schema.encoding == "ros2msg":
            topics[ch.topic] = {"topic": ch.topic, "type": schema.name, "messages": []}
    for m in read_ros2_messages(path, topics=list(topics)):
        topics[m.channel.topic]["messages"].append(norm(m.ros_msg))
    with AnyReader([Path(path)]) as reader:
        for c in reader.connections:
            if c.topic in topics:
                topics[c.topic]["hash"] = reader.typestore.hash_rihs01(c.msgtype)
    return {"topics": list(topics.values())}


def main(argv: List[str]) -> int:
    if len(argv) == 3 and argv[1] == "--agree":
        path = argv[2]
        try:
            spec = agreed(path)
        except Exception as err:  # a reader refusing the file is a failure, said plainly
            print(f"FAILED: {path}: {type(err).__name__}: {err}")
            return 1
        if not spec["topics"]:
            print(f"FAILED: {path} has no ROS-typed channel (ros2msg schema, cdr messages)")
            return 1
    elif len(argv) == 3:
        path = argv[1]
        with open(argv[2]) as f:
            spec = json.load(f)
    else:
        print(__doc__)
        return 2
    expected = {t["topic"]: t for t in spec["topics"]}
    errors: List[str] = []
    for run in (with_mcap_ros2, with_rosbags, with_rclpy):
        try:
            run(path, expected, errors)
        except Exception as err:  # a reader refusing the file is a failure, said plainly
            errors.append(f"{run.__name__}: {type(err).__name__}: {err}")
    for line in errors[:50]:
        print(f"MISMATCH {line}")
    if len(errors) > 50:
        print(f"... and {len(errors) - 50} more")
    n = sum(len(t["messages"]) for t in spec["topics"])
    print(f"{'FAILED' if errors else 'OK'}: {len(expected)} topics, {n} messages, 3 readers")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
