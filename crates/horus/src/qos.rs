//! Quality of service: history depth and what happens when it is full.

use std::time::Duration;

/// What a publisher does when a subscriber has not yet read the oldest
/// message in the history. The policy is a property of the topic: every
/// endpoint of a topic agrees on it, and adding a subscriber (a monitoring
/// tool, say) never changes it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Overflow {
    /// Overwrite the oldest message (sensors: the newest reading matters).
    /// Subscribers that were lapped count the lost messages as `overrun`.
    DropOldest,
    /// Refuse the new message: `send` hands it back in
    /// [`SendError::Full`](crate::SendError::Full), counted as `rejected`.
    Reject,
    /// Wait up to `timeout` for the slowest subscriber to make room, then
    /// hand the message back in [`SendError::Timeout`](crate::SendError::Timeout).
    Block {
        /// Longest wait per send.
        timeout: Duration,
    },
}

impl Overflow {
    /// The code stored in the segment (the timeout is per publisher).
    pub(crate) fn code(self) -> u32 {
        match self {
            Overflow::DropOldest => 0,
            Overflow::Reject => 1,
            Overflow::Block { .. } => 2,
        }
    }

    /// The policy a stored code stands for (Block with the default
    /// timeout); `None` for a code this build does not know.
    pub(crate) fn from_code(code: u32) -> Option<Overflow> {
        match code {
            0 => Some(Overflow::DropOldest),
            1 => Some(Overflow::Reject),
            2 => Some(Overflow::Block {
                timeout: Duration::from_secs(1),
            }),
            _ => None,
        }
    }

    pub(crate) fn name_of(code: u32) -> &'static str {
        match code {
            0 => "DropOldest",
            1 => "Reject",
            2 => "Block",
            _ => "unknown",
        }
    }
}

/// How a subscriber waits in `recv`/`recv_timeout`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WaitMode {
    /// Spin briefly, then sleep on a futex in shared memory: no CPU while
    /// idle. Registering costs a one-off system-wide memory barrier
    /// (milliseconds) and makes publishers on the topic do a fence per send.
    Futex,
    /// Only ever poll (lowest latency, one core busy while waiting);
    /// `recv` spins. Publishers never pay for waking anyone.
    BusyPoll,
}
