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

/// Whether a subscriber that joins late receives messages published before
/// it joined (ROS 2's durability). A property of the topic, like
/// [`Overflow`]: stored in the topic's segment, every endpoint agrees on
/// it, and asking for another one than the topic has is
/// [`TopicError::QosMismatch`](crate::TopicError::QosMismatch).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Durability {
    /// A subscriber starts at the next message published after it joined.
    #[default]
    Volatile,
    /// "Latched": each publisher keeps its last `depth` messages (at most
    /// the topic's depth) for subscribers that join later. A subscriber (or
    /// observer) that joins receives them first — the oldest first — and
    /// then the live stream, with no gap and no duplicate between the two.
    /// The history of a publisher lives as long as that publisher: once it
    /// has left (or died), subscribers that join later get none of its
    /// messages (as in ROS 2, where the history belongs to the writer). The
    /// retained history is not a subscriber: it never makes a `Reject` or
    /// `Block` publisher refuse or wait.
    TransientLocal {
        /// Messages kept per publisher, 1..=the topic's depth.
        depth: u32,
    },
}

impl Durability {
    /// Messages kept per publisher (0 for [`Durability::Volatile`]).
    pub fn latched(self) -> u32 {
        match self {
            Durability::Volatile => 0,
            Durability::TransientLocal { depth } => depth,
        }
    }

    /// The durability a segment's retained-history depth stands for.
    pub(crate) fn from_latched(latched: u32) -> Durability {
        match latched {
            0 => Durability::Volatile,
            depth => Durability::TransientLocal { depth },
        }
    }
}

impl std::fmt::Display for Durability {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Durability::Volatile => f.write_str("volatile"),
            Durability::TransientLocal { depth } => write!(f, "transient-local ({depth})"),
        }
    }
}

pub use horus_shm::StartAt;
