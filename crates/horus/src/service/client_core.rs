//! The state behind a client and its pending calls: the call slots, the
//! request port and the client's own response channel. Sending, routing
//! responses to their calls, and the non-blocking and sliced waits live
//! here; watching the serving process is in `liveness.rs`.

use std::sync::Arc;
use std::time::{Duration, Instant};

use horus_msgs::Message;
use horus_shm::{Channel, ProcessId, PublisherPort, Received, SubPlace, SubscriberPort};

use super::coarse_clock;
use super::error::{CallError, ServiceError};
use super::liveness::{WitnessCache, Witnesses, LIVENESS_EVERY};
use super::service::{JoinFailure, ServiceInner};
use super::table::{ClientCounter, EnterError, Table};
use super::wire::{self, RequestHeader, ResponseHeader, HEADER};
use crate::recv_buf::{InlineBody, RecvBuf};
use crate::Sample;

/// Polls before a waiting call sleeps on the response channel's futex.
const SPIN: u32 = 64;

/// A response's body as received, before it becomes the client's result type.
pub(crate) enum ResponseBody<'a> {
    /// Copied out of a ring slot into a receive buffer.
    Inline(InlineBody<'a>),
    /// In a pool chunk pinned for us: whoever takes it releases it.
    Chunk {
        place: Arc<SubPlace>,
        pool: usize,
        chunk: usize,
        /// First byte of the body (after the record header), `len` bytes.
        ptr: *const u8,
        len: usize,
    },
}

/// Where a received response's body is, before it is decoded (small, so
/// that the checks in `ClientCore::route` move nothing large).
enum RawBody {
    /// In the client's receive buffer, after the record header.
    Inline,
    /// In a pool chunk pinned for us (released by `ClientCore::discard`
    /// unless decoded).
    Chunk {
        pool: usize,
        chunk: usize,
        /// First byte of the body (after the record header).
        ptr: *const u8,
        len: usize,
    },
}

/// Turns a response body into the client's result: a typed [`Sample`], or
/// bytes for a client that learned the types at run time. `None` (counted
/// malformed by the caller) for a body the receivers' length checks should
/// have refused: never for a checked one.
pub(crate) type Decoder<Out> = fn(ResponseBody<'_>) -> Option<Out>;

/// The typed decoder: zero copy for chunks, and no copy beyond the one out of
/// the ring slot for inline bodies (the sample shares the receive buffer).
/// `None` only for a body that does not hold a `Resp` at an 8-aligned offset,
/// which the receivers check before decoding.
pub(crate) fn typed<Resp: Message>(b: ResponseBody<'_>) -> Option<Sample<Resp>> {
    match b {
        ResponseBody::Inline(body) if body.len == std::mem::size_of::<Resp>() => {
            Sample::inline(body.buf, body.start)
        }
        ResponseBody::Inline(_) => None,
        ResponseBody::Chunk {
            place,
            pool,
            chunk,
            ptr,
            len,
        } => Some(Sample::chunk(place, pool, chunk, ptr, len)),
    }
}

/// A call just sent: its id, and when (the one clock read of its start,
/// from which its deadline counts).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Started {
    pub(crate) id: u64,
    pub(crate) sent: Instant,
    /// The coarse clock just before `sent` was read (so at most `sent`),
    /// and twice its resolution (the margin); `None` without a usable
    /// coarse clock.
    coarse: Option<(Duration, Duration)>,
}

impl Started {
    /// Until when, on the coarse clock, a caller polling this call with
    /// `timeout` can know without reading the precise clock that the call
    /// is neither past its deadline nor due a liveness check (see
    /// [`ClientCore::still_waiting`]). The precise time is at most the coarse
    /// time plus one resolution (see `coarse_clock`), and the deadline at
    /// least the coarse send time plus `timeout`: so while the coarse time is
    /// below `coarse send + timeout - 2 × resolution` (one resolution of
    /// margin for a late tick), the deadline has not passed. The liveness
    /// checks are due once `LIVENESS_EVERY` has passed on the coarse clock
    /// (up to two ticks after it has on the precise one: they only need to
    /// come every few milliseconds).
    pub(crate) fn quiet_until(&self, timeout: Duration) -> Option<Duration> {
        let (at, margin) = self.coarse?;
        at.checked_add(LIVENESS_EVERY.min(timeout.saturating_sub(margin)))
    }
}

