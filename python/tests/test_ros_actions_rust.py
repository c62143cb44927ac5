"""ROS-typed actions and services between Python and Rust processes: the Rust peer
(``horus-py-peer ros-action-serve|ros-action-call|ros-srv-serve|ros-srv-call``,
crates/horus-py/src/bin/peer/ros_action.rs) runs the generated
``tf2_msgs/action/LookupTransform`` (``RosActionServer<A>`` / ``RosActionClient<A>``) and
``std_srvs/srv/SetBool`` (``RosSrv<S>``); Python is the other end, with the
``horus.interfaces`` classes.
"""

from __future__ import annotations

import threading
from typing import Any, Iterator, List

import pytest

import horus
from horus.interfaces.std_srvs.srv import SetBool
from horus.interfaces.tf2_msgs.action import LookupTransform
from shm_check import leftovers, rest

T = 10.0


@pytest.fixture(autouse=True)
def nothing_left(ns: str, procs: List[Any]) -> Iterator[None]:
    yield
    for p in procs:
        p.kill()
    assert leftovers(ns) == []


def test_python_client_rust_server(rust: Any) -> None:
    server = rust("ros-action-serve", "tf_lookup", "60")
    client = horus.ActionClient(LookupTransform, "tf_lookup")
    h = client.send_goal(
        LookupTransform.Goal(target_frame="map", source_frame="base_link", fixed_frame="odom"), timeout=T
    )
    status, r = h.result(timeout=T)
    assert status == horus.GoalStatus.SUCCEEDED
    assert (r.transform.header.frame_id, r.transform.child_frame_id) == ("map", "base_link")
    assert r.error.error_string == "found odom"
    assert server.line() == {"goal": "map"}
    h = client.send_goal(LookupTransform.Goal(target_frame="hold"), timeout=T)
    assert h.cancel(timeout=T) == horus.GoalStatus.CANCELING
    status, r = h.result(timeout=T)
    assert (status, r.error.error_string) == (horus.GoalStatus.CANCELED, "canceled")
    server.kill()


def test_rust_client_python_server(rust: Any) -> None:
    server = horus.ActionServer(LookupTransform, "tf_lookup")
    stop = threading.Event()

    def run() -> None:
        held: List[int] = []
        while not stop.is_set():
            g = server.next_goal(timeout=0.01)
            if g is not None:
                gid = server.accept(g)
                server.execute(gid)
                if g.goal.target_frame == "hold":
                    held.append(gid)
                else:
                    r = LookupTransform.Result()
                    r.transform.header.frame_id = g.goal.target_frame
                    r.transform.child_frame_id = g.goal.source_frame
                    r.error.error_string = "found " + g.goal.fixed_frame
                    server.succeed(gid, r)
            for gid in server.take_cancel_requests():
                r = LookupTransform.Result()
                r.error.error_string = "canceled"
                server.canceled(gid, r)

    t = threading.Thread(target=run)
    t.start()
    try:
        client = rust("ros-action-call", "tf_lookup")
        assert rest(client) == [
            {"status": "succeeded", "frame": "map", "child": "base_link", "error": "found odom"},
            {"cancel": "canceling", "final": "canceled", "error": "canceled"},
        ]
    finally:
        stop.set()
        t.join()


def test_ros_services_both_ways(rust: Any) -> None:
    server = rust("ros-srv-serve", "motor/enable", "2")
    client = horus.RosService(SetBool, "motor/enable").client()
    assert client.call(SetBool.Request(data=True), timeout=T) == SetBool.Response(success=True, message="rust on")
    assert client.call(SetBool.Request(data=False), timeout=T) == SetBool.Response(message="rust off")
    assert rest(server) == []

    py_server = horus.RosService(SetBool, "motor/brake").server()
    caller = rust("ros-srv-call", "motor/brake")
    r = py_server.recv(timeout=T)
    assert r.msg == SetBool.Request(data=True)
    r.reply(SetBool.Response(success=True, message="python on"))
    assert rest(caller) == [{"success": True, "message": "python on"}]
