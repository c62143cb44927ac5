"""A Python subscriber on host B fed by a Rust publisher on host A, through
`horus bridge` on each host (issue 13).

"Two hosts" are two network namespaces joined by a veth pair (addresses
10.232.X.1 and 10.232.X.2, X per run; no multicast, no traffic outside the two
namespaces). Network namespaces share /dev/shm, so each host also has a horus
namespace of its own: nothing reaches B's shared memory except through the
bridges. Only the bridges run inside the network namespaces (`ip netns exec`);
the Rust publisher (`horus-py-peer`, HORUS_PY_PEER) and this test's subscriber
only touch their host's shared memory and run in the root namespace.

The first test lets the topic cross (a publisher of ours on A that never
sends) before the peer publishes and keeps it crossing until B has read all;
the second does what a user would (publish at once, exit when done): A's bridge
joins A's topic only once B's bridge subscribes on the network, and keeps
reading (and B's keeps receiving) for a while after the publisher leaves, so
neither the start nor the end of the stream is lost.

Root is needed to create namespaces: elsewhere the tests are skipped, saying why.
The bridge is the `horus` binary (HORUS_BIN, as for the recording tests; its
default feature `bridge`). Nothing here asserts a time: waits are bounded only
so that a failure cannot hang the run.
"""

from __future__ import annotations

import itertools
import json
import os
import shutil
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Dict, Iterator, List, Optional

import pytest

import horus
from conftest import LineChild, Proc, horus_bin, ip, peer_path
from shm_check import leftovers, rest

# Messages published on A. Every one must reach B, in order.
N = 1000
TOPIC = "base/cmd_vel"
PORT = 7447
# Bound on any wait (discovery takes about a second; the rest is a safety net).
PATIENCE = 60.0
# Both hosts' topics are created here with flow control, so that a slow reader
# holds the publisher back instead of being overwritten. The Rust publisher
# adopts A's topic's policy; B's bridge joins B's topic as a publisher.
RELIABLE: Dict[str, Any] = dict(depth=64, overflow=horus.Overflow.block(30.0))

# Namespace names: `hpy-<pid>-<n>-<a|b>`; a dead pid means a killed run.
PREFIX = "hpy-"
_pairs = itertools.count()


def ip_ok(*args: str) -> None:
    r = ip(*args)
    if r.returncode != 0:
        raise RuntimeError(f"ip {' '.join(args)}: {r.stderr.strip()}")


def remove_stale_namespaces() -> None:
    """Deletes namespaces of earlier runs of this file whose process is gone."""
    for line in ip("netns", "list").stdout.splitlines():
        name = line.split()[0] if line.split() else ""
        pid = name[len(PREFIX) :].split("-")[0] if name.startswith(PREFIX) else ""
        if pid.isdigit() and not os.path.exists(f"/proc/{pid}"):
            ip("netns", "delete", name)


@dataclass
class Host:
    """One network namespace with its end of the link and its horus namespace."""

    netns: str
    interface: str
    addr: str
    namespace: str
    name: str


class Bridge(LineChild):
    """A running `horus --json bridge` inside a host's network namespace; its
    JSON lines (stderr to `log`)."""

    def __init__(self, host: Host, peer: Host, log: Path) -> None:
        self.host = host
        args = [
            "ip", "netns", "exec", host.netns,
            horus_bin(), "--json", "bridge",
            "--host", host.name,
            "--listen", f"tcp/{host.addr}:{PORT}",
            "--connect", f"{peer.addr}:{PORT}",
            "--namespace", host.namespace,
        ]  # fmt: skip
        # `ip netns exec` execs the command: the pid is the bridge's.
        super().__init__(args, log, name=f"bridge of {host.name}", patience=PATIENCE)

    def wait(self, what: str, pred: Callable[[Dict[str, Any]], bool]) -> Dict[str, Any]:
        """The first event (seen or to come) for which `pred` holds."""
        for old in self.seen:
            if old.strip() and pred(json.loads(old)):
                return dict(json.loads(old))
        line = self.wait_line(what, lambda line: bool(line.strip()) and pred(json.loads(line)))
        return dict(json.loads(line))


@dataclass
class TwoHosts:
    a: Host
    b: Host
    tmp: Any
    bridges: List[Bridge] = field(default_factory=list)
    deleted: bool = False

    def bridge(self, host: Host) -> Bridge:
        peer = self.b if host is self.a else self.a
        b = Bridge(host, peer, self.tmp / f"bridge-{host.name}.stderr")
        self.bridges.append(b)
        return b

    def delete(self) -> None:
        """Deletes both namespaces (and so the veth pair); idempotent."""
        if not self.deleted:
            for h in (self.a, self.b):
                ip("netns", "delete", h.netns)
            self.deleted = True

    def exists(self) -> List[str]:
        names = [line.split()[0] for line in ip("netns", "list").stdout.splitlines() if line.split()]
        return [h.netns for h in (self.a, self.b) if h.netns in names]


