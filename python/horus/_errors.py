"""Every exception horus raises, declared here and only here.

The native module raises these classes (it imports them from this module),
and ``horus`` re-exports them. Each one subclasses ``HorusError`` and, where
a Python user would catch a built-in, that built-in too:

* timeouts are ``TimeoutError`` (``RecvTimeoutError``, ``SendTimeoutError``,
  ``CallTimeoutError``, ``ActionTimeoutError``, ``TransformTimeoutError``);
* a name that is not there is a ``KeyError`` when it is looked up by key in a
  mapping-like store (``ParamNotFoundError``: parameters by name), a
  ``LookupError`` otherwise (``UnknownGoalError``: a goal id the server does
  not keep; the tf errors: frames and transforms). ``KeyError``'s quoting of
  its message is undone, so ``str(e)`` reads as the message;
* a use of a closed endpoint is a ``ValueError`` (``ClosedError``), as an I/O
  operation on a closed file is; a transform tf refuses is a ``ValueError``
  (``InvalidTransformError``).

Details travel as attributes set by the raiser (``topic``, ``service``,
``action``, ``name``, ``goal_id``, ``pid``, ...), documented per class.
"""

from __future__ import annotations

from typing import Optional

__all__ = [
    "ActionError",
    "ActionNoServerError",
    "ActionServerDiedError",
    "ActionTimeoutError",
    "ActionTypeError",
    "BusyError",
    "CallTimeoutError",
    "CdrDecodeError",
    "CdrEncodeError",
    "CdrError",
    "ClosedError",
    "ConnectivityError",
    "ExtrapolationError",
    "FrameNotFoundError",
    "GoalRejectedError",
    "HistoryFullError",
    "HorusError",
    "InterfaceError",
    "InvalidTopicError",
    "InvalidTransformError",
    "InvalidTransitionError",
    "LoanError",
    "LoanViewsAliveError",
    "NoServerError",
    "ParamDeclarationError",
    "ParamError",
    "ParamNotFoundError",
    "ParamRangeError",
    "ParamTooLargeError",
    "ParamTypeError",
    "ParamYamlError",
    "PoolExhaustedError",
    "QosMismatchError",
    "RecvTimeoutError",
    "ReplyFailedError",
    "SchemaMismatchError",
    "SegmentError",
    "SegmentLostError",
    "SendError",
    "SendTimeoutError",
    "ServerDiedError",
    "ServiceError",
    "StaleDescriptorError",
    "TensorPoolError",
    "TopicError",
    "TopicFullError",
    "TransformError",
    "TransformLoopError",
    "TransformTimeoutError",
    "UnansweredError",
    "UnknownGoalError",
]


class HorusError(Exception):
    """Base class of every horus error."""


class ClosedError(HorusError, ValueError):
    """An endpoint was used after its ``close()`` (a ``ValueError``, as an I/O
    operation on a closed file)."""


# Topics -----------------------------------------------------------------


class TopicError(HorusError):
    """A topic could not be opened, or an endpoint created on it (``topic``)."""

    topic: str


class SchemaMismatchError(TopicError):
    """The topic exists with another message type. ``expected`` and ``found``
    name both schemas."""

    expected: str
    found: str


class QosMismatchError(TopicError):
    """The topic exists with other QoS or capacities than explicitly requested
    (``found``, ``requested``)."""


class TopicFullError(TopicError):
    """Every publisher or subscriber place of the topic is held by a live endpoint."""


class InvalidTopicError(TopicError):
    """The request is invalid (topic name, capacities, message type)."""


class SegmentError(TopicError):
    """The shared-memory segment is missing, truncated, corrupt, or from an
    incompatible build."""


class SendError(HorusError):
    """A message was not published (it is never reported as sent)."""


class HistoryFullError(SendError):
    """``Overflow.REJECT``: a subscriber has not read the oldest message of the history."""


class SendTimeoutError(SendError, TimeoutError):
    """``Overflow.block(timeout)``: no room appeared within the timeout."""


class PoolExhaustedError(SendError):
    """Every loan chunk is in use (held by the history or by subscribers)."""


class LoanError(HorusError):
    """A loan could not be made or used (tail too large, loan outstanding, no loan)."""


class LoanViewsAliveError(LoanError):
    """``send()`` or ``discard()`` of a loan (or ``close()`` of its publisher)
    while views of its memory (NumPy arrays, memoryviews) are alive; ``views``
    counts them. The loan stays outstanding."""

    views: int


class RecvTimeoutError(HorusError, TimeoutError):
    """No message (or request) arrived within the timeout."""


class SegmentLostError(HorusError):
    """Another process truncated the topic's shared-memory segment: this
    endpoint is dead (``topic`` names it). Open the topic again: it gets a
    fresh segment."""

    topic: str


# Tensor pools -------------------------------------------------------------


class TensorPoolError(HorusError):
    """A tensor pool could not be opened, or a tensor allocated or attached."""


class StaleDescriptorError(TensorPoolError):
    """The descriptor names a tensor that was freed since, or another pool's slot."""


# Services -----------------------------------------------------------------


class ServiceError(HorusError):
    """A service could not be opened or used, or a call produced no response
    (``service``). Base class of the call errors."""

    service: str


