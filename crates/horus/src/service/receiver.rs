//! A server's receiving end, shared by typed and raw servers: its place on
//! the request channel and in the table, the bounded receive, the validation
//! of request records and the claim that takes a call.
//!
//! What a request's body becomes (a typed sample, or bytes) is the caller's
//! [`Decoder`]; the body is decoded only once the call is taken, so a server
//! never copies a request another server took.

use std::sync::Arc;
use std::time::Instant;

use horus_shm::{Received, SubscriberPort};

use super::client_core::{Decoder, ResponseBody};
use super::error::ServiceError;
use super::replier::Replier;
use super::service::{JoinFailure, ServiceInner};
use super::stats::{ServerStats, ServiceStats};
use super::table::{ServerCounter, Table};
use super::wire::{self, claim, RequestHeader, HEADER};
use crate::recv_buf::{InlineBody, RecvBuf};

/// Polls before a waiting receive sleeps on the request channel's futex.
const SPIN: u32 = 64;

/// A server place on a service and its request port.
pub(crate) struct Receiver {
    table: Arc<Table>,
    port: SubscriberPort,
    buf: RecvBuf,
    pub(super) replier: Arc<Replier>,
    /// Request bodies in chunks are copied into `buf` and their chunks
    /// released before decoding ([`Layout::req_copied`](super::layout::Layout)
    /// for a typed server, whose samples share `buf`; a raw server copies
    /// every body out anyway).
    copy_chunks: bool,
}

impl Receiver {
    /// Joins the service as a server; `share_inline`: whether its requests'
    /// samples share the receive buffer ([`RecvBuf`]).
    pub(super) fn join(
        svc: Arc<ServiceInner>,
        share_inline: bool,
    ) -> Result<Receiver, ServiceError> {
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
        let copy_chunks = share_inline && svc.layout.req_copied;
        let copied_bytes = if copy_chunks {
            HEADER + svc.layout.req_size
        } else {
            0
        };
        let words = port.slot_payload().max(copied_bytes).div_ceil(8);
        Ok(Receiver {
            table: Arc::clone(&table),
            port,
            buf: RecvBuf::new(words, share_inline),
            replier: Arc::new(Replier::new(svc, table, s, gen)),
            copy_chunks,
        })
    }

    /// The next request taken, if one is waiting. Never blocks; bounded
    /// however many records (honest or not) the clients wrote.
    pub(super) fn try_recv<T>(&mut self, decode: Decoder<T>) -> Option<(RequestHeader, T)> {
        let c = &self.replier.svc.config;
        let bound = c.depth as usize * c.max_clients as usize + 2;
        for _ in 0..bound {
            let r = self.port.try_receive(self.buf.target())?;
            if let Some(req) = self.accept(r, decode) {
                return Some(req);
            }
        }
        None
    }

    /// Waits until `deadline` (forever if `None`) for the next request
    /// (futex sleep while idle). The deadline holds however many records
    /// arrive that are not requests to take (malformed, another server's,
    /// a departed client's): it is checked after each of them.
    pub(super) fn wait<T>(
        &mut self,
        deadline: Option<Instant>,
        decode: Decoder<T>,
    ) -> Option<(RequestHeader, T)> {
        loop {
            if let Some(r) = self.try_recv(decode) {
                return Some(r);
            }
            if deadline.is_some_and(|d| Instant::now() >= d) {
                return None;
            }
            let r = self
                .port
                .receive_blocking(self.buf.target(), SPIN, deadline)?;
            if let Some(req) = self.accept(r, decode) {
                return Some(req);
            }
        }
    }

    /// Whether a request record is waiting.
    pub(super) fn has_pending(&self) -> bool {
        self.port.has_pending()
    }

    fn malformed<T>(&self) -> Option<T> {
        self.table
            .bump_server_sole(self.replier.s, ServerCounter::Malformed);
        None
    }

    /// Validates a request record, tries to take the call and, if taken,
    /// decodes its body.
    fn accept<T>(&mut self, r: Received, decode: Decoder<T>) -> Option<(RequestHeader, T)> {
        let layout = self.replier.svc.layout;
        let max_clients = self.replier.svc.config.max_clients as usize;
        let size = layout.req_size;
        match r {
            Received::Inline { len } => {
                if !layout.req_inline || len != HEADER + size {
                    return self.malformed();
                }
                let w = self.buf.words();
                let words = [w[0], w[1], w[2], w[3]];
                let Some(h) = RequestHeader::decode(words, max_clients) else {
                    return self.malformed();
                };
                if !self.take(&h) {
                    return None;
                }
                let body = ResponseBody::Inline(InlineBody {
                    buf: &self.buf,
                    start: HEADER,
                    len: size,
                });
                match decode(body) {
                    Some(req) => Some((h, req)),
                    None => self.malformed(),
                }
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
                let h = match RequestHeader::decode(words, max_clients) {
                    Some(h) if h.client == pool => h,
                    _ => {
                        place.release_chunk(pool, chunk);
                        return self.malformed();
                    }
                };
                if !self.take(&h) {
                    place.release_chunk(pool, chunk);
                    return None;
                }
                if self.copy_chunks {
                    // SAFETY: the chunk, pinned by our receive, holds `len` ≥ HEADER + size
                    // bytes (checked above).
                    let copied = unsafe { self.buf.copy_from(HEADER, ptr.add(HEADER), size) };
                    place.release_chunk(pool, chunk);
                    if !copied {
                        return self.malformed();
                    }
                    let body = ResponseBody::Inline(InlineBody {
                        buf: &self.buf,
                        start: HEADER,
                        len: size,
                    });
                    return match decode(body) {
                        Some(req) => Some((h, req)),
                        None => self.malformed(),
                    };
                }
                let body = ResponseBody::Chunk {
                    place,
                    pool,
                    chunk,
                    // SAFETY: HEADER < len: inside the chunk.
                    ptr: unsafe { ptr.add(HEADER) },
                    len: len - HEADER,
                };
                match decode(body) {
                    Some(req) => Some((h, req)),
                    None => self.malformed(),
                }
            }
        }
    }

    /// Takes the call of `h` unless its client is gone, another server took
    /// it or the client withdrew it; counts it received.
    fn take(&self, h: &RequestHeader) -> bool {
        // A request of a client that left or died (its place now empty or
        // someone else's): nobody would read the answer.
        if self.table.client_token(h.client) != h.token {
            self.table
                .bump_server(self.replier.s, ServerCounter::ClientGone);
            return false;
        }
        if !self.claim(h) {
            return false;
        }
        self.table
            .bump_server_sole(self.replier.s, ServerCounter::Received);
        true
    }

    /// Takes call `h.id` for this server unless another server took it or
    /// the client withdrew it.
    fn claim(&self, h: &RequestHeader) -> bool {
        let word = self.table.claim(h.client, h.id);
        claim::try_claim(word, h.id, self.replier.s, self.replier.gen)
    }

    /// The request-channel port (for the readiness source).
    pub(super) fn port(&self) -> &SubscriberPort {
        &self.port
    }

    /// This server's counters.
    pub(super) fn stats(&self) -> ServerStats {
        ServerStats::from_counters(self.table.server_counters(self.replier.s))
    }

    /// Counters of every client and server of the service.
    pub(super) fn service_stats(&self) -> ServiceStats {
        ServiceStats::read(&self.table)
    }
}

impl Drop for Receiver {
    fn drop(&mut self) {
        // Requests still held may be answered after the place is given up
        // (and taken by another server): their counts must not race its own.
        self.replier.leave_place(|| {
            self.table.leave_server(self.replier.s);
        });
    }
}