/// Where a call slot stands.
pub(super) enum Slot<Resp> {
    Free,
    /// Sent (id, when, which servers could see it), no result yet.
    Waiting(u64, Instant, Witnesses),
    /// Result arrived, not yet taken.
    Done(u64, Result<Resp, CallError>),
}

/// The state shared by a client and its pending calls.
pub(crate) struct ClientCore<Resp> {
    pub(super) svc: Arc<ServiceInner>,
    pub(super) table: Arc<Table>,
    pub(super) resp: SubscriberPort,
    pub(super) req: PublisherPort,
    pub(super) resp_name: String,
    pub(super) k: usize,
    pub(super) token: u64,
    pub(super) staging: Box<[u64]>,
    pub(super) buf: RecvBuf,
    pub(super) next_id: u64,
    pub(super) slots: Vec<Slot<Resp>>,
    pub(super) next_check: Instant,
    witness_cache: WitnessCache,
    /// Twice the coarse clock's resolution, if that clock is usable: the
    /// margin of [`Started::quiet_until`] (computed once: `Duration`
    /// multiplication costs a division's worth of instructions per call).
    coarse_margin: Option<Duration>,
    decode: Decoder<Resp>,
    /// Response bodies in chunks are copied into `buf` and their chunks
    /// released before decoding ([`Layout::resp_copied`](super::layout::Layout)
    /// for a typed client, whose samples share `buf`; a raw client copies
    /// every body out anyway).
    copy_chunks: bool,
}

fn unique_token() -> u64 {
    use std::sync::atomic::{AtomicU32, Ordering};
    static N: AtomicU32 = AtomicU32::new(0);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    let low = N.fetch_add(1, Ordering::Relaxed).wrapping_mul(0x9e37_79b9) ^ nanos;
    (u64::from(std::process::id()) << 32) | u64::from(low) | 1 << 63
}

impl<Resp> ClientCore<Resp> {
    pub(super) fn bump(&self, c: ClientCounter) {
        self.table.bump_client(self.k, c);
    }

    pub(super) fn slot_of(&self, id: u64) -> usize {
        (id & (self.slots.len() as u64 - 1)) as usize
    }

    /// Withdraws call `id` (timed out or dropped): its slot is free again,
    /// a server that has not taken it yet never will, and a response that
    /// still comes is discarded as late.
    pub(crate) fn withdraw(&mut self, id: u64, why: ClientCounter) {
        let i = self.slot_of(id);
        match &self.slots[i] {
            Slot::Waiting(w, ..) if *w == id => {}
            // A result arrived but was never taken: nothing to withdraw.
            Slot::Done(d, _) if *d == id => {
                self.slots[i] = Slot::Free;
                self.bump(why);
                return;
            }
            _ => return,
        }
        self.slots[i] = Slot::Free;
        self.try_cancel(id);
        self.bump(why);
    }
}

impl<Resp> ClientCore<Resp> {
    /// Joins `svc` as a client whose results `decode` makes; `share_inline`:
    /// whether they share the receive buffer ([`RecvBuf`]).
    pub(super) fn join(
        svc: &Arc<ServiceInner>,
        decode: Decoder<Resp>,
        share_inline: bool,
    ) -> Result<Self, ServiceError> {
        let token = unique_token();
        let resp_name = svc.response_name(token);
        let resp_config = svc.layout.response_channel(&svc.config);
        let resp_chan =
            Channel::open_or_create(&resp_name, &resp_config).map_err(|e| svc.segment_error(e))?;
        let resp = SubscriberPort::join(&resp_chan, true, false).map_err(|_| {
            horus_shm::Segment::unlink(&resp_name);
            svc.full("client", 1)
        })?;
        let joined = svc.join(|table, req_chan| {
            let req = PublisherPort::join(req_chan).map_err(|e| svc.join_error(e, "client"))?;
            let k = req.place();
            match table.enter_client(k, token) {
                Ok(first) => Ok((Arc::clone(table), req, k, first)),
                Err(EnterError::Closing) => Err(JoinFailure::Closing),
                Err(EnterError::Stuck { pid }) => Err(JoinFailure::Fatal(svc.place_stuck(k, pid))),
            }
        });
        let (table, req, k, first) = match joined {
            Ok(j) => j,
            Err(e) => {
                horus_shm::Segment::unlink(&resp_name);
                return Err(e);
            }
        };
        let depth = svc.config.depth as usize;
        let staging_words = (HEADER + svc.layout.req_size).div_ceil(8).max(4);
        let copy_chunks = share_inline && svc.layout.resp_copied;
        let copied_bytes = if copy_chunks {
            HEADER + svc.layout.resp_size
        } else {
            0
        };
        let buf_words = (resp_config.slot_payload as usize)
            .max(copied_bytes)
            .div_ceil(8);
        Ok(ClientCore {
            svc: Arc::clone(svc),
            table,
            resp,
            req,
            resp_name,
            k,
            token,
            staging: vec![0; staging_words].into_boxed_slice(),
            buf: RecvBuf::new(buf_words, share_inline),
            next_id: first,
            slots: (0..depth).map(|_| Slot::Free).collect(),
            next_check: Instant::now(),
            witness_cache: WitnessCache::default(),
            coarse_margin: coarse_clock::resolution().and_then(|r| r.checked_mul(2)),
            decode,
            copy_chunks,
        })
    }

