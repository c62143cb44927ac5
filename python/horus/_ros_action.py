"""Actions of ROS 2 types (a ``horus.interfaces`` action class, e.g.
``horus.interfaces.tf2_msgs.action.LookupTransform``), goals, feedback and results of any
length, on ROS 2's services and topics (``name/_action/send_goal`` …)::

    from horus.interfaces.tf2_msgs.action import LookupTransform

    server = horus.RosActionServer(LookupTransform, "tf_lookup")  # or horus.ActionServer(LookupTransform, …)
    client = horus.RosActionClient(LookupTransform, "tf_lookup")  # or horus.ActionClient(LookupTransform, …)
    handle = client.send_goal(LookupTransform.Goal(target_frame="map", source_frame="base"))
    status, result = handle.result(timeout=5.0)

Same semantics as ``horus.ActionServer`` / ``ActionClient`` (ROS 2's status model, cancel,
result retention) and the same exceptions; a Python end meets a Rust
``RosActionServer<A>`` / ``RosActionClient<A>`` of the same action. Goals, feedback and
results are encoded and decoded by the classes (``CdrEncodeError`` before anything is
sent; ``CdrDecodeError`` for bytes from a peer that are not the type).
"""

from __future__ import annotations

import weakref
from typing import Any, List, Optional, Tuple

from . import _horus
from ._closing import Closable
from ._errors import CdrDecodeError
from ._action import GoalResult, GoalStatus

__all__ = ["RosActionClient", "RosActionServer", "RosGoalHandle", "RosNewGoal", "is_ros_action"]

_PARTS = ("Goal", "Result", "Feedback", "SendGoal", "GetResult", "FeedbackMessage")


def is_ros_action(t: Any) -> bool:
    """Whether ``t`` is a ``horus.interfaces`` action class (``pkg.action.Foo``)."""
    return isinstance(t, type) and "/action/" in str(getattr(t, "_TYPE", "")) and all(
        hasattr(t, p) for p in _PARTS
    )


def _check(action_type: Any) -> None:
    if not is_ros_action(action_type):
        raise TypeError(
            "action_type must be a horus.interfaces action class "
            f"(e.g. horus.interfaces.tf2_msgs.action.LookupTransform), not {action_type!r}"
        )


def _types(a: Any) -> List[Tuple[str, str, str]]:
    classes = (
        a.SendGoal.Request,
        a.SendGoal.Response,
        a.GetResult.Request,
        a.GetResult.Response,
        a.FeedbackMessage,
    )
    return [(c.ros_type_name(), c.ros_type_hash(), c.ros_definition()) for c in classes]


def _encode(action: str, what: str, cls: Any, msg: Any) -> bytes:
    if not isinstance(msg, cls):
        raise TypeError(f"action {action!r} takes {cls.__name__} as {what}, not {type(msg).__name__}")
    data: bytes = msg.to_cdr()
    return data


class RosActionClient(Closable):
    """Sends goals to the ROS-typed action ``name`` and follows them. Exceptions as
    ``horus.ActionClient``'s (``ActionNoServerError`` at once when no server runs, …)."""

    def __init__(self, action_type: Any, name: str, *, namespace: Optional[str] = None) -> None:
        _check(action_type)
        self.action_type: Any = action_type
        self._native = _horus.RosActionClient(_types(action_type), name, namespace=namespace)
        self._handles: "weakref.WeakSet[RosGoalHandle]" = weakref.WeakSet()

    def close(self) -> None:
        """Releases the client's shared-memory places now, with those of every
        goal handle it gave (the goals themselves go on); any use after raises
        ``ClosedError``, and so does a ``send_goal``, ``cancel`` or ``result``
        waiting in another thread (its call withdrawn). Idempotent."""
        for handle in list(self._handles):
            handle.close()
        self._native.close()

    def _track(self, handle: "RosGoalHandle") -> "RosGoalHandle":
        self._handles.add(handle)
        return handle

    @property
    def name(self) -> str:
        """The action's name."""
        return self._native.name

    def malformed(self) -> Tuple[int, int]:
        """Feedback and status messages skipped as malformed: (feedback, status)."""
        return self._native.malformed()

    def send_goal(self, goal: Any, timeout: float = 5.0) -> "RosGoalHandle":
        """Sends ``goal`` (an ``action_type.Goal``) and waits at most ``timeout`` seconds for
        the server to accept it. ``GoalRejectedError`` if it rejects it; ``CdrEncodeError``
        (nothing sent) if the goal breaks its type's rules."""
        raw = _encode(self.name, "goal", self.action_type.Goal, goal)
        return self._track(RosGoalHandle(self, self._native.send_goal(raw, timeout)))

    def handle(self, goal_id: int) -> "RosGoalHandle":
        """A handle on goal ``goal_id`` (one whose handle was dropped)."""
        return self._track(RosGoalHandle(self, self._native.handle(goal_id)))

    def __repr__(self) -> str:
        return f"RosActionClient({self.action_type._TYPE}, {self.name!r})"


