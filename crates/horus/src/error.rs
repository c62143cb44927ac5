//! Errors, one enum per operation. Failed sends hand the message back.

use std::time::Duration;

/// Why a topic could not be opened, or an endpoint created on it.
#[derive(Debug, thiserror::Error)]
pub enum TopicError {
    /// The topic exists with another message type.
    #[error("topic {topic:?} carries {found}, not {expected}")]
    SchemaMismatch {
        /// Topic name.
        topic: String,
        /// The schema this endpoint was opened with.
        expected: String,
        /// The schema the topic has.
        found: String,
    },
    /// The topic exists with other QoS or capacities than explicitly asked.
    #[error("topic {topic:?} was created with {found}; requested {requested}")]
    QosMismatch {
        /// Topic name.
        topic: String,
        /// What the topic has.
        found: String,
        /// What was requested.
        requested: String,
    },
    /// The request itself is invalid (name, capacities, message type).
    #[error("invalid topic {topic:?}: {reason}")]
    Invalid {
        /// Topic name.
        topic: String,
        /// Why.
        reason: String,
    },
    /// Every publisher or subscriber place is held by a live endpoint.
    #[error("topic {topic:?}: {source}")]
    Full {
        /// Topic name.
        topic: String,
        /// Details.
        source: horus_shm::JoinError,
    },
    /// The shared-memory segment is missing, truncated, corrupt, or from an
    /// incompatible build.
    #[error("topic {topic:?}: {source}")]
    Segment {
        /// Topic name.
        topic: String,
        /// Details.
        source: horus_shm::OpenError,
    },
    /// The topic does not exist (open-existing only).
    #[error("topic {0:?} does not exist")]
    NotFound(String),
    /// Another process truncated the topic's segment under this endpoint:
    /// the endpoint is dead (drop it). Its name was released, so opening the
    /// topic again creates a fresh segment.
    #[error("topic {topic:?}: its shared-memory segment was truncated by another process; reopen the topic")]
    SegmentLost {
        /// Topic name.
        topic: String,
    },
}

/// Why a message was not published. Every variant hands the message back.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum SendError<M> {
    /// `Overflow::Reject`: the slowest subscriber has not read the oldest
    /// message of the history.
    #[error("history full: a subscriber has not read the oldest message")]
    Full(M),
    /// `Overflow::Block`: no room appeared within the timeout.
    #[error("history still full after {1:?}")]
    Timeout(M, Duration),
    /// Every pool chunk is in use (held by the history or by samples that
    /// subscribers keep).
    #[error("loan pool exhausted: every chunk is held by the history or by subscribers")]
    PoolExhausted(M),
    /// The message's tail is longer than the topic's `max_tail_bytes` (the
    /// second field).
    #[error("tail longer than the topic allows ({1} bytes)")]
    TooLarge(M, usize),
    /// The topic's segment was truncated by another process: nothing can be
    /// published on it any more. Open the topic again.
    #[error("the topic's shared-memory segment was truncated by another process")]
    SegmentLost(M),
}

impl<M> SendError<M> {
    /// Replaces the message carried by the error, keeping the reason.
    pub fn map<N>(self, f: impl FnOnce(M) -> N) -> SendError<N> {
        match self {
            SendError::Full(m) => SendError::Full(f(m)),
            SendError::Timeout(m, d) => SendError::Timeout(f(m), d),
            SendError::PoolExhausted(m) => SendError::PoolExhausted(f(m)),
            SendError::TooLarge(m, max) => SendError::TooLarge(f(m), max),
            SendError::SegmentLost(m) => SendError::SegmentLost(f(m)),
        }
    }

    /// The message that was not sent.
    pub fn into_inner(self) -> M {
        match self {
            SendError::Full(m)
            | SendError::Timeout(m, _)
            | SendError::PoolExhausted(m)
            | SendError::TooLarge(m, _)
            | SendError::SegmentLost(m) => m,
        }
    }
}

/// Why a loan could not be made.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum LoanError {
    /// Every pool chunk is in use.
    #[error("loan pool exhausted: every chunk is held by the history or by subscribers")]
    PoolExhausted,
    /// The requested tail does not fit in a chunk.
    #[error("requested {requested} tail bytes; the topic allows at most {max}")]
    TooLarge {
        /// Requested tail length.
        requested: usize,
        /// The topic's `max_tail_bytes`.
        max: usize,
    },
    /// The message type has no tail (use `loan`).
    #[error("message type has no variable-size tail; use loan()")]
    NoTail,
    /// The topic's segment was truncated by another process.
    #[error("the topic's shared-memory segment was truncated by another process")]
    SegmentLost,
}

/// Why `recv_timeout` returned without a message.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum RecvError {
    /// Nothing arrived in time.
    #[error("no message within {0:?}")]
    Timeout(Duration),
    /// The topic's segment was truncated by another process: no message
    /// will ever arrive on this subscriber. Open the topic again.
    #[error("topic {topic:?}: its shared-memory segment was truncated by another process")]
    SegmentLost {
        /// Topic name.
        topic: String,
    },
}
