//! Answering: a server's publisher places on its clients' response
//! channels, the client checks before a reply, and writing the reply (by
//! copy or in place in a loaned chunk) or a bare status.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use horus_shm::{Channel, ProcessId, PublisherPort};

use super::coarse_clock;
use super::error::ReplyError;
use super::service::ServiceInner;
use super::table::{ServerCounter, Table};
use super::wire::{self, RequestHeader, ResponseHeader, HEADER};

/// A client that was alive this recently is not checked again before a
/// reply (the check reads `/proc`).
const CLIENT_RECHECK: Duration = Duration::from_millis(5);

/// What a request guard needs to answer: shared by the server and the
/// guards it handed out (which may be answered from other threads). The
/// response's layout is the service's, so typed and raw servers share it.
pub(crate) struct Replier {
    pub(super) svc: Arc<ServiceInner>,
    pub(super) table: Arc<Table>,
    pub(super) s: usize,
    pub(super) gen: u64,
    ports: Mutex<Ports>,
}

/// The answering state behind the replier's lock.
struct Ports {
    /// One per client answered lately.
    open: Vec<ResponsePort>,
    /// Whether the server still holds place `s`: while it does, this lock
    /// makes the answering end the only writer of its counters.
    holds_place: bool,
}

/// How a call is answered.
pub(super) enum Answer<F> {
    /// A response body: its fixed part (the response type's size) and a
    /// tail of `tail_len` bytes, written in place by `fill`.
    Body { tail_len: usize, fill: F },
    /// The server dropped the request unanswered.
    Unanswered,
    /// The server could not form a reply (e.g. a raw reply of the wrong
    /// size): the client sees `ReplyFailed`.
    Failed,
    /// Forwarded for another host's service: it has no server.
    NoServer,
    /// Forwarded likewise: its server (this pid, on its host) died.
    ServerDied(u32),
}

/// This server's publisher place on one client's response channel.
struct ResponsePort {
    token: u64,
    client: usize,
    name: String,
    port: PublisherPort,
    /// When the client was last seen alive, on the coarse clock (`None`:
    /// never checked).
    alive_at: Option<Duration>,
    staging: Box<[u64]>,
}

impl Replier {
    pub(super) fn new(svc: Arc<ServiceInner>, table: Arc<Table>, s: usize, gen: u64) -> Self {
        Replier {
            svc,
            table,
            s,
            gen,
            ports: Mutex::new(Ports {
                open: Vec::new(),
                holds_place: true,
            }),
        }
    }

    /// Counts an answer's outcome; `holds_place` read under the ports lock.
    ///
    /// A server that has left its place no longer owns that place's
    /// counters: the next server to take it zeroes them and counts its own
    /// answers there with single-writer stores. A late answer counted there
    /// would be credited to that server (a reply it never sent) and could
    /// be lost between its load and store. So an answer given after the
    /// server left is not counted at the server; the client counts the
    /// response, or its failure, at its end.
    fn bump(&self, holds_place: bool, c: ServerCounter) {
        if holds_place {
            self.table.bump_server_sole(self.s, c);
        }
    }

    /// Runs `leave` (the server giving up its place) under the ports lock,
    /// after which answers count with read-modify-writes: every answer
    /// counted before is ordered before the place is free.
    pub(super) fn leave_place(&self, leave: impl FnOnce()) {
        let mut ports = self.ports.lock().unwrap_or_else(|e| e.into_inner());
        ports.holds_place = false;
        leave();
    }

    /// The response port for the client of `h`, opened on first use; its
    /// index in `ports`. `None` if the client is gone (left or died).
    fn port_for(&self, ports: &mut Vec<ResponsePort>, h: &RequestHeader) -> Option<usize> {
        if self.table.client_token(h.client) != h.token {
            ports.retain(|p| p.token != h.token);
            return None;
        }
        let at = match ports.iter().position(|p| p.token == h.token) {
            Some(at) => at,
            None => {
                // Clients that left since: drop their ports.
                ports.retain(|p| self.table.client_token(p.client) == p.token);
                let name = self.svc.response_name(h.token);
                let schema = self.svc.config.resp_schema;
                let chan = Channel::open_existing(&name, Some(&schema)).ok()?;
                let want = self.svc.layout.response_channel(&self.svc.config);
                if chan.layout().config != want {
                    return None;
                }
                let port = PublisherPort::join(&chan).ok()?;
                let words = (HEADER + self.svc.layout.resp_size).div_ceil(8).max(4);
                ports.push(ResponsePort {
                    token: h.token,
                    client: h.client,
                    name,
                    port,
                    alive_at: None,
                    staging: vec![0; words].into_boxed_slice(),
                });
                ports.len() - 1
            }
        };
        // The coarse clock: see `coarse_clock` (this runs on every reply).
        let now = coarse_clock::now();
        let p = &mut ports[at];
        let recent = match (p.alive_at, now) {
            (Some(t), Some(now)) => now.saturating_sub(t) < CLIENT_RECHECK,
            _ => false,
        };
        if !recent {
            if !ProcessId::from_token(h.pid).is_alive() {
                // Dead: free its places and remove its response channel
                // (only it used that name).
                let dead = ports.swap_remove(at);
                dead.port.reclaim_dead();
                horus_shm::Segment::unlink(&dead.name);
                self.table.reclaim_dead();
                return None;
            }
            p.alive_at = now;
        }
        Some(at)
    }