    /// Largest request tail.
    fn max_tail(&self) -> usize {
        self.svc.config.req_tail as usize
    }

    /// Sends a request filled in place by `fill` (the body and its tail of
    /// `tail_len` bytes). Returns the call id and when it was sent.
    pub(crate) fn start<Req: Message>(
        &mut self,
        tail_len: usize,
        fill: impl FnOnce(&mut Req, &mut [u8]),
    ) -> Result<Started, CallError> {
        self.start_bytes(tail_len, Req::HAS_TAIL, |body, tail| {
            fill(bytemuck::from_bytes_mut(body), tail)
        })
    }

    /// [`start`](Self::start) for a request given as bytes: `fill` writes
    /// the fixed part (exactly the request type's size) and the tail.
    pub(crate) fn start_bytes(
        &mut self,
        tail_len: usize,
        has_tail: bool,
        fill: impl FnOnce(&mut [u8], &mut [u8]),
    ) -> Result<Started, CallError> {
        if tail_len > self.max_tail() || (tail_len > 0 && !has_tail) {
            return Err(CallError::TooLarge {
                requested: tail_len,
                max: self.max_tail(),
            });
        }
        // No server at all: say so at once instead of waiting for a timeout.
        // A server that died unnoticed is found while waiting.
        let members = self.table.membership();
        if self.table.server_places_in(members) == 0 {
            self.bump(ClientCounter::NoServer);
            return Err(CallError::NoServer(self.svc.name.clone()));
        }
        let id = self.next_id;
        let i = self.slot_of(id);
        if !matches!(self.slots[i], Slot::Free) {
            self.bump(ClientCounter::Busy);
            return Err(CallError::Busy {
                in_flight: self.svc.config.depth,
            });
        }
        let header = RequestHeader {
            client: self.k,
            token: self.token,
            id,
            pid: ProcessId::current().token(),
        }
        .encode();
        // The servers that will see this request: those visible now (a
        // server subscribes before it becomes visible, so each of them has
        // its cursor started at this request).
        let witnesses = self.witness_cache.get(&self.table, members);
        let size = self.svc.layout.req_size;
        if self.svc.layout.req_inline {
            let bytes: &mut [u8] = bytemuck::cast_slice_mut(&mut self.staging);
            let (head, body) = bytes.split_at_mut(HEADER);
            head.copy_from_slice(bytemuck::cast_slice(&header));
            fill(&mut body[..size], &mut []);
            self.req
                .send_inline(&bytes[..HEADER + size])
                .map_err(|_| CallError::TooLarge {
                    requested: size,
                    max: 0,
                })?;
        } else {
            let Some(loan) = self.req.loan_chunk() else {
                return Err(CallError::PoolExhausted);
            };
            let tail_at = self.svc.layout.req_tail_offset;
            let bytes = self.req.chunk_bytes(&loan);
            let len = wire::write_chunk_record(bytes, &header, size, tail_at, tail_len, fill);
            self.req
                .send_chunk(loan, len)
                .map_err(|_| CallError::TooLarge {
                    requested: tail_len,
                    max: self.max_tail(),
                })?;
        }
        // The call's one precise clock read: its deadline and its liveness
        // checks count from here. After the send, so that it overlaps the
        // request's way to the server instead of delaying it. The coarse
        // clock first, so that it is at most `sent`.
        let coarse = coarse_clock::now().zip(self.coarse_margin);
        let sent = Instant::now();
        self.next_id = if id + 1 >= wire::MAX_CALL_ID {
            1
        } else {
            id + 1
        };
        self.slots[i] = Slot::Waiting(id, sent, witnesses);
        self.bump(ClientCounter::Calls);
        Ok(Started { id, sent, coarse })
    }

