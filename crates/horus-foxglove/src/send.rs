//! The per-client send path: a bounded queue the bridge's pump fills and the client's thread
//! drains, dropping (and counting, per channel) the oldest data message when a client falls
//! behind, and binary `messageData` frames written straight from the shared payload.
//!
//! Why frames are written here and not by tungstenite: tungstenite copies every payload into
//! its write buffer, once per client. A server's binary frame is unmasked, so it is just a
//! 2–10 byte WebSocket header, the 13-byte `messageData` header and the payload; this writes
//! the two headers and the payload (shared by every client, never copied) with one
//! `write_vectored`. Text frames (advertisements, status) go through tungstenite, never while
//! a binary frame is half written.

use std::collections::{BTreeMap, VecDeque};
use std::io::{self, IoSlice, Write};
use std::os::unix::net::UnixStream;
use std::sync::{Arc, Mutex, MutexGuard};

use crate::protocol::{message_data_header, MESSAGE_DATA_HEADER};

/// Most data messages waiting for one client.
pub const MAX_QUEUED_MESSAGES: usize = 64;
/// Most payload bytes waiting for one client (one larger message is still let through).
pub const MAX_QUEUED_BYTES: usize = 32 << 20;
/// Most control messages waiting for one client; past this the client is disconnected (it
/// has not read thousands of advertisements: dropping one would leave it unable to decode).
pub const MAX_QUEUED_CONTROL: usize = 4096;

/// One message for one client.
pub(crate) struct Outgoing {
    pub(crate) channel: u32,
    pub(crate) subscription: u32,
    pub(crate) log_time_ns: u64,
    /// The encoded message, shared by every client subscribed to the channel.
    pub(crate) payload: Arc<Vec<u8>>,
}

/// What the client's thread sends next.
pub(crate) enum Item {
    Text(String),
    Data(Outgoing),
}

#[derive(Default)]
struct State {
    control: VecDeque<String>,
    data: VecDeque<Outgoing>,
    data_bytes: usize,
    sent: u64,
    dropped: BTreeMap<u32, u64>,
    closed: bool,
}

/// One client's queue. Control messages (advertisements) are never dropped: there are few of
/// them and a client that misses one cannot decode what follows; a client that lets
/// [`MAX_QUEUED_CONTROL`] of them pile up is disconnected instead.
pub(crate) struct SendQueue {
    state: Mutex<State>,
    /// Written (one byte) when the queue goes from empty to not empty: the client's thread
    /// sleeps in `poll` on the other end together with its socket.
    wake: UnixStream,
}

impl SendQueue {
    pub(crate) fn new(wake: UnixStream) -> SendQueue {
        SendQueue {
            state: Mutex::new(State::default()),
            wake,
        }
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn notify(&self, was_empty: bool) {
        if was_empty {
            // Non-blocking: a full wake socket already means "wake up".
            let _ = (&self.wake).write(&[1]);
        }
    }

    pub(crate) fn push_text(&self, text: String) {
        let mut s = self.lock();
        if s.closed {
            return;
        }
        if s.control.len() >= MAX_QUEUED_CONTROL {
            s.closed = true;
            s.control.clear();
            s.data.clear();
            s.data_bytes = 0;
            drop(s);
            self.notify(true);
            return;
        }
        let was_empty = s.control.is_empty() && s.data.is_empty();
        s.control.push_back(text);
        drop(s);
        self.notify(was_empty);
    }

    /// Queues a data message; when the client is too far behind, the oldest ones make room
    /// (counted as dropped on their channel). Never blocks beyond the queue's lock.
    pub(crate) fn push_data(&self, o: Outgoing) {
        let mut s = self.lock();
        if s.closed {
            return;
        }
        let was_empty = s.control.is_empty() && s.data.is_empty();
        s.data_bytes += o.payload.len();
        s.data.push_back(o);
        while s.data.len() > 1
            && (s.data.len() > MAX_QUEUED_MESSAGES || s.data_bytes > MAX_QUEUED_BYTES)
        {
            let old = s.data.pop_front().expect("len > 1");
            s.data_bytes -= old.payload.len();
            *s.dropped.entry(old.channel).or_default() += 1;
        }
        drop(s);
        self.notify(was_empty);
    }

    pub(crate) fn pop(&self) -> Option<Item> {
        let mut s = self.lock();
        if let Some(t) = s.control.pop_front() {
            return Some(Item::Text(t));
        }
        let o = s.data.pop_front()?;
        s.data_bytes -= o.payload.len();
        s.sent += 1;
        Some(Item::Data(o))
    }

    /// Drops what is queued for `channel` (the client unsubscribed; not counted as dropped).
    pub(crate) fn forget(&self, channel: u32) {
        let mut s = self.lock();
        let State {
            data, data_bytes, ..
        } = &mut *s;
        data.retain(|o| {
            let keep = o.channel != channel;
            if !keep {
                *data_bytes -= o.payload.len();
            }
            keep
        });
    }

    /// Messages handed to the socket and messages dropped per channel so far.
    pub(crate) fn counts(&self) -> (u64, BTreeMap<u32, u64>) {
        let s = self.lock();
        (s.sent, s.dropped.clone())
    }

    pub(crate) fn close(&self) {
        let mut s = self.lock();
        s.closed = true;
        s.control.clear();
        s.data.clear();
        s.data_bytes = 0;
    }

    pub(crate) fn is_closed(&self) -> bool {
        self.lock().closed
    }
}

/// A binary `messageData` frame being written, possibly over several calls.
pub(crate) struct RawFrame {
    head: [u8; 10 + MESSAGE_DATA_HEADER],
    head_len: usize,
    payload: Arc<Vec<u8>>,
    written: usize,
}

impl RawFrame {
    pub(crate) fn new(o: Outgoing) -> RawFrame {
        let mut head = [0u8; 10 + MESSAGE_DATA_HEADER];
        let len = (MESSAGE_DATA_HEADER + o.payload.len()) as u64;
        // FIN + binary opcode; server frames are not masked (RFC 6455 §5.2).
        head[0] = 0x82;
        let n = if len < 126 {
            head[1] = len as u8;
            2
        } else if len <= u64::from(u16::MAX) {
            head[1] = 126;
            head[2..4].copy_from_slice(&(len as u16).to_be_bytes());
            4
        } else {
            head[1] = 127;
            head[2..10].copy_from_slice(&len.to_be_bytes());
            10
        };
        head[n..n + MESSAGE_DATA_HEADER]
            .copy_from_slice(&message_data_header(o.subscription, o.log_time_ns));
        RawFrame {
            head,
            head_len: n + MESSAGE_DATA_HEADER,
            payload: o.payload,
            written: 0,
        }
    }

