"""`horus foxglove` checked with an independent Foxglove WebSocket client.

The bridge runs as a separate process (the `horus` binary, HORUS_BIN as for
the recording tests) observing topics this test publishes on. Clients speak
the `foxglove.websocket.v1` protocol with the `websockets` package (and, for
the client that never reads, over a raw socket): serverInfo, advertisements,
subscribe, binary messageData frames decoded and compared with what was
published; a child process's log records on the `/log` channel
(foxglove.Log); the access checks of the CLI (a foreign web page's origin
refused, `--token-file`, the warning when listening beyond loopback without a
token). Nothing here asserts a time.
"""

from __future__ import annotations

import base64
import json
import os
import queue
import socket
import struct
import subprocess
import sys
import threading
import time
from typing import Any, Callable, Dict, Iterator, List, Optional, Tuple

import numpy as np
import pytest
from websockets.sync.client import ClientConnection, connect

import horus
from conftest import horus_bin

PATIENCE = 60.0
SUBPROTOCOL = "foxglove.websocket.v1"


class Bridge:
    """A running `horus --json foxglove --port 0`; its JSON lines in a queue."""

    def __init__(self, args: Tuple[str, ...] = ()) -> None:
        self.p = subprocess.Popen(
            [horus_bin(), "--json", "foxglove", "--port", "0", *args],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        self.lines: "queue.Queue[Dict[str, Any]]" = queue.Queue()
        self.seen: List[Dict[str, Any]] = []
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()
        first = self.wait(lambda e: e.get("event") == "listening")
        self.url = f"ws://{first['address']}"
        self.address = first["address"]

    def _read(self) -> None:
        assert self.p.stdout is not None
        for line in self.p.stdout:
            self.lines.put(json.loads(line))

    def wait(self, pred: Callable[[Dict[str, Any]], bool]) -> Dict[str, Any]:
        for e in self.seen:
            if pred(e):
                return e
        deadline = time.monotonic() + PATIENCE
        while time.monotonic() < deadline:
            try:
                e = self.lines.get(timeout=0.1)
            except queue.Empty:
                if self.p.poll() is not None:
                    raise RuntimeError(f"bridge exited: {self.p.stderr.read() if self.p.stderr else ''}")
                continue
            self.seen.append(e)
            if pred(e):
                return e
        raise TimeoutError("bridge never printed the expected event")

    def channel_id(self, topic: str) -> int:
        return int(self.wait(lambda e: e.get("event") == "advertised" and e["topic"] == topic)["id"])

    def stop(self) -> None:
        self.p.terminate()
        self.p.wait(timeout=PATIENCE)
        self.reader.join(PATIENCE)
        for f in (self.p.stdout, self.p.stderr):
            if f is not None:
                f.close()


@pytest.fixture
def bridge() -> Iterator[Bridge]:
    b = Bridge()
    yield b
    b.stop()


def open_client(b: Bridge) -> ClientConnection:
    ws = connect(b.url, subprotocols=[SUBPROTOCOL], max_size=None, open_timeout=PATIENCE)  # type: ignore[list-item]
    assert ws.subprotocol == SUBPROTOCOL
    return ws


class Channels:
    """What a client learnt from the server's text messages."""

    def __init__(self, ws: ClientConnection) -> None:
        self.ws = ws
        self.by_topic: Dict[str, Dict[str, Any]] = {}
        self.gone: List[int] = []
        self.info: Optional[Dict[str, Any]] = None

    def take(self, msg: Any) -> Optional[bytes]:
        """Records a text message; returns a binary one."""
        if isinstance(msg, bytes):
            return msg
        m = json.loads(msg)
        if m["op"] == "serverInfo":
            self.info = m
        elif m["op"] == "advertise":
            for c in m["channels"]:
                self.by_topic[c["topic"]] = c
        elif m["op"] == "unadvertise":
            self.gone.extend(m["channelIds"])
        return None

    def until(self, pred: Callable[[], bool]) -> None:
        deadline = time.monotonic() + PATIENCE
        while not pred():
            assert time.monotonic() < deadline, "the server never sent what was expected"
            try:
                self.take(self.ws.recv(timeout=0.1))
            except TimeoutError:
                pass


def subscribe(ws: ClientConnection, subs: List[Tuple[int, int]]) -> None:
    ws.send(json.dumps({"op": "subscribe", "subscriptions": [{"id": s, "channelId": c} for s, c in subs]}))


def message_data(frame: bytes) -> Tuple[int, int, bytes]:
    op, sub, log_time = struct.unpack_from("<BIQ", frame)
    assert op == 1
    return sub, log_time, frame[13:]


def make_scan(seq: int) -> horus.Message:
    scan = horus.LaserScan(stamp_ns=1_000_000_000 * seq + 7, angle_min=-1.5, angle_max=1.5, num_ranges=90)
    scan.ranges[:90] = np.linspace(0.5, 9.5, 90, dtype=np.float32) + np.float32(seq)
    return scan


def make_cloud(seq: int, n: int = 1000) -> Tuple[horus.Message, np.ndarray]:
    pts = (np.arange(n * 4, dtype=np.float32).reshape(n, 4) + seq).astype(np.float32)
    cloud = horus.PointCloud(num_points=n, point_step=16, seq=seq, stamp_ns=seq + 11)
    cloud.frame_id = "lidar"
    return cloud, pts


def test_scan_and_cloud_are_advertised_with_foxglove_schemas_and_decode_to_what_was_published(
    bridge: Bridge,
) -> None:
    scan_t = horus.Topic(horus.LaserScan, "fx/scan")
    cloud_t = horus.Topic(horus.PointCloud, "fx/cloud")
    scan_pub, cloud_pub = scan_t.publisher(), cloud_t.publisher()
    with open_client(bridge) as ws:
        ch = Channels(ws)
        ch.until(lambda: ch.info is not None and {"fx/scan", "fx/cloud"} <= set(ch.by_topic))
        assert ch.info is not None and ch.info["name"] == "horus"
        scan_ch, cloud_ch = ch.by_topic["fx/scan"], ch.by_topic["fx/cloud"]
        assert (scan_ch["schemaName"], scan_ch["encoding"], scan_ch["schemaEncoding"]) == (
            "foxglove.LaserScan", "json", "jsonschema")
        assert cloud_ch["schemaName"] == "foxglove.PointCloud"
        json.loads(scan_ch["schema"])  # a JSON schema
        subscribe(ws, [(10, scan_ch["id"]), (20, cloud_ch["id"])])
        published_scans: Dict[int, horus.Message] = {}
        published_clouds: Dict[int, np.ndarray] = {}
        got: Dict[int, Dict[str, Any]] = {}
        seq = 0
        deadline = time.monotonic() + PATIENCE
        # Publish until one message of each arrived (the bridge starts observing on subscribe).
        while not (10 in got and 20 in got):
            assert time.monotonic() < deadline, "no scan or cloud arrived"
            seq += 1
            scan = make_scan(seq)
            scan_pub.send(scan)
            published_scans[scan.stamp_ns] = scan
            cloud, pts = make_cloud(seq)
            with cloud_pub.loan(cloud) as c:
                c.tail[:] = pts.reshape(-1).view(np.uint8)
            published_clouds[seq + 11] = pts
            try:
                while True:
                    frame = ch.take(ws.recv(timeout=0.05))
                    if frame is not None:
                        sub, _, payload = message_data(frame)
                        got[sub] = json.loads(payload)
            except TimeoutError:
                pass
        s = got[10]
        stamp = s["timestamp"]["sec"] * 1_000_000_000 + s["timestamp"]["nsec"]
        sent = published_scans[stamp]
        assert s["start_angle"] == pytest.approx(-1.5) and s["end_angle"] == pytest.approx(1.5)
        assert np.array_equal(np.array(s["ranges"], dtype=np.float32), sent.ranges[:90])
        c = got[20]
        stamp = c["timestamp"]["sec"] * 1_000_000_000 + c["timestamp"]["nsec"]
        assert c["frame_id"] == "lidar" and c["point_stride"] == 16
        assert [f["name"] for f in c["fields"]] == ["x", "y", "z", "intensity"]
        assert all(f["type"] == 7 for f in c["fields"])  # FLOAT32
        data = np.frombuffer(base64.b64decode(c["data"]), dtype=np.float32).reshape(-1, 4)
        assert np.array_equal(data, published_clouds[stamp])


def test_a_new_topic_is_advertised_and_decodes_as_cdr_and_a_removed_one_unadvertised(bridge: Bridge) -> None:
    with open_client(bridge) as ws:
        ch = Channels(ws)
        ch.until(lambda: ch.info is not None)
        late = horus.Topic(horus.CmdVel, "fx/late")
        pub = late.publisher()
        ch.until(lambda: "fx/late" in ch.by_topic)
        c = ch.by_topic["fx/late"]
        assert (c["encoding"], c["schemaEncoding"]) == ("cdr", "ros2msg")
        assert "float32" in c["schema"]
        subscribe(ws, [(1, c["id"])])
        frame = None
        deadline = time.monotonic() + PATIENCE
        while frame is None:
            assert time.monotonic() < deadline
            pub.send(horus.CmdVel(stamp_ns=42, linear=0.5, angular=-0.25))
            try:
                frame = ch.take(ws.recv(timeout=0.05))
            except TimeoutError:
                pass
        _, _, cdr = message_data(frame)
        assert cdr[:4] == b"\x00\x01\x00\x00"  # CDR little-endian header
        assert struct.unpack_from("<Qff", cdr, 4) == (42, 0.5, -0.25)
        # The bridge observes a topic only while someone subscribes; once the last
        # participant leaves, the segment is gone and the channel unadvertised.
        ws.send(json.dumps({"op": "unsubscribe", "subscriptionIds": [1]}))
        pub.close()
        late.close()
        ch.until(lambda: c["id"] in ch.gone)


def lazy_client(address: str, channel: int) -> socket.socket:
    """A client that subscribes and then never reads (raw socket, tiny receive buffer)."""
    host, port = address.rsplit(":", 1)
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    s.connect((host, int(port)))
    key = base64.b64encode(os.urandom(16)).decode()
    s.sendall(
        (f"GET / HTTP/1.1\r\nHost: {address}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
         f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n"
         f"Sec-WebSocket-Protocol: {SUBPROTOCOL}\r\n\r\n").encode()
    )
    head = b""
    while b"\r\n\r\n" not in head:
        head += s.recv(1)
    assert b" 101 " in head.split(b"\r\n")[0]
    payload = json.dumps({"op": "subscribe", "subscriptions": [{"id": 1, "channelId": channel}]}).encode()
    mask = os.urandom(4)
    assert len(payload) < 126
    s.sendall(bytes([0x81, 0x80 | len(payload)]) + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(payload)))
    return s


