//! The publishing end of a topic.

use std::marker::PhantomData;
use std::sync::Arc;

use horus_msgs::Message;
use horus_shm::{PayloadError, PublisherPort, RoomError, RoomPolicy};

use crate::error::{LoanError, SendError, TopicError};
use crate::qos::Overflow;
use crate::sample_mut::{LoanSlot, SampleMut};
use crate::stats::PublisherStats;
use crate::topic::TopicInner;

/// What a successful send did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Delivery {
    /// Subscribers active when the message was published; each will receive
    /// it unless it is overwritten first (`DropOldest`), which the
    /// subscriber counts as `overrun`. 0 means nobody was listening — the
    /// message is counted as `undelivered`.
    pub subscribers: u32,
}

/// Publishes messages of type `T`. One publisher is one place on the topic
/// and the single writer of its own ring; make one per thread.
pub struct Publisher<T> {
    pub(crate) topic: Arc<TopicInner>,
    pub(crate) port: PublisherPort,
    /// Staging area for loans of inline messages (8-byte aligned).
    pub(crate) staging: Box<[u64]>,
    pub(crate) stats: PublisherStats,
    _t: PhantomData<fn(T)>,
}

impl<T: Message> Publisher<T> {
    pub(crate) fn new(topic: Arc<TopicInner>) -> Result<Self, TopicError> {
        let port = topic.join(PublisherPort::join, &T::SCHEMA.to_string())?;
        let words = std::mem::size_of::<T>().div_ceil(8).max(2);
        Ok(Publisher {
            topic,
            port,
            staging: vec![0u64; words].into_boxed_slice(),
            stats: PublisherStats::default(),
            _t: PhantomData,
        })
    }

    /// Publishes `msg` by copy. On failure the message is handed back.
    pub fn send(&mut self, msg: T) -> Result<Delivery, SendError<T>> {
        self.send_ref(&msg).map_err(|e| e.map(|()| msg))
    }

    /// Publishes a copy of `*msg` (for large messages: nothing is moved by
    /// value). On failure nothing was sent; the caller still has `msg`.
    pub fn send_ref(&mut self, msg: &T) -> Result<Delivery, SendError<()>> {
        if let Err(e) = self.make_room() {
            return Err(refusal(e, ()));
        }
        let bytes = bytemuck::bytes_of(msg);
        let sent = if self.topic.inline {
            self.port.send_inline(bytes)
        } else {
            let Some(loan) = self.port.loan_chunk() else {
                self.stats.pool_exhausted += 1;
                return Err(SendError::PoolExhausted(()));
            };
            // The topic was checked on open to have chunks that hold a `T`.
            self.port.chunk_bytes(&loan)[..bytes.len()].copy_from_slice(bytes);
            self.port.send_chunk(loan, bytes.len())
        };
        match sent {
            Ok(subscribers) => Ok(self.delivered(subscribers)),
            Err(PayloadError::TooLarge { capacity, .. }) => Err(SendError::TooLarge((), capacity)),
        }
    }

    /// Bytes a loaned sample may fill: the slot payload (inline topics) or
    /// the chunk.
    pub(crate) fn capacity(&self) -> usize {
        if self.topic.inline {
            self.port.slot_payload()
        } else {
            self.port.chunk_size()
        }
    }

    /// Publishes `msg` followed by a copy of `tail` (point data, pixels).
    /// On failure nothing is sent and the error says why.
    pub fn send_with_tail(&mut self, msg: &T, tail: &[u8]) -> Result<Delivery, SendError<()>> {
        let mut sample = self.loan_slice(tail.len()).map_err(|e| match e {
            LoanError::TooLarge { max, .. } => SendError::TooLarge((), max),
            LoanError::NoTail => SendError::TooLarge((), 0),
            LoanError::PoolExhausted => SendError::PoolExhausted(()),
            LoanError::SegmentLost => SendError::SegmentLost(()),
        })?;
        *sample = *msg;
        sample.tail_mut().copy_from_slice(tail);
        sample.send().map_err(|e| e.map(drop))
    }