class RosGoalHandle(Closable):
    """One goal sent by a ``RosActionClient``. Closing it (or its client) stops
    following the goal (the goal itself goes on)."""

    def __init__(self, client: RosActionClient, native: Any) -> None:
        self._client = client
        self._native = native

    @property
    def id(self) -> int:
        """The goal's 128-bit id (its UUID, big-endian)."""
        return int(self._native.id)

    @property
    def status(self) -> GoalStatus:
        """The latest known status (from the status topic; never blocks)."""
        return GoalStatus(self._native.status)

    def feedback(self) -> Any:
        """The oldest feedback not yet read (an ``action_type.Feedback``), or None.
        ``CdrDecodeError`` for feedback whose bytes are not the type (it is consumed)."""
        raw = self._native.feedback()
        return None if raw is None else self._client.action_type.Feedback.from_cdr(raw)

    def feedback_all(self) -> List[Any]:
        """Every feedback message not yet read, oldest first."""
        out: List[Any] = []
        while (f := self.feedback()) is not None:
            out.append(f)
        return out

    def cancel(self, timeout: float = 1.0) -> GoalStatus:
        """Asks the server to cancel; returns canceling, or the final status if the goal
        had already finished."""
        return GoalStatus(self._native.cancel(timeout))

    def result(self, timeout: float = 10.0) -> "GoalResult[Any]":
        """Waits at most ``timeout`` seconds for the goal to finish; returns its final
        status and result (an ``action_type.Result``)."""
        status, raw = self._native.result(timeout)
        response = self._client.action_type.GetResult.Response.from_cdr(raw)
        return GoalResult(GoalStatus(status), response.result)

    def __repr__(self) -> str:
        return f"RosGoalHandle({self.id:032x}, {'closed' if self.closed else self.status.value})"


class RosNewGoal:
    """A goal a client sent, waiting for ``RosActionServer.accept`` or ``reject``:
    ``goal`` is the decoded goal, ``id`` its id."""

    def __init__(self, goal: Any, native: Any) -> None:
        self._native = native
        self.id: int = int(native.id)
        self.goal: Any = goal

    def __repr__(self) -> str:
        return f"RosNewGoal({self.id:032x}, {self.goal!r})"


class RosActionServer(Closable):
    """Serves the ROS-typed action ``name`` (see ``horus.ActionServer`` for the polling
    model, transitions and errors). A goal whose bytes are not an ``action_type.Goal``
    is rejected and counted (``malformed()``), never raised."""

    def __init__(
        self,
        action_type: Any,
        name: str,
        *,
        namespace: Optional[str] = None,
        result_retention: Optional[float] = None,
    ) -> None:
        _check(action_type)
        self.action_type: Any = action_type
        default = action_type.GetResult.Response().to_cdr()
        self._native = _horus.RosActionServer(
            _types(action_type),
            default,
            name,
            namespace=namespace,
            result_retention=result_retention,
        )
        self._undecodable = 0

    @property
    def name(self) -> str:
        """The action's name."""
        return self._native.name

    def malformed(self) -> Tuple[int, int, int]:
        """Requests refused as malformed: (send_goal, cancel_goal, get_result); goals
        that did not decode count under send_goal."""
        s, c, g = self._native.malformed()
        return (s + self._undecodable, c, g)

    @property
    def has_pending(self) -> bool:
        """Whether a goal, cancel or result request is waiting."""
        return bool(self._native.has_pending)

    def poll(self) -> None:
        """Answers cancel and result requests and drops expired results."""
        self._native.poll()

    def next_goal(self, timeout: float = 0.0) -> Optional[RosNewGoal]:
        """The next goal a client sent (decoded), or None; with ``timeout`` seconds,
        waits that long for one."""
        while True:
            raw = self._native.next_goal(timeout)
            if raw is None:
                return None
            try:
                goal = self.action_type.Goal.from_cdr(raw.data)
            except CdrDecodeError:
                self._undecodable += 1
                self._native.reject(raw)
                continue
            return RosNewGoal(goal, raw)

    def accept(self, goal: RosNewGoal) -> int:
        """Accepts a goal (status accepted); returns its id."""
        return int(self._native.accept(goal._native))

    def reject(self, goal: RosNewGoal) -> None:
        """Rejects a goal: the client's ``send_goal`` raises ``GoalRejectedError``."""
        self._native.reject(goal._native)

    def execute(self, goal_id: int) -> None:
        """Moves an accepted goal to executing."""
        self._native.execute(goal_id)

    def take_cancel_requests(self) -> List[int]:
        """Goals whose cancel was requested since the last call (each now canceling)."""
        return list(self._native.take_cancel_requests())

    def status(self, goal_id: int) -> Optional[GoalStatus]:
        """The status of a goal this server keeps, or None."""
        s = self._native.status(goal_id)
        return None if s is None else GoalStatus(s)

    def active_goals(self) -> List[int]:
        """Goals accepted and not finished."""
        return list(self._native.active_goals())

    def publish_feedback(self, goal_id: int, feedback: Any) -> None:
        """Publishes ``feedback`` (an ``action_type.Feedback``) for an active goal."""
        raw = _encode(self.name, "feedback", self.action_type.Feedback, feedback)
        self._native.publish_feedback(goal_id, raw)

    def _response(self, result: Any) -> bytes:
        cls = self.action_type.Result
        if not isinstance(result, cls):
            raise TypeError(
                f"action {self.name!r} takes {cls.__name__} as result, not {type(result).__name__}"
            )
        data: bytes = self.action_type.GetResult.Response(result=result).to_cdr()
        return data

    def succeed(self, goal_id: int, result: Any) -> None:
        """Finishes a goal as succeeded with ``result`` (an ``action_type.Result``)."""
        self._native.succeed(goal_id, self._response(result))

    def abort(self, goal_id: int, result: Any) -> None:
        """Finishes a goal as aborted with ``result``."""
        self._native.abort(goal_id, self._response(result))

    def canceled(self, goal_id: int, result: Any) -> None:
        """Finishes a canceling goal as canceled with ``result``."""
        self._native.canceled(goal_id, self._response(result))

    def __repr__(self) -> str:
        return f"RosActionServer({self.action_type._TYPE}, {self.name!r})"
