"""Services from Python: calls within Python, across languages (Python
client → Rust server, Rust client → Python server) and the failure cases on
both sides: no server, a server killed while holding a request, timeout,
busy, unanswered, and Ctrl-C during a call.

The Rust side is `horus-py-peer serve|call` (crates/horus-py/src/bin/peer/
service.rs): the service "scale", CmdVel → Vector3 with x = 2·linear,
y = 2·angular, z = stamp_ns.
"""

from __future__ import annotations

import os
import signal
import threading
from typing import Any, List

import pytest

import horus

N = 10


def scale(req: Any) -> Any:
    return horus.Vector3(x=req.linear * 2, y=req.angular * 2, z=float(req.stamp_ns))


def request(i: int) -> Any:
    return horus.CmdVel(stamp_ns=i, linear=i * 0.5, angular=-float(i))


def service(**kw: Any) -> "horus.Service[Any, Any]":
    return horus.Service(horus.CmdVel, horus.Vector3, "scale", **kw)


def answer(server: Any, count: int) -> None:
    for _ in range(count):
        req = server.recv(timeout=10)
        assert req.reply(scale(req.msg))


def expected(i: int) -> List[float]:
    return [i * 1.0, -2.0 * i, float(i)]


# --- within Python ----------------------------------------------------------


def test_python_call_and_stats() -> None:
    svc = service()
    server, client = svc.server(), svc.client()
    t = threading.Thread(target=answer, args=(server, N))
    t.start()
    got = [client.call(request(i), timeout=10) for i in range(N)]
    t.join()
    assert [[v.x, v.y, v.z] for v in got] == [expected(i) for i in range(N)]
    assert client.stats()["calls"] == N and client.stats()["responses"] == N
    assert server.stats()["received"] == N and server.stats()["replied"] == N
    totals = svc.stats()
    assert len(totals["clients"]) == 1 and len(totals["servers"]) == 1
    assert totals["clients"][0]["pid"] == os.getpid()


def test_call_async_and_reply_exactly_once() -> None:
    svc = service()
    server, client = svc.server(), svc.client()
    pending = [client.call_async(request(i), timeout=10) for i in range(3)]
    assert client.in_flight == 3
    reqs = [server.recv(timeout=10) for _ in range(3)]
    assert [r.msg.stamp_ns for r in reqs] == [0, 1, 2]
    assert reqs[0].client_pid == os.getpid()
    for r in reqs:
        assert r.reply(scale(r.msg))
        assert r.answered
    with pytest.raises(horus.ServiceError, match="already answered"):
        reqs[0].reply(scale(reqs[0].msg))
    assert [p.wait().z for p in pending] == [0.0, 1.0, 2.0]
    with pytest.raises(horus.ServiceError, match="already taken"):
        pending[0].wait()
    # try_result: None while in flight, then the response, once.
    p = client.call_async(request(7), timeout=10)
    assert p.try_result() is None
    server.recv(timeout=10).reply(horus.Vector3(x=1.0, y=2.0, z=3.0))
    result = None
    while result is None:
        result = p.try_result()
    assert (result.x, result.y, result.z) == (1.0, 2.0, 3.0)
    assert p.done


def test_unanswered_in_python() -> None:
    svc = service()
    server, client = svc.server(), svc.client()
    p = client.call_async(request(1), timeout=10)
    server.recv(timeout=10).drop_unanswered()
    with pytest.raises(horus.UnansweredError):
        p.wait()
    assert client.stats()["unanswered"] == 1


def test_types_are_checked() -> None:
    svc = service()
    with pytest.raises(TypeError):
        svc.client().call(horus.Twist())  # type: ignore[arg-type]
    with pytest.raises(horus.ServiceError, match="horus/Twist"):
        horus.Service(horus.Twist, horus.Vector3, "scale")
    with pytest.raises(ValueError, match="fixed-size"):
        horus.Service(horus.Image, horus.Vector3, "images")
    assert "horus/CmdVel" in horus.SERVICE_TYPES and "horus/Image" not in horus.SERVICE_TYPES


def test_no_server_in_python() -> None:
    client = service().client()
    with pytest.raises(horus.NoServerError) as e:
        client.call(request(0), timeout=30)
    assert isinstance(e.value, horus.ServiceError)
    assert client.stats()["no_server"] == 1


def test_ctrl_c_interrupts_a_call() -> None:
    svc = service()
    server, client = svc.server(), svc.client()  # a server that never receives
    timer = threading.Timer(0.2, lambda: os.kill(os.getpid(), signal.SIGINT))
    timer.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            client.call(request(0), timeout=60)
    finally:
        timer.cancel()
    assert client.stats()["cancelled"] == 1
    assert client.in_flight == 0
    server.close()