    /// Routes the responses that arrived to their calls' slots, for a
    /// caller waiting for call `id`: until `id`'s result is filed (the
    /// responses behind it wait in the ring for the next look: no receive
    /// that finds nothing after the one that mattered), and, after the
    /// first, once the receive buffer is shared (by a result just filed,
    /// not yet taken) and no further response is probably waiting, so that
    /// the next receive does not replace the shared buffer with a fresh one
    /// for nothing on every poll. Each look receives at least one waiting
    /// response.
    pub(super) fn pump_for(&mut self, id: u64) {
        self.pump_responses(Some(id));
    }

    /// Routes every response that arrived to its call's slot (before judging
    /// a call failed: a response that is there wins).
    pub(super) fn pump_all(&mut self) {
        self.pump_responses(None);
    }

    /// `for_call`: the call a caller waits for ([`pump_for`](Self::pump_for));
    /// `None`: every response ([`pump_all`](Self::pump_all)).
    fn pump_responses(&mut self, for_call: Option<u64>) {
        // Bounded: at most what the rings can hold, however fast a
        // (possibly hostile) server writes.
        let bound = self.slots.len() * self.svc.config.max_servers as usize + 2;
        for n in 0..bound {
            if let Some(id) = for_call {
                if n > 0 && self.buf.is_shared() && !self.resp.has_pending() {
                    return;
                }
                if n > 0 && matches!(self.slots[self.slot_of(id)], Slot::Done(d, _) if d == id) {
                    return;
                }
            }
            match self.resp.try_receive(self.buf.target()) {
                Some(r) => self.route(r),
                None => return,
            }
        }
    }

    /// Decodes a response and files it under its call, or discards it
    /// (counted) if its call is no longer waiting.
    ///
    /// The header is checked and the call found first; the body becomes
    /// the client's result type (`decode`) only at the end, straight into
    /// its slot. A typed `Sample` is a few words whatever the response
    /// size (an inline body stays in the receive buffer it shares), but a
    /// raw client's result is the body's bytes, so nothing is decoded for a
    /// response that is then discarded.
    fn route(&mut self, r: Received) {
        let Some((h, body)) = self.response_record(r) else {
            self.bump(ClientCounter::Malformed);
            return;
        };
        let i = self.slot_of(h.id);
        if !matches!(self.slots[i], Slot::Waiting(id, ..) if id == h.id) {
            self.discard(body);
            self.bump(ClientCounter::Late);
            return;
        }
        let err = match (h.status, body) {
            (wire::STATUS_OK, Some(body)) => {
                self.bump(ClientCounter::Responses);
                let size = self.svc.layout.resp_size;
                let body = match body {
                    RawBody::Chunk {
                        pool, chunk, ptr, ..
                    } if self.copy_chunks => {
                        // SAFETY: `response_record` checked that the chunk, pinned by our
                        // receive, holds the header and `size` bytes of body from `ptr`.
                        let copied = unsafe { self.buf.copy_from(HEADER, ptr, size) };
                        self.resp.place().release_chunk(pool, chunk);
                        if !copied {
                            self.bump(ClientCounter::Malformed);
                            return;
                        }
                        RawBody::Inline
                    }
                    body => body,
                };
                let decoded = match body {
                    RawBody::Inline => (self.decode)(ResponseBody::Inline(InlineBody {
                        buf: &self.buf,
                        start: HEADER,
                        len: size,
                    })),
                    RawBody::Chunk {
                        pool,
                        chunk,
                        ptr,
                        len,
                    } => (self.decode)(ResponseBody::Chunk {
                        place: Arc::clone(self.resp.place()),
                        pool,
                        chunk,
                        ptr,
                        len,
                    }),
                };
                let Some(decoded) = decoded else {
                    self.bump(ClientCounter::Malformed);
                    return;
                };
                self.slots[i] = Slot::Done(h.id, Ok(decoded));
                return;
            }
            (status, body) => {
                self.discard(body);
                match status {
                    wire::STATUS_UNANSWERED => {
                        self.bump(ClientCounter::Unanswered);
                        CallError::Unanswered
                    }
                    wire::STATUS_NO_SERVER => {
                        self.bump(ClientCounter::NoServer);
                        CallError::NoServer(self.svc.name.clone())
                    }
                    wire::STATUS_SERVER_DIED => {
                        self.bump(ClientCounter::ServerDied);
                        CallError::ServerDied { pid: h.server_pid }
                    }
                    _ => {
                        self.bump(ClientCounter::Failed);
                        CallError::ReplyFailed
                    }
                }
            }
        };
        self.slots[i] = Slot::Done(h.id, Err(err));
    }

