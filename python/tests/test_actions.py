"""Actions from Python: within Python, across languages (Python client →
Rust server, Rust client → Python server) and the failure cases: no server,
the server killed while a result is awaited, timeout, reject, cancel, wrong
types, invalid transitions, Ctrl-C during a wait.

The action is "drive": goal Pose2D, feedback Vector3, result Pose2D. The
Rust side is `horus-py-peer action-serve|action-call` (crates/horus-py/src/
bin/peer/action.rs); `DriveNode` below behaves like its server: a goal with
x < 0 is rejected, else mode y = 0 sends feedback 1..x then succeeds with
x, mode 1 (or 3) runs until canceled (result x = 0.5), mode 2 aborts
(x = -1). The Rust client cancels a goal of mode 1 at once, and waits for
the result of the others.
"""

from __future__ import annotations

import os
import signal
import threading
import time
from typing import Any, Iterator, List

import pytest

import horus
from horus import GoalStatus
from shm_check import leftovers, rest

T = 10.0


@pytest.fixture(autouse=True)
def nothing_left(ns: str, procs: List[Any]) -> Iterator[None]:
    yield
    for p in procs:
        p.kill()
    assert leftovers(ns) == []


def drive_client(**kw: Any) -> "horus.ActionClient[Any, Any, Any]":
    return horus.ActionClient(horus.Pose2D, horus.Vector3, horus.Pose2D, "drive", **kw)


def drive_server(**kw: Any) -> "horus.ActionServer[Any, Any, Any]":
    return horus.ActionServer(horus.Pose2D, horus.Vector3, horus.Pose2D, "drive", **kw)


class DriveNode:
    """A Python action server ticked from a thread, like the Rust peer's."""

    def __init__(self, **kw: Any) -> None:
        self.server = drive_server(**kw)
        self.slow: List[int] = []
        self.goals: List[Any] = []
        self.cancels = 0
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self.run)
        self.thread.start()

    def run(self) -> None:
        s = self.server
        while not self.stop.is_set():
            g = s.next_goal(timeout=0.01)
            if g is not None:
                self.goals.append(g.goal)
                if g.goal.x < 0:
                    s.reject(g)
                else:
                    gid = s.accept(g)
                    s.execute(gid)
                    mode = int(g.goal.y)
                    if mode in (1, 3):
                        self.slow.append(gid)
                    elif mode == 2:
                        s.abort(gid, horus.Pose2D(x=-1.0))
                    else:
                        for k in range(1, int(g.goal.x) + 1):
                            s.publish_feedback(gid, horus.Vector3(x=float(k)))
                        s.succeed(gid, horus.Pose2D(x=g.goal.x, theta=g.goal.theta))
            for gid in s.take_cancel_requests():
                self.cancels += 1
                if gid in self.slow:
                    s.canceled(gid, horus.Pose2D(x=0.5))

    def close(self) -> None:
        self.stop.set()
        self.thread.join()
        # pytest keeps fixture values until after every teardown: let go of
        # the server's segments now.
        self.server.close()


@pytest.fixture
def node() -> Iterator[DriveNode]:
    n = DriveNode()
    yield n
    n.close()


# --- within Python ----------------------------------------------------------


def test_goal_feedback_and_result(node: DriveNode) -> None:
    client = drive_client()
    h = client.send_goal(horus.Pose2D(x=3.0, theta=0.25), timeout=T)
    assert h.id > 0 and h.status in (GoalStatus.ACCEPTED, GoalStatus.EXECUTING, GoalStatus.SUCCEEDED)
    status, result = h.result(timeout=T)
    assert status is GoalStatus.SUCCEEDED and status.is_terminal
    assert (result.x, result.theta) == (3.0, 0.25)
    assert [f.x for f in h.feedback_all()] == [1.0, 2.0, 3.0]
    assert h.feedback() is None
    assert h.status is GoalStatus.SUCCEEDED
    # The result stays available, also from a handle made from the id.
    assert client.handle(h.id).result(timeout=T).result.x == 3.0


def test_several_goals_and_feedback_ignored(node: DriveNode) -> None:
    client = drive_client()
    handles = [client.send_goal(horus.Pose2D(x=float(i)), timeout=T) for i in range(1, 4)]
    assert len({h.id for h in handles}) == 3
    # Results in any order; feedback never read.
    assert [h.result(timeout=T).result.x for h in reversed(handles)] == [3.0, 2.0, 1.0]


def test_reject(node: DriveNode) -> None:
    with drive_client() as client, pytest.raises(horus.GoalRejectedError) as e:
        client.send_goal(horus.Pose2D(x=-1.0), timeout=T)
    assert isinstance(e.value, horus.ActionError)
    assert e.value.action == "drive" and e.value.goal_id > 0