@pytest.fixture
def hosts(ns: str, tmp_path: Any) -> Iterator[TwoHosts]:
    """Two hosts joined by a veth pair, or a skip saying why they cannot be
    made. Whatever happens in the test, the bridges are stopped, the
    namespaces deleted and both horus namespaces' files removed."""
    if os.geteuid() != 0:
        pytest.skip("network namespaces need root (ip netns add); not running as root")
    if shutil.which("ip") is None:
        pytest.skip("iproute2's `ip` is not installed (make test installs it)")
    remove_stale_namespaces()
    n = next(_pairs)
    base = f"{PREFIX}{os.getpid()}-{n}"
    x = (os.getpid() * 37 + n) % 254 + 1

    def host(letter: str, last: int) -> Host:
        return Host(
            netns=f"{base}-{letter}",
            interface=f"hp{os.getpid()}{letter}",
            addr=f"10.232.{x}.{last}",
            namespace=f"{ns}-{letter}",
            name=f"host-{letter}",
        )

    a, b = host("a", 1), host("b", 2)
    probe = ip("netns", "add", a.netns)
    if probe.returncode != 0:
        ip("netns", "delete", a.netns)  # in case it got half made
        pytest.skip(f"network namespaces cannot be created here: ip netns add: {probe.stderr.strip()}")
    two = TwoHosts(a, b, tmp_path)
    try:
        ip_ok("netns", "add", b.netns)
        # Each end is created directly inside its namespace: nothing appears in ours.
        ip_ok("link", "add", a.interface, "netns", a.netns, "type", "veth",
              "peer", "name", b.interface, "netns", b.netns)  # fmt: skip
        for h in (a, b):
            ip_ok("-n", h.netns, "addr", "add", f"{h.addr}/24", "dev", h.interface)
            ip_ok("-n", h.netns, "link", "set", "lo", "up")
            ip_ok("-n", h.netns, "link", "set", h.interface, "up")
        yield two
    finally:
        for br in two.bridges:
            br.stop()
        two.delete()
        for h in (a, b):
            for f in os.listdir("/dev/shm"):
                if f.startswith(f"horus.{h.namespace}."):
                    os.unlink(os.path.join("/dev/shm", f))


def bridge_status(namespace: str) -> Optional[Dict[str, Any]]:
    """A running bridge's status (`horus bridge --status`), None if none runs."""
    r = subprocess.run(
        [horus_bin(), "--json", "bridge", "--status", "--namespace", namespace],
        capture_output=True,
        text=True,
    )
    value: Dict[str, Any] = json.loads(r.stdout)
    return value if r.returncode == 0 else None


def counters(status: Dict[str, Any], topic: str) -> Dict[str, int]:
    for t in status.get("topics", []):
        if t["name"] == topic:
            c: Dict[str, int] = t["counters"]
            return c
    return {}


def summary(namespace: str) -> str:
    """What a bridge sees and counts, for failure messages."""
    s = bridge_status(namespace)
    if s is None:
        return "not running"
    peers = {p["host"]: {"offers": p["offers"], "wants": p["wants"]} for p in s.get("peers", [])}
    return f"peers {peers}, {TOPIC} counters {counters(s, TOPIC) or 'none'}"


def wait_counters(namespace: str, what: str, pred: Callable[[Dict[str, int]], bool]) -> Dict[str, int]:
    """The bridge's counters of TOPIC once `pred` holds (the status file is
    rewritten periodically, so it may lag what has already happened)."""
    deadline = time.monotonic() + PATIENCE
    last: Optional[Dict[str, Any]] = None
    while time.monotonic() < deadline:
        last = bridge_status(namespace)
        if last is not None and pred(counters(last, TOPIC)):
            return counters(last, TOPIC)
        time.sleep(0.05)
    raise AssertionError(f"{what}: not reached; last status {last}")


def receive_until_last(sub: Any, timeout: float, diagnose: Callable[[], str]) -> List[Any]:
    """Messages until the one stamped N - 1 (whatever went missing before it
    shows when they are compared), each within `timeout` s."""
    got: List[Any] = []
    while not got or got[-1].stamp_ns < N - 1:
        try:
            got.append(sub.recv(timeout=timeout))
        except horus.RecvTimeoutError:
            last = got[-1].stamp_ns if got else None
            raise AssertionError(f"{len(got)} of {N} received (last {last}); {diagnose()}") from None
    return got