    /// Sends the answer to the call of `h`: a body written in place by
    /// `fill` (its fixed part, then its tail) or a bare status.
    pub(super) fn send<F: FnOnce(&mut [u8], &mut [u8])>(
        &self,
        h: &RequestHeader,
        answer: Answer<F>,
    ) -> Result<(), ReplyError> {
        let mut guard = self.ports.lock().unwrap_or_else(|e| e.into_inner());
        let holds = guard.holds_place;
        let ports = &mut guard.open;
        let Some(at) = self.port_for(ports, h) else {
            // Read-modify-write: the receiving end counts `ClientGone` too.
            // Not once the place is another server's (see `bump`).
            if holds {
                self.table.bump_server(self.s, ServerCounter::ClientGone);
            }
            return Err(ReplyError::ClientGone);
        };
        let rp = &mut ports[at];
        let max = self.svc.config.resp_tail as usize;
        let has_tail = self.svc.layout.resp_has_tail;
        let mut server_pid = ProcessId::current().pid;
        let (status, fill, refused) = match answer {
            Answer::Body { tail_len, .. } if tail_len > max || (tail_len > 0 && !has_tail) => (
                wire::STATUS_FAILED,
                None,
                Some(ReplyError::TooLarge {
                    requested: tail_len,
                    max,
                }),
            ),
            Answer::Body { tail_len, fill } => (wire::STATUS_OK, Some((tail_len, fill)), None),
            Answer::Unanswered => (wire::STATUS_UNANSWERED, None, None),
            Answer::Failed => (wire::STATUS_FAILED, None, None),
            Answer::NoServer => (wire::STATUS_NO_SERVER, None, None),
            Answer::ServerDied(pid) => {
                server_pid = pid;
                (wire::STATUS_SERVER_DIED, None, None)
            }
        };
        let header = ResponseHeader {
            id: h.id,
            status,
            server_pid,
        }
        .encode();
        let layout = self.svc.layout;
        let size = layout.resp_size;
        // Each outcome is counted *before* it is published, so a client that
        // has the answer also sees it counted (the counter's store precedes
        // the ring's Release publication of the message).
        let sent = match fill {
            Some((_, fill)) if layout.resp_inline => {
                let bytes: &mut [u8] = bytemuck::cast_slice_mut(&mut rp.staging);
                let (head, body) = bytes.split_at_mut(HEADER);
                head.copy_from_slice(bytemuck::cast_slice(&header));
                fill(&mut body[..size], &mut []);
                self.bump(holds, ServerCounter::Replied);
                rp.port.send_inline(&bytes[..HEADER + size]).is_ok()
            }
            Some((tail_len, fill)) => match rp.port.loan_chunk() {
                Some(loan) => {
                    let tail_at = layout.resp_tail_offset;
                    let bytes = rp.port.chunk_bytes(&loan);
                    let len =
                        wire::write_chunk_record(bytes, &header, size, tail_at, tail_len, fill);
                    self.bump(holds, ServerCounter::Replied);
                    rp.port.send_chunk(loan, len).is_ok()
                }
                None => {
                    // No chunk: tell the client instead.
                    let failed = ResponseHeader {
                        id: h.id,
                        status: wire::STATUS_FAILED,
                        server_pid: ProcessId::current().pid,
                    }
                    .encode();
                    self.bump(holds, ServerCounter::ReplyFailed);
                    let _ = rp.port.send_inline(bytemuck::cast_slice(&failed));
                    return Err(ReplyError::PoolExhausted);
                }
            },
            None => {
                // A forwarded outcome counts as replied: this server did
                // answer, with what the remote service said.
                self.bump(
                    holds,
                    match status {
                        wire::STATUS_UNANSWERED => ServerCounter::Unanswered,
                        wire::STATUS_FAILED => ServerCounter::ReplyFailed,
                        _ => ServerCounter::Replied,
                    },
                );
                rp.port.send_inline(bytemuck::cast_slice(&header)).is_ok()
            }
        };
        // Every length above was checked against the channel's capacities.
        debug_assert!(sent, "a checked response did not fit");
        match refused {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }
}