def test_cancel_then_canceled(node: DriveNode) -> None:
    h = drive_client().send_goal(horus.Pose2D(x=1.0, y=1.0), timeout=T)
    assert h.cancel(timeout=T) is GoalStatus.CANCELING
    assert h.result(timeout=T) == (GoalStatus.CANCELED, horus.Pose2D(x=0.5))
    # Canceling a finished goal reports its final status.
    assert h.cancel(timeout=T) is GoalStatus.CANCELED
    assert node.cancels == 1


def test_abort(node: DriveNode) -> None:
    h = drive_client().send_goal(horus.Pose2D(x=1.0, y=2.0), timeout=T)
    assert h.result(timeout=T) == (GoalStatus.ABORTED, horus.Pose2D(x=-1.0))


def test_result_timeout_leaves_the_goal_running(node: DriveNode) -> None:
    h = drive_client().send_goal(horus.Pose2D(x=1.0, y=1.0), timeout=T)
    with pytest.raises(horus.ActionTimeoutError):
        h.result(timeout=0.3)
    assert h.status is GoalStatus.EXECUTING
    h.cancel(timeout=T)
    assert h.result(timeout=T).status is GoalStatus.CANCELED


def test_no_server() -> None:
    client = drive_client()
    with pytest.raises(horus.ActionNoServerError):
        client.send_goal(horus.Pose2D(x=1.0), timeout=30)


def test_unknown_goal(node: DriveNode) -> None:
    with drive_client() as client, pytest.raises(horus.UnknownGoalError) as e:
        client.handle(12345).result(timeout=T)
    assert e.value.goal_id == 12345


def test_wrong_types_are_refused(node: DriveNode) -> None:
    other = horus.ActionClient(horus.Vector3, horus.Vector3, horus.Pose2D, "drive")
    with pytest.raises(horus.ActionTypeError):
        other.send_goal(horus.Vector3(x=1.0), timeout=T)
    with pytest.raises(TypeError):
        drive_client().send_goal(horus.Vector3(x=1.0))
    with pytest.raises(ValueError, match="fixed-size"):
        horus.ActionClient(horus.PointCloud, horus.Vector3, horus.Pose2D, "drive")


def test_server_transitions_and_states() -> None:
    server = drive_server()
    client = drive_client()
    done = threading.Event()
    handles: List[Any] = []

    def send() -> None:
        handles.append(client.send_goal(horus.Pose2D(x=1.0), timeout=T))
        done.set()

    t = threading.Thread(target=send)
    t.start()
    g = server.next_goal(timeout=T)
    assert g is not None and g.goal.x == 1.0
    gid = server.accept(g)
    t.join()
    assert gid == g.id == handles[0].id
    assert server.status(gid) is GoalStatus.ACCEPTED and server.active_goals() == [gid]
    with pytest.raises(horus.ActionError, match="already"):
        server.accept(g)
    with pytest.raises(horus.InvalidTransitionError) as e:
        server.canceled(gid, horus.Pose2D())  # only a canceling goal can be canceled
    assert (e.value.from_status, e.value.to_status) == ("accepted", "canceled")
    server.execute(gid)
    with pytest.raises(horus.InvalidTransitionError):
        server.execute(gid)
    server.publish_feedback(gid, horus.Vector3(x=0.5))
    server.succeed(gid, horus.Pose2D(x=1.0))
    assert server.status(gid) is GoalStatus.SUCCEEDED and server.active_goals() == []
    with pytest.raises(horus.InvalidTransitionError):
        server.abort(gid, horus.Pose2D())
    with pytest.raises(horus.InvalidTransitionError):
        server.publish_feedback(gid, horus.Vector3())
    with pytest.raises(horus.UnknownGoalError):
        server.succeed(99, horus.Pose2D())
    assert server.status(99) is None
    assert handles[0].feedback() == horus.Vector3(x=0.5)
    client.close()
    server.close()


def test_ctrl_c_interrupts_a_result_wait(node: DriveNode) -> None:
    h = drive_client().send_goal(horus.Pose2D(x=1.0, y=1.0), timeout=T)
    timer = threading.Timer(0.2, lambda: os.kill(os.getpid(), signal.SIGINT))
    timer.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            h.result(timeout=60)
    finally:
        timer.cancel()
    h.cancel(timeout=T)
    assert h.result(timeout=T).status is GoalStatus.CANCELED


def test_ctrl_c_interrupts_next_goal() -> None:
    server = drive_server()
    timer = threading.Timer(0.2, lambda: os.kill(os.getpid(), signal.SIGINT))
    timer.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            server.next_goal(timeout=60)
    finally:
        timer.cancel()
    assert server.next_goal() is None


# --- Python client → Rust server --------------------------------------------


