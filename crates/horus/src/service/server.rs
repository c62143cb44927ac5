//! The answering end of a service.
//!
//! A server is a subscriber on the service's request channel: it sees
//! every client's requests and takes each one by a compare-and-swap on the
//! call's claim word, so with several servers each request is served by
//! exactly one. It answers on the client's own response channel, as one of
//! its publishers.

use std::marker::PhantomData;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

use horus_msgs::Message;
use horus_shm::{Received, SubscriberPort};

use super::error::ServiceError;
use super::replier::Replier;
use super::request::Request;
use super::service::{JoinFailure, ServiceInner};
use super::stats::{ServerStats, ServiceStats};
use super::table::{ServerCounter, Table};
use super::wire::{self, claim, RequestHeader, HEADER};
use crate::Sample;

/// Polls before a waiting `recv` sleeps on the request channel's futex.
const SPIN: u32 = 64;

/// Serves a service: receives requests of type `Req` and answers each with
/// a `Resp` exactly once, through the [`Request`] guard.
pub struct Server<Req, Resp> {
    table: Arc<Table>,
    port: SubscriberPort,
    buf: Box<[u64]>,
    replier: Arc<Replier<Resp>>,
    _t: PhantomData<fn() -> Req>,
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
            replier: Arc::new(Replier::new(svc, table, s, gen)),
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
        Some(Request::new(sample, header, Arc::clone(&self.replier)))
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
