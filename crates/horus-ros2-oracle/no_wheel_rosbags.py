"""The ROS 2 side of `make test-ros2` for the vendored packages no ROS 2 wheel ships
(tf2_msgs): rosbags' own ROS 2 type system instead of rclpy (docs/interfaces.md, "How it is
checked").

rosbags is an independent implementation of ROS 2's `.msg` parser, CDR serializer and RIHS01
hash. Its kilted type store has `tf2_msgs/msg/TFMessage` and `TF2Error` (its own definitions);
the structures of `tf2_msgs/srv/FrameGraph` and `tf2_msgs/action/LookupTransform` are made here
from the vendored `.srv`/`.action` files (unmodified from ros2/geometry2) with the types ROS 2
implies for a service (`_Request`, `_Response`, `_Event`) and an action (`_Goal` … `_GetResult_Event`),
as rosidl_adapter writes them. Every type's RIHS01 as rosbags computes it must equal ROS 2's
(the `.json` files ROS 2's generator wrote for tf2_msgs): the definitions rosbags serializes
with are then ROS 2's. Messages are randomised as live_oracle.py's are (same modes and tables),
serialized by rosbags (`serialize_cdr`: exactly the message, padding zeros) and written as the
same JSON lines for the Rust checker; horus's bytes are then read back by `deserialize_cdr`.
"""

import importlib
import json
import math
import os
import struct

import numpy as np
from rosbags.typesys import Stores, get_typestore, get_types_from_msg

# ROS 2 adds this member to a structure without any (rclpy has no field for it: 0).
PLACEHOLDER = "structure_needs_at_least_one_member"
INTERFACES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "horus-idl", "interfaces")
NUMPY = {
    "bool": np.bool_, "byte": np.uint8, "char": np.uint8, "uint8": np.uint8, "int8": np.int8,
    "int16": np.int16, "uint16": np.uint16, "int32": np.int32, "uint32": np.uint32,
    "int64": np.int64, "uint64": np.uint64, "float32": np.float32, "float64": np.float64,
}
BYTE_LIKE = {"byte", "char", "uint8"}


def _sections(path, count):
    """The `---`-separated parts of a .srv (2) or .action (3) file."""
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    parts, current = [], []
    for line in lines:
        if line.strip() == "---":
            parts.append("\n".join(current))
            current = []
        else:
            current.append(line)
    parts.append("\n".join(current))
    if len(parts) != count:
        raise SystemExit(f"no_wheel_rosbags: {path}: {len(parts)} parts, expected {count}")
    return parts


def _has_member(text):
    return any(line.split("#", 1)[0].strip() for line in text.split("\n"))


def _service(pkg, name, request, response):
    """`{full name: .msg text}` of a service's structures, as ROS 2 implies them."""
    return {
        f"{pkg}/srv/{name}_Request": request,
        f"{pkg}/srv/{name}_Response": response,
        f"{pkg}/srv/{name}_Event": (
            "service_msgs/ServiceEventInfo info\n"
            f"{pkg}/{name}_Request[<=1] request\n{pkg}/{name}_Response[<=1] response\n"),
    }


def _action(pkg, name, goal, result, feedback):
    a = f"{pkg}/action/{name}"
    texts = {f"{a}_Goal": goal, f"{a}_Result": result, f"{a}_Feedback": feedback,
             f"{a}_FeedbackMessage": f"unique_identifier_msgs/UUID goal_id\n{pkg}/{name}_Feedback feedback\n"}
    for srv, request, response in (
            ("SendGoal", f"unique_identifier_msgs/UUID goal_id\n{pkg}/{name}_Goal goal\n",
             "bool accepted\nbuiltin_interfaces/Time stamp\n"),
            ("GetResult", "unique_identifier_msgs/UUID goal_id\n",
             f"int8 status\n{pkg}/{name}_Result result\n")):
        for full, text in _service(pkg, f"{name}_{srv}", request, response).items():
            texts[full.replace("/srv/", "/action/")] = text
    return texts


def _implied_texts():
    """The tf2_msgs structures rosbags' store lacks, from the vendored files."""
    pkg = os.path.join(INTERFACES, "tf2_msgs")
    texts = _service("tf2_msgs", "FrameGraph", *_sections(os.path.join(pkg, "srv", "FrameGraph.srv"), 2))
    texts.update(_action("tf2_msgs", "LookupTransform",
                         *_sections(os.path.join(pkg, "action", "LookupTransform.action"), 3)))
    return texts


