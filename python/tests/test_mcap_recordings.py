"""Recordings made by the `horus` binary, checked with independent readers.

`horus record` runs as a separate process observing topics this test (and a
Rust publisher of a user-defined message, `user_publisher`, an example of
crates/horus-record) publish on. The files are then read with the `mcap`
library (CRCs validated: message count per channel equals what was
published, log times monotonic per channel) and decoded with
`mcap-ros2-support` from the `ros2msg` schemas horus wrote (field values
equal to what was sent). A recorder killed with SIGKILL leaves a file the
`mcap` stream reader reads up to the last complete chunk.
"""

from __future__ import annotations

import json
import os
import pathlib
import queue
import signal
import subprocess
import threading
import time
from typing import Any, Dict, List, Tuple

import numpy as np
import pytest
from mcap.exceptions import McapError
from mcap.reader import NonSeekingReader, make_reader
from mcap_ros2.decoder import DecoderFactory

import horus

PATIENCE = 60.0


def _built(env: str, rel: str, make: str) -> str:
    path = os.environ.get(env)
    if not path:
        target = os.environ.get("CARGO_TARGET_DIR", os.path.expanduser("~/.cache/horus-target"))
        path = os.path.join(target, rel)
    if not os.access(path, os.X_OK):
        raise RuntimeError(f"{path} not built: run `{make}` (or set {env})")
    return path


def horus_bin() -> str:
    return _built("HORUS_BIN", "debug/horus", "cargo build -p horus-cli --bin horus")


def user_publisher() -> str:
    return _built(
        "HORUS_USER_PUBLISHER",
        "debug/examples/user_publisher",
        "cargo build -p horus-record --example user_publisher",
    )


def leftovers(ns: str) -> List[str]:
    """Segments of namespace `ns` still in /dev/shm (after a grace period in
    which the survivors reclaim a killed recorder's place)."""
    deadline = time.monotonic() + 3.0
    while True:
        left = sorted(f for f in os.listdir("/dev/shm") if f.startswith(f"horus.{ns}."))
        if not left or time.monotonic() > deadline:
            return left
        time.sleep(0.05)


