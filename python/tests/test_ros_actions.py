"""ROS-typed actions from Python (``horus.RosActionServer`` / ``RosActionClient``, also
reached as ``horus.ActionServer(Action, name)``): a server in another Python process
serves the test package's ``horus_action_test/action/Fetch`` (strings and sequences in
goal, feedback and result; crates/horus-actions/tests/horus_action_test, the package the
Rust tests use) on ROS 2's endpoints; this process sends goals, reads feedback and
results, cancels, and sends hostile and oversized data. The vendored
``tf2_msgs/action/LookupTransform`` goes end to end within one process.
"""

from __future__ import annotations

import pathlib
import threading
from typing import Any, Iterator, List

import numpy as np
import pytest

import horus
from horus.interfaces.tf2_msgs.action import LookupTransform
from shm_check import leftovers

T = 10.0
PACKAGE = pathlib.Path(__file__).resolve().parents[2] / "crates/horus-actions/tests/horus_action_test"

SERVER = f"""
import json
import horus, horus.interfaces
horus.interfaces.load_package("horus_action_test", {str(PACKAGE)!r})
from horus.interfaces.horus_action_test.action import Fetch
s = horus.ActionServer(Fetch, "fetch")
print("ready", flush=True)
held = {{}}
while True:
    g = s.next_goal(timeout=0.001)
    if g is not None:
        goal = g.goal
        if goal.shelf == "reject":
            s.reject(g)
            print(json.dumps({{"malformed": s.malformed()[0]}}), flush=True)
            break
        gid = s.accept(g)
        s.execute(gid)
        if goal.shelf == "hold":
            held[gid] = 0
        elif goal.shelf == "huge":
            try:
                s.publish_feedback(gid, Fetch.Feedback(current="x" * (1 << 20)))
            except horus.ActionError as e:
                print(json.dumps({{"huge_feedback": type(e).__name__}}), flush=True)
            s.abort(gid, Fetch.Result(summary="too big"))
        else:
            for i, item in enumerate(goal.items):
                s.publish_feedback(gid, Fetch.Feedback(current=item, progress=[float(k) for k in range(i + 1)]))
            s.succeed(gid, Fetch.Result(summary="%d from %s" % (len(goal.items), goal.shelf),
                                        fetched=list(goal.items), counts=[goal.repeat] * len(goal.items)))
    for gid in s.take_cancel_requests():
        n = held.pop(gid)
        s.canceled(gid, Fetch.Result(summary="canceled", counts=[n]))
    for gid in held:
        held[gid] += 1
        s.publish_feedback(gid, Fetch.Feedback(current="tick %d" % held[gid]))
"""


@pytest.fixture(autouse=True)
def nothing_left(ns: str, procs: List[Any]) -> Iterator[None]:
    yield
    for p in procs:
        p.kill()
    assert leftovers(ns) == []


@pytest.fixture(scope="module")
def fetch() -> Any:
    import horus.interfaces

    if "horus_action_test" not in horus.interfaces.TYPES.packages():
        horus.interfaces.load_package("horus_action_test", PACKAGE)
    from horus.interfaces.horus_action_test.action import Fetch  # type: ignore[import-not-found]

    return Fetch


