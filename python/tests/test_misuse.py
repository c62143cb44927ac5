"""The Python API used carelessly: endpoints closed under a thread that
waits on them, calls outliving their client, copies of messages, closed
endpoints used. Each test is a bug found by probing the API this way: a
misuse must end in a clear exception, never a hang, a crash, shared memory
kept, or data written where it should not be."""

from __future__ import annotations

import copy
import threading
import time
from typing import Any, Callable, Dict, List, Optional, Tuple

import numpy as np
import pytest

import horus


def test_client_close_withdraws_its_calls_in_flight() -> None:
    # Found by calling close() with a PendingCall still referenced: the
    # call stayed in flight (a server still took it, the reply arrived) and
    # the client's place stayed held until the PendingCall was collected.
    with horus.Service(horus.CmdVel, horus.Vector3, "misuse/withdraw") as service:
        client, server = service.client(), service.server()
        pending = client.call_async(horus.CmdVel(linear=3.0), timeout=30)
        client.close()
        assert pending.done
        assert server.try_recv() is None  # withdrawn before any server took it
        with pytest.raises(horus.ClosedError, match="withdrawn"):
            pending.wait(timeout=5)
        with pytest.raises(horus.ClosedError, match="withdrawn"):
            pending.try_result()
        pending.cancel()  # nothing left to withdraw
        assert service.stats()["clients"] == []  # its place is free now
        server.close()


@pytest.mark.parametrize("how", ["call", "wait"])
def test_client_close_wakes_a_call_waiting_in_another_thread(how: str) -> None:
    # Found with a thread blocked in client.call(timeout=20) while another
    # closed the client: the call went on waiting its full 20 s.
    with horus.Service(horus.CmdVel, horus.Vector3, "misuse/wake") as service:
        server = service.server()  # calls wait for an answer, not NoServerError
        client = service.client()
        pending = client.call_async(horus.CmdVel(), timeout=60) if how == "wait" else None
        raised: List[BaseException] = []
        started = threading.Event()

        def waiter() -> None:
            started.set()
            try:
                if pending is None:
                    client.call(horus.CmdVel(), timeout=60)
                else:
                    pending.wait()
            except BaseException as e:
                raised.append(e)

        t = threading.Thread(target=waiter, daemon=True)
        t.start()
        started.wait()
        while client.in_flight == 0:
            time.sleep(0.001)
        client.close()
        t.join(timeout=30)
        assert not t.is_alive(), "the waiting call did not see close()"
        assert len(raised) == 1 and isinstance(raised[0], horus.ClosedError), raised
        server.close()


def wait_in_thread(
    wait: Callable[[], object],
    close: Callable[[], None],
    sent: Optional[Callable[[], bool]] = None,
) -> BaseException:
    """Runs `wait` in a thread, calls `close` once it waits (once `sent()` says its
    request is out, if given), and returns what `wait` raised (it must return
    within 30 s)."""
    raised: List[BaseException] = []
    started = threading.Event()

    def waiter() -> None:
        started.set()
        try:
            wait()
        except BaseException as e:
            raised.append(e)

    t = threading.Thread(target=waiter, daemon=True)
    t.start()
    started.wait()
    if sent is None:
        time.sleep(0.2)  # let it block (a close before the wait is ClosedError too)
    else:
        end = time.monotonic() + 30
        while not sent():  # the request is in the server's queue: the call waits
            assert time.monotonic() < end, "the call's request never reached the server"
            time.sleep(0.001)
    close()
    t.join(timeout=30)
    assert not t.is_alive(), "the wait did not see close()"
    assert len(raised) == 1, raised
    return raised[0]


def accepted_goal(
    server: "horus.ActionServer[Any, Any, Any]", client: "horus.ActionClient[Any, Any, Any]"
) -> "horus.GoalHandle[Any, Any]":
    accept = threading.Thread(target=lambda: server.accept(server.next_goal(timeout=10)))
    accept.start()
    handle = client.send_goal(horus.CmdVel(), timeout=10)
    accept.join()
    return handle


@pytest.mark.parametrize("closing", ["handle", "client"])
def test_closing_a_goal_handle_wakes_its_result_wait(closing: str) -> None:
    # Found with a thread in handle.result(timeout=20) while another closed
    # the handle (or its client): the wait went on for the full 20 s.
    server = horus.ActionServer(horus.CmdVel, horus.Vector3, horus.Vector3, "misuse/act")
    client = horus.ActionClient(horus.CmdVel, horus.Vector3, horus.Vector3, "misuse/act")
    handle = accepted_goal(server, client)
    e = wait_in_thread(
        lambda: handle.result(timeout=60), handle.close if closing == "handle" else client.close
    )
    assert isinstance(e, horus.ClosedError), e
    client.close()
    server.close()


