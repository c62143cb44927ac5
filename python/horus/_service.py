"""Services: typed request/response over shared memory, from Python.

Same services, same semantics as Rust's ``horus::Service``: a Python client
can call a Rust server and the other way round. Requests and responses are
fixed-size standard messages: any two of ``SERVICE_TYPES`` make a pair.
"""

from __future__ import annotations

from typing import Any, Dict, Generic, List, Optional, Type, TypeVar

from . import _horus
from ._closing import Closable
from ._messages import Message

__all__ = ["SERVICE_TYPES", "Service", "Client", "PendingCall", "Server", "Request"]

Q = TypeVar("Q", bound=Message)
R = TypeVar("R", bound=Message)

SERVICE_TYPES: List[str] = list(_horus.service_schemas())
"""Schema names of the messages a service can carry (every standard message
without a tail); any two of them make a (request, response) pair."""


def _check_type(what: str, t: Any) -> None:
    if not (isinstance(t, type) and issubclass(t, Message)):
        raise TypeError(f"{what} must be a horus message class, not {t!r}")


class Service(Closable, Generic[Q, R]):
    """A service: a name, a request type and a response type. Opens it,
    creating it if it does not exist; settings left as None adopt the
    existing service's. Opening it with other types than it carries raises
    ``ServiceError`` naming both pairs.

    * ``depth`` — calls in flight per client (beyond: ``BusyError``).
    * ``max_clients`` / ``max_servers`` — places for each role.

    ``Service(Srv, name)`` with a ``horus.interfaces`` service class gives a
    ``RosService`` (ROS 2 types, CDR, any length).
    """

    def __new__(cls, request_type: Any, *args: Any, **kwargs: Any) -> Any:
        from ._ros_service import RosService, is_ros_service

        if cls is Service and is_ros_service(request_type):
            return RosService(request_type, *args, **kwargs)
        return super().__new__(cls)

    def __init__(
        self,
        request_type: Type[Q],
        response_type: Type[R],
        name: str,
        *,
        depth: Optional[int] = None,
        max_clients: Optional[int] = None,
        max_servers: Optional[int] = None,
        namespace: Optional[str] = None,
    ) -> None:
        _check_type("request_type", request_type)
        _check_type("response_type", response_type)
        self.request_type: Type[Q] = request_type
        self.response_type: Type[R] = response_type
        self._native = _horus.Service(
            request_type.SCHEMA.name,
            response_type.SCHEMA.name,
            name,
            depth=depth,
            max_clients=max_clients,
            max_servers=max_servers,
            namespace=namespace,
        )

    @property
    def name(self) -> str:
        """Service name."""
        return self._native.name

    @property
    def depth(self) -> int:
        """Calls in flight each client may have."""
        return self._native.depth

    def client(self) -> "Client[Q, R]":
        """A client (one per thread)."""
        return Client(self, self._native.client())

    def server(self) -> "Server[Q, R]":
        """A server (one per thread). Several servers share the load: each
        request is taken by exactly one."""
        return Server(self, self._native.server())

    def stats(self) -> Dict[str, List[Dict[str, Any]]]:
        """Counters of every client and server, from every process:
        ``{"clients": [{"place", "pid", "stats"}...], "servers": [...]}``."""
        return self._native.stats()

    def __repr__(self) -> str:
        return (
            f"Service({self.request_type.__name__}, {self.response_type.__name__}, "
            f"{self.name!r})"
        )


class Client(Closable, Generic[Q, R]):
    """Calls a service. Every call has a timeout; failures raise a
    ``ServiceError`` subclass (``NoServerError`` at once when no server
    runs, ``ServerDiedError``, ``BusyError``, ``CallTimeoutError``,
    ``UnansweredError``, ``ReplyFailedError``) and are counted in
    ``stats()``. Waiting releases the GIL; Ctrl-C raises
    ``KeyboardInterrupt`` within 50 ms and withdraws the call.
    ``close()`` withdraws every call in flight: waiting on one (in another
    thread too, woken within 50 ms) or taking its result raises
    ``ClosedError``."""

    def __init__(self, service: Service[Q, R], native: _horus.Client) -> None:
        self._service = service
        self._native = native

    def call(self, request: Q, timeout: float = 1.0) -> R:
        """Calls the service with a copy of ``request`` and waits at most
        ``timeout`` seconds for the response."""
        raw = self._native.call(self._bytes(request), timeout)
        return self._service.response_type.from_bytes(raw)

    def call_async(self, request: Q, timeout: float = 1.0) -> "PendingCall[R]":
        """Sends a copy of ``request`` and returns at once. Several calls
        may be in flight (up to the service's depth; beyond, ``BusyError``).
        The call times out after ``timeout`` seconds whether or not anyone
        waits."""
        native = self._native.call_async(self._bytes(request), timeout)
        return PendingCall(self._service.response_type, native)

    def _bytes(self, request: Q) -> bytes:
        if not isinstance(request, self._service.request_type):
            raise TypeError(
                f"service {self._service.name!r} takes {self._service.request_type.__name__} "
                f"requests, not {type(request).__name__}"
            )
        return request.to_bytes()

    @property
    def in_flight(self) -> int:
        """Calls in flight (sent, result not yet taken)."""
        return self._native.in_flight

    @property
    def servers(self) -> int:
        """Servers running now."""
        return self._native.servers

    def stats(self) -> Dict[str, int]:
        """This client's counters (``calls``, ``responses``, ``no_server``,
        ``server_died``, ``busy``, ``timed_out``, ``cancelled``, ``late``,
        ``unanswered``, ``failed``, ``malformed``)."""
        return self._native.stats()

    def service_stats(self) -> Dict[str, List[Dict[str, Any]]]:
        """Counters of every client and server of the service."""
        return self._native.service_stats()