def test_a_client_that_never_reads_drops_for_itself_and_never_slows_the_publisher(bridge: Bridge) -> None:
    t = horus.Topic(horus.PointCloud, "fx/big", max_tail_bytes=1 << 20)
    # Our subscriber does not read during the run (DropOldest): every message is delivered
    # to it, and it keeps the loaned chunks pinned until overwritten (an observer cannot read
    # a loaned message once every subscriber released it; docs/foxglove.md, limits).
    pub, sub = t.publisher(), t.subscriber()
    cid = bridge.channel_id("fx/big")
    lazy = lazy_client(bridge.address, cid)
    bridge.wait(lambda e: e.get("event") == "connected")
    with open_client(bridge) as ws:
        ch = Channels(ws)
        ch.until(lambda: "fx/big" in ch.by_topic)
        subscribe(ws, [(5, cid)])
        received: List[int] = []
        stop = threading.Event()

        def read() -> None:
            while not stop.is_set():
                try:
                    frame = ch.take(ws.recv(timeout=0.1))
                except TimeoutError:
                    continue
                if frame is not None:
                    received.append(json.loads(message_data(frame)[2])["timestamp"]["nsec"])

        reader = threading.Thread(target=read)
        reader.start()
        n = (1 << 20) // 16
        pts = np.ones((n, 4), dtype=np.float32)
        seq = 0
        deadline = time.monotonic() + PATIENCE
        lazy_name = "127.0.0.1:%d" % lazy.getsockname()[1]
        dropped: Optional[Dict[str, Any]] = None
        while dropped is None:
            assert time.monotonic() < deadline, "the lazy client never dropped"
            seq += 1
            with pub.loan(horus.PointCloud(num_points=n, point_step=16, seq=seq, stamp_ns=seq)) as c:
                c.tail[:] = pts.reshape(-1).view(np.uint8)
            try:
                e = bridge.lines.get_nowait()
                bridge.seen.append(e)
                if e.get("event") == "dropped" and e["client"] == lazy_name:
                    dropped = e
            except queue.Empty:
                time.sleep(0.005)
        assert dropped["topic"] == "fx/big" and dropped["dropped"] > 0
        stats = pub.stats()
        assert stats.sent == seq and stats.undelivered == 0 and stats.rejected == 0
        assert stats.subscribers == 1  # the bridge is not counted
        assert sub.try_recv() is not None
        # The reading client still gets the newest messages.
        final = seq + 1_000_000
        deadline = time.monotonic() + PATIENCE
        while final not in received:
            assert time.monotonic() < deadline, "the reading client stopped receiving"
            with pub.loan(horus.PointCloud(num_points=n, point_step=16, seq=final, stamp_ns=final)) as c:
                c.tail[:] = pts.reshape(-1).view(np.uint8)
            time.sleep(0.05)
        stop.set()
        reader.join()
    lazy.close()
    for endpoint in (pub, sub, t):
        endpoint.close()


