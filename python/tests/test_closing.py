"""Every endpoint closes deterministically: ``close()`` (or leaving a ``with``
block) releases its shared memory at once, with the Python objects still
referenced and the garbage collector off; any use after raises
``ClosedError``; ``close()`` again does nothing."""

from __future__ import annotations

import gc
import os
import threading
from typing import Any, Callable, Iterator, List

import numpy as np
import pytest

import horus
from horus.interfaces.std_msgs.msg import String
from horus.interfaces.std_srvs.srv import Trigger


def segments(ns: str) -> List[str]:
    """Segments of namespace `ns` in /dev/shm now (no waiting, no collecting)."""
    return sorted(f for f in os.listdir("/dev/shm") if f.startswith(f"horus.{ns}."))


@pytest.fixture(autouse=True)
def no_gc() -> Iterator[None]:
    """Only `close()` may release anything in these tests."""
    gc.collect()
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


def assert_closed(use: Callable[[], Any]) -> None:
    with pytest.raises(horus.ClosedError, match="closed"):
        use()


def test_closed_error_is_a_value_error_and_a_horus_error() -> None:
    assert issubclass(horus.ClosedError, ValueError)
    assert issubclass(horus.ClosedError, horus.HorusError)


def test_topic_publisher_and_subscriber_release_the_segment_at_close(ns: str) -> None:
    with horus.Topic(horus.CmdVel, "closing/cmd", depth=4) as topic:
        with topic.publisher() as pub, topic.subscriber() as sub:
            assert segments(ns) != []
            pub.send(horus.CmdVel(linear=1.5))
            assert sub.recv(timeout=5).linear == 1.5
        assert pub.closed and sub.closed and not topic.closed
    assert topic.closed
    assert segments(ns) == []  # the objects are still referenced: close released them
    assert_closed(lambda: pub.send(horus.CmdVel()))
    assert_closed(lambda: sub.try_recv())
    assert_closed(lambda: sub.recv(timeout=0))
    assert_closed(lambda: pub.subscribers)
    assert_closed(lambda: topic.publisher())
    assert_closed(lambda: topic.subscriber())
    assert_closed(lambda: topic.stats())
    for endpoint in (pub, sub, topic):
        endpoint.close()  # idempotent
    assert topic.name == "closing/cmd"  # what it was stays readable


def test_endpoints_outlive_the_topic_they_were_made_from() -> None:
    topic = horus.Topic(horus.CmdVel, "closing/outlive")
    pub, sub = topic.publisher(), topic.subscriber()
    topic.close()
    pub.send(horus.CmdVel(linear=2.0))
    assert sub.recv(timeout=5).linear == 2.0
    pub.close()
    sub.close()


def test_a_received_sample_stays_readable_after_its_subscriber_closes() -> None:
    topic = horus.Topic(horus.PointCloud, "closing/cloud", depth=4)
    pub, sub = topic.publisher(), topic.subscriber()
    pts = np.arange(12, dtype=np.float32).reshape(4, 3)
    pub.send(horus.PointCloud.from_points(pts))
    cloud = sub.recv(timeout=5)
    sub.close()
    assert np.array_equal(cloud.points, pts)
    pub.close()
    topic.close()


def test_close_wakes_a_recv_waiting_in_another_thread() -> None:
    topic = horus.Topic(horus.CmdVel, "closing/wake")
    sub = topic.subscriber()
    raised: List[BaseException] = []
    waiting = threading.Event()

    def receive() -> None:
        waiting.set()
        try:
            sub.recv(timeout=60)
        except BaseException as e:
            raised.append(e)

    t = threading.Thread(target=receive)
    t.start()
    waiting.wait()
    sub.close()
    t.join()
    assert len(raised) == 1 and isinstance(raised[0], horus.ClosedError), raised
    topic.close()