    /// Writes what the socket takes: `Ok(true)` once the whole frame is out, `Ok(false)` if
    /// the socket's write timed out (call again later).
    pub(crate) fn write_to<W: Write>(&mut self, w: &mut W) -> io::Result<bool> {
        let total = self.head_len + self.payload.len();
        while self.written < total {
            let r = if self.written < self.head_len {
                w.write_vectored(&[
                    IoSlice::new(&self.head[self.written..self.head_len]),
                    IoSlice::new(&self.payload),
                ])
            } else {
                w.write(&self.payload[self.written - self.head_len..])
            };
            match r {
                Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
                Ok(n) => self.written += n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e)
                    if matches!(
                        e.kind(),
                        io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
                    ) =>
                {
                    return Ok(false)
                }
                Err(e) => return Err(e),
            }
        }
        Ok(true)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn msg(channel: u32, len: usize) -> Outgoing {
        Outgoing {
            channel,
            subscription: 9,
            log_time_ns: 1,
            payload: Arc::new(vec![7u8; len]),
        }
    }

    #[test]
    fn a_full_queue_drops_the_oldest_and_counts_per_channel() {
        let (a, _b) = UnixStream::pair().unwrap();
        a.set_nonblocking(true).unwrap();
        let q = SendQueue::new(a);
        for i in 0..MAX_QUEUED_MESSAGES + 10 {
            q.push_data(msg(if i < 6 { 1 } else { 2 }, 8));
        }
        q.push_text("advertise".into());
        let (_, dropped) = q.counts();
        assert_eq!(dropped.get(&1), Some(&6));
        assert_eq!(dropped.get(&2), Some(&4));
        assert!(matches!(q.pop(), Some(Item::Text(_))), "control first");
        let mut n = 0;
        while q.pop().is_some() {
            n += 1;
        }
        assert_eq!(n, MAX_QUEUED_MESSAGES);
    }

    #[test]
    fn a_client_that_lets_control_messages_pile_up_is_closed() {
        let (a, _b) = UnixStream::pair().unwrap();
        a.set_nonblocking(true).unwrap();
        let q = SendQueue::new(a);
        for _ in 0..MAX_QUEUED_CONTROL {
            q.push_text("advertise".into());
        }
        assert!(!q.is_closed());
        q.push_text("one too many".into());
        assert!(q.is_closed() && q.pop().is_none());
    }

    #[test]
    fn raw_frames_have_the_websocket_and_message_data_headers() {
        for len in [3usize, 200, 70_000] {
            let mut f = RawFrame::new(msg(1, len));
            let mut out = Vec::new();
            assert!(f.write_to(&mut out).unwrap());
            let (body_at, n) = match out[1] {
                126 => (4, u16::from_be_bytes([out[2], out[3]]) as usize),
                127 => (
                    10,
                    u64::from_be_bytes(out[2..10].try_into().unwrap()) as usize,
                ),
                n => (2, n as usize),
            };
            assert_eq!(out[0], 0x82);
            assert_eq!(n, 13 + len);
            assert_eq!(out.len(), body_at + n);
            assert_eq!(out[body_at], 1);
            assert_eq!(out[body_at + 1..body_at + 5], 9u32.to_le_bytes());
            assert!(out[body_at + 13..].iter().all(|&b| b == 7));
        }
    }
}
