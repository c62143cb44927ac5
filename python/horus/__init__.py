"""horus: typed publish/subscribe over shared memory for robots, from Python.

Python endpoints meet Rust endpoints on the same shared-memory topics, with
the same message layouts and schema ids, QoS and loss accounting::

    import horus

    topic = horus.Topic(horus.CmdVel, "base/cmd_vel", depth=8)
    pub = topic.publisher()
    sub = topic.subscriber()
    pub.send(horus.CmdVel(linear=0.5, angular=0.1))
    cmd = sub.recv(timeout=1.0)
    assert cmd.linear == 0.5

Message classes are generated from the Rust definitions (see
``horus.MESSAGE_TYPES``); ``TensorPool`` hands NumPy/DLPack tensors to other
processes by descriptor without copying them; ``Scheduler`` runs Python
nodes (``init/tick/shutdown``) on the horus scheduler. ``Service`` gives
request/response calls (clients, servers) that meet Rust's on the same
services; ``ActionClient`` / ``ActionServer`` long-running goals with
feedback, result and cancel; ``Parameters`` / ``ParamServer`` /
``ParamClient`` typed node parameters served on ``<node>/params``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from . import _horus
from ._horus import (
    PublisherStats,
    RustNode,
    SchemaInfo,
    Scheduler,
    SubscriberStats,
    TickInfo,
    TopicStats,
)
from ._errors import (
    ActionError,
    ActionNoServerError,
    ActionServerDiedError,
    ActionTimeoutError,
    ActionTypeError,
    BusyError,
    CallTimeoutError,
    CdrDecodeError,
    CdrEncodeError,
    CdrError,
    ClosedError,
    GoalRejectedError,
    HistoryFullError,
    HorusError,
    InterfaceError,
    InvalidTopicError,
    InvalidTransitionError,
    LoanError,
    LoanViewsAliveError,
    NoServerError,
    ParamDeclarationError,
    ParamError,
    ParamNotFoundError,
    ParamRangeError,
    ParamTooLargeError,
    ParamTypeError,
    ParamYamlError,
    PoolExhaustedError,
    QosMismatchError,
    RecvTimeoutError,
    ReplyFailedError,
    SchemaMismatchError,
    SegmentError,
    SegmentLostError,
    SendError,
    SendTimeoutError,
    ServerDiedError,
    ServiceError,
    StaleDescriptorError,
    TensorPoolError,
    TopicError,
    TopicFullError,
    UnansweredError,
    UnknownGoalError,
)
from ._action import ActionClient, ActionServer, GoalHandle, GoalResult, GoalStatus, NewGoal
from ._inspect import describe_topic, list_topics
from ._log import HorusHandler, log_segment_name
from ._nodes import FnNode, rust_relay
from ._params import ParamClient, ParamInfo, Parameters, ParamServer, ParamValue
from ._messages import MESSAGE_TYPES, Message, layout_hash, message_type
from ._service import SERVICE_TYPES, Client, PendingCall, Request, Server, Service
from ._tensor import Tensor, TensorPool
from ._topic import (
    Durability,
    DurabilityKind,
    Loan,
    Overflow,
    OverflowKind,
    Publisher,
    Start,
    Subscriber,
    Topic,
)
from ._ros_action import RosActionClient, RosActionServer, RosGoalHandle, RosNewGoal
from ._ros_service import RosRequest, RosService, RosServiceClient, RosServiceServer
from ._ros_topic import RosLoan, RosPublisher, RosSubscriber, RosTopic

__version__: str = _horus.__version__

if TYPE_CHECKING:
    # The classes are built at import time from the Rust schema tables; type checkers
    # read their fields from the stub generated from the same tables.
    from ._message_classes import (
        BatteryState,
        CmdVel,
        EmergencyStop,
        Header,
        Image,
        Imu,
        JointState,
        LaserScan,
        Odometry,
        PointCloud,
        Pose,
        Pose2D,
        Quaternion,
        TensorRef,
        Time,
        Twist,
        Vector3,
    )
else:
    globals().update(MESSAGE_TYPES)


def default_namespace() -> str:
    """The namespace topics and pools use when none is given
    (``HORUS_NAMESPACE``, else per user)."""
    return _horus.default_namespace()


__all__ = [
    "describe_topic",
    "list_topics",
    "log_segment_name",
    "HorusHandler",
    "MESSAGE_TYPES",
    "SERVICE_TYPES",
    "ActionClient",
    "ActionError",
    "ActionNoServerError",
    "ActionServer",
    "ActionServerDiedError",
    "ActionTimeoutError",
    "ActionTypeError",
    "BatteryState",
    "BusyError",
    "CallTimeoutError",
    "CdrDecodeError",
    "CdrEncodeError",
    "CdrError",
    "Client",
    "ClosedError",
    "CmdVel",
    "Durability",
    "DurabilityKind",
    "EmergencyStop",
    "FnNode",
    "GoalHandle",
    "GoalRejectedError",
    "GoalResult",
    "GoalStatus",
    "Header",
    "HistoryFullError",
    "HorusError",
    "Image",
    "Imu",
    "InterfaceError",
    "InvalidTopicError",
    "InvalidTransitionError",
    "JointState",
    "LaserScan",
    "Loan",
    "LoanError",
    "LoanViewsAliveError",
    "Message",
    "NewGoal",
    "NoServerError",
    "Odometry",
    "Overflow",
    "OverflowKind",
    "ParamClient",
    "ParamDeclarationError",
    "ParamError",
    "ParamInfo",
    "ParamNotFoundError",
    "ParamRangeError",
    "ParamServer",
    "ParamTooLargeError",
    "ParamTypeError",
    "ParamValue",
    "ParamYamlError",
    "Parameters",
    "PendingCall",
    "PointCloud",
    "PoolExhaustedError",
    "Pose",
    "Pose2D",
    "Publisher",
    "PublisherStats",
    "QosMismatchError",
    "Quaternion",
    "RecvTimeoutError",
    "ReplyFailedError",
    "Request",
    "RosActionClient",
    "RosActionServer",
    "RosGoalHandle",
    "RosLoan",
    "RosNewGoal",
    "RosPublisher",
    "RosRequest",
    "RosService",
    "RosServiceClient",
    "RosServiceServer",
    "RosSubscriber",
    "RosTopic",
    "RustNode",
    "Scheduler",
    "SchemaInfo",
    "SchemaMismatchError",
    "SegmentError",
    "SegmentLostError",
    "SendError",
    "SendTimeoutError",
    "Server",
    "ServerDiedError",
    "Service",
    "ServiceError",
    "StaleDescriptorError",
    "Start",
    "Subscriber",
    "SubscriberStats",
    "Tensor",
    "TensorPool",
    "TensorPoolError",
    "TensorRef",
    "TickInfo",
    "Time",
    "Topic",
    "TopicError",
    "TopicFullError",
    "TopicStats",
    "Twist",
    "UnansweredError",
    "UnknownGoalError",
    "Vector3",
    "default_namespace",
    "layout_hash",
    "message_type",
    "rust_relay",
]