def stream_a_to_b(hosts: TwoHosts, procs: List[Proc], *, route_first: bool, timeout: float) -> None:
    """The Rust peer publishes N CmdVel on A; this process's subscriber on B
    must get them all, in order, with their values; then everything stops
    and nothing is left. `route_first`: a publisher of ours on A, which never
    sends, makes the topic cross before the peer starts and keeps it crossing
    after the peer has gone."""
    a, b = hosts.a, hosts.b
    # B: the ordinary subscribe API, in B's horus namespace. A: the topic made
    # reliable before the Rust publisher opens it (it adopts the policy).
    sub = horus.Topic(horus.CmdVel, TOPIC, namespace=b.namespace, **RELIABLE).subscriber()
    topic_a = horus.Topic(horus.CmdVel, TOPIC, namespace=a.namespace, **RELIABLE)

    bridge_a = hosts.bridge(a)
    bridge_b = hosts.bridge(b)
    for br, me, other in ((bridge_a, a, b), (bridge_b, b, a)):
        started = br.wait("its start", lambda e: e.get("event") == "started")
        assert started["namespace"] == me.namespace
        assert started["multicast"] is False
        seen = {"event": "host", "present": True, "what": other.name}
        br.wait(f"{other.name} seen", seen.__eq__)

    held = topic_a.publisher() if route_first else None
    if route_first:
        crossing = {"event": "crossing", "present": True}
        bridge_a.wait("the topic leaving A", lambda e: e == {**crossing, "what": f"{TOPIC} → {b.name}"})
        bridge_b.wait("the topic arriving on B", lambda e: e == {**crossing, "what": f"{TOPIC} ← {a.name}"})

    # The peer waits until a subscriber (A's bridge, once B wants the topic)
    # is on A's topic, then publishes N messages as fast as the flow allows
    # and exits.
    peer = Proc(["env", f"HORUS_NAMESPACE={a.namespace}", peer_path(), "pub", "cmdvel", TOPIC, str(N)])
    procs.append(peer)

    def diagnose() -> str:
        return (
            f"A's bridge: {summary(a.namespace)}, events {bridge_a.seen}; "
            f"B's bridge: {summary(b.namespace)}, events {bridge_b.seen}"
        )

    got = receive_until_last(sub, timeout, diagnose)
    stamps = [m.stamp_ns for m in got]
    missing = sorted(set(range(N)) - set(stamps))
    assert missing == [], f"{len(missing)} of {N} missing on B: {missing[:5]}…{missing[-5:]}; {diagnose()}"
    assert stamps == list(range(N)), "every message once, in order"
    assert [m.linear for m in got] == [i * 0.5 for i in range(N)]
    assert [m.angular for m in got] == [-float(i) for i in range(N)]
    assert sub.try_recv() is None, "nothing more than was published"
    assert sub.stats().overrun == 0

    # On A the only subscriber is the bridge: every send reached it.
    lines = rest(peer)
    assert [line["sent"] for line in lines] == list(range(N))
    assert all(line["subscribers"] == 1 for line in lines), lines[:3]

    # Both bridges' counters reconcile: A read and sent N, B received and
    # published N, nothing lost on the wire or refused anywhere.
    ca = wait_counters(a.namespace, "A's bridge sent everything", lambda c: c.get("sent", 0) >= N)
    cb = wait_counters(b.namespace, "B's bridge published everything", lambda c: c.get("published", 0) >= N)
    assert (ca["read"], ca["sent"], ca["send_failed"]) == (N, N, 0), ca
    assert (cb["received"], cb["wire_lost"], cb["malformed"], cb["schema_refused"]) == (N, 0, 0, 0), cb
    assert (cb["published"], cb["publish_failed"]) == (N, 0), cb
    assert os.path.exists(f"/dev/shm/horus.{a.namespace}.bridge")
    assert os.path.exists(f"/dev/shm/horus.{b.namespace}.bridge")

    # Stop everything: our endpoints, then each bridge by SIGTERM (exit 0,
    # after a last `stopped` event), then the namespaces.
    for endpoint in (sub, held, topic_a):
        if endpoint is not None:
            endpoint.close()
    for br in (bridge_a, bridge_b):
        code = br.stop()
        assert code == 0, f"bridge of {br.host.name} exited {code}: {br.stderr()}"
        br.wait("its stopped event", lambda e: e.get("event") == "stopped")
    hosts.delete()
    assert hosts.exists() == [], "namespaces deleted"
    for h in (a, b):
        assert leftovers(h.namespace) == [], f"{h.name}'s horus namespace left files in /dev/shm"


def test_rust_publisher_on_a_feeds_python_subscriber_on_b(hosts: TwoHosts, procs: List[Proc]) -> None:
    """The topic crosses before the peer publishes and until B has read
    everything."""
    stream_a_to_b(hosts, procs, route_first=True, timeout=PATIENCE)


def test_rust_publisher_sending_at_once_and_leaving_loses_nothing(hosts: TwoHosts, procs: List[Proc]) -> None:
    """As a user would: the subscriber on B, then a publisher on A that sends
    as soon as it sees a subscriber and exits when done. Under `Block` on one
    host this loses nothing; across hosts it must not either."""
    stream_a_to_b(hosts, procs, route_first=False, timeout=10.0)