LOG_CHILD = """
import logging, sys, threading, time
import horus
log = logging.getLogger("py.fox")
log.setLevel(logging.INFO)
log.addHandler(horus.HorusHandler())
done = threading.Event()
threading.Thread(target=lambda: (sys.stdin.readline(), done.set()), daemon=True).start()
print("ready", flush=True)
i = 0
while not done.is_set():
    log.warning("beat %d", i)
    i += 1
    time.sleep(0.01)
"""


def test_a_client_subscribed_to_log_receives_what_a_child_process_logs(bridge: Bridge, ns: str) -> None:
    with open_client(bridge) as ws:
        ch = Channels(ws)
        ch.until(lambda: "/log" in ch.by_topic)
        c = ch.by_topic["/log"]
        assert (c["schemaName"], c["encoding"], c["schemaEncoding"]) == ("foxglove.Log", "json", "jsonschema")
        props = json.loads(c["schema"])["properties"]
        subscribe(ws, [(9, c["id"])])
        env = dict(os.environ, HORUS_LOG_CONSOLE="0")
        child = subprocess.Popen(
            [sys.executable, "-c", LOG_CHILD], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env
        )
        try:
            assert child.stdout is not None and child.stdout.readline().strip() == "ready"
            frame = None
            deadline = time.monotonic() + PATIENCE
            while frame is None:
                assert time.monotonic() < deadline, "no log record arrived"
                try:
                    frame = ch.take(ws.recv(timeout=0.1))
                except TimeoutError:
                    pass
            sub, log_time, payload = message_data(frame)
            assert sub == 9
            m = json.loads(payload)
            assert set(m) == set(props)
            assert m["message"].startswith("beat ")
            assert m["level"] == 3  # WARNING
            assert m["name"].startswith("py.fox (") and m["name"].endswith(f"[{child.pid}])")
            assert log_time == m["timestamp"]["sec"] * 1_000_000_000 + m["timestamp"]["nsec"]
        finally:
            assert child.stdin is not None
            child.stdin.close()
            child.wait(timeout=PATIENCE)
            if child.stdout is not None:
                child.stdout.close()
    assert not [f for f in os.listdir("/dev/shm") if f.startswith(f"horus.{ns}.log.")]


