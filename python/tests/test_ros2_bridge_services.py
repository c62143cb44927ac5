"""A horus Python ROS-typed client calls an rclpy server of a type horus was not built
with, through the ROS 2 bridge (`horus ros2`).

The type is ``test_msgs/srv/BasicTypes``, loaded at run time from the ROS 2 venv's
``share/test_msgs`` (``horus.interfaces.load_package``). ``RosService(...).client()``
creates the horus service with its ROS 2 types when it is made, and the bridge takes the
types from that service's description: without it the bridge refuses the ROS 2 server's
service as unknown and the client only ever gets ``NoServerError``. (The same from Rust:
crates/horus-ros2/tests/service_user_types.rs.)

The bridge (the `horus` binary, HORUS_BIN as for the recording tests, with
``--localhost-only``) and the rclpy server (through scripts/ros2-python, which keeps
discovery on this host and removes what rclpy's libraries leave in /dev/shm) run inside a
network namespace with only ``lo``: no DDS datagram leaves it. The horus client, in this
process, meets the bridge through shared memory, which network namespaces share.
Root is needed for the network namespace, and the ROS 2 venv (`make setup-ros2`) with
test_msgs: elsewhere the test is skipped, saying why, or fails with HORUS_ROS2_REQUIRED=1
(what the Makefile sets as root, as for the Rust ROS 2 tests). Nothing here asserts a
time: waits are bounded only so that a failure cannot hang the run.
"""

from __future__ import annotations

import itertools
import json
import os
import signal
import sys
import time
from pathlib import Path
from typing import Any, Iterator, List, NoReturn, Optional

import pytest

import horus
from conftest import LineChild, horus_bin, ip
from horus.interfaces.std_srvs.srv import Trigger
from shm_check import leftovers

REPO = Path(__file__).resolve().parents[2]
ROS2_PYTHON = REPO / "scripts" / "ros2-python"
VENV = Path(os.environ.get("HORUS_ROS2_VENV") or Path.home() / ".cache" / "horus-ros2-venv")
TEST_MSGS = VENV / "share" / "test_msgs"
SERVICE = "demo/basic"
# Bound on any wait (discovery takes a second or two; the rest is a safety net).
PATIENCE = 60.0
# Network namespaces: `hpy-ros2-<pid>-<n>`.
_worlds = itertools.count()

# An rclpy server of test_msgs/srv/BasicTypes on `sys.argv[1]`: answers each request with
# its fields, `int64_value` doubled and `string_value` prefixed with `rclpy:`. It stops
# when its stdin closes.
BASIC_TYPES_SERVER = """
import os, sys, threading
import rclpy
from test_msgs.srv import BasicTypes

rclpy.init()
node = rclpy.create_node("horus_py_test_basic_types_server")

def answer(req, resp):
    for f in req.get_fields_and_field_types():
        setattr(resp, f, getattr(req, f))
    resp.int64_value = req.int64_value * 2
    resp.string_value = "rclpy:" + req.string_value
    return resp

srv = node.create_service(BasicTypes, sys.argv[1], answer)
done = threading.Event()
threading.Thread(target=lambda: (sys.stdin.read(), done.set()), daemon=True).start()
print("ready", os.getpid(), flush=True)
while not done.is_set():
    rclpy.spin_once(node, timeout_sec=0.05)
node.destroy_node()
rclpy.shutdown()
"""


def why_not_runnable() -> Optional[str]:
    if not (VENV / "bin" / "python").exists():
        return f"no ROS 2 venv at {VENV} (run `make setup-ros2`)"
    if not (TEST_MSGS / "srv" / "BasicTypes.srv").exists():
        return f"no test_msgs in the ROS 2 venv ({TEST_MSGS}; run `make setup-ros2`)"
    if os.geteuid() != 0:
        return "network namespaces need root (ip netns add)"
    try:
        ip("-V")
    except FileNotFoundError:
        return "`ip` (iproute2) missing"
    return None


def skip_or_fail(why: str) -> NoReturn:
    """Skips saying why; with HORUS_ROS2_REQUIRED=1 (the Makefile as root) fails instead,
    so that a lost venv is not a silent pass."""
    if os.environ.get("HORUS_ROS2_REQUIRED") == "1":
        pytest.fail(f"HORUS_ROS2_REQUIRED=1 but this ROS 2 test cannot run here: {why}")
    pytest.skip(why)


def event(line: str) -> Any:
    """The `event` of one of `horus --json ros2`'s lines."""
    return json.loads(line).get("event") if line.startswith("{") else None


def basic_types() -> Any:
    """test_msgs/srv/BasicTypes as a horus.interfaces class (loaded once per process)."""
    if "horus.interfaces.test_msgs" not in sys.modules:
        horus.interfaces.load_package("test_msgs", TEST_MSGS)
    from horus.interfaces.test_msgs.srv import BasicTypes  # type: ignore[import-not-found]

    return BasicTypes