def test_python_client_rust_server(rust: Any) -> None:
    peer = rust("action-serve", "drive", "30")
    client = drive_client()
    h = client.send_goal(horus.Pose2D(x=4.0, theta=0.5), timeout=T)
    assert h.result(timeout=T) == (GoalStatus.SUCCEEDED, horus.Pose2D(x=4.0, theta=0.5))
    assert [f.x for f in h.feedback_all()] == [1.0, 2.0, 3.0, 4.0]
    with pytest.raises(horus.GoalRejectedError):
        client.send_goal(horus.Pose2D(x=-1.0), timeout=T)
    slow = client.send_goal(horus.Pose2D(x=1.0, y=1.0), timeout=T)
    assert slow.cancel(timeout=T) is GoalStatus.CANCELING
    assert slow.result(timeout=T) == (GoalStatus.CANCELED, horus.Pose2D(x=0.5))
    aborted = client.send_goal(horus.Pose2D(x=1.0, y=2.0), timeout=T)
    assert aborted.result(timeout=T).status is GoalStatus.ABORTED
    assert [peer.line() for _ in range(5)] == [
        {"goal": 4.0, "mode": 0.0},
        {"goal": -1.0, "mode": 0.0},
        {"goal": 1.0, "mode": 1.0},
        {"cancel": True},
        {"goal": 1.0, "mode": 2.0},
    ]
    peer.kill()


def test_python_client_rust_server_killed_while_result_awaited(rust: Any) -> None:
    peer = rust("action-serve", "drive", "60")
    client = drive_client()
    h = client.send_goal(horus.Pose2D(x=1.0, y=1.0), timeout=T)
    assert peer.line() == {"goal": 1.0, "mode": 1.0}
    killer = threading.Timer(0.3, lambda: os.kill(peer.p.pid, signal.SIGKILL))
    killer.start()
    try:
        with pytest.raises(horus.ActionServerDiedError) as e:
            h.result(timeout=30)
    finally:
        killer.cancel()
    assert e.value.pid in (peer.p.pid, None)
    peer.kill()
    client.close()


def test_python_client_rust_server_timeout(rust: Any) -> None:
    peer = rust("action-serve", "drive", "30")
    h = drive_client().send_goal(horus.Pose2D(x=1.0, y=1.0), timeout=T)
    with pytest.raises(horus.ActionTimeoutError):
        h.result(timeout=0.3)
    assert h.cancel(timeout=T) is GoalStatus.CANCELING
    assert h.result(timeout=T).status is GoalStatus.CANCELED
    peer.kill()


# --- Rust client → Python server --------------------------------------------


def run_rust_client(rust: Any, x: float, mode: float) -> List[Any]:
    peer = rust("action-call", "drive", str(x), str(mode))
    out: List[Any] = rest(peer)
    return out


def test_rust_client_python_server(rust: Any, node: DriveNode) -> None:
    assert run_rust_client(rust, 3.0, 0.0) == [
        {"accepted": True},
        {"result": "Succeeded", "x": 3.0, "theta": 0.25, "feedback": [1.0, 2.0, 3.0]},
    ]
    assert run_rust_client(rust, -1.0, 0.0) == [{"send_err": "Rejected"}]
    assert run_rust_client(rust, 1.0, 1.0) == [
        {"accepted": True},
        {"cancel": "Canceling"},
        {"result": "Canceled", "x": 0.5, "theta": 0.0, "feedback": []},
    ]
    assert run_rust_client(rust, 1.0, 2.0)[1]["result"] == "Aborted"
    assert [g.x for g in node.goals] == [3.0, -1.0, 1.0, 1.0]


def test_rust_client_no_server(rust: Any) -> None:
    assert run_rust_client(rust, 1.0, 0.0) == [{"send_err": "NoServer"}]


def test_rust_client_python_server_killed_while_result_awaited(rust: Any, python: Any) -> None:
    server = python(
        """
        import horus
        s = horus.ActionServer(horus.Pose2D, horus.Vector3, horus.Pose2D, "drive")
        print("ready", flush=True)
        while True:
            g = s.next_goal(timeout=0.05)
            if g is not None:
                s.execute(s.accept(g))
                print('{"goal": %s}' % g.goal.x, flush=True)
        """
    )
    client = rust("action-call", "drive", "1.0", "3.0")
    assert client.line() == {"accepted": True}
    assert server.line() == {"goal": 1.0}
    # Give the server time to take the client's result call: killed before
    # it took the call, the service rules it NoServer, not ServerDied.
    time.sleep(0.3)
    os.kill(server.p.pid, signal.SIGKILL)
    assert rest(client) == [{"result_err": "ServerDied"}]


def test_rust_client_python_server_of_other_types(rust: Any) -> None:
    server = horus.ActionServer(horus.Vector3, horus.Vector3, horus.Pose2D, "drive")
    stop = threading.Event()

    def tick() -> None:
        while not stop.is_set():
            assert server.next_goal(timeout=0.01) is None  # refused inside

    t = threading.Thread(target=tick)
    t.start()
    try:
        assert run_rust_client(rust, 1.0, 0.0) == [{"send_err": "WrongType"}]
    finally:
        stop.set()
        t.join()
