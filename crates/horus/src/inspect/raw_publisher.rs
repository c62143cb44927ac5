//! [`RawPublisher`]: publishes bytes on a topic whose type this process learned from the
//! topic's description (for `horus topic pub`).

use std::sync::Arc;
use std::time::Duration;

use horus_shm::{Channel, JoinError, PayloadError, PublisherPort, RoomError, RoomPolicy};

use crate::qos::Overflow;

/// Why a raw send published nothing. Every refusal is counted in the publisher's record, as
/// for typed publishers.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RawSendError {
    /// `Reject` policy and a subscriber's history is full.
    #[error("a subscriber's history is full (Reject policy)")]
    Full,
    /// `Block` policy and no room appeared within the topic's timeout.
    #[error("no room within {0:?} (Block policy)")]
    Timeout(Duration),
    /// The bytes are not one message of the topic's type.
    #[error("{got} bytes, the topic's messages have {expected}")]
    WrongSize {
        /// Bytes given.
        got: usize,
        /// Size of the topic's message.
        expected: usize,
    },
    /// Larger than the topic's slot or chunk.
    #[error("{len} bytes exceed the topic's capacity of {capacity}")]
    TooLarge {
        /// Bytes given.
        len: usize,
        /// Capacity.
        capacity: usize,
    },
    /// Every chunk of this publisher's pool is in use.
    #[error("every chunk of the publisher's pool is in use")]
    PoolExhausted,
    /// The segment was truncated under us.
    #[error("the topic's segment was truncated")]
    SegmentLost,
}

/// A publisher place on an existing topic, sending bytes checked only for their size.
pub struct RawPublisher {
    port: PublisherPort,
    message_size: usize,
    /// Whether a tail may follow the fixed part.
    tail: bool,
    overflow: Overflow,
}

impl RawPublisher {
    pub(crate) fn join(
        chan: &Arc<Channel>,
        message_size: usize,
        tail: bool,
        overflow: Overflow,
    ) -> Result<RawPublisher, JoinError> {
        Ok(RawPublisher {
            port: PublisherPort::join(chan)?,
            message_size,
            tail,
            overflow,
        })
    }

    /// This publisher's place (the ring its messages are in; see [`RawMessage::source`]).
    ///
    /// [`RawMessage::source`]: super::RawMessage::source
    pub fn place(&self) -> usize {
        self.port.place()
    }

    /// Publishes one message (exactly the type's size, plus the tail for a type with one).
    /// Returns how many subscribers it was delivered to (observers not counted).
    pub fn send(&mut self, bytes: &[u8]) -> Result<u32, RawSendError> {
        self.send_parts(&[bytes])
    }

    /// Publishes one message given in pieces (their concatenation is the message, as for
    /// [`send`](Self::send)): a large message is copied piece by piece straight into its
    /// chunk — a message that arrived fragmented from the network is not first joined in a
    /// buffer of its own.
    pub fn send_parts(&mut self, parts: &[&[u8]]) -> Result<u32, RawSendError> {
        let len: usize = parts.iter().map(|p| p.len()).sum();
        let fits = if self.tail {
            len >= self.message_size
        } else {
            len == self.message_size
        };
        if !fits {
            return Err(RawSendError::WrongSize {
                got: len,
                expected: self.message_size,
            });
        }
        // The port checks the segment, waits under `Block` (asleep until a subscriber's
        // read frees a slot, reclaiming dead subscribers meanwhile) and counts a refusal.
        let policy = match self.overflow {
            Overflow::DropOldest => RoomPolicy::Overwrite,
            Overflow::Reject => RoomPolicy::Reject,
            Overflow::Block { timeout } => RoomPolicy::Block(timeout),
        };
        self.port.make_room(policy).map_err(|e| match e {
            RoomError::Full => RawSendError::Full,
            RoomError::TimedOut(d) => RawSendError::Timeout(d),
            RoomError::Lost => RawSendError::SegmentLost,
        })?;
        // A type with a tail travels in chunks whenever the topic has them, however short:
        // typed subscribers take an inline message only of exactly the type's size (a
        // 12-byte ROS 2 message, 8-byte frame and 4-byte body, sent inline was counted
        // malformed and lost).
        let inline = len <= self.port.slot_payload() && !(self.tail && self.port.chunk_size() > 0);
        let sent = if inline {
            match parts {
                [one] => self.port.send_inline(one),
                _ => self.port.send_inline(&parts.concat()),
            }
        } else {
            let loan = self.port.loan_chunk().ok_or(RawSendError::PoolExhausted)?;
            let room = self.port.chunk_bytes(&loan);
            if room.len() < len {
                let capacity = room.len();
                self.port.abandon(loan);
                return Err(RawSendError::TooLarge { len, capacity });
            }
            let mut at = 0;
            for part in parts {
                room[at..at + part.len()].copy_from_slice(part);
                at += part.len();
            }
            self.port.send_chunk(loan, len)
        };
        let subscribers = sent.map_err(|e| match e {
            PayloadError::TooLarge { len, capacity, .. } => {
                RawSendError::TooLarge { len, capacity }
            }
        })?;
        // An undelivered send (no subscriber) was counted by the port.
        Ok(subscribers)
    }
}
