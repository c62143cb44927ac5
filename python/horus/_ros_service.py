"""Services of ROS 2 types (a ``horus.interfaces`` service class, e.g.
``horus.interfaces.std_srvs.srv.SetBool``), requests and responses of any length,
byte-compatible with ROS 2 and meeting Rust ``RosSrv<S>`` endpoints (``call_ros`` /
``reply_ros``) on the same service::

    from horus.interfaces.std_srvs.srv import SetBool

    service = horus.RosService(SetBool, "motor/enable")   # or horus.Service(SetBool, …)
    server = service.server()                               # creates the service
    response = service.client().call(SetBool.Request(data=True), timeout=1.0)

    request = server.recv(timeout=1.0)                      # request.msg: SetBool.Request
    request.reply(SetBool.Response(success=True, message="on"))

A client creates the service with its types when no server has yet (as a typed client
does), so the ROS 2 bridge can serve a ROS 2 server's service of any type to it; another
type under the name raises ``ServiceError`` when the client is made. Exceptions as
``horus.Service``'s (``NoServerError`` at once when no server serves it yet,
``CallTimeoutError``, ``UnansweredError`` …); ``CdrEncodeError`` before
anything is sent; a request whose bytes are not the type is dropped unanswered (its
client gets ``UnansweredError``) and ``recv`` raises ``CdrDecodeError``.
"""

from __future__ import annotations

from typing import Any, Optional, Tuple

from . import _horus
from ._closing import Closable
from ._errors import ClosedError

__all__ = ["RosService", "RosServiceClient", "RosServiceServer", "RosRequest", "is_ros_service"]


def is_ros_service(t: Any) -> bool:
    """Whether ``t`` is a ``horus.interfaces`` service class (``pkg.srv.Foo``)."""
    return isinstance(t, type) and hasattr(t, "Request") and hasattr(t, "Response") and (
        "/srv/" in str(getattr(t, "_TYPE", "")) or "/action/" in str(getattr(t, "_TYPE", ""))
    )


def _triple(c: Any) -> Tuple[str, str, str]:
    return (c.ros_type_name(), c.ros_type_hash(), c.ros_definition())


def _encode(service: str, what: str, cls: Any, msg: Any) -> bytes:
    if not isinstance(msg, cls):
        raise TypeError(f"service {service!r} takes {cls.__name__} as {what}, not {type(msg).__name__}")
    data: bytes = msg.to_cdr()
    return data


class RosService(Closable):
    """A service of one ROS 2 service type: ``client()`` calls it, ``server()`` serves
    it (and creates it if it does not exist, with a Rust ``RosSrv``'s default settings).
    Opening a server on a service that carries other types raises ``ServiceError``.
    ``close()`` and ``with`` as ``horus.Service``'s: clients and servers made from it
    stay open; making one after raises ``ClosedError``."""

    def __init__(self, service_type: Any, name: str, *, namespace: Optional[str] = None) -> None:
        if not is_ros_service(service_type):
            raise TypeError(
                "service_type must be a horus.interfaces service class "
                f"(e.g. horus.interfaces.std_srvs.srv.SetBool), not {service_type!r}"
            )
        self.service_type: Any = service_type
        self.name = name
        self.namespace = namespace
        self._closed = False

    def client(self) -> "RosServiceClient":
        """A client (one per thread)."""
        self._check_open()
        return RosServiceClient(self)

    def server(self) -> "RosServiceServer":
        """A server (one per thread)."""
        self._check_open()
        return RosServiceServer(self)

    def close(self) -> None:
        """Makes no more endpoints (it holds no shared memory itself; the clients and
        servers made from it stay open). Idempotent."""
        self._closed = True

    @property
    def closed(self) -> bool:
        """Whether ``close()`` was called."""
        return self._closed

    def _check_open(self) -> None:
        if self._closed:
            raise ClosedError(f"service {self.name!r}: this RosService is closed")

    def __repr__(self) -> str:
        return f"RosService({self.service_type._TYPE}, {self.name!r})"


class RosServiceClient(Closable):
    """Calls a ROS-typed service."""

    def __init__(self, service: RosService) -> None:
        self._service = service
        t = service.service_type
        self._native = _horus.RosServiceClient(
            _triple(t.Request), _triple(t.Response), service.name, namespace=service.namespace
        )

    def call(self, request: Any, timeout: float = 1.0) -> Any:
        """Calls with ``request`` (a ``service_type.Request``) and waits at most
        ``timeout`` seconds for the response (a ``service_type.Response``)."""
        t = self._service.service_type
        raw = self._native.call(_encode(self._service.name, "request", t.Request, request), timeout)
        return t.Response.from_cdr(raw)


class RosRequest:
    """A request taken by a ``RosServiceServer``: ``msg`` is the decoded request.
    Answer it once with ``reply``; dropping it unanswered tells the client."""

    def __init__(self, service: RosService, native: Any, msg: Any) -> None:
        self._service = service
        self._native = native
        self.msg: Any = msg

    @property
    def client_pid(self) -> int:
        """Process id of the calling client."""
        return int(self._native.client_pid)

    @property
    def answered(self) -> bool:
        """Whether the request was answered (or dropped unanswered)."""
        return bool(self._native.answered)

    def reply(self, response: Any) -> bool:
        """Answers with ``response`` (a ``service_type.Response``; ``CdrEncodeError``
        before anything is sent). True if delivered, False if the client is gone."""
        t = self._service.service_type
        return bool(self._native.reply(_encode(self._service.name, "response", t.Response, response)))

    def drop_unanswered(self) -> None:
        """Drops the request unanswered: the client gets ``UnansweredError``."""
        self._native.drop_unanswered()

    def __repr__(self) -> str:
        return f"RosRequest({self.msg!r}, client_pid={self.client_pid})"


class RosServiceServer(Closable):
    """Answers a ROS-typed service's requests."""

    def __init__(self, service: RosService) -> None:
        self._service = service
        t = service.service_type
        self._native = _horus.RosServiceServer(
            _triple(t.Request), _triple(t.Response), service.name, namespace=service.namespace
        )

    def _request(self, native: Any) -> RosRequest:
        try:
            msg = self._service.service_type.Request.from_cdr(native.data)
        except Exception:
            native.drop_unanswered()
            raise
        return RosRequest(self._service, native, msg)

    def try_recv(self) -> Optional[RosRequest]:
        """The next request if one is waiting, else None. Never blocks."""
        raw = self._native.try_recv()
        return None if raw is None else self._request(raw)

    def recv(self, timeout: Optional[float] = None) -> RosRequest:
        """Waits for the next request, at most ``timeout`` seconds (None: for ever);
        ``RecvTimeoutError`` when it expires."""
        return self._request(self._native.recv(timeout))
