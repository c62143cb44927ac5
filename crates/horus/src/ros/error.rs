//! Why a ROS 2 message was not published, a call not made or a reply not sent.

use std::time::Duration;

use horus_cdr::EncodeError;

use crate::error::{LoanError, SendError};
use crate::{CallError, ReplyError};

/// Why [`Publisher::publish`](crate::Publisher::publish) published nothing. In every case
/// nothing was sent and any chunk loaned for the message went back to the pool.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RosSendError {
    /// The message breaks its type's rules (a bounded sequence or string over its bound, a
    /// NUL inside a string, more elements than CDR's 32-bit counts): found before anything
    /// was loaned.
    #[error("cannot encode the message: {0}")]
    Encode(EncodeError),
    /// The CDR body is larger than the topic's `max_tail_bytes` (raise it on the
    /// [`TopicBuilder`](crate::TopicBuilder) for large images and clouds).
    #[error("the message's CDR body of {size} bytes exceeds the topic's maximum of {max}")]
    TooLarge {
        /// The body's size, bytes.
        size: usize,
        /// The topic's largest body (`max_tail_bytes`).
        max: usize,
    },
    /// [`publish_with`](crate::Publisher::publish_with) wrote another length than it declared.
    #[error("declared a {declared}-byte body but wrote {written} bytes")]
    LengthMismatch {
        /// The length given.
        declared: usize,
        /// What the writer wrote.
        written: usize,
    },
    /// `Overflow::Reject`: a subscriber's history is full.
    #[error("history full: a subscriber has not read the oldest message")]
    Full,
    /// `Overflow::Block`: no room appeared within the timeout.
    #[error("history still full after {0:?}")]
    Timeout(Duration),
    /// Every pool chunk is in use.
    #[error("loan pool exhausted: every chunk is held by the history or by subscribers")]
    PoolExhausted,
    /// The topic's segment was truncated by another process; open the topic again.
    #[error("the topic's shared-memory segment was truncated by another process")]
    SegmentLost,
}

impl From<LoanError> for RosSendError {
    fn from(e: LoanError) -> Self {
        match e {
            LoanError::PoolExhausted => RosSendError::PoolExhausted,
            LoanError::TooLarge { requested, max } => RosSendError::TooLarge {
                size: requested,
                max,
            },
            // `Ros<M>` always has a tail; kept total for the type system.
            LoanError::NoTail => RosSendError::TooLarge { size: 0, max: 0 },
            LoanError::SegmentLost => RosSendError::SegmentLost,
        }
    }
}

impl RosSendError {
    /// The refusal of a send of a `size`-byte body.
    pub(crate) fn from_send<M>(e: SendError<M>, size: usize) -> Self {
        match e {
            SendError::Full(_) => RosSendError::Full,
            SendError::Timeout(_, d) => RosSendError::Timeout(d),
            SendError::PoolExhausted(_) => RosSendError::PoolExhausted,
            SendError::TooLarge(_, max) => RosSendError::TooLarge { size, max },
            SendError::SegmentLost(_) => RosSendError::SegmentLost,
        }
    }
}

/// Why a [`Client::call_ros`](crate::Client::call_ros) failed.
#[derive(Debug, thiserror::Error)]
pub enum RosCallError {
    /// The request breaks its type's rules: found before anything was sent.
    #[error("cannot encode the request: {0}")]
    Encode(EncodeError),
    /// The call failed (see [`CallError`]).
    #[error(transparent)]
    Call(#[from] CallError),
}

/// Why a [`Request::reply_ros`](crate::Request::reply_ros) failed.
#[derive(Debug, thiserror::Error)]
pub enum RosReplyError {
    /// The response breaks its type's rules: nothing was sent, and the request (consumed)
    /// was dropped unanswered, so the client gets
    /// [`CallError::Unanswered`](crate::CallError::Unanswered).
    #[error("cannot encode the response: {0}")]
    Encode(EncodeError),
    /// The reply could not be sent (see [`ReplyError`]).
    #[error(transparent)]
    Reply(#[from] ReplyError),
}