def raw_upgrade(address: str, path: str = "/", headers: Optional[Dict[str, str]] = None) -> Tuple[int, bytes]:
    """A WebSocket upgrade request over a raw socket (any headers, as a browser page would
    send them); returns the HTTP status and, for a refusal, the whole answer."""
    host, port = address.rsplit(":", 1)
    with socket.create_connection((host, int(port)), timeout=PATIENCE) as s:
        key = base64.b64encode(os.urandom(16)).decode()
        lines = [
            f"GET {path} HTTP/1.1", f"Host: {address}", "Upgrade: websocket", "Connection: Upgrade",
            f"Sec-WebSocket-Key: {key}", "Sec-WebSocket-Version: 13", f"Sec-WebSocket-Protocol: {SUBPROTOCOL}",
        ] + [f"{k}: {v}" for k, v in (headers or {}).items()]
        s.sendall(("\r\n".join(lines) + "\r\n\r\n").encode())
        answer = b""
        while b"\r\n\r\n" not in answer:
            chunk = s.recv(4096)
            if not chunk:
                break
            answer += chunk
        status = int(answer.split(b" ", 2)[1])
        if status != 101:
            while True:
                chunk = s.recv(4096)
                if not chunk:
                    break
                answer += chunk
        return status, answer


def test_a_foreign_web_page_is_refused_and_a_token_file_is_required(tmp_path: Any) -> None:
    secret = "e3b0c44298fc1c149afbf4c8996fb924"
    token_file = tmp_path / "token"
    token_file.write_text(secret + "\n")
    token_file.chmod(0o600)
    b = Bridge(("--token-file", str(token_file)))
    try:
        assert b.wait(lambda e: e.get("event") == "listening")["token"] is True
        status, answer = raw_upgrade(b.address)
        assert status == 401 and b"token is required" in answer
        b.wait(lambda e: e.get("event") == "refused" and e["kind"] == "token_missing")
        status, answer = raw_upgrade(b.address, f"/?token={secret}", {"Origin": "https://evil.example"})
        assert status == 403 and b"https://evil.example" in answer
        b.wait(lambda e: e.get("event") == "refused" and e["kind"] == "origin")
        status, _ = raw_upgrade(b.address, f"/?token={secret}", {"Origin": "https://app.foxglove.dev"})
        assert status == 101
        # A real client with the token in the URL, as the Foxglove app connects.
        with connect(f"{b.url}/?token={secret}", subprotocols=[SUBPROTOCOL], open_timeout=PATIENCE) as ws:  # type: ignore[list-item]
            ch = Channels(ws)
            ch.until(lambda: ch.info is not None)
    finally:
        b.stop()
    assert all(secret not in json.dumps(e) for e in b.seen)


def test_listening_beyond_loopback_without_a_token_warns() -> None:
    b = Bridge(("--address", "0.0.0.0"))
    try:
        w = b.wait(lambda e: e.get("event") == "warning")
        assert "without a token" in w["message"]
    finally:
        b.stop()
