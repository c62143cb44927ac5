"""Latched (transient-local) topics from Python: a subscriber in another process that
joins late gets the last N messages, then the live stream (numbers checked: no gap, no
duplicate); ROS 2-typed topics the same; mismatches are QosMismatchError."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from typing import Any, List

import pytest

import horus
from horus.interfaces.std_msgs.msg import String
from shm_check import leftovers

LATE = """
import json, sys
import horus
t = horus.Topic(horus.CmdVel, "static", depth=8,
                durability=horus.Durability.transient_local(3))
s = t.subscriber(busy_poll=True)
print("ready", flush=True)
for line in sys.stdin:
    got = []
    while (m := s.try_recv()) is not None:
        got.append(m.stamp_ns)
    print(json.dumps({"got": got, "overrun": s.stats().overrun}), flush=True)
"""


def _drain(late: "subprocess.Popen[str]") -> Any:
    assert late.stdin is not None and late.stdout is not None
    late.stdin.write("drain\n")
    late.stdin.flush()
    return json.loads(late.stdout.readline())


def test_late_subscriber_process_gets_the_last_n_then_live(ns: str) -> None:
    t = horus.Topic(
        horus.CmdVel, "static", depth=8, durability=horus.Durability.transient_local(3)
    )
    assert t.durability == horus.Durability.transient_local(3)
    assert t.durability.kind == "transient_local"
    pub = t.publisher()
    for n in range(1, 11):
        pub.send(horus.CmdVel(stamp_ns=n))
    late = subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(LATE)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert late.stdout is not None and late.stdin is not None
        assert late.stdout.readline().strip() == "ready"
        assert _drain(late) == {"got": [8, 9, 10], "overrun": 0}
        for n in range(11, 14):
            pub.send(horus.CmdVel(stamp_ns=n))
        assert _drain(late) == {"got": [11, 12, 13], "overrun": 0}
        late.stdin.close()
        assert late.wait(timeout=30) == 0
    finally:
        if late.poll() is None:
            late.kill()
            late.wait()
        for f in (late.stdin, late.stdout, late.stderr):
            if f is not None:
                f.close()
    pub.close()
    t.close()
    assert leftovers(ns) == []


def test_fewer_than_n_published_and_volatile_unchanged() -> None:
    t = horus.Topic(horus.CmdVel, "few", durability=horus.Durability.transient_local(4))
    pub = t.publisher()
    pub.send(horus.CmdVel(stamp_ns=1))
    pub.send(horus.CmdVel(stamp_ns=2))
    late = t.subscriber(busy_poll=True)
    assert [late.recv(timeout=5.0).stamp_ns for _ in range(2)] == [1, 2]
    assert late.try_recv() is None
    v = horus.Topic(horus.CmdVel, "volatile")
    assert v.durability == horus.Durability.VOLATILE
    vp = v.publisher()
    vp.send(horus.CmdVel(stamp_ns=1))
    assert v.subscriber(busy_poll=True).try_recv() is None
    # An observer may still ask for what the ring holds.
    oldest = v.observer(busy_poll=True, start="oldest")
    assert oldest.recv(timeout=5.0).stamp_ns == 1
    skip = t.subscriber(busy_poll=True, start="next")
    assert skip.try_recv() is None


def test_durability_mismatch_and_bad_values_are_errors() -> None:
    # Kept open: a topic nobody holds is removed.
    kept = horus.Topic(horus.CmdVel, "m", durability=horus.Durability.transient_local(2))
    assert kept.durability.depth == 2
    with pytest.raises(horus.QosMismatchError):
        horus.Topic(horus.CmdVel, "m", durability=horus.Durability.VOLATILE)
    # Left unset: adopted.
    assert horus.Topic(horus.CmdVel, "m").durability.depth == 2
    with pytest.raises(horus.TopicError):
        horus.Topic(horus.CmdVel, "deep", depth=4, durability=horus.Durability.transient_local(5))
    with pytest.raises(ValueError):
        horus.Durability.transient_local(0)
    t = horus.Topic(horus.CmdVel, "s")
    with pytest.raises(ValueError):
        t.subscriber(start="yesterday")


def test_ros_topic_late_subscriber_gets_the_latched_messages() -> None:
    t = horus.RosTopic(String, "robot_description", durability=horus.Durability.transient_local(1))
    assert t.durability.depth == 1
    pub = t.publisher()
    pub.send(String(data="<robot/>"))
    pub.send(String(data="<robot name='r2'/>"))
    late = t.subscriber()
    assert late.recv(timeout=5.0).data == "<robot name='r2'/>"
    with pytest.raises(horus.QosMismatchError):
        horus.RosTopic(String, "robot_description", durability=horus.Durability.VOLATILE)
    got: List[str] = []
    obs = t.observer(start="next")
    pub.send(String(data="live"))
    got.append(obs.recv(timeout=5.0).data)
    assert got == ["live"]