class PendingCall(Generic[R]):
    """A call in flight. Its timeout is in force whether or not anyone
    waits. Dropping it (or ``cancel()``) before taking the result withdraws
    the call (counted as ``cancelled``; a late response is discarded)."""

    def __init__(self, response_type: Type[R], native: _horus.PendingCall) -> None:
        self._type = response_type
        self._native = native

    def try_result(self) -> Optional[R]:
        """The response if the call is settled, None while in flight;
        raises the call's ``ServiceError`` if it failed. Taken once."""
        raw = self._native.try_result()
        return None if raw is None else self._type.from_bytes(raw)

    def wait(self, timeout: Optional[float] = None) -> R:
        """Waits for the response: until the call's own timeout (None), or
        at most ``timeout`` seconds, after which the call is withdrawn and
        ``CallTimeoutError`` raised."""
        return self._type.from_bytes(self._native.wait(timeout))

    @property
    def done(self) -> bool:
        """Whether the result was taken or the call withdrawn."""
        return self._native.done

    def cancel(self) -> None:
        """Withdraws the call if its result was not taken."""
        self._native.cancel()


class Request(Generic[Q, R]):
    """A request taken by a server: ``msg`` is the request (a copy).
    Answer it exactly once with ``reply``; dropping it unanswered (or
    ``drop_unanswered()``) tells the client (``UnansweredError``)."""

    def __init__(self, service: Service[Q, R], native: _horus.Request) -> None:
        self._service = service
        self._native = native
        self.msg: Q = service.request_type.from_bytes(native.data)

    @property
    def client_pid(self) -> int:
        """Process id of the calling client."""
        return self._native.client_pid

    @property
    def answered(self) -> bool:
        """Whether the request was answered (or dropped unanswered)."""
        return self._native.answered

    def reply(self, response: R) -> bool:
        """Answers with a copy of ``response``. True if delivered, False if
        the client is gone (dropped and counted as ``client_gone``). A
        second reply raises ``ServiceError``."""
        if not isinstance(response, self._service.response_type):
            raise TypeError(
                f"service {self._service.name!r} answers with "
                f"{self._service.response_type.__name__}, not {type(response).__name__}"
            )
        return self._native.reply(response.to_bytes())

    def drop_unanswered(self) -> None:
        """Drops the request unanswered: the client gets ``UnansweredError``."""
        self._native.drop_unanswered()

    def __repr__(self) -> str:
        return f"Request({self.msg!r}, client_pid={self.client_pid})"


class Server(Closable, Generic[Q, R]):
    """Answers a service's requests."""

    def __init__(self, service: Service[Q, R], native: _horus.Server) -> None:
        self._service = service
        self._native = native

    def try_recv(self) -> Optional[Request[Q, R]]:
        """The next request if one is waiting, else None. Never blocks."""
        raw = self._native.try_recv()
        return None if raw is None else Request(self._service, raw)

    def recv(self, timeout: Optional[float] = None) -> Request[Q, R]:
        """Waits for the next request, at most ``timeout`` seconds (None:
        for ever); raises ``RecvTimeoutError`` when it expires. Releases the
        GIL while waiting; Ctrl-C raises ``KeyboardInterrupt``."""
        return Request(self._service, self._native.recv(timeout))

    def stats(self) -> Dict[str, int]:
        """This server's counters (``received``, ``replied``,
        ``unanswered``, ``client_gone``, ``malformed``, ``reply_failed``)."""
        return self._native.stats()

    def service_stats(self) -> Dict[str, List[Dict[str, Any]]]:
        """Counters of every client and server of the service."""
        return self._native.service_stats()
