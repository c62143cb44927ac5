"""Checks the demo's recording (`make demo`) with three ROS 2 readers, field by field.

Run in the ROS 2 venv (scripts/ros2-python) by tests/ros2_recording.rs:

    python check_demo_recording.py RECORDING.mcap EXPECTED.json

EXPECTED.json is what horus decoded from the recording (the generated Rust types), in the
form crates/horus-record/tests/ros2_readers/check_recording.py reads, except that a float
JSON cannot write (the scan's +inf "no return" beams) is `{"$float": "inf"}` (also "-inf",
"nan"). The three readers and the comparison are check_recording.py's: mcap-ros2-support's
`read_ros2_messages`, rosbags' AnyReader (type store from the file, RIHS01 verified) and
rclpy's `deserialize_message`. Exit status 0 when every message matched in all three.

rosbags (0.11) cannot open an MCAP file that has any channel whose schema is not ROS
(its MCAP storage knows only the `ros2msg` and `ros2idl` schema encodings: `KeyError:
'jsonschema'`), and the demo's recording has one: the logs, `/log` as `foxglove.Log` JSON.
When it refuses the file for that reason, rosbags is given a copy holding the file's ROS
channels only — schemas, channels (with their metadata), messages and times copied as they
are with the `mcap` library — and a line says so.
"""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path
from typing import Any, Dict, List

sys.path.insert(
    0, str(Path(__file__).resolve().parents[3] / "horus-record" / "tests" / "ros2_readers")
)

import check_recording  # noqa: E402


def floats(v: Any) -> Any:
    """`{"$float": "inf"}` markers as floats, everything else as is."""
    if isinstance(v, dict):
        if set(v) == {"$float"}:
            return float(v["$float"])
        return {k: floats(x) for k, x in v.items()}
    if isinstance(v, list):
        return [floats(x) for x in v]
    return v


ROS_SCHEMAS = ("ros2msg", "ros2idl")


def ros_channels_only(src: str, dst: str) -> List[str]:
    """Copies the ROS channels of `src` into `dst` as they are; returns the topics left out."""
    from mcap.reader import make_reader
    from mcap.writer import Writer

    left_out: List[str] = []
    with open(src, "rb") as f, open(dst, "wb") as out:
        reader = make_reader(f)
        header = reader.get_header()
        w = Writer(out)
        w.start(profile=header.profile, library=header.library)
        schemas: Dict[int, int] = {}
        channels: Dict[int, int] = {}
        for schema, channel, message in reader.iter_messages(log_time_order=False):
            if schema is None or schema.encoding not in ROS_SCHEMAS:
                if channel.topic not in left_out:
                    left_out.append(channel.topic)
                continue
            if schema.id not in schemas:
                schemas[schema.id] = w.register_schema(schema.name, schema.encoding, schema.data)
            if channel.id not in channels:
                channels[channel.id] = w.register_channel(
                    channel.topic, channel.message_encoding, schemas[schema.id], dict(channel.metadata)
                )
            w.add_message(
                channels[channel.id], message.log_time, message.data, message.publish_time, message.sequence
            )
        w.finish()
    return left_out


def with_rosbags(path: str, expected: Dict[str, Dict[str, Any]], errors: List[str]) -> None:
    """check_recording's rosbags check; on a copy without the non-ROS channels when rosbags
    refuses the file for them."""
    try:
        check_recording.with_rosbags(path, expected, errors)
        return
    except KeyError as err:
        if err.args[0] in ROS_SCHEMAS:
            raise
        refused = err.args[0]
    with tempfile.TemporaryDirectory() as tmp:
        copy = str(Path(tmp) / "ros-channels.mcap")
        left_out = ros_channels_only(path, copy)
        print(
            f"rosbags: refuses the file (KeyError: {refused!r}: a schema encoding it does not "
            f"know); reading a copy without the non-ROS channels {', '.join(left_out)}"
        )
        check_recording.with_rosbags(copy, expected, errors)


def main(argv: List[str]) -> int:
    if len(argv) != 3:
        print(__doc__)
        return 2
    path = argv[1]
    with open(argv[2]) as f:
        spec = floats(json.load(f))
    expected: Dict[str, Dict[str, Any]] = {t["topic"]: t for t in spec["topics"]}
    for t in spec["topics"]:
        print(f"{t['topic']}: {len(t['messages'])} {t['type']} messages")
    errors: List[str] = []
    for run in (check_recording.with_mcap_ros2, with_rosbags, check_recording.with_rclpy):
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
