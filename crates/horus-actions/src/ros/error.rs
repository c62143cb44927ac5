//! Typed errors of actions that carry ROS 2 types.

use horus::inspect::{CreateError, RawRosSendError, RosTopicError};
use horus::ServiceError;
use horus_cdr::{DecodeError, EncodeError};

use crate::error::{ActionError, GoalError};

/// Why a ROS-typed action's services or topics could not be opened.
#[derive(Debug, thiserror::Error)]
pub enum RosOpenError {
    /// One of the action's services could not be opened (another type there, bad name, …).
    #[error(transparent)]
    Service(#[from] ServiceError),
    /// One of the action's topics could not be created or opened (another type there, …).
    #[error(transparent)]
    Topic(#[from] CreateError),
    /// One of the action's topics could not be joined.
    #[error(transparent)]
    Join(#[from] RosTopicError),
    /// The default result (what a result request for an unknown goal is answered with)
    /// could not be encoded.
    #[error("the action's default result cannot be encoded: {0}")]
    DefaultResult(EncodeError),
    /// The default result given (raw endpoints) is not a `Foo_GetResult_Response`'s bytes.
    #[error("the action's default result is not a GetResult response: {0}")]
    DefaultResultNotCdr(DecodeError),
}

/// Why a client-side operation of a ROS-typed action failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RosActionError {
    /// The call failed, the server refused or did not know the goal, or answered
    /// something that is not its type's answer ([`ActionError`]).
    #[error(transparent)]
    Action(#[from] ActionError),
    /// The goal could not be encoded (a bound exceeded, a NUL in a string, …): nothing
    /// was sent.
    #[error("the goal cannot be encoded: {0}")]
    Encode(EncodeError),
    /// The server's answer (the result) is not a valid message of the action's type.
    #[error("the server's answer cannot be decoded: {0}")]
    Decode(DecodeError),
    /// The server refused to cancel the goal (`ERROR_REJECTED`).
    #[error("the server refused to cancel the goal")]
    CancelRejected,
}

/// Why a server-side operation on a goal of a ROS-typed action failed.
#[derive(Debug, thiserror::Error)]
pub enum RosGoalError {
    /// No such goal, or its status does not allow this ([`GoalError`]).
    #[error(transparent)]
    Goal(#[from] GoalError),
    /// The feedback or result could not be encoded: nothing was sent and the goal's
    /// status is unchanged.
    #[error("cannot be encoded: {0}")]
    Encode(EncodeError),
    /// Feedback or result bytes that are not a CDR message (raw endpoints): nothing was
    /// sent and the goal's status is unchanged.
    #[error("not a CDR message: {0}")]
    NotCdr(DecodeError),
    /// The feedback topic refused the message (larger than its chunks, …).
    #[error(transparent)]
    Publish(#[from] RawRosSendError),
}
