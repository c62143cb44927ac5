//! [`RawReader`]: a subscriber or an observer that receives messages as bytes.

use std::sync::Arc;
use std::time::{Duration, Instant};

use horus_shm::{Channel, JoinError, Received, StartAt, SubscriberPort};

use super::RawSample;

/// Polls before a blocking reader sleeps on the futex, unless set ([`RawReader::set_spin`]).
const DEFAULT_SPIN: u32 = 16;

/// One message as received: the fixed part followed by any tail.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RawMessage {
    /// The message's bytes (a copy).
    pub bytes: Vec<u8>,
    /// The publisher place it came from (its ring), to tell one's own messages apart.
    pub source: usize,
    /// Its sequence number in that publisher's ring (consecutive for one publisher).
    pub seq: u64,
}

/// A reader of a topic whose type this process does not know: an observer (tools) or a
/// subscriber (the network bridge, which must back-pressure `Block` publishers like any
/// subscriber).
///
/// An observer, like [`Topic::observer`](crate::Topic::observer), reads the same rings as the
/// subscribers, is never in a publisher's room check and is not counted by publishers; what it
/// misses it counts as its own overrun. A subscriber is counted and waited for.
pub struct RawReader {
    port: SubscriberPort,
    buf: Box<[u64]>,
    /// Bytes reserved at the front of every copied message (see [`RawReader::with_prefix`]).
    prefix: usize,
    /// Polls a blocking receive makes before it yields and sleeps ([`RawReader::set_spin`]).
    spin: u32,
}

/// The reader the tools use: an observer.
pub type RawObserver = RawReader;

impl RawReader {
    pub(crate) fn join(
        chan: &Arc<Channel>,
        blocking: bool,
        observer: bool,
        start: StartAt,
    ) -> Result<RawReader, JoinError> {
        let port = SubscriberPort::join_at(chan, blocking, observer, start)?;
        let words = (chan.layout().config.slot_payload as usize).div_ceil(8);
        Ok(RawReader {
            port,
            buf: vec![0u64; words].into_boxed_slice(),
            prefix: 0,
            spin: DEFAULT_SPIN,
        })
    }

    /// Reserves `prefix` zeroed bytes at the front of every message's `bytes`, for a header
    /// the caller fills in (the bridge's wire header): the message is copied once, straight
    /// into the buffer that goes on the network.
    pub fn with_prefix(mut self, prefix: usize) -> RawReader {
        self.prefix = prefix;
        self
    }

    /// How many empty polls a blocking receive ([`recv_timeout`](Self::recv_timeout),
    /// [`recv_sample_timeout`](Self::recv_sample_timeout)) makes before it yields the CPU a
    /// few times and sleeps on the futex, as [`Subscriber::set_spin`](crate::Subscriber::set_spin)
    /// (default 16). 0 sleeps at once.
    pub fn set_spin(&mut self, polls: u32) {
        self.spin = polls;
    }

    /// Whether this reader is an observer (else a subscriber).
    pub fn is_observer(&self) -> bool {
        self.port.is_observer()
    }

    /// The next message, if one is ready.
    pub fn try_recv(&mut self) -> Option<RawMessage> {
        let r = self.port.try_receive(&mut self.buf)?;
        Some(self.copy_out(r))
    }

    /// The next message, waiting at most `timeout` (sleeping on the futex for a blocking
    /// observer, polling otherwise).
    pub fn recv_timeout(&mut self, timeout: Duration) -> Option<RawMessage> {
        let deadline = Instant::now() + timeout;
        let r = self
            .port
            .receive_blocking(&mut self.buf, self.spin, Some(deadline))?;
        Some(self.copy_out(r))
    }

    /// The next message, if one is ready, read in place when it travelled in a chunk (no
    /// copy; the sample pins the chunk until dropped).
    pub fn try_recv_sample(&mut self) -> Option<RawSample> {
        let r = self.port.try_receive(&mut self.buf)?;
        Some(self.sample_of(r))
    }

    /// [`try_recv_sample`](Self::try_recv_sample), waiting at most `timeout` (as
    /// [`recv_timeout`](Self::recv_timeout)).
    pub fn recv_sample_timeout(&mut self, timeout: Duration) -> Option<RawSample> {
        let deadline = Instant::now() + timeout;
        let r = self
            .port
            .receive_blocking(&mut self.buf, self.spin, Some(deadline))?;
        Some(self.sample_of(r))
    }

    /// Counts a received message the caller refuses as malformed (see [`Self::counts`]).
    pub(crate) fn count_malformed(&mut self) {
        self.port.count_malformed();
    }

    fn sample_of(&mut self, r: Received) -> RawSample {
        let (source, seq) = self.port.last_source();
        match r {
            Received::Inline { len } => {
                let inline: &[u8] = bytemuck::cast_slice(&self.buf);
                RawSample::copied(&inline[..len.min(inline.len())], source, seq)
            }
            Received::Chunk { pool, chunk, len } => {
                // The port validated the descriptor and pinned the chunk for this place;
                // the sample releases it when dropped.
                let ptr = self.port.chunk_ptr(pool, chunk);
                RawSample::chunk(
                    Arc::clone(self.port.place()),
                    pool,
                    chunk,
                    ptr,
                    len,
                    source,
                    seq,
                )
            }
        }
    }

    /// Messages received, missed (overwritten before read) and malformed so far.
    pub fn counts(&self) -> (u64, u64, u64) {
        (
            self.port.received(),
            self.port.overrun(),
            self.port.malformed(),
        )
    }

    fn copy_out(&mut self, r: Received) -> RawMessage {
        let (source, seq) = self.port.last_source();
        let prefix = self.prefix;
        match r {
            Received::Inline { len } => {
                let inline: &[u8] = bytemuck::cast_slice(&self.buf);
                let body = &inline[..len.min(inline.len())];
                let mut bytes = Vec::with_capacity(prefix + body.len());
                bytes.resize(prefix, 0);
                bytes.extend_from_slice(body);
                RawMessage { bytes, source, seq }
            }
            Received::Chunk { pool, chunk, len } => {
                let ptr = self.port.chunk_ptr(pool, chunk);
                // Not zeroed first: the body is written once, by the copy.
                let mut bytes = Vec::with_capacity(prefix + len);
                bytes.resize(prefix, 0);
                // SAFETY: the port validated the descriptor (pool, chunk and len within the
                // chunk) and pinned the chunk for us (the publisher does not reuse it until we
                // release it below), so `len` bytes at `ptr` are readable and stable; the
                // vector's capacity has `len` bytes after its `prefix` initialised ones, which
                // the copy initialises before `set_len` counts them.
                unsafe {
                    std::ptr::copy_nonoverlapping(ptr, bytes.as_mut_ptr().add(prefix), len);
                    bytes.set_len(prefix + len);
                }
                self.port.place().release_chunk(pool, chunk);
                RawMessage { bytes, source, seq }
            }
        }
    }
}