class NoServerError(ServiceError):
    """No server is running: reported at once, nothing was sent (or the request
    was withdrawn before any server took it)."""


class ServerDiedError(ServiceError):
    """The server that took the request died before answering (``pid`` names
    it). Retrying may reach another server."""

    pid: int


class BusyError(ServiceError):
    """The client's request queue is full of unanswered calls (``in_flight`` of
    them): nothing was sent."""

    in_flight: int


class CallTimeoutError(ServiceError, TimeoutError):
    """No response within the timeout; the call was withdrawn (a late response
    is discarded and counted)."""


class UnansweredError(ServiceError):
    """The server dropped the request without replying."""


class ReplyFailedError(ServiceError):
    """The server tried to reply but could not send its response."""


# Actions ------------------------------------------------------------------


class ActionError(HorusError):
    """An action could not be opened or used. Base class of the action errors;
    ``action`` names the action."""

    action: str


class ActionNoServerError(ActionError):
    """No action server is running: reported at once."""


class ActionServerDiedError(ActionError):
    """The action server died while a call waited for it (``pid`` names it,
    None if unknown). The goal is lost with it."""

    pid: Optional[int]


class ActionTimeoutError(ActionError, TimeoutError):
    """No answer within the timeout (the goal itself goes on)."""


class GoalRejectedError(ActionError):
    """The server rejected the goal (``goal_id`` names it)."""

    goal_id: int


class UnknownGoalError(ActionError, LookupError):
    """The server does not know the goal: never accepted, or its result expired
    (``goal_id``). A ``LookupError``: a goal id looked up and not found."""

    goal_id: int


class ActionTypeError(ActionError):
    """The other end's goal, feedback or result type is not this one's."""


class InvalidTransitionError(ActionError):
    """The goal's status does not allow this transition (``goal_id``,
    ``from_status``, ``to_status``)."""

    goal_id: int
    from_status: str
    to_status: str


# Parameters ---------------------------------------------------------------


class ParamError(HorusError):
    """A parameter operation failed; the value is unchanged. Base class of the
    parameter errors; ``name`` names the parameter."""

    name: Optional[str]


class ParamNotFoundError(ParamError, KeyError):
    """No parameter of that name is declared. A ``KeyError``: parameters are
    looked up by name, as in a mapping."""

    def __str__(self) -> str:
        # KeyError quotes its argument (it is usually the key): the message here.
        return str(self.args[0]) if self.args else ""


class ParamTypeError(ParamError):
    """The value's type is not the parameter's declared type (``expected``,
    ``got``: kind names such as "f64")."""

    expected: str
    got: str


class ParamRangeError(ParamError):
    """The value (or an element of an array) is outside the declared range
    (``value``, ``min``, ``max``, as text)."""

    value: str
    min: str
    max: str


class ParamDeclarationError(ParamError):
    """The declaration is invalid (duplicate or bad name, range of the wrong
    kind, default outside its range, too large)."""


class ParamTooLargeError(ParamError):
    """The value does not fit in the parameter service's value field."""


class ParamYamlError(ParamError):
    """A YAML parameter file is malformed or does not fit the declarations
    (``line``, ``column``: 1-based, None if unknown). Nothing was applied."""

    line: Optional[int]
    column: Optional[int]


# ROS 2 interfaces ----------------------------------------------------------


class CdrError(HorusError):
    """A ROS 2 message could not be encoded or decoded. ``path`` names the field
    ('' for the message itself), ``kind`` says what is wrong (a short
    identifier), ``type_name`` the message type."""

    path: str
    kind: str
    type_name: str


class CdrEncodeError(CdrError):
    """A message could not be encoded: a field of the wrong type, an integer out
    of range, a bound exceeded, a fixed array of another length, a string with
    a NUL. Nothing was sent."""


class CdrDecodeError(CdrError):
    """Bytes are not a valid message of the type: truncated, a count larger than
    the bytes left, a string not UTF-8 or not NUL-terminated, a bool byte other
    than 0/1, a bound exceeded, a bad encapsulation header."""


class InterfaceError(HorusError):
    """ROS 2 interface definitions could not be loaded: a malformed
    .msg/.srv/.action file (``file``, ``line``), an unknown or recursive type,
    a package loaded twice."""


# Transforms (horus.tf) -----------------------------------------------------


class TransformError(HorusError, LookupError):
    """A lookup gave no transform (the base of the tf errors; a ``LookupError``,
    as tf2's Python users catch them)."""


class FrameNotFoundError(TransformError):
    """A frame of the lookup was never broadcast (tf2: ``LookupException``)."""


class ConnectivityError(TransformError):
    """The two frames are in different trees (tf2: ``ConnectivityException``)."""


class ExtrapolationError(TransformError):
    """The time is outside what the buffer holds for a frame of the chain; the
    message gives the range held (tf2: ``ExtrapolationException``)."""


class TransformLoopError(TransformError):
    """The broadcast parents form a loop."""


class TransformTimeoutError(TransformError, TimeoutError):
    """No transform within the timeout; the message says why the last try failed."""


class InvalidTransformError(HorusError, ValueError):
    """A transform tf refuses (empty or self-parent frame, NaN, a rotation that
    is not a unit quaternion): nothing of the call was sent."""