def _ros2_hashes():
    """RIHS01 of every type the tf2_msgs .json files (ROS 2's generator) list."""
    hashes = {}
    for root, _dirs, files in os.walk(os.path.join(INTERFACES, "tf2_msgs")):
        for f in files:
            if f.endswith(".json"):
                with open(os.path.join(root, f), encoding="utf-8") as j:
                    for h in json.load(j)["type_hashes"]:
                        hashes[h["type_name"]] = h["hash_string"]
    return hashes


def _rclpy_default(name):
    """rclpy's default message of `pkg/msg/Name`, or None when no wheel has the type."""
    pkg, kind, type_name = name.split("/")
    try:
        return getattr(importlib.import_module(f"{pkg}.{kind}"), type_name)()
    except (ImportError, AttributeError):
        return None


class NoWheelTypes:
    """rosbags' type store with every structure of the no-wheel packages horus lists."""

    def __init__(self, names):
        # rosbags keeps a `.msg` `char` as a type of its own in the type description, where
        # ROS 2 (rosidl_adapter) makes it `uint8` before hashing (same wire bytes): its
        # kilted store's service_msgs/ServiceEventInfo (`char[16] client_gid`) hashes to
        # another RIHS01 than ROS 2's. The store is the kilted one with `char` read as ROS 2
        # reads it.
        kilted = get_typestore(Stores.ROS2_KILTED)
        self.store = get_typestore(Stores.EMPTY)
        self.store.register({
            name: (consts, [(n, self._char_as_uint8(t)) for n, t in fields])
            for name, (consts, fields) in kilted.fielddefs.items()})
        texts = _implied_texts()
        # `pkg/Name` in a text means the structure of that name, wherever it lives.
        renames = {f"{n.split('/')[0]}/msg/{n.split('/')[2]}": n for n in texts}
        for full, text in texts.items():
            if not _has_member(text):
                text = f"uint8 {PLACEHOLDER}\n"
            pkg, _kind, name = full.split("/")
            (consts, fields), = get_types_from_msg(text, f"{pkg}/msg/{name}").values()
            self.store.register({full: (consts, [(n, self._renamed(t, renames)) for n, t in fields])})
        self.failures = []
        ros2 = _ros2_hashes()
        self.names = []
        for name in names:
            if name not in self.store.fielddefs:
                self.failures.append(f"{name}: in horus's standard set, not made by rosbags")
                continue
            ours = self.store.hash_rihs01(name)
            if ours != ros2.get(name):
                self.failures.append(f"{name}: rosbags' RIHS01 {ours} != ROS 2's {ros2.get(name)}")
                continue
            self.names.append(name)

    @staticmethod
    def _char_as_uint8(node):
        kind, detail = node
        if kind.name == "BASE" and detail[0] == "char":
            return (kind, ("uint8", detail[1]))
        if kind.name in ("ARRAY", "SEQUENCE"):
            return (kind, (NoWheelTypes._char_as_uint8(detail[0]), detail[1]))
        return node

    @staticmethod
    def _renamed(node, renames):
        kind, detail = node
        if kind.name == "NAME":
            return (kind, renames.get(detail, detail))
        if kind.name in ("ARRAY", "SEQUENCE"):
            return (kind, (NoWheelTypes._renamed(detail[0], renames), detail[1]))
        return node

    def serialize(self, msg, name):
        return bytes(self.store.serialize_cdr(msg, name))

    def deserialize(self, data, name):
        return self.store.deserialize_cdr(data, name)

    def as_json(self, msg, name):
        """The message as the checker's JSON text (live_oracle.as_json's form)."""
        return json.dumps(self._struct_json(msg, name), ensure_ascii=False, allow_nan=False)

    def _struct_json(self, msg, name):
        _consts, fields = self.store.fielddefs[name]
        return {f: self._json(getattr(msg, f), t) for f, t in fields if f != PLACEHOLDER}

    def _json(self, v, node):
        kind, detail = node
        if kind.name == "BASE":
            if isinstance(v, (np.generic,)):
                v = v.item()
            if isinstance(v, float) and not math.isfinite(v):
                return "nan" if math.isnan(v) else ("inf" if v > 0 else "-inf")
            return v
        if kind.name == "NAME":
            return self._struct_json(v, detail)
        sub = detail[0]
        if sub[0].name == "BASE" and sub[1][0] in BYTE_LIKE:
            return bytes(np.asarray(v, dtype=np.uint8).tolist()).hex()
        return [self._json(x, sub) for x in (v.tolist() if hasattr(v, "tolist") else v)]