def test_closing_an_action_server_wakes_its_next_goal_wait() -> None:
    # Found with a thread in server.next_goal(timeout=20) while another
    # closed the server: the wait went on for the full 20 s, keeping the
    # server's places.
    server = horus.ActionServer(horus.CmdVel, horus.Vector3, horus.Vector3, "misuse/next")
    e = wait_in_thread(lambda: server.next_goal(timeout=60), server.close)
    assert isinstance(e, horus.ClosedError), e


def test_copy_of_a_message_is_a_message_of_its_own() -> None:
    # Found by copy.copy(msg) then writing the copy: the original changed
    # too (both wrapped the same array).
    m = horus.CmdVel(linear=1.0)
    c = copy.copy(m)
    c.linear = 5.0
    assert m.linear == 1.0 and c.linear == 5.0
    cloud = horus.PointCloud.from_points(np.zeros((2, 3), np.float32))
    c2 = copy.copy(cloud)
    c2.points[:] = 1.0
    assert np.all(cloud.points == 0.0) and np.all(c2.points == 1.0)
    assert copy.deepcopy(cloud) == cloud


def test_copy_of_a_loaned_message_does_not_hold_the_loan() -> None:
    topic = horus.Topic(horus.CmdVel, "misuse/loan-copy")
    pub, sub = topic.publisher(), topic.subscriber()
    loan = pub.loan(horus.CmdVel(linear=1.0))
    kept = copy.copy(loan.msg)
    assert loan.send() == 1  # `kept` is no view of the loan's memory
    kept.linear = 9.0
    assert sub.recv(timeout=5).linear == 1.0
    for e in (pub, sub, topic):
        e.close()


def test_a_closed_broadcaster_refuses_every_use() -> None:
    # Found by reading `subscribers` after close(): it answered 0 instead of
    # raising ClosedError as every other use of a closed endpoint does.
    from horus import tf

    b = tf.TransformBroadcaster()
    b.close()
    with pytest.raises(horus.ClosedError):
        b.subscribers
    with pytest.raises(horus.ClosedError):
        b.send_transform("a", "b", (0.0, 0.0, 0.0))
    b.close()


def test_a_namespace_with_a_dot_is_refused_so_namespaces_never_share_a_topic() -> None:
    # Found by probing names: namespace "zq" with topic "b.t.c" and namespace
    # "zq.t.b" with topic "c" were the one segment /dev/shm/horus.zq.t.b.t.c,
    # so a message sent in one namespace was received in the other. A
    # namespace may not contain "." (the separator of a segment name's parts).
    ns = f"misuse-dot-{time.monotonic_ns()}"
    with horus.Topic(horus.CmdVel, "b.t.c", namespace=ns) as t:
        with pytest.raises(horus.InvalidTopicError, match="contains '.'"):
            horus.Topic(horus.CmdVel, "c", namespace=f"{ns}.t.b")
        with t.publisher() as p:
            p.send(horus.CmdVel(stamp_ns=1, linear=1.0))


def test_a_tail_shorter_than_its_header_describes_is_refused_before_sending() -> None:
    # Found by send(cloud, tail=...) with fewer bytes than num_points *
    # point_step: it was published, and the receiver's `points` raised.
    with horus.Topic(horus.PointCloud, "misuse/short-tail", max_tail_bytes=1024) as topic:
        with topic.publisher() as pub, topic.subscriber() as sub:
            cloud = horus.PointCloud(num_points=4, point_step=12)
            for tail in (np.zeros(47, np.uint8), b"", np.zeros(2, np.float32)):
                with pytest.raises(ValueError, match="describes 48 tail bytes but the tail has"):
                    pub.send(cloud, tail=tail)
            own = horus.PointCloud.from_points(np.ones((2, 3), np.float32))
            own.num_points = 3  # its own tail holds 2 points
            with pytest.raises(ValueError, match="describes 36 tail bytes"):
                pub.send(own)
            with pytest.raises(ValueError, match="describes 48 tail bytes but the loan's tail has 12"):
                pub.loan(cloud, tail_len=12)
            assert sub.try_recv() is None  # nothing was sent
            # A tail longer than described is sent: receivers ignore the rest.
            assert pub.send(cloud, tail=np.ones(16, np.float32)) == 1
            got = sub.recv(timeout=5)
            assert got.points.shape == (4, 3) and np.all(got.points == 1.0)
    with horus.Topic(horus.Image, "misuse/short-rows", max_tail_bytes=1024) as topic:
        with topic.publisher() as pub:
            image = horus.Image(width=4, height=2, step=4, encoding=horus.Image.MONO8)
            with pytest.raises(ValueError, match="describes 8 tail bytes but the tail has 7"):
                pub.send(image, tail=np.zeros(7, np.uint8))


