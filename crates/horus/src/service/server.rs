//! The answering end of a service.
//!
//! A server is a subscriber on the service's request channel: it sees
//! every client's requests and takes each one by a compare-and-swap on the
//! call's claim word, so with several servers each request is served by
//! exactly one. It answers on the client's own response channel, as one of
//! its publishers.

use std::marker::PhantomData;
use std::ops::Deref;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use horus_msgs::Message;
use horus_shm::{Channel, ProcessId, PublisherPort, Received, SubscriberPort};

use super::error::{ReplyError, ServiceError};
use super::service::{JoinFailure, ServiceInner};
use super::stats::{ServerStats, ServiceStats};
use super::table::{ServerCounter, Table};
use super::wire::{self, claim, RequestHeader, ResponseHeader, HEADER};
use crate::Sample;

/// Polls before a waiting `recv` sleeps on the request channel's futex.
const SPIN: u32 = 64;

/// A client that was alive this recently is not checked again before a
/// reply (the check reads `/proc`).
const CLIENT_RECHECK: Duration = Duration::from_millis(5);

/// Serves a service: receives requests of type `Req` and answers each with
/// a `Resp` exactly once, through the [`Request`] guard.
pub struct Server<Req, Resp> {
    table: Arc<Table>,
    port: SubscriberPort,
    buf: Box<[u64]>,
    replier: Arc<Replier<Resp>>,
    _t: PhantomData<fn() -> Req>,
}

/// What a request guard needs to answer: shared by the server and the
/// guards it handed out (which may be answered from other threads).
pub(crate) struct Replier<Resp> {
    svc: Arc<ServiceInner>,
    table: Arc<Table>,
    s: usize,
    gen: u64,
    ports: Mutex<Vec<ResponsePort>>,
    _t: PhantomData<fn(Resp)>,
}

/// This server's publisher place on one client's response channel.
struct ResponsePort {
    token: u64,
    client: usize,
    name: String,
    port: PublisherPort,
    /// When the client was last seen alive (`None`: never checked).
    alive_at: Option<Instant>,
    staging: Box<[u64]>,
}

impl<Req: Message, Resp: Message> Server<Req, Resp> {
    pub(crate) fn new(svc: Arc<ServiceInner>) -> Result<Self, ServiceError> {
        let (table, port, s, gen) = svc.join(|table, req| {
            // On the request channel first, then visible to clients: a
            // client that sees this server sends after the subscription, so
            // the request's ring starts this server's cursor at it.
            let port =
                SubscriberPort::join(req, true, false).map_err(|e| svc.join_error(e, "server"))?;
            let (s, gen) = table.enter_server().map_err(|closing| {
                if closing {
                    JoinFailure::Closing
                } else {
                    JoinFailure::Fatal(svc.full("server", svc.config.max_servers))
                }
            })?;
            Ok((Arc::clone(table), port, s, gen))
        })?;
        let words = port.place().channel().layout().config.slot_payload as usize / 8;
        Ok(Server {
            table: Arc::clone(&table),
            port,
            buf: vec![0; words].into_boxed_slice(),
            replier: Arc::new(Replier {
                svc,
                table,
                s,
                gen,
                ports: Mutex::new(Vec::new()),
                _t: PhantomData,
            }),
            _t: PhantomData,
        })
    }

    /// The next request, if one is waiting. Never blocks; bounded however
    /// many records (honest or not) the clients wrote.
    pub fn try_recv(&mut self) -> Option<Request<Req, Resp>> {
        let c = &self.replier.svc.config;
        let bound = c.depth as usize * c.max_clients as usize + 2;
        for _ in 0..bound {
            let r = self.port.try_receive(&mut self.buf)?;
            if let Some(req) = self.accept(r) {
                return Some(req);
            }
        }
        None
    }

    /// Waits for the next request (futex sleep while idle).
    pub fn recv(&mut self) -> Request<Req, Resp> {
        loop {
            if let Some(r) = self.wait(None) {
                return r;
            }
        }
    }

    /// Waits at most `timeout` for the next request.
    pub fn recv_timeout(&mut self, timeout: Duration) -> Option<Request<Req, Resp>> {
        self.wait(Some(Instant::now() + timeout))
    }

    fn wait(&mut self, deadline: Option<Instant>) -> Option<Request<Req, Resp>> {
        loop {
            if let Some(r) = self.try_recv() {
                return Some(r);
            }
            let r = self.port.receive_blocking(&mut self.buf, SPIN, deadline)?;
            if let Some(req) = self.accept(r) {
                return Some(req);
            }
        }
    }

    /// Whether a request record is waiting (for a scheduler's readiness
    /// check): copies nothing, moves nothing. With several servers, a
    /// `true` may be a request another server takes first.
    pub fn has_pending(&self) -> bool {
        self.port.has_pending()
    }

    fn malformed(&self) -> Option<Request<Req, Resp>> {
        self.table
            .bump_server(self.replier.s, ServerCounter::Malformed);
        None
    }