class Randomiser:
    """Random messages of a rosbags type, in live_oracle's modes (its Generator's tables)."""

    def __init__(self, types, gen, tables):
        self.types, self.gen, self.t = types, gen, tables

    def default(self, name):
        """The message with every field at its default. rosbags keeps no default values:
        tf2_msgs declares none, and the types it uses that do (geometry_msgs/Quaternion's
        `w 1`) are in the wheels, so their scalar defaults are rclpy's; anything else is zero,
        false, empty or zeroed."""
        _consts, fields = self.types.store.fielddefs[name]
        ros2 = _rclpy_default(name)
        values = {}
        for f, t in fields:
            if ros2 is not None and t[0].name == "BASE" and hasattr(ros2, f):
                values[f] = getattr(ros2, f)
            else:
                values[f] = self.zero(t)
        return self.types.store.types[name](**values)

    def zero(self, node):
        kind, detail = node
        if kind.name == "NAME":
            return self.default(detail)
        if kind.name == "BASE":
            return {"string": "", "wstring": "", "bool": False}.get(detail[0], 0.0 if detail[0].startswith("float") else 0)
        sub, size = detail
        items = [self.zero(sub) for _ in range(size if kind.name == "ARRAY" else 0)]
        if sub[0].name == "BASE" and sub[1][0] not in ("string", "wstring"):
            return np.array(items, dtype=NUMPY[sub[1][0]])
        return items

    def message(self, name, mode, depth=0):
        _consts, fields = self.types.store.fielddefs[name]
        values = {f: (0 if f == PLACEHOLDER else self.value(t, mode, depth)) for f, t in fields}
        return self.types.store.types[name](**values)

    def value(self, node, mode, depth):
        kind, detail = node
        if kind.name == "BASE":
            return self.basic(detail[0], detail[1] or None, mode)
        if kind.name == "NAME":
            return self.message(detail, mode, depth + 1)
        sub, size = detail
        rng = self.gen
        if kind.name == "ARRAY":
            n = size
        elif sub[0].name == "NAME":
            n = rng.count(self.t["STRUCTS"], mode if depth < self.t["MAX_NESTED_DEPTH"] else "short", size or None)
        elif sub[0].name == "BASE" and sub[1][0] in BYTE_LIKE:
            n = rng.count(self.t["BYTES"], mode, size or None)
        else:
            n = rng.count(self.t["SEQ"], mode, size or None)
        inner = self.t["INNER"][mode] if depth < self.t["MAX_NESTED_DEPTH"] else "empty"
        is_text = sub[0].name == "BASE" and sub[1][0] in ("string", "wstring")
        element_mode = inner if sub[0].name == "NAME" or is_text else mode
        items = [self.value(sub, element_mode, depth) for _ in range(n)]
        if sub[0].name == "BASE" and not is_text:
            return np.array(items, dtype=NUMPY[sub[1][0]])
        return items

    def basic(self, name, bound, mode):
        r, edge = self.gen.rng, mode == "edge"
        if name in ("string", "wstring"):
            alphabet = self.t["UNICODE"]
            if name == "wstring":
                alphabet = "".join(c for c in alphabet if ord(c) <= 0xFFFF)
            text = "".join(r.choice(alphabet) for _ in range(self.gen.count(self.t["CHARS"], mode)))
            if bound is not None:
                text = "x" * bound if edge else text.encode()[:bound].decode(errors="ignore")[:bound]
            return text
        if name == "bool":
            return r.random() < 0.5
        if name == "float32":
            v = r.choice(self.t["FLOAT32_EDGES"]) if edge else r.uniform(-1e6, 1e6)
            return struct.unpack("<f", struct.pack("<f", v))[0]
        if name == "float64":
            return r.choice(self.t["FLOAT64_EDGES"]) if edge else r.uniform(-1e9, 1e9)
        lo, hi = (0, 255) if name in ("byte", "char") else self.t["INT_RANGES"][name]
        return r.choice([lo, hi, 0]) if edge else r.randint(lo, hi)