def test_a_publisher_with_an_outstanding_loan_closes_only_once_its_views_are_gone(ns: str) -> None:
    topic = horus.Topic(horus.PointCloud, "closing/loan", depth=4)
    pub = topic.publisher()
    loan = pub.loan(horus.PointCloud(num_points=4, point_step=12))
    pts = loan.msg.points
    with pytest.raises(horus.LoanViewsAliveError):
        pub.close()  # `pts` views the loan's memory: it must stay mapped
    assert not pub.closed
    pts[:] = 1.0
    del pts
    loan.msg = horus.PointCloud()  # the loan's own views of its memory go too
    pub.close()  # the loan is discarded with the publisher
    assert pub.closed and not loan.active
    topic.close()
    assert segments(ns) == []


def test_services_clients_and_servers_close(ns: str) -> None:
    with horus.Service(horus.CmdVel, horus.Vector3, "closing/scale") as service:
        with service.server() as server, service.client() as client:
            pending = client.call_async(horus.CmdVel(linear=2.0), timeout=5)
            req = server.recv(timeout=5)
            req.reply(horus.Vector3(x=req.msg.linear * 2))
            assert pending.wait(timeout=5).x == 4.0
    assert segments(ns) == []
    assert_closed(lambda: client.call(horus.CmdVel(), timeout=1))
    assert_closed(lambda: server.try_recv())
    assert_closed(lambda: service.client())
    client.close()
    server.close()


def test_ros_topics_and_services_close(ns: str) -> None:
    with horus.RosTopic(String, "closing/chatter") as topic:  # type: ignore[type-var]
        with topic.publisher() as pub, topic.subscriber() as sub:
            pub.send(String(data="hi"))
            assert sub.recv(timeout=5).data == "hi"
    assert_closed(lambda: pub.send(String(data="late")))
    assert_closed(lambda: sub.try_recv())
    # horus.Service(Trigger, ...) is a RosService: a context manager like a Service.
    with horus.Service(Trigger, "closing/trigger") as service:
        with service.server() as server, service.client() as client:
            with pytest.raises(horus.RecvTimeoutError):
                server.recv(timeout=0)
    assert service.closed
    assert_closed(lambda: server.try_recv())
    assert_closed(lambda: client.call(Trigger.Request(), timeout=1))
    assert_closed(lambda: service.client())
    assert_closed(lambda: service.server())
    service.close()  # idempotent
    assert segments(ns) == []


def test_ros_service_endpoints_outlive_the_service_they_were_made_from() -> None:
    service = horus.RosService(Trigger, "closing/trigger-outlive")
    server, client = service.server(), service.client()
    service.close()
    pending = threading.Thread(target=lambda: server.recv(timeout=5).reply(Trigger.Response(success=True)))
    pending.start()
    assert client.call(Trigger.Request(), timeout=5).success
    pending.join()
    server.close()
    client.close()


def test_action_clients_and_servers_close(ns: str) -> None:
    with horus.ActionServer(horus.Pose2D, horus.Vector3, horus.Pose2D, "closing/drive") as server:
        with horus.ActionClient(horus.Pose2D, horus.Vector3, horus.Pose2D, "closing/drive") as client:
            assert server.next_goal() is None
    assert_closed(lambda: server.next_goal())
    assert_closed(lambda: client.send_goal(horus.Pose2D(), timeout=1))
    server.close()
    assert segments(ns) == []


def test_parameter_servers_and_clients_close(ns: str) -> None:
    params = horus.Parameters()
    params.declare("gain", 1.0)
    with horus.ParamServer("closing_node") as server:
        assert server.serve_pending(params) == 0
        with horus.ParamClient("closing_node", timeout=5) as client:
            result: List[Any] = []
            t = threading.Thread(target=lambda: result.append(client.get("gain")))
            t.start()
            while t.is_alive():
                server.serve_pending(params)
                t.join(0.001)
            assert result == [1.0]
    assert_closed(lambda: server.serve_pending(params))
    assert_closed(lambda: client.get("gain"))
    assert segments(ns) == []


def test_a_tensor_pool_closes_once_its_tensors_are_gone(ns: str) -> None:
    with horus.TensorPool(4242, slots=2, slot_bytes=4096) as pool:
        t = pool.alloc(16, np.uint8)
        assert pool.free_slots == 1
    assert_closed(lambda: pool.alloc(16, np.uint8))
    assert_closed(lambda: pool.free_slots)
    assert segments(ns) != []  # the tensor keeps its pool mapped
    del t
    assert segments(ns) == []
