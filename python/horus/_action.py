"""Actions: long-running goals with feedback, a result and cancel, from
Python.

Same actions, same semantics as Rust's ``horus_actions``: a Python client
reaches a Rust server and the other way round. Goal, feedback and result are
fixed-size standard messages (any of ``SERVICE_TYPES``); they travel as the
bytes of their fixed part, tagged with their schema, so an end with other
types is refused (``ActionTypeError``) rather than misread.

Goals follow ROS 2's status model (``GoalStatus``): accepted → executing →
succeeded / aborted, or on a cancel request canceling → canceled.
"""

from __future__ import annotations

import enum
import weakref
from typing import Any, Generic, List, NamedTuple, Optional, Type, TypeVar

from . import _horus
from ._closing import Closable
from ._messages import Message

__all__ = ["GoalStatus", "GoalResult", "ActionClient", "GoalHandle", "ActionServer", "NewGoal"]

G = TypeVar("G", bound=Message)
F = TypeVar("F", bound=Message)
R = TypeVar("R", bound=Message)


class GoalStatus(str, enum.Enum):
    """Where a goal stands (ROS 2's goal status model)."""

    ACCEPTED = "accepted"
    EXECUTING = "executing"
    CANCELING = "canceling"
    SUCCEEDED = "succeeded"
    CANCELED = "canceled"
    ABORTED = "aborted"

    @property
    def is_terminal(self) -> bool:
        """Whether the goal has finished (succeeded, canceled or aborted)."""
        return self in (GoalStatus.SUCCEEDED, GoalStatus.CANCELED, GoalStatus.ABORTED)


class GoalResult(NamedTuple, Generic[R]):
    """A finished goal: its final status and its result."""

    status: GoalStatus
    result: R


def _check_type(what: str, t: Any) -> None:
    if not (isinstance(t, type) and issubclass(t, Message)):
        raise TypeError(f"{what} must be a horus message class, not {t!r}")


def _bytes(action: str, what: str, t: Type[Message], msg: Any) -> bytes:
    if not isinstance(msg, t):
        raise TypeError(
            f"action {action!r} takes {t.__name__} as {what}, not {type(msg).__name__}"
        )
    return msg.to_bytes()


class ActionClient(Closable, Generic[G, F, R]):
    """Sends goals to the action ``name`` and follows them.

    Failures raise an ``ActionError`` subclass: ``ActionNoServerError`` at
    once when no server runs, ``ActionServerDiedError``,
    ``ActionTimeoutError``, ``GoalRejectedError``, ``UnknownGoalError``,
    ``ActionTypeError``. Waiting releases the GIL.

    ``ActionClient(Action, name)`` with a ``horus.interfaces`` action class
    gives a ``RosActionClient`` (ROS 2 types, any length)."""

    def __new__(cls, goal_type: Any, *args: Any, **kwargs: Any) -> Any:
        from ._ros_action import RosActionClient, is_ros_action

        if cls is ActionClient and is_ros_action(goal_type):
            return RosActionClient(goal_type, *args, **kwargs)
        return super().__new__(cls)

    def __init__(
        self,
        goal_type: Type[G],
        feedback_type: Type[F],
        result_type: Type[R],
        name: str,
        *,
        namespace: Optional[str] = None,
    ) -> None:
        _check_type("goal_type", goal_type)
        _check_type("feedback_type", feedback_type)
        _check_type("result_type", result_type)
        self.goal_type: Type[G] = goal_type
        self.feedback_type: Type[F] = feedback_type
        self.result_type: Type[R] = result_type
        self._native = _horus.ActionClient(
            goal_type.SCHEMA.name,
            feedback_type.SCHEMA.name,
            result_type.SCHEMA.name,
            name,
            namespace=namespace,
        )
        self._handles: "weakref.WeakSet[GoalHandle[F, R]]" = weakref.WeakSet()

    def close(self) -> None:
        """Releases the client's shared-memory places now, with those of every
        goal handle it gave (the goals themselves go on); any use after raises
        ``ClosedError``, and so does a ``send_goal``, ``cancel`` or ``result``
        waiting in another thread (its call withdrawn). Idempotent."""
        for handle in list(self._handles):
            handle.close()
        self._native.close()

    @property
    def name(self) -> str:
        """The action's name."""
        return self._native.name

    def send_goal(self, goal: G, timeout: float = 5.0) -> "GoalHandle[F, R]":
        """Sends a copy of ``goal`` and waits at most ``timeout`` seconds for
        the server to accept it; returns its handle (status accepted).
        ``GoalRejectedError`` if the server rejects it. Ctrl-C during the
        wait raises ``KeyboardInterrupt`` when the call returns (at most
        ``timeout``)."""
        raw = _bytes(self.name, "goal", self.goal_type, goal)
        return self._track(GoalHandle(self, self._native.send_goal(raw, timeout)))

    def handle(self, goal_id: int) -> "GoalHandle[F, R]":
        """A handle on goal ``goal_id`` (for one whose handle was dropped):
        result and cancel work; status and feedback follow from now on."""
        return self._track(GoalHandle(self, self._native.handle(goal_id)))

    def _track(self, handle: "GoalHandle[F, R]") -> "GoalHandle[F, R]":
        self._handles.add(handle)
        return handle

    def __repr__(self) -> str:
        return (
            f"ActionClient({self.goal_type.__name__}, {self.feedback_type.__name__}, "
            f"{self.result_type.__name__}, {self.name!r})"
        )