def returned_in_thread(wait: Callable[[], Any], answer: Callable[[], object]) -> Any:
    """Runs `wait` in a thread, calls `answer` once it waits, and returns what
    `wait` returned (it must return within 30 s)."""
    got: List[Any] = []
    raised: List[BaseException] = []
    started = threading.Event()

    def waiter() -> None:
        started.set()
        try:
            got.append(wait())
        except BaseException as e:
            raised.append(e)

    t = threading.Thread(target=waiter, daemon=True)
    t.start()
    started.wait()
    time.sleep(0.2)  # let it block
    answer()
    t.join(timeout=30)
    assert not t.is_alive(), "the wait did not see its answer"
    assert not raised, raised
    return got[0]


INF = float("inf")


def test_an_infinite_timeout_waits_for_ever_as_none_does() -> None:
    # Found by recv(timeout=float("inf")): ValueError "timeout must be >= 0 s,
    # not inf", while None waited for ever.
    with horus.Topic(horus.CmdVel, "misuse/inf") as topic:
        with topic.publisher() as pub, topic.subscriber() as sub:
            got = returned_in_thread(lambda: sub.recv(timeout=INF), lambda: pub.send(horus.CmdVel(linear=2.0)))
            assert got.linear == 2.0
    with horus.Topic(horus.CmdVel, "misuse/inf-block", overflow=horus.Overflow.block(INF)) as topic:
        assert topic.overflow == horus.Overflow.block(INF)
        with topic.publisher() as pub:
            pub.wait_for_subscribers(0, timeout=INF)
    with horus.Service(horus.CmdVel, horus.Vector3, "misuse/inf-call") as service:
        with service.client() as client, service.server() as server:

            def answer() -> None:
                req = server.recv(timeout=INF)
                assert req.reply(horus.Vector3(x=req.msg.linear))

            reply = returned_in_thread(lambda: client.call(horus.CmdVel(linear=3.0), timeout=INF), answer)
            assert reply.x == 3.0
            pending = client.call_async(horus.CmdVel(linear=4.0), timeout=INF)
            assert returned_in_thread(lambda: pending.wait(timeout=INF), answer).x == 4.0
    server = horus.ActionServer(horus.CmdVel, horus.Vector3, horus.Vector3, "misuse/inf-act")
    client = horus.ActionClient(horus.CmdVel, horus.Vector3, horus.Vector3, "misuse/inf-act")
    goals: List[Any] = []
    handle = returned_in_thread(
        lambda: client.send_goal(horus.CmdVel(), timeout=INF),
        lambda: goals.append(server.accept(server.next_goal(timeout=INF))),
    )
    stop = threading.Event()

    def serve() -> None:  # answers the result calls
        while not stop.is_set():
            server.poll()
            time.sleep(0.005)

    poller = threading.Thread(target=serve, daemon=True)
    poller.start()
    result = returned_in_thread(
        lambda: handle.result(timeout=INF), lambda: server.succeed(goals[0], horus.Vector3(x=5.0))
    )
    stop.set()
    poller.join()
    assert result.result.x == 5.0
    for e in (handle, client, server):
        e.close()


@pytest.mark.parametrize("bad", [float("nan"), -1.0, -INF])
def test_a_timeout_that_is_nan_or_negative_is_a_value_error_that_says_so(bad: float) -> None:
    # Found with inf (above); NaN waited for ever in wait_for_subscribers.
    want = f"timeout must be a number of seconds >= 0, not {bad}"
    with horus.Topic(horus.CmdVel, "misuse/bad-timeout") as topic:
        with topic.publisher() as pub, topic.subscriber() as sub:
            with pytest.raises(ValueError, match=want):
                sub.recv(timeout=bad)
            with pytest.raises(ValueError, match=want):
                pub.wait_for_subscribers(2, timeout=bad)
    with pytest.raises(ValueError, match=f"block_{want}"):
        horus.Topic(horus.CmdVel, "misuse/bad-block", overflow=horus.Overflow.block(bad))
    with horus.Service(horus.CmdVel, horus.Vector3, "misuse/bad-call") as service:
        with service.client() as client:
            with pytest.raises(ValueError, match=want):
                client.call(horus.CmdVel(), timeout=bad)