def test_ctrl_c_interrupts_a_receive() -> None:
    server = service().server()
    timer = threading.Timer(0.2, lambda: os.kill(os.getpid(), signal.SIGINT))
    timer.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            server.recv(timeout=60)
    finally:
        timer.cancel()
    with pytest.raises(horus.RecvTimeoutError):
        server.recv(timeout=0.01)


def test_wait_with_its_own_timeout_withdraws_the_call() -> None:
    svc = service()
    server, client = svc.server(), svc.client()  # a server that never receives
    p = client.call_async(request(0), timeout=60)
    with pytest.raises(horus.CallTimeoutError):
        p.wait(timeout=0.05)
    assert p.done and client.in_flight == 0
    assert client.stats()["cancelled"] == 1
    server.close()


# --- Python client → Rust server --------------------------------------------


def test_python_client_rust_server(rust: Any) -> None:
    client = service().client()
    peer = rust("serve", "answer", "scale", str(N))
    assert client.servers == 1
    got = [client.call(request(i), timeout=10) for i in range(N)]
    assert [[v.x, v.y, v.z] for v in got] == [expected(i) for i in range(N)]
    assert [peer.line() for _ in range(N)] == [{"answered": True}] * N
    assert peer.finish() == []
    assert client.stats()["responses"] == N


def test_python_client_rust_server_killed_holding(rust: Any) -> None:
    client = service().client()
    peer = rust("serve", "hold", "scale", "1")
    pending = client.call_async(request(5), timeout=60)
    assert peer.line() == {"holding": 5}
    os.kill(peer.p.pid, signal.SIGKILL)
    with pytest.raises(horus.ServerDiedError) as e:
        pending.wait()
    assert e.value.pid == peer.p.pid
    assert client.stats()["server_died"] == 1


def test_python_client_rust_server_timeout(rust: Any) -> None:
    client = service().client()
    peer = rust("serve", "idle", "scale", "30")  # alive, never answers
    with pytest.raises(horus.CallTimeoutError):
        client.call(request(3), timeout=0.3)
    assert client.stats()["timed_out"] == 1
    peer.kill()  # before the client leaves: the last one out removes the service
    client.close()


def test_python_client_busy(rust: Any) -> None:
    client = service(depth=1).client()
    peer = rust("serve", "idle", "scale", "30")
    pending = client.call_async(request(0), timeout=60)
    with pytest.raises(horus.BusyError) as e:
        client.call_async(request(1), timeout=60)
    assert e.value.in_flight == 1
    assert client.stats()["busy"] == 1
    pending.cancel()
    assert client.stats()["cancelled"] == 1
    peer.kill()  # before the client leaves: the last one out removes the service
    client.close()


# --- Rust client → Python server --------------------------------------------


def test_rust_client_python_server(rust: Any) -> None:
    server = service().server()
    peer = rust("call", "wait", "scale", str(N), "10000")
    answer(server, N)
    assert [peer.line() for _ in range(N)] == [{"ok": expected(i)} for i in range(N)]
    assert peer.finish() == []
    assert server.stats()["replied"] == N


def test_rust_client_no_server(rust: Any) -> None:
    peer = rust("call", "nowait", "scale", "1", "10000")
    assert peer.line() == {"err": "NoServer"}
    assert peer.finish() == []


def test_rust_client_python_server_unanswered_and_timeout(rust: Any) -> None:
    server = service().server()
    peer = rust("call", "wait", "scale", "2", "2000")
    server.recv(timeout=10).drop_unanswered()
    assert peer.line() == {"err": "Unanswered"}
    # The second call: the server is alive but does not receive.
    assert peer.line() == {"err": "Timeout"}
    assert peer.finish() == []
    assert server.stats()["unanswered"] == 1


def test_rust_client_python_server_killed_holding(rust: Any, python: Any) -> None:
    server = python(
        """
        import time, horus
        server = horus.Service(horus.CmdVel, horus.Vector3, "scale").server()
        print("ready", flush=True)
        req = server.recv(timeout=20)
        print('{"holding": %d}' % req.msg.stamp_ns, flush=True)
        time.sleep(60)
        """
    )
    peer = rust("call", "wait", "scale", "1", "60000")
    assert server.line() == {"holding": 0}
    os.kill(server.p.pid, signal.SIGKILL)
    assert peer.line() == {"err": "ServerDied"}
    assert peer.finish() == []