    /// The header of a received response record and, for a successful one,
    /// where its body is; `None` for a malformed record (its chunk, if
    /// any, released). A body is `Some` exactly when the status is OK.
    fn response_record(&mut self, r: Received) -> Option<(ResponseHeader, Option<RawBody>)> {
        let size = self.svc.layout.resp_size;
        match r {
            Received::Inline { len } if len >= HEADER => {
                let w = self.buf.words();
                let words = [w[0], w[1], w[2], w[3]];
                let h = ResponseHeader::decode(words)?;
                match h.status {
                    wire::STATUS_OK if self.svc.layout.resp_inline && len == HEADER + size => {
                        Some((h, Some(RawBody::Inline)))
                    }
                    wire::STATUS_OK => None,
                    _ => Some((h, None)),
                }
            }
            Received::Inline { .. } => None,
            Received::Chunk { pool, chunk, len } => {
                let ptr = self.resp.chunk_ptr(pool, chunk);
                let body = RawBody::Chunk {
                    pool,
                    chunk,
                    // Dereferenced only once `len ≥ HEADER + size` is
                    // checked below: then inside the chunk.
                    ptr: ptr.wrapping_add(HEADER),
                    len: len.saturating_sub(HEADER),
                };
                if len < HEADER + size {
                    self.discard(Some(body));
                    return None;
                }
                // SAFETY: the chunk holds `len` ≥ 32 bytes (validated by
                // the port against the chunk size), is 8-aligned and
                // pinned by our receive.
                let words = unsafe { wire::read_header(ptr) };
                match ResponseHeader::decode(words) {
                    Some(h) if h.status == wire::STATUS_OK => Some((h, Some(body))),
                    Some(h) => {
                        self.discard(Some(body));
                        Some((h, None))
                    }
                    None => {
                        self.discard(Some(body));
                        None
                    }
                }
            }
        }
    }

    /// Drops a response body nobody will take: releases its chunk.
    fn discard(&self, body: Option<RawBody>) {
        if let Some(RawBody::Chunk { pool, chunk, .. }) = body {
            self.resp.place().release_chunk(pool, chunk);
        }
    }

    /// Takes call `id`'s result if it is there.
    fn take(&mut self, id: u64) -> Option<Result<Resp, CallError>> {
        let i = self.slot_of(id);
        if matches!(self.slots[i], Slot::Done(d, _) if d == id) {
            if let Slot::Done(_, r) = std::mem::replace(&mut self.slots[i], Slot::Free) {
                return Some(r);
            }
        }
        None
    }

    /// Pumps the response ring, then whether call `id` is simply still in
    /// flight: no result yet, its deadline not passed and no liveness check
    /// due — exactly the case in which [`poll`](Self::poll) returns `None`
    /// having done nothing else. A busy-polling caller asks this first and
    /// only calls `poll` when it says `false`: `poll` returns the result by
    /// value, moved out of its slot, and reads the clock twice; this reads
    /// it once and moves nothing.
    /// When it says `false`, the caller goes on with [`settle`](Self::settle)
    /// (the responses are pumped already). Until `quiet_until` on the coarse
    /// clock ([`Started::quiet_until`]) it reads only that clock: a busy
    /// poll's every look would otherwise read the precise one.
    pub(crate) fn still_waiting(
        &mut self,
        id: u64,
        deadline: Instant,
        quiet_until: Option<Duration>,
    ) -> bool {
        self.pump_for(id);
        match self.slots[self.slot_of(id)] {
            Slot::Waiting(w, sent, _) if w == id => {
                if let (Some(quiet), Some(now)) = (quiet_until, coarse_clock::now()) {
                    if now < quiet {
                        return true;
                    }
                }
                // One clock read (poll makes two).
                let now = Instant::now();
                now < deadline && now.saturating_duration_since(sent) < LIVENESS_EVERY
            }
            _ => false,
        }
    }