class GoalHandle(Closable, Generic[F, R]):
    """One goal sent by an ``ActionClient``. Closing it (or its client)
    stops following the goal (the goal itself goes on)."""

    def __init__(self, client: "ActionClient[Any, F, R]", native: _horus.GoalHandle) -> None:
        self._client = client
        self._native = native

    @property
    def id(self) -> int:
        """The goal's 128-bit id."""
        return self._native.id

    @property
    def status(self) -> GoalStatus:
        """The latest known status (from the status topic; never blocks)."""
        return GoalStatus(self._native.status)

    def feedback(self) -> Optional[F]:
        """The oldest feedback not yet read, or None (never blocks). Unread
        feedback is kept, up to 64 messages; a client may ignore it."""
        raw = self._native.feedback()
        return None if raw is None else self._client.feedback_type.from_bytes(raw)

    def feedback_all(self) -> List[F]:
        """Every feedback message not yet read, oldest first."""
        out: List[F] = []
        while (f := self.feedback()) is not None:
            out.append(f)
        return out

    def cancel(self, timeout: float = 1.0) -> GoalStatus:
        """Asks the server to cancel the goal and waits at most ``timeout``
        seconds for the acknowledgement. Returns the status then: canceling,
        or the final status if the goal had already finished."""
        return GoalStatus(self._native.cancel(timeout))

    def result(self, timeout: float = 10.0) -> "GoalResult[R]":
        """Waits at most ``timeout`` seconds for the goal to finish; returns
        its final status and result. ``ActionTimeoutError`` when the time is
        up (the goal goes on), ``ActionServerDiedError`` if the server dies
        meanwhile. Ctrl-C raises ``KeyboardInterrupt`` within 100 ms."""
        status, raw = self._native.result(timeout)
        return GoalResult(GoalStatus(status), self._client.result_type.from_bytes(raw))

    def __repr__(self) -> str:
        return f"GoalHandle({self.id:032x}, {'closed' if self.closed else self.status.value})"


class NewGoal(Generic[G]):
    """A goal a client sent, waiting for ``ActionServer.accept`` or
    ``reject``: ``goal`` is the goal (a copy), ``id`` its id."""

    def __init__(self, goal_type: Type[G], native: _horus.NewGoal) -> None:
        self._native = native
        self.id: int = native.id
        self.goal: G = goal_type.from_bytes(native.data)

    def __repr__(self) -> str:
        return f"NewGoal({self.id:032x}, {self.goal!r})"