    /// Validates a request record and tries to take the call.
    fn accept(&mut self, r: Received) -> Option<Request<Req, Resp>> {
        let layout = self.replier.svc.layout;
        let max_clients = self.replier.svc.config.max_clients as usize;
        let size = layout.req_size;
        let (header, sample) = match r {
            Received::Inline { len } => {
                if !layout.req_inline || len != HEADER + size {
                    return self.malformed();
                }
                let words = [self.buf[0], self.buf[1], self.buf[2], self.buf[3]];
                let Some(h) = RequestHeader::decode(words, max_clients) else {
                    return self.malformed();
                };
                let bytes: &[u8] = bytemuck::cast_slice(&self.buf);
                let v: Req = bytemuck::pod_read_unaligned(&bytes[HEADER..HEADER + size]);
                (h, Sample::inline(v))
            }
            Received::Chunk { pool, chunk, len } => {
                let place = Arc::clone(self.port.place());
                if layout.req_inline || len < HEADER + size {
                    place.release_chunk(pool, chunk);
                    return self.malformed();
                }
                let ptr = self.port.chunk_ptr(pool, chunk);
                // SAFETY: the chunk holds `len` ≥ 32 bytes (the port checked
                // `len` against the chunk size), is 8-aligned and pinned.
                let words = unsafe { wire::read_header(ptr) };
                // SAFETY: HEADER < len: inside the chunk.
                let body = unsafe { ptr.add(HEADER) };
                let sample = Sample::chunk(place, pool, chunk, body, len - HEADER);
                match RequestHeader::decode(words, max_clients) {
                    Some(h) if h.client == pool => (h, sample),
                    _ => return self.malformed(),
                }
            }
        };
        // A request of a client that left or died (its place now empty or
        // someone else's): nobody would read the answer.
        if self.table.client_token(header.client) != header.token {
            self.table
                .bump_server(self.replier.s, ServerCounter::ClientGone);
            return None;
        }
        if !self.claim(&header) {
            return None;
        }
        self.table
            .bump_server(self.replier.s, ServerCounter::Received);
        Some(Request {
            sample: Some(sample),
            header,
            replier: Arc::clone(&self.replier),
            answered: false,
        })
    }

    /// Takes call `h.id` for this server unless another server took it or
    /// the client withdrew it.
    fn claim(&self, h: &RequestHeader) -> bool {
        let word = self.table.claim(h.client, h.id);
        let mine = claim::claimed(h.id, self.replier.s, self.replier.gen);
        // Bounded: each failed CAS means another party changed the word;
        // only an honest race (a few parties) or a hostile writer can.
        for _ in 0..64 {
            let cur = word.load(Ordering::Acquire);
            if claim::state(cur, h.id) != claim::State::Unclaimed {
                return false;
            }
            // AcqRel: exactly one of the servers' and the client's CASes on
            // this word wins; the winner's later reads see the others' state.
            if word
                .compare_exchange(cur, mine, Ordering::AcqRel, Ordering::Acquire)
                .is_ok()
            {
                return true;
            }
        }
        false
    }

    /// The request-channel port (for the readiness source).
    pub(crate) fn port(&self) -> &SubscriberPort {
        &self.port
    }

    /// This server's counters.
    pub fn stats(&self) -> ServerStats {
        ServerStats::from_counters(self.table.server_counters(self.replier.s))
    }

    /// Counters of every client and server of the service.
    pub fn service_stats(&self) -> ServiceStats {
        ServiceStats::read(&self.table)
    }
}

impl<Req, Resp> Drop for Server<Req, Resp> {
    fn drop(&mut self) {
        self.table.leave_server(self.replier.s);
    }
}

impl<Resp: Message> Replier<Resp> {
    fn bump(&self, c: ServerCounter) {
        self.table.bump_server(self.s, c);
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
        let now = Instant::now();
        let p = &mut ports[at];
        if p.alive_at
            .is_none_or(|t| now.duration_since(t) >= CLIENT_RECHECK)
        {
            if !ProcessId::from_token(h.pid).is_alive() {
                // Dead: free its places and remove its response channel
                // (only it used that name).
                let dead = ports.swap_remove(at);
                dead.port.channel().reclaim_dead();
                horus_shm::Segment::unlink(&dead.name);
                self.table.reclaim_dead();
                return None;
            }
            p.alive_at = Some(now);
        }
        Some(at)
    }