class Recorder:
    """A running `horus record --json`; ready once it records `expect`."""

    def __init__(self, out: pathlib.Path, args: List[str], expect: List[str]) -> None:
        self.p = subprocess.Popen(
            [horus_bin(), "--json", "record", "-o", str(out), *args],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        self.lines: "queue.Queue[str]" = queue.Queue()
        threading.Thread(target=self._pump, daemon=True).start()
        self.wait_for(expect)

    def _pump(self) -> None:
        assert self.p.stderr is not None
        for line in self.p.stderr:
            self.lines.put(line)

    def wait_for(self, topics: List[str]) -> None:
        missing = set(topics)
        deadline = time.monotonic() + PATIENCE
        while missing:
            line = self.lines.get(timeout=max(0.1, deadline - time.monotonic()))
            missing = {t for t in missing if not line.startswith(f"horus record: recording {t} ")}

    def stop(self) -> Dict[str, Any]:
        self.p.send_signal(signal.SIGINT)
        out, _ = self.p.communicate(timeout=PATIENCE)
        assert self.p.returncode == 0, out
        report: Dict[str, Any] = json.loads(out)
        return report

    def kill9(self) -> None:
        self.p.kill()
        self.p.communicate(timeout=PATIENCE)


@pytest.fixture
def tmp_mcap(tmp_path: pathlib.Path) -> pathlib.Path:
    return tmp_path / "run.mcap"


def decoded_by_topic(path: pathlib.Path) -> Dict[str, List[Tuple[int, Any]]]:
    """Every message, decoded by mcap-ros2-support, with its log time."""
    out: Dict[str, List[Tuple[int, Any]]] = {}
    with open(path, "rb") as f:
        reader = make_reader(f, validate_crcs=True, decoder_factories=[DecoderFactory()])
        for schema, channel, message, decoded in reader.iter_decoded_messages(log_time_order=False):
            assert schema is not None and schema.encoding == "ros2msg"
            assert channel.message_encoding == "cdr"
            out.setdefault(channel.topic, []).append((message.log_time, decoded))
    return out


def test_standard_and_user_messages_decode_with_independent_readers(
    tmp_mcap: pathlib.Path, ns: str
) -> None:
    n_cmd, n_imu, n_cloud, n_wheel = 300, 300, 20, 50
    cmd = horus.Topic(horus.CmdVel, "p/cmd", depth=512)
    imu = horus.Topic(horus.Imu, "p/imu", depth=512)
    cloud = horus.Topic(horus.PointCloud, "p/cloud", depth=32, max_tail_bytes=1 << 16)
    rec = Recorder(tmp_mcap, ["--regex", "^p/", "--compression", "zstd"], ["p/cmd", "p/imu", "p/cloud"])
    pc, pi, pp = cmd.publisher(), imu.publisher(), cloud.publisher()
    clouds = []
    for i in range(n_cmd):
        pc.send(horus.CmdVel(stamp_ns=i, linear=i * 0.5, angular=-i))
        m = horus.Imu(stamp_ns=i)
        m.orientation = [0.0, 0.0, 0.0, 1.0]
        m.angular_velocity = [i * 0.1, 0.2, 0.3]
        pi.send(m)
        if i % (n_cmd // n_cloud) == 0:
            pts = np.arange(i * 3 + 3, dtype=np.float32).reshape(-1, 3)
            clouds.append(pts)
            pp.send(horus.PointCloud.from_points(pts, seq=i, frame_id="lidar"))
        time.sleep(0.0002)
    wheel = subprocess.run([user_publisher(), "p/wheel", str(n_wheel)], capture_output=True, text=True, timeout=PATIENCE)
    assert wheel.returncode == 0, wheel.stderr
    report = rec.stop()
    assert {t["topic"]: t["missed"] for t in report["topics"]} == {
        "p/cmd": 0, "p/imu": 0, "p/cloud": 0, "p/wheel": 0,
    }  # fmt: skip

    # mcap, CRCs validated: counts per channel from the summary, log times monotonic.
    with open(tmp_mcap, "rb") as f:
        reader = make_reader(f, validate_crcs=True)
        summary = reader.get_summary()
        assert summary is not None and summary.statistics is not None
        topic_of = {c.id: c.topic for c in summary.channels.values()}
        counts = {topic_of[k]: v for k, v in summary.statistics.channel_message_counts.items()}
        assert counts == {"p/cmd": n_cmd, "p/imu": n_imu, "p/cloud": n_cloud, "p/wheel": n_wheel}
        last: Dict[str, int] = {}
        for _, channel, message in reader.iter_messages(log_time_order=False):
            assert message.log_time >= last.get(channel.topic, 0)
            last[channel.topic] = message.log_time
        meta = {m.name: m.metadata for m in reader.iter_metadata()}
        assert meta["horus.losses"] == {"p/cmd": "0", "p/imu": "0", "p/cloud": "0", "p/wheel": "0"}
        for c in summary.channels.values():
            assert json.loads(c.metadata["horus.description"])["types"][0]["name"] == c.metadata["horus.schema"]

    # mcap-ros2-support: every field equals what was sent.
    got = decoded_by_topic(tmp_mcap)
    cmds = [m for _, m in got["p/cmd"]]
    assert [m.stamp_ns for m in cmds] == list(range(n_cmd))
    assert [m.linear for m in cmds] == [float(np.float32(i * 0.5)) for i in range(n_cmd)]
    assert [m.angular for m in cmds] == [float(-i) for i in range(n_cmd)]
    imus = [m for _, m in got["p/imu"]]
    assert [list(m.orientation) for m in imus] == [[0.0, 0.0, 0.0, 1.0]] * n_imu
    assert [m.angular_velocity[0] for m in imus] == [i * 0.1 for i in range(n_imu)]
    assert [list(m.covariance) for m in imus] == [[0.0] * 27] * n_imu
    pcs = [m for _, m in got["p/cloud"]]
    assert [m.num_points for m in pcs] == [len(p) for p in clouds]
    assert all(m.point_step == 12 and bytes(m.frame_id).rstrip(b"\0") == b"lidar" for m in pcs)
    assert [bytes(m.tail) for m in pcs] == [p.tobytes() for p in clouds]
    wheels = [m for _, m in got["p/wheel"]]
    for i, w in enumerate(wheels):
        assert w.stamp_ns == 1000 + i
        assert (w.cmd.stamp_ns, w.cmd.linear, w.cmd.angular) == (i, i / 4, -0.5)
        assert list(w.ticks) == [i, -i]
        assert list(w.gains) == [float(i), 0.5, 1.5, float(-i)]
        assert bytes(w.label) == b"wheel\0\0\0"
    assert len(wheels) == n_wheel
    for endpoint in (pc, pi, pp, cmd, imu, cloud):
        endpoint.close()
    assert leftovers(ns) == []


def test_recorder_killed_with_sigkill_leaves_a_file_readable_to_the_last_chunk(
    tmp_mcap: pathlib.Path, ns: str
) -> None:
    cmd = horus.Topic(horus.CmdVel, "k/cmd", depth=1024)
    rec = Recorder(tmp_mcap, ["--chunk-size", "2K", "--compression", "lz4"], ["k/cmd"])
    pub = cmd.publisher()
    sent = 0
    # Publish until several chunks are on disk (behaviour, not time: the file grows).
    deadline = time.monotonic() + PATIENCE
    while tmp_mcap.stat().st_size < 16 * 1024:
        assert time.monotonic() < deadline, "the recorder wrote no chunk"
        for _ in range(50):
            pub.send(horus.CmdVel(stamp_ns=sent, linear=1.0, angular=2.0))
            sent += 1
        time.sleep(0.005)
    rec.kill9()
    data = tmp_mcap.read_bytes()
    assert not data.endswith(b"\x89MCAP0\r\n")  # no footer: really interrupted

    # The stream reader (CRCs validated) yields whole chunks, then stops at the cut.
    stamps: List[int] = []
    with open(tmp_mcap, "rb") as f:
        try:
            for _, _, message in NonSeekingReader(f, validate_crcs=True).iter_messages(log_time_order=False):
                stamps.append(int.from_bytes(message.data[4:12], "little"))
        except (McapError, EOFError):
            pass
    assert len(stamps) > 0
    assert stamps == list(range(len(stamps)))  # a prefix of what was sent, in order

    # horus says where the complete data ends, and `bag repair` turns the
    # prefix into a finished file (summary and indexes) that a seeking reader opens.
    info = subprocess.run([horus_bin(), "bag", "info", str(tmp_mcap)], capture_output=True, text=True)
    assert info.returncode == 1 and str(tmp_mcap) in info.stderr and "offset" in info.stderr, info.stderr
    fixed = tmp_mcap.with_name("fixed.mcap")
    rep = subprocess.run(
        [horus_bin(), "bag", "repair", str(tmp_mcap), "-o", str(fixed)], capture_output=True, text=True
    )
    assert rep.returncode == 0, rep.stderr
    with open(fixed, "rb") as f:
        reader = make_reader(f, validate_crcs=True)
        summary = reader.get_summary()
        assert summary is not None and summary.statistics is not None
        assert summary.statistics.message_count == len(stamps)
        got = [int.from_bytes(m.data[4:12], "little") for _, _, m in reader.iter_messages()]
        assert got == stamps
    pub.close()
    cmd.close()
    assert leftovers(ns) == []