def test_a_duration_that_must_be_finite_says_so_for_inf() -> None:
    server = horus.ActionServer(horus.CmdVel, horus.Vector3, horus.Vector3, "misuse/inf-keep", result_retention=None)
    server.close()
    with pytest.raises(ValueError, match="result_retention must be a finite number of seconds >= 0, not inf"):
        horus.ActionServer(horus.CmdVel, horus.Vector3, horus.Vector3, "misuse/inf-keep", result_retention=INF)


def test_closing_a_ros_service_client_wakes_its_call() -> None:
    # Found with a thread in RosServiceClient.call(timeout=20) while another
    # closed the client: the call went on waiting its full 20 s.
    from horus.interfaces.std_srvs.srv import Trigger

    service = horus.Service(Trigger, "misuse/ros-call")
    with service.server() as server:  # takes no request: calls wait
        client = service.client()
        e = wait_in_thread(lambda: client.call(Trigger.Request(), timeout=60), client.close)
        assert isinstance(e, horus.ClosedError) and "withdrawn" in str(e), e
        assert server.try_recv() is None  # withdrawn: never served


@pytest.mark.parametrize("op", ["get", "set", "list", "describe"])
def test_closing_a_param_client_wakes_its_call(op: str) -> None:
    # Found with a thread in ParamClient.get() (timeout 20 s) while another
    # closed the client: the call went on waiting its full 20 s.
    server = horus.ParamServer("misuse-params")  # never serves: calls wait
    client = horus.ParamClient("misuse-params", timeout=60)
    calls: Dict[str, Callable[[], object]] = {
        "get": lambda: client.get("speed"),
        "set": lambda: client.set("speed", 2.0),
        "list": client.list,
        "describe": lambda: client.describe("speed"),
    }
    e = wait_in_thread(calls[op], client.close, sent=lambda: server.has_pending)
    assert isinstance(e, horus.ClosedError) and "withdrawn" in str(e), e
    assert server.serve_pending(horus.Parameters()) == 0  # withdrawn: never served
    server.close()


@pytest.mark.parametrize("flavour", ["horus", "ros"])
def test_closing_an_action_client_wakes_its_send_goal(flavour: str) -> None:
    # Found with a thread in client.send_goal(timeout=20) while another closed
    # the client: the call went on waiting its full 20 s.
    server, client, goal = action_pair(flavour, "misuse/send")  # never accepts: send_goal waits
    e = wait_in_thread(
        lambda: client.send_goal(goal, timeout=60), client.close, sent=lambda: server.has_pending
    )
    assert isinstance(e, horus.ClosedError) and "withdrawn" in str(e), e
    assert server.next_goal() is None  # withdrawn: the server never sees the goal
    assert server.active_goals() == []
    server.close()


@pytest.mark.parametrize("flavour", ["horus", "ros"])
def test_closing_a_goal_handle_wakes_its_cancel(flavour: str) -> None:
    # Found with a thread in handle.cancel(timeout=20) while another closed the
    # handle: the call went on waiting its full 20 s.
    server, client, goal = action_pair(flavour, "misuse/cancel")
    accept = threading.Thread(target=lambda: server.accept(server.next_goal(timeout=10)))
    accept.start()
    handle = client.send_goal(goal, timeout=10)
    accept.join()
    # The server is not polled: the cancel is never answered.
    assert not server.has_pending
    goal_id = handle.id
    e = wait_in_thread(lambda: handle.cancel(timeout=60), handle.close, sent=lambda: server.has_pending)
    assert isinstance(e, horus.ClosedError) and "withdrawn" in str(e), e
    server.poll()  # a withdrawn cancel is never served: the goal goes on
    assert server.take_cancel_requests() == []
    assert server.status(goal_id) == horus.GoalStatus.ACCEPTED
    client.close()
    server.close()


def action_pair(flavour: str, name: str) -> Tuple[Any, Any, Any]:
    """An action server and client, and a goal, of `flavour` (fixed-layout or ROS-typed)."""
    if flavour == "horus":
        server = horus.ActionServer(horus.CmdVel, horus.Vector3, horus.Vector3, name)
        client = horus.ActionClient(horus.CmdVel, horus.Vector3, horus.Vector3, name)
        return server, client, horus.CmdVel()
    from horus.interfaces.tf2_msgs.action import LookupTransform

    return (
        horus.RosActionServer(LookupTransform, name),
        horus.RosActionClient(LookupTransform, name),
        LookupTransform.Goal(target_frame="map", source_frame="base"),
    )