class ActionServer(Closable, Generic[G, F, R]):
    """Serves the action ``name``: takes goals, accepts or rejects them,
    publishes feedback, finishes them (succeed, abort, canceled).

    Poll it from a node's tick: ``next_goal()`` (which also answers cancel
    and result requests), or ``poll()`` alone; cancel requests are
    acknowledged by that poll and reported by ``take_cancel_requests()``.
    A finished goal's result stays available for ``result_retention``
    seconds (15 by default). Run one server per action. Wrong transitions
    raise ``InvalidTransitionError``, unknown goals ``UnknownGoalError``.

    ``ActionServer(Action, name)`` with a ``horus.interfaces`` action class
    gives a ``RosActionServer`` (ROS 2 types, any length)."""

    def __new__(cls, goal_type: Any, *args: Any, **kwargs: Any) -> Any:
        from ._ros_action import RosActionServer, is_ros_action

        if cls is ActionServer and is_ros_action(goal_type):
            return RosActionServer(goal_type, *args, **kwargs)
        return super().__new__(cls)

    def __init__(
        self,
        goal_type: Type[G],
        feedback_type: Type[F],
        result_type: Type[R],
        name: str,
        *,
        namespace: Optional[str] = None,
        result_retention: Optional[float] = None,
    ) -> None:
        _check_type("goal_type", goal_type)
        _check_type("feedback_type", feedback_type)
        _check_type("result_type", result_type)
        self.goal_type: Type[G] = goal_type
        self.feedback_type: Type[F] = feedback_type
        self.result_type: Type[R] = result_type
        self._native = _horus.ActionServer(
            goal_type.SCHEMA.name,
            feedback_type.SCHEMA.name,
            result_type.SCHEMA.name,
            name,
            namespace=namespace,
            result_retention=result_retention,
        )

    @property
    def name(self) -> str:
        """The action's name."""
        return self._native.name

    @property
    def has_pending(self) -> bool:
        """Whether a goal, cancel or result request is waiting."""
        return self._native.has_pending

    def poll(self) -> None:
        """Answers cancel and result requests and drops expired results."""
        self._native.poll()

    def next_goal(self, timeout: float = 0.0) -> Optional[NewGoal[G]]:
        """The next goal a client sent, or None; with ``timeout`` seconds,
        waits that long for one (GIL released, Ctrl-C honoured). A goal of
        another type is refused here (the client gets ``ActionTypeError``)."""
        raw = self._native.next_goal(timeout)
        return None if raw is None else NewGoal(self.goal_type, raw)

    def accept(self, goal: NewGoal[G]) -> int:
        """Accepts a goal (status accepted); returns its id."""
        return self._native.accept(goal._native)

    def reject(self, goal: NewGoal[G]) -> None:
        """Rejects a goal: the client's ``send_goal`` raises ``GoalRejectedError``."""
        self._native.reject(goal._native)

    def execute(self, goal_id: int) -> None:
        """Moves an accepted goal to executing."""
        self._native.execute(goal_id)

    def take_cancel_requests(self) -> List[int]:
        """Goals whose cancel was requested since the last call; each is now
        canceling: finish it with ``canceled`` (or ``succeed`` / ``abort``)."""
        return self._native.take_cancel_requests()

    def status(self, goal_id: int) -> Optional[GoalStatus]:
        """The status of a goal this server keeps, or None."""
        s = self._native.status(goal_id)
        return None if s is None else GoalStatus(s)

    def active_goals(self) -> List[int]:
        """Goals accepted and not finished."""
        return self._native.active_goals()

    def publish_feedback(self, goal_id: int, feedback: F) -> None:
        """Publishes a copy of ``feedback`` for an active goal."""
        self._native.publish_feedback(
            goal_id, _bytes(self.name, "feedback", self.feedback_type, feedback)
        )

    def succeed(self, goal_id: int, result: R) -> None:
        """Finishes a goal as succeeded with ``result``."""
        self._native.succeed(goal_id, _bytes(self.name, "result", self.result_type, result))

    def abort(self, goal_id: int, result: R) -> None:
        """Finishes a goal as aborted with ``result``."""
        self._native.abort(goal_id, _bytes(self.name, "result", self.result_type, result))

    def canceled(self, goal_id: int, result: R) -> None:
        """Finishes a canceling goal as canceled with ``result``."""
        self._native.canceled(goal_id, _bytes(self.name, "result", self.result_type, result))

    def __repr__(self) -> str:
        return (
            f"ActionServer({self.goal_type.__name__}, {self.feedback_type.__name__}, "
            f"{self.result_type.__name__}, {self.name!r})"
        )