def test_a_python_server_in_another_process_serves_strings_and_sequences(
    python: Any, fetch: Any
) -> None:
    client = horus.ActionClient(fetch, "fetch")
    assert isinstance(client, horus.RosActionClient)
    with pytest.raises(horus.ActionNoServerError):
        client.send_goal(fetch.Goal(shelf="a"), timeout=T)
    server = python(SERVER)

    items = [f"item-{i}-" + "ü" * i for i in range(40)]
    weights = np.arange(40, dtype=np.float64) * 0.5
    h = client.send_goal(fetch.Goal(shelf="shelf 7", items=items, weights=weights, repeat=3), timeout=T)
    status, result = h.result(timeout=T)
    assert status == horus.GoalStatus.SUCCEEDED
    assert result.summary == "40 from shelf 7"
    assert result.fetched == items
    assert list(result.counts) == [3] * 40
    fb = h.feedback_all()
    assert [f.current for f in fb] == items
    assert list(fb[39].progress) == [float(k) for k in range(40)]
    assert h.status == horus.GoalStatus.SUCCEEDED

    # Cancel: acknowledged, then canceled with a partial result.
    h = client.send_goal(fetch.Goal(shelf="hold"), timeout=T)
    import time

    deadline = time.monotonic() + T
    while (first := h.feedback()) is None:
        assert time.monotonic() < deadline, "no feedback"
        time.sleep(0.001)
    assert first.current.startswith("tick ")
    assert h.cancel(timeout=T) == horus.GoalStatus.CANCELING
    status, result = h.result(timeout=T)
    assert (status, result.summary) == (horus.GoalStatus.CANCELED, "canceled")
    assert result.counts[0] >= 1
    assert h.cancel(timeout=T) == horus.GoalStatus.CANCELED

    # A goal that breaks its type's rules: CdrEncodeError, nothing sent.
    with pytest.raises(horus.CdrEncodeError):
        client.send_goal(fetch.Goal(shelf="a\0b"), timeout=T)
    with pytest.raises(TypeError):
        client.send_goal(LookupTransform.Goal(), timeout=T)

    # Feedback over the topic's 1 MiB: a typed error on the server; the goal is aborted.
    h = client.send_goal(fetch.Goal(shelf="huge"), timeout=T)
    assert h.result(timeout=T) == (horus.GoalStatus.ABORTED, fetch.Result(summary="too big"))
    assert server.line() == {"huge_feedback": "ActionError"}

    # Hostile goal bytes (a huge string length, a truncated goal): rejected and counted
    # by the server, which goes on.
    raw = horus._horus.RosActionClient(
        [(c.ros_type_name(), c.ros_type_hash(), c.ros_definition()) for c in (
            fetch.SendGoal.Request, fetch.SendGoal.Response, fetch.GetResult.Request,
            fetch.GetResult.Response, fetch.FeedbackMessage)],
        "fetch",
    )
    good = fetch.Goal(shelf="s", items=["a", "b"]).to_cdr()
    for hostile in (b"\x00\x01\x00\x00\xff\xff\xff\xff", good[:20]):
        with pytest.raises(horus.GoalRejectedError):
            raw.send_goal(hostile, timeout=T)
    with pytest.raises(horus.UnknownGoalError):
        client.handle(42).result(timeout=T)

    with pytest.raises(horus.GoalRejectedError):
        client.send_goal(fetch.Goal(shelf="reject"), timeout=T)
    assert server.line() == {"malformed": 2}
    server.p.wait(timeout=T)
    assert server.p.returncode == 0
    client.close()
    raw.close()


def test_lookup_transform_goes_end_to_end_within_python() -> None:
    server = horus.RosActionServer(LookupTransform, "tf_lookup")
    client = horus.RosActionClient(LookupTransform, "tf_lookup")
    stop = threading.Event()

    def run() -> None:
        while not stop.is_set():
            g = server.next_goal(timeout=0.01)
            if g is not None:
                gid = server.accept(g)
                server.execute(gid)
                r = LookupTransform.Result()
                r.transform.header.frame_id = g.goal.target_frame
                r.transform.child_frame_id = g.goal.source_frame
                server.succeed(gid, r)

    t = threading.Thread(target=run)
    t.start()
    try:
        h = client.send_goal(LookupTransform.Goal(target_frame="map", source_frame="base_link"), timeout=T)
        status, result = h.result(timeout=T)
        assert status == horus.GoalStatus.SUCCEEDED
        assert (result.transform.header.frame_id, result.transform.child_frame_id) == ("map", "base_link")
        with pytest.raises(TypeError):
            server.succeed(h.id, LookupTransform.Goal())
    finally:
        stop.set()
        t.join()
        client.close()
        server.close()
