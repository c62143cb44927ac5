//! [`RawPublisher`]: publishes bytes on a topic whose type this process learned from the
//! topic's description (for `horus topic pub`).

use std::sync::Arc;
use std::time::{Duration, Instant};

use horus_shm::{Channel, JoinError, PayloadError, PublisherPort};

use crate::qos::Overflow;

/// Yields before a `Block` send that finds no room starts sleeping between looks.
const BLOCK_YIELDS: u32 = 64;

/// How often a `Block` send waiting for room looks for dead subscribers to reclaim.
const RECLAIM_EVERY: Duration = Duration::from_millis(5);

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
        if self.port.channel().is_lost() {
            return Err(RawSendError::SegmentLost);
        }
        match self.overflow {
            Overflow::DropOldest => {}
            Overflow::Reject => {
                if !self.port.has_space() {
                    self.port.count_rejected();
                    return Err(RawSendError::Full);
                }
            }
            Overflow::Block { timeout } => {
                let deadline = Instant::now() + timeout;
                let mut next_reclaim = Instant::now();
                let mut waits = 0u32;
                while !self.port.has_space() {
                    let now = Instant::now();
                    if now >= deadline {
                        self.port.count_timed_out();
                        return Err(RawSendError::Timeout(timeout));
                    }
                    // A subscriber killed while holding the ring full must not make every
                    // send time out (the network bridge publishes all of a host's traffic
                    // through here): reclaim dead places while we wait, as `Publisher` does.
                    if now >= next_reclaim {
                        self.port.channel().reclaim_dead();
                        next_reclaim = now + RECLAIM_EVERY;
                    }
                    // A subscriber that is only a little behind frees room within
                    // microseconds (the network bridge forwarding a burst): yield first,
                    // sleep only if it stays full.
                    waits += 1;
                    if waits <= BLOCK_YIELDS {
                        std::thread::yield_now();
                    } else {
                        std::thread::sleep(Duration::from_micros(50));
                    }
                }
            }
        }
        let config = self.port.channel().layout().config;
        // A type with a tail travels in chunks whenever the topic has them, however short:
        // typed subscribers take an inline message only of exactly the type's size (a
        // 12-byte ROS 2 message, 8-byte frame and 4-byte body, sent inline was counted
        // malformed and lost).
        let inline = len <= config.slot_payload as usize && !(self.tail && config.chunk_size > 0);
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
        if subscribers == 0 {
            self.port.count_undelivered();
        }
        Ok(subscribers)
    }
}