    /// Sends the answer to the call of `h`: a body written by `fill`
    /// (status OK) or a bare status.
    fn send<F: FnOnce(&mut Resp, &mut [u8])>(
        &self,
        h: &RequestHeader,
        status: u64,
        tail_len: usize,
        fill: Option<F>,
    ) -> Result<(), ReplyError> {
        let mut ports = self.ports.lock().unwrap_or_else(|e| e.into_inner());
        let Some(at) = self.port_for(&mut ports, h) else {
            self.bump(ServerCounter::ClientGone);
            return Err(ReplyError::ClientGone);
        };
        let rp = &mut ports[at];
        let max = self.svc.config.resp_tail as usize;
        let refused = if fill.is_some() && (tail_len > max || (tail_len > 0 && !Resp::HAS_TAIL)) {
            Some(ReplyError::TooLarge {
                requested: tail_len,
                max,
            })
        } else {
            None
        };
        let status = if refused.is_some() {
            wire::STATUS_FAILED
        } else {
            status
        };
        let header = ResponseHeader {
            id: h.id,
            status,
            server_pid: ProcessId::current().pid,
        }
        .encode();
        let layout = self.svc.layout;
        let size = layout.resp_size;
        // Each outcome is counted *before* it is published, so a client that
        // has the answer also sees it counted (the counter's store precedes
        // the ring's Release publication of the message).
        let sent = match fill {
            Some(fill) if status == wire::STATUS_OK && layout.resp_inline => {
                let bytes: &mut [u8] = bytemuck::cast_slice_mut(&mut rp.staging);
                let (head, body) = bytes.split_at_mut(HEADER);
                head.copy_from_slice(bytemuck::cast_slice(&header));
                fill(bytemuck::from_bytes_mut(&mut body[..size]), &mut []);
                self.bump(ServerCounter::Replied);
                rp.port.send_inline(&bytes[..HEADER + size]).is_ok()
            }
            Some(fill) if status == wire::STATUS_OK => match rp.port.loan_chunk() {
                Some(loan) => {
                    let tail_at = layout.resp_tail_offset;
                    let bytes = rp.port.chunk_bytes(&loan);
                    let (head, body) = bytes.split_at_mut(HEADER);
                    head.copy_from_slice(bytemuck::cast_slice(&header));
                    let (fixed, rest) = body.split_at_mut(tail_at);
                    fill(
                        bytemuck::from_bytes_mut(&mut fixed[..size]),
                        &mut rest[..tail_len],
                    );
                    let len = HEADER
                        + if tail_len > 0 {
                            tail_at + tail_len
                        } else {
                            size
                        };
                    self.bump(ServerCounter::Replied);
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
                    self.bump(ServerCounter::ReplyFailed);
                    let _ = rp.port.send_inline(bytemuck::cast_slice(&failed));
                    return Err(ReplyError::PoolExhausted);
                }
            },
            _ => {
                self.bump(if refused.is_some() {
                    ServerCounter::ReplyFailed
                } else {
                    ServerCounter::Unanswered
                });
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

/// A request taken by this server: dereferences to `Req`
/// ([`Request::tail`] for its tail). Answer it with [`Request::reply`] or
/// [`Request::reply_with`], which consume it; dropping it unanswered sends
/// the client [`CallError::Unanswered`](super::CallError::Unanswered) and
/// counts it on both ends. The guard is `Send`: it can be answered from
/// another thread.
pub struct Request<Req, Resp: Message> {
    sample: Option<Sample<Req>>,
    header: RequestHeader,
    replier: Arc<Replier<Resp>>,
    answered: bool,
}

impl<Req: Message, Resp: Message> Request<Req, Resp> {
    /// Answers with a copy of `resp`.
    pub fn reply(self, resp: &Resp) -> Result<(), ReplyError> {
        self.reply_with(0, |r, _| *r = *resp)
    }

    /// Answers with a response written in place by `fill` (its fixed part
    /// and a tail of `tail_len` bytes; for types with a tail, written in
    /// shared memory: zero copy). A tail larger than the service allows is
    /// refused ([`ReplyError::TooLarge`]) and the client told.
    pub fn reply_with(
        mut self,
        tail_len: usize,
        fill: impl FnOnce(&mut Resp, &mut [u8]),
    ) -> Result<(), ReplyError> {
        // Release the request's chunk before answering (a client reusing
        // its pool right away finds it free).
        self.sample = None;
        self.answered = true;
        self.replier
            .send(&self.header, wire::STATUS_OK, tail_len, Some(fill))
    }

    /// The request's tail (empty for types without one).
    pub fn tail(&self) -> &[u8] {
        self.sample.as_ref().map_or(&[], |s| s.tail())
    }

    /// Whether the request is read in place in shared memory.
    pub fn is_zero_copy(&self) -> bool {
        self.sample.as_ref().is_some_and(Sample::is_zero_copy)
    }

    /// Process id of the calling client.
    pub fn client_pid(&self) -> u32 {
        ProcessId::from_token(self.header.pid).pid
    }
}

impl<Req: Message, Resp: Message> Deref for Request<Req, Resp> {
    type Target = Req;
    fn deref(&self) -> &Req {
        self.sample.as_ref().expect("present until answered")
    }
}

impl<Req, Resp: Message> Drop for Request<Req, Resp> {
    fn drop(&mut self) {
        if self.answered {
            return;
        }
        self.sample = None;
        let _ = self.replier.send::<fn(&mut Resp, &mut [u8])>(
            &self.header,
            wire::STATUS_UNANSWERED,
            0,
            None,
        );
    }
}
