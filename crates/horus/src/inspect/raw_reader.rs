//! [`RawObserver`]: an observer that receives messages as bytes.

use std::sync::Arc;
use std::time::{Duration, Instant};

use horus_shm::{Channel, JoinError, Received, SubscriberPort};

/// Polls before a blocking observer sleeps on the futex.
const SPIN: u32 = 16;

/// One message as received: the fixed part followed by any tail.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RawMessage {
    /// The message's bytes (a copy).
    pub bytes: Vec<u8>,
}

/// An observer of a topic whose type this process does not know.
///
/// Like [`Topic::observer`](crate::Topic::observer): it reads the same rings as the
/// subscribers, is never in a publisher's room check and is not counted by publishers; what it
/// misses it counts as its own overrun.
pub struct RawObserver {
    port: SubscriberPort,
    buf: Box<[u64]>,
}

impl RawObserver {
    pub(crate) fn join(chan: &Arc<Channel>, blocking: bool) -> Result<RawObserver, JoinError> {
        let port = SubscriberPort::join(chan, blocking, true)?;
        let words = (chan.layout().config.slot_payload as usize).div_ceil(8);
        Ok(RawObserver {
            port,
            buf: vec![0u64; words].into_boxed_slice(),
        })
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
            .receive_blocking(&mut self.buf, SPIN, Some(deadline))?;
        Some(self.copy_out(r))
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
        match r {
            Received::Inline { len } => {
                let bytes: &[u8] = bytemuck::cast_slice(&self.buf);
                RawMessage {
                    bytes: bytes[..len.min(bytes.len())].to_vec(),
                }
            }
            Received::Chunk { pool, chunk, len } => {
                let ptr = self.port.chunk_ptr(pool, chunk);
                let mut bytes = vec![0u8; len];
                // SAFETY: the port validated the descriptor (pool, chunk and len within the
                // chunk) and pinned the chunk for us (the publisher does not reuse it until we
                // release it below), so `len` bytes at `ptr` are readable and stable.
                unsafe { std::ptr::copy_nonoverlapping(ptr, bytes.as_mut_ptr(), len) };
                self.port.place().release_chunk(pool, chunk);
                RawMessage { bytes }
            }
        }
    }
}
