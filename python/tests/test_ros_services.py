"""ROS-typed services from Python (``horus.RosService``, also ``horus.Service(Srv, name)``):
a server in another Python process answers ``std_srvs/SetBool`` (a 600-byte string in
the response); ``std_srvs/Trigger`` Python ↔ Python within a process (a 5 000-byte
response); the failure cases: no server, a request that breaks its type's rules, a hostile request, a
second reply. Rust ↔ Python against a typed Rust ``RosSrv`` is in
``test_ros_actions_rust.py``.
"""

from __future__ import annotations

import threading
from typing import Any, Iterator, List

import pytest

import horus
from horus.interfaces.std_srvs.srv import SetBool, Trigger
from shm_check import leftovers

T = 10.0


@pytest.fixture(autouse=True)
def nothing_left(ns: str, procs: List[Any]) -> Iterator[None]:
    yield
    for p in procs:
        p.kill()
    assert leftovers(ns) == []


def test_a_python_server_in_another_process_answers_ros_requests(python: Any) -> None:
    service = horus.Service(SetBool, "motor/enable")
    assert isinstance(service, horus.RosService)
    client = service.client()
    with pytest.raises(horus.NoServerError):
        client.call(SetBool.Request(data=True), timeout=T)
    server = python(
        """
        import horus
        from horus.interfaces.std_srvs.srv import SetBool
        s = horus.RosService(SetBool, "motor/enable").server()
        print("ready", flush=True)
        while True:
            try:
                r = s.recv()
            except horus.CdrDecodeError:
                print('{"hostile": 1}', flush=True)
                continue
            r.reply(SetBool.Response(success=r.msg.data, message="motor " + ("on" if r.msg.data else "off") * 100))
        """
    )
    for on in (True, False):
        resp = client.call(SetBool.Request(data=on), timeout=T)
        assert resp == SetBool.Response(success=on, message="motor " + ("on" if on else "off") * 100)
    # A request whose bytes are not a SetBool request (a bool byte of 7): the server drops
    # it unanswered and goes on.
    raw = horus._horus.RosServiceClient(
        *[(c.ros_type_name(), c.ros_type_hash(), c.ros_definition()) for c in (SetBool.Request, SetBool.Response)],
        "motor/enable",
    )
    with pytest.raises(horus.UnansweredError):
        raw.call(b"\x00\x01\x00\x00\x07", timeout=T)
    assert server.line() == {"hostile": 1}
    assert client.call(SetBool.Request(data=True), timeout=T).success
    # Another service type on the same name: refused, naming the types.
    with pytest.raises(horus.ServiceError, match="SetBool"):
        horus.RosService(Trigger, "motor/enable").client().call(Trigger.Request(), timeout=T)
    server.kill()


def test_python_to_python_within_a_process_with_encode_errors_and_a_second_reply() -> None:
    service = horus.RosService(Trigger, "trigger")
    server = service.server()
    got: List[Any] = []

    def serve() -> None:
        r = server.recv(timeout=T)
        got.append(r.msg)
        with pytest.raises(horus.CdrEncodeError):
            r.reply(Trigger.Response(message="nul\0inside"))
        assert not r.answered
        assert r.reply(Trigger.Response(success=True, message="done " * 1000))
        with pytest.raises(horus.ServiceError):
            r.reply(Trigger.Response())

    t = threading.Thread(target=serve)
    t.start()
    resp = service.client().call(Trigger.Request(), timeout=T)
    t.join()
    assert resp == Trigger.Response(success=True, message="done " * 1000)
    assert got == [Trigger.Request()]
    with pytest.raises(TypeError):
        service.client().call(SetBool.Request(), timeout=T)
    with pytest.raises(horus.RecvTimeoutError):
        server.recv(timeout=0.01)