    /// Loans a sample to fill in place and [`SampleMut::send`]. Large
    /// messages are written directly in shared memory (zero copy); messages
    /// of at most [`INLINE_MAX`](crate::INLINE_MAX) bytes are staged in a
    /// cache-hot buffer and copied into the ring on send. The sample starts
    /// with whatever the memory held: write every field you care about.
    // `#[inline]`: every codegen unit that calls this small function gets a
    // copy of it, so it is inlined into the caller's send loop however the
    // calling crate is split into codegen units. Without it, whether it was
    // inlined depended on that split: since 86757ed (a change elsewhere) it
    // was a call in `pingpong`'s echo and send loops, +20-30 ns per 16 B
    // busy-poll round trip with loans.
    #[inline]
    pub fn loan(&mut self) -> Result<SampleMut<'_, T>, LoanError> {
        if self.port.is_lost() {
            return Err(LoanError::SegmentLost);
        }
        if self.topic.inline {
            return Ok(SampleMut::new(self, LoanSlot::Staged, 0));
        }
        self.loan_chunk(0)
    }

    /// Loans a sample with a tail of `tail_len` bytes (messages with a tail:
    /// `PointCloud`, `Image`). Written in place in shared memory.
    pub fn loan_slice(&mut self, tail_len: usize) -> Result<SampleMut<'_, T>, LoanError> {
        if !T::HAS_TAIL {
            return Err(LoanError::NoTail);
        }
        let max = self.max_tail();
        if tail_len > max {
            return Err(LoanError::TooLarge {
                requested: tail_len,
                max,
            });
        }
        self.loan_chunk(tail_len)
    }

    fn loan_chunk(&mut self, tail_len: usize) -> Result<SampleMut<'_, T>, LoanError> {
        if self.port.is_lost() {
            return Err(LoanError::SegmentLost);
        }
        match self.port.loan_chunk() {
            Some(loan) => Ok(SampleMut::new(self, LoanSlot::Chunk(loan), tail_len)),
            None => {
                self.stats.pool_exhausted += 1;
                Err(LoanError::PoolExhausted)
            }
        }
    }

    /// Largest tail a loan may carry.
    pub fn max_tail(&self) -> usize {
        self.port.chunk_size().saturating_sub(tail_offset::<T>())
    }

    /// Applies the overflow policy: is there room for one more message?
    /// The port checks that the segment is still there, waits under
    /// `Block` (asleep on a futex a subscriber's read wakes) and counts a
    /// refusal.
    pub(crate) fn make_room(&mut self) -> Result<(), RoomError> {
        let policy = match self.topic.overflow {
            Overflow::DropOldest => RoomPolicy::Overwrite,
            Overflow::Reject => RoomPolicy::Reject,
            Overflow::Block { timeout } => RoomPolicy::Block(timeout),
        };
        self.port.make_room(policy)
    }

    pub(crate) fn delivered(&mut self, subscribers: u32) -> Delivery {
        // An undelivered send (no subscriber) was counted by the port.
        self.stats.sent += 1;
        Delivery { subscribers }
    }

    /// `Err(TopicError::SegmentLost)` if another process truncated the
    /// topic's segment (this publisher is then dead: drop it and open the
    /// topic again). Touches the segment's last page, so it notices any
    /// truncation; sends notice it within 256 sends.
    pub fn check(&self) -> Result<(), TopicError> {
        if self.port.probe_lost() {
            return Err(TopicError::SegmentLost {
                topic: self.topic.name.clone(),
            });
        }
        Ok(())
    }

    /// This publisher's counters.
    pub fn stats(&self) -> PublisherStats {
        let mut s = self.stats.clone();
        s.undelivered = self.port.undelivered();
        s.rejected = self.port.rejected();
        s.timed_out = self.port.timed_out();
        s.subscribers = self.port.subscribers();
        s
    }

    /// Counters of every endpoint on the topic (including subscribers'
    /// overruns, in any process).
    pub fn topic_stats(&self) -> crate::TopicStats {
        crate::TopicStats::from_snapshot(self.port.snapshot())
    }

    /// Subscribers active now.
    pub fn subscribers(&self) -> u32 {
        self.port.subscribers()
    }

    /// The topic name.
    pub fn topic(&self) -> &str {
        &self.topic.name
    }
}

/// The error a refused send returns, handing `msg` back (the port counted
/// the refusal).
pub(crate) fn refusal<M>(why: RoomError, msg: M) -> SendError<M> {
    match why {
        RoomError::Full => SendError::Full(msg),
        RoomError::TimedOut(d) => SendError::Timeout(msg, d),
        RoomError::Lost => SendError::SegmentLost(msg),
    }
}

/// Where the tail starts after the fixed part of `T`.
pub(crate) fn tail_offset<T>() -> usize {
    std::mem::size_of::<T>().next_multiple_of(8)
}