class World:
    """A network namespace with only `lo` up, one ROS 2 domain, this test's horus
    namespace; the processes started in it."""

    def __init__(self, ns: str, tmp: Path) -> None:
        n = next(_worlds)
        self.netns = f"hpy-ros2-{os.getpid()}-{n}"
        self.domain = (os.getpid() + 7 * n) % 100 + 1
        self.ns = ns
        self.tmp = tmp
        self.children: List[LineChild] = []
        made = ip("netns", "add", self.netns)
        if made.returncode != 0:
            ip("netns", "delete", self.netns)  # in case it got half made
            skip_or_fail(f"network namespaces cannot be created here: ip netns add: {made.stderr.strip()}")
        up = ip("-n", self.netns, "link", "set", "lo", "up")
        if up.returncode != 0:
            self.delete()
            raise RuntimeError(f"ip -n {self.netns} link set lo up: {up.stderr.strip()}")

    def start(self, name: str, stop: Optional[signal.Signals], *args: str) -> LineChild:
        """Starts `args` in the world; it stops when its stdin closes and it gets `stop`."""
        env = dict(os.environ, ROS_DOMAIN_ID=str(self.domain), HORUS_NAMESPACE=self.ns)
        # `ip netns exec` execs the command: the pid is the child's.
        c = LineChild(
            ["ip", "netns", "exec", self.netns, *args],
            self.tmp / f"{name}.stderr",
            name=name,
            env=env,
            stdin=True,
            stop_signal=stop,
            patience=PATIENCE,
        )
        self.children.append(c)
        return c

    def delete(self) -> None:
        # Each the way it cleans up (the bridge removes its status segment, the rclpy node
        # its Fast DDS files); SIGKILL only if it does not stop.
        for c in reversed(self.children):
            if c.p.poll() is None:
                c.stop()
        ip("netns", "delete", self.netns)

    def exists(self) -> bool:
        return any(line.split()[:1] == [self.netns] for line in ip("netns", "list").stdout.splitlines())


@pytest.fixture
def world(ns: str, tmp_path: Path) -> Iterator[World]:
    why = why_not_runnable()
    if why is not None:
        skip_or_fail(why)
    w = World(ns, tmp_path)
    yield w
    w.delete()
    assert not w.exists(), f"network namespace {w.netns} left behind"
    assert leftovers(ns) == [], "the test's horus namespace left files in /dev/shm"


def test_a_python_client_of_a_user_service_type_calls_an_rclpy_server(world: World, tmp_path: Path) -> None:
    BasicTypes = basic_types()
    # The definition horus loaded is the one rclpy serves: the same RIHS01 hash as rosidl's.
    hashes = json.loads((TEST_MSGS / "srv" / "BasicTypes.json").read_text())["type_hashes"]
    rosidl = {h["type_name"]: h["hash_string"] for h in hashes}
    assert BasicTypes.Request.ros_type_hash() == rosidl["test_msgs/srv/BasicTypes_Request"]
    assert BasicTypes.Response.ros_type_hash() == rosidl["test_msgs/srv/BasicTypes_Response"]

    # Made before the bridge starts: the horus service now exists with BasicTypes' types,
    # no server yet.
    client = horus.RosService(BasicTypes, SERVICE).client()
    with pytest.raises(horus.NoServerError):
        client.call(BasicTypes.Request(), timeout=1.0)
    # Another type under the name: refused when that client is made, naming the types.
    with pytest.raises(horus.ServiceError, match="BasicTypes"):
        horus.RosService(Trigger, SERVICE).client()

    script = tmp_path / "server.py"
    script.write_text(BASIC_TYPES_SERVER)
    server = world.start("rclpy-server", None, str(ROS2_PYTHON), str(script), f"/{SERVICE}")
    server.wait_line("ready", lambda line: line.startswith("ready"))
    bridge = world.start(
        "bridge", signal.SIGINT, horus_bin(), "--json", "ros2", "--localhost-only", "--namespace", world.ns,
        "--domain", str(world.domain),
    )  # fmt: skip
    bridge.wait_line("its start", lambda line: event(line) == "started")

    request = BasicTypes.Request(
        bool_value=True, byte_value=0x7F, char_value=ord("h"), float32_value=1.5, float64_value=-2.25,
        int8_value=-3, uint8_value=250, int16_value=-4, uint16_value=60000, int32_value=-5,
        uint32_value=4_000_000_000, int64_value=21, uint64_value=2**64 - 1, string_value="horus",
    )  # fmt: skip
    # NoServerError until the bridge serves the ROS 2 server's service in horus (once its
    # request writer matched the server); never, if the bridge did not learn the types.
    deadline = time.monotonic() + PATIENCE
    while True:
        try:
            response = client.call(request, timeout=15.0)
            break
        except horus.NoServerError:
            if time.monotonic() > deadline:
                raise AssertionError(
                    f"the bridge never served {SERVICE} to the client: {bridge.seen} {bridge.stderr()}"
                ) from None
            time.sleep(0.1)
    expected = BasicTypes.Response(
        **{f: getattr(request, f) for f in BasicTypes.Request.__slots__},
    )
    expected.int64_value = 42
    expected.string_value = "rclpy:horus"
    assert response == expected
    # A second call on the same client, now that the route is up.
    request.int64_value = -7
    request.string_value = "again"
    response = client.call(request, timeout=15.0)
    assert (response.int64_value, response.string_value) == (-14, "rclpy:again")
    client.close()

    # The bridge's last status: the route from ROS 2 carried both calls, no refusal.
    assert bridge.stop() == 0, bridge.stderr()
    stopped = json.loads(bridge.wait_line("its last status", lambda line: event(line) == "stopped"))
    routes = [s for s in stopped["status"]["services"] if s["horus_service"] == SERVICE]
    assert [(r["direction"], r["type_name"]) for r in routes] == [("from_ros", "test_msgs/srv/BasicTypes")], routes
    assert routes[0]["counters"]["calls"] == 2 and routes[0]["refusals"] == 0, routes
    assert server.stop() == 0, server.stderr()
