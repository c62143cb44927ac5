//! [`RawPublisher`]: publishes bytes on a topic whose type this process learned from the
//! topic's description (for `horus topic pub`).

use std::sync::Arc;
use std::time::Duration;

use horus_shm::{
    Channel, ChunkLoan, JoinError, PayloadError, PublisherPort, RoomError, RoomPolicy,
};

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
    /// The chunk loaned by [`loan`](Self::loan), not yet sent nor given back.
    loaned: Option<ChunkLoan>,
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
            loaned: None,
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
        self.make_room()?;
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

    /// Applies the overflow policy: the port checks the segment, waits under `Block`
    /// (asleep until a subscriber's read frees a slot, reclaiming dead subscribers
    /// meanwhile) and counts a refusal.
    fn make_room(&mut self) -> Result<(), RawSendError> {
        let policy = match self.overflow {
            Overflow::DropOldest => RoomPolicy::Overwrite,
            Overflow::Reject => RoomPolicy::Reject,
            Overflow::Block { timeout } => RoomPolicy::Block(timeout),
        };
        self.port.make_room(policy).map_err(|e| match e {
            RoomError::Full => RawSendError::Full,
            RoomError::TimedOut(d) => RawSendError::Timeout(d),
            RoomError::Lost => RawSendError::SegmentLost,
        })
    }

    /// Loans a chunk of the pool for one message written in place (a type with a tail on
    /// a topic with chunks): the returned memory is the whole chunk, exclusively ours,
    /// with whatever bytes it held before (write every byte you send). One loan at a
    /// time: while one is outstanding this returns the same chunk again. Send it with
    /// [`send_loan`](Self::send_loan) or give it back with
    /// [`drop_loan`](Self::drop_loan); dropping the publisher gives it back too.
    /// `PoolExhausted` (counted) when every chunk is in use, `SegmentLost` when the
    /// segment was truncated, `WrongSize` (`got` 0) for a topic whose messages cannot
    /// travel in chunks (no tail, or no chunks).
    pub fn loan(&mut self) -> Result<&mut [u8], RawSendError> {
        if !self.tail || self.port.chunk_size() == 0 {
            return Err(RawSendError::WrongSize {
                got: 0,
                expected: self.message_size,
            });
        }
        if self.port.is_lost() {
            return Err(RawSendError::SegmentLost);
        }
        if self.loaned.is_none() {
            // The port counts a failed loan (`loan_failures`).
            self.loaned = Some(self.port.loan_chunk().ok_or(RawSendError::PoolExhausted)?);
        }
        let loan = self.loaned.as_ref().expect("set above");
        Ok(self.port.chunk_bytes(loan))
    }

    /// Whether a loan is outstanding.
    pub fn has_loan(&self) -> bool {
        self.loaned.is_some()
    }

    /// Publishes the outstanding loan's first `len` bytes (at least the type's size).
    /// Returns the subscribers reached. On a refusal (`Full`, `Timeout`, `SegmentLost`,
    /// `WrongSize`, `TooLarge`) nothing is sent and the loan stays outstanding, its bytes
    /// unchanged; without a loan, `WrongSize` with `got` 0.
    pub fn send_loan(&mut self, len: usize) -> Result<u32, RawSendError> {
        if self.loaned.is_none() || len < self.message_size {
            return Err(RawSendError::WrongSize {
                got: if self.loaned.is_none() { 0 } else { len },
                expected: self.message_size,
            });
        }
        let capacity = self.port.chunk_size();
        if len > capacity {
            return Err(RawSendError::TooLarge { len, capacity });
        }
        self.make_room()?;
        let loan = self.loaned.take().expect("checked above");
        // The length was checked against the chunk, the only refusal of `send_chunk`.
        self.port.send_chunk(loan, len).map_err(|e| match e {
            PayloadError::TooLarge { len, capacity, .. } => {
                RawSendError::TooLarge { len, capacity }
            }
        })
    }

    /// Gives the outstanding loan's chunk back to the pool unsent (nothing if none).
    pub fn drop_loan(&mut self) {
        if let Some(loan) = self.loaned.take() {
            self.port.abandon(loan);
        }
    }
}

impl Drop for RawPublisher {
    /// An outstanding loan goes back to the pool with the publisher.
    fn drop(&mut self) {
        self.drop_loan();
    }
}