    /// One non-blocking look at call `id`: its result, or its failure
    /// (deadline passed, server died, no server), or `None` while it waits.
    pub(crate) fn poll(
        &mut self,
        id: u64,
        deadline: Instant,
        timeout: Duration,
    ) -> Option<Result<Resp, CallError>> {
        self.pump_for(id);
        self.settle(id, deadline, timeout)
    }

    /// [`poll`](Self::poll) without pumping the response ring first: for a
    /// caller that just pumped it ([`still_waiting`](Self::still_waiting)).
    pub(crate) fn settle(
        &mut self,
        id: u64,
        deadline: Instant,
        timeout: Duration,
    ) -> Option<Result<Resp, CallError>> {
        if let Some(r) = self.take(id) {
            return Some(r);
        }
        let i = self.slot_of(id);
        let Slot::Waiting(w, sent, _) = self.slots[i] else {
            return Some(Err(CallError::Taken));
        };
        if w != id {
            return Some(Err(CallError::Taken));
        }
        let now = Instant::now();
        if now >= deadline {
            self.withdraw(id, ClientCounter::TimedOut);
            return Some(Err(CallError::Timeout(timeout)));
        }
        // A call answered within the first check period never pays for a
        // liveness check (it reads `/proc`).
        if now.saturating_duration_since(sent) < LIVENESS_EVERY {
            return None;
        }
        self.check_liveness(id).map(Err)
    }

    /// Waits for call `id` for one slice: until it settles, `deadline`,
    /// or the next liveness check (at most a few milliseconds). `None` if
    /// it is still in flight. Callers loop, releasing the client's lock
    /// between slices so that other threads' calls proceed.
    pub(crate) fn wait_slice(
        &mut self,
        id: u64,
        deadline: Instant,
        timeout: Duration,
    ) -> Option<Result<Resp, CallError>> {
        if let Some(r) = self.poll(id, deadline, timeout) {
            return Some(r);
        }
        // Sleep on the response channel until something arrives, the
        // deadline, or the next liveness check.
        let first_check = match self.slots[self.slot_of(id)] {
            Slot::Waiting(_, sent, _) => sent + LIVENESS_EVERY,
            _ => Instant::now(),
        };
        let until = deadline.min(self.next_check.max(first_check));
        if let Some(r) = self
            .resp
            .receive_blocking(self.buf.target(), SPIN, Some(until))
        {
            self.route(r);
        }
        None
    }

    pub(super) fn in_flight(&self) -> usize {
        self.slots
            .iter()
            .filter(|s| !matches!(s, Slot::Free))
            .count()
    }
}

impl<Resp> Drop for ClientCore<Resp> {
    fn drop(&mut self) {
        self.table.leave_client(self.k);
        // Only this client ever uses its response channel's name; servers
        // that still map it find the client gone (token cleared) and drop
        // their mapping.
        horus_shm::Segment::unlink(&self.resp_name);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A call sent at coarse time and tick `coarse`.
    fn started(coarse: Option<(Duration, Duration)>) -> Started {
        Started {
            id: 1,
            sent: Instant::now(),
            coarse: coarse.map(|(at, tick)| (at, tick * 2)),
        }
    }

    #[test]
    fn a_call_is_quiet_until_its_first_check_or_two_ticks_before_its_deadline() {
        let (at, tick) = (Duration::from_secs(100), Duration::from_millis(4));
        let s = started(Some((at, tick)));
        // Long timeout: quiet until the first liveness check is due.
        assert_eq!(
            s.quiet_until(Duration::from_secs(1)),
            Some(at + LIVENESS_EVERY)
        );
        // Short: two ticks of margin before the deadline.
        assert_eq!(
            s.quiet_until(Duration::from_millis(9)),
            Some(at + Duration::from_millis(1))
        );
        // Within two ticks: never quiet (the coarse clock never reads below `at`).
        assert_eq!(s.quiet_until(Duration::from_millis(8)), Some(at));
        assert_eq!(s.quiet_until(Duration::ZERO), Some(at));
        // No usable coarse clock: every look reads the precise one.
        assert_eq!(started(None).quiet_until(Duration::from_secs(1)), None);
    }
}
