//! Typed errors of action servers and clients.

use std::time::Duration;

use horus::{CallError, ServiceError, TopicError};

use crate::wire::{GoalId, GoalStatus};

/// Why an action's services or topics could not be opened.
#[derive(Debug, thiserror::Error)]
pub enum OpenError {
    /// One of the action's services could not be opened.
    #[error(transparent)]
    Service(#[from] ServiceError),
    /// One of the action's topics could not be opened.
    #[error(transparent)]
    Topic(#[from] TopicError),
    /// A goal, feedback or result type larger than the action's payload
    /// field, or one with a tail.
    #[error("message type {0} does not fit an action payload ({max} bytes, no tail)", max = crate::PAYLOAD_MAX)]
    TooLarge(&'static str),
}

/// Why a client-side action operation failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ActionError {
    /// No action server is running: reported at once.
    #[error("no server for action {0:?}")]
    NoServer(String),
    /// The server rejected the goal.
    #[error("goal {0} rejected")]
    Rejected(GoalId),
    /// The server does not know the goal (never sent, or its result expired).
    #[error("goal {0} unknown to the server (never accepted, or its result expired)")]
    UnknownGoal(GoalId),
    /// The server's goal, feedback or result type is not this client's.
    #[error("the server's message types differ from the client's")]
    WrongType,
    /// The server process died while holding the call (retrying may reach
    /// another server; the goal itself is lost with its server).
    #[error("the action server (pid {pid}) died")]
    ServerDied {
        /// Process id of the dead server.
        pid: u32,
    },
    /// No answer within the timeout.
    #[error("no answer within {0:?}")]
    Timeout(Duration),
    /// A call to one of the action's services failed otherwise.
    #[error(transparent)]
    Call(CallError),
    /// The server's answer could not be decoded.
    #[error("malformed answer from the action server")]
    Malformed,
}

impl ActionError {
    pub(crate) fn from_call(e: CallError, action: &str) -> Self {
        match e {
            CallError::NoServer(_) => ActionError::NoServer(action.to_owned()),
            CallError::Timeout(t) => ActionError::Timeout(t),
            CallError::ServerDied { pid } => ActionError::ServerDied { pid },
            e => ActionError::Call(e),
        }
    }
}

/// Why a server-side operation on a goal failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum GoalError {
    /// The server has no such goal (never accepted, or expired).
    #[error("unknown goal {0}")]
    UnknownGoal(GoalId),
    /// The goal's status does not allow this transition.
    #[error("goal {id}: cannot go from {from:?} to {to:?}")]
    InvalidTransition {
        /// The goal.
        id: GoalId,
        /// Its status now.
        from: GoalStatus,
        /// The status asked for.
        to: GoalStatus,
    },
}
