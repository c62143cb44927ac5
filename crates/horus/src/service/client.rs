//! The calling end of a service.
//!
//! A client owns one publisher place on the service's request channel (its
//! ring is its request queue) and one response channel of its own, on which
//! every server that answers it publishes. Each call gets an id; the call's
//! slot (`id mod depth`) in the client's record holds the claim word a
//! server sets when it takes the request, which is how the client knows
//! *who* serves the call and can watch that process while it waits.

use std::marker::PhantomData;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use horus_msgs::Message;
use horus_shm::{Channel, ProcessId, PublisherPort, Received, SubscriberPort};

use super::error::{CallError, ServiceError};
use super::pending::PendingCall;
use super::service::{JoinFailure, ServiceInner};
use super::stats::{ClientStats, ServiceStats};
use super::table::{ClientCounter, Table};
use super::wire::{self, claim, RequestHeader, ResponseHeader, HEADER};
use crate::Sample;

/// The timeout of calls that do not name one.
pub const DEFAULT_CALL_TIMEOUT: Duration = Duration::from_secs(1);

/// How often a waiting call checks that its server is alive.
const LIVENESS_EVERY: Duration = Duration::from_millis(2);

/// Polls before a waiting call sleeps on the response channel's futex.
const SPIN: u32 = 64;

/// Where a call slot stands.
enum Slot<Resp> {
    Free,
    /// Sent (id, when, which servers could see it), no result yet.
    Waiting(u64, Instant, Witnesses),
    /// Result arrived, not yet taken.
    Done(u64, Result<Sample<Resp>, CallError>),
}

/// The servers visible when a request was sent (each sees it): their
/// places, generations (low bits) and one pid to name in an error.
#[derive(Clone, Copy)]
struct Witnesses {
    mask: u32,
    gens: [u16; 32],
    pid: u32,
}

impl Witnesses {
    fn now(table: &Table) -> Witnesses {
        let mask = table.server_places();
        let mut w = Witnesses {
            mask,
            gens: [0; 32],
            pid: 0,
        };
        for s in (0..32).filter(|s| mask & (1 << s) != 0) {
            if let Some((pid, gen)) = table.server_owner(s) {
                w.gens[s] = gen as u16;
                if w.pid == 0 {
                    w.pid = pid.pid;
                }
            } else {
                w.mask &= !(1 << s);
            }
        }
        w
    }
}

/// The state shared by a client and its pending calls.
pub(crate) struct ClientCore<Resp> {
    svc: Arc<ServiceInner>,
    table: Arc<Table>,
    resp: SubscriberPort,
    req: PublisherPort,
    resp_name: String,
    k: usize,
    token: u64,
    staging: Box<[u64]>,
    buf: Box<[u64]>,
    next_id: u64,
    slots: Vec<Slot<Resp>>,
    next_check: Instant,
    _t: PhantomData<fn() -> Resp>,
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
    fn bump(&self, c: ClientCounter) {
        self.table.bump_client(self.k, c);
    }

    fn slot_of(&self, id: u64) -> usize {
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

    /// Marks call `id` withdrawn unless a server took it; true if it did.
    fn try_cancel(&self, id: u64) -> bool {
        let word = self.table.claim(self.k, id);
        for _ in 0..16 {
            let cur = word.load(Ordering::Acquire);
            if claim::state(cur, id) != claim::State::Unclaimed {
                return false;
            }
            // AcqRel: the CAS races with a server's claiming CAS; exactly
            // one of them wins the word.
            if word
                .compare_exchange(
                    cur,
                    claim::cancelled(id),
                    Ordering::AcqRel,
                    Ordering::Acquire,
                )
                .is_ok()
            {
                return true;
            }
        }
        false
    }
}

impl<Resp: Message> ClientCore<Resp> {
    fn join(svc: &Arc<ServiceInner>) -> Result<Self, ServiceError> {
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
                Some(first) => Ok((Arc::clone(table), req, k, first)),
                None => Err(JoinFailure::Closing),
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
        let buf_words = resp_config.slot_payload as usize / 8;
        Ok(ClientCore {
            svc: Arc::clone(svc),
            table,
            resp,
            req,
            resp_name,
            k,
            token,
            staging: vec![0; staging_words].into_boxed_slice(),
            buf: vec![0; buf_words].into_boxed_slice(),
            next_id: first,
            slots: (0..depth).map(|_| Slot::Free).collect(),
            next_check: Instant::now(),
            _t: PhantomData,
        })
    }

    /// Largest request tail.
    fn max_tail(&self) -> usize {
        self.svc.config.req_tail as usize
    }

    /// Sends a request filled in place by `fill` (the body and its tail of
    /// `tail_len` bytes). Returns the call id.
    pub(crate) fn start<Req: Message>(
        &mut self,
        tail_len: usize,
        fill: impl FnOnce(&mut Req, &mut [u8]),
    ) -> Result<u64, CallError> {
        if tail_len > self.max_tail() || (tail_len > 0 && !Req::HAS_TAIL) {
            return Err(CallError::TooLarge {
                requested: tail_len,
                max: self.max_tail(),
            });
        }
        // No server at all: say so at once instead of waiting for a timeout.
        // A server that died unnoticed is found while waiting.
        if self.table.server_places() == 0 {
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
        let witnesses = Witnesses::now(&self.table);
        let size = self.svc.layout.req_size;
        if self.svc.layout.req_inline {
            let bytes: &mut [u8] = bytemuck::cast_slice_mut(&mut self.staging);
            let (head, body) = bytes.split_at_mut(HEADER);
            head.copy_from_slice(bytemuck::cast_slice(&header));
            fill(bytemuck::from_bytes_mut(&mut body[..size]), &mut []);
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
            self.req
                .send_chunk(loan, len)
                .map_err(|_| CallError::TooLarge {
                    requested: tail_len,
                    max: self.max_tail(),
                })?;
        }
        self.next_id = if id + 1 >= wire::MAX_CALL_ID {
            1
        } else {
            id + 1
        };
        self.slots[i] = Slot::Waiting(id, Instant::now(), witnesses);
        self.bump(ClientCounter::Calls);
        Ok(id)
    }

    /// Routes every response that arrived to its call's slot.
    fn pump(&mut self) {
        // Bounded: at most what the rings can hold, however fast a
        // (possibly hostile) server writes.
        let bound = self.slots.len() * self.svc.config.max_servers as usize + 2;
        for _ in 0..bound {
            match self.resp.try_receive(&mut self.buf) {
                Some(r) => self.route(r),
                None => return,
            }
        }
    }

    /// Decodes a response and files it under its call, or discards it
    /// (counted) if its call is no longer waiting.
    fn route(&mut self, r: Received) {
        let size = self.svc.layout.resp_size;
        let decoded = match r {
            Received::Inline { len } if len >= HEADER => {
                let words = [self.buf[0], self.buf[1], self.buf[2], self.buf[3]];
                ResponseHeader::decode(words).and_then(|h| match h.status {
                    wire::STATUS_OK if self.svc.layout.resp_inline && len == HEADER + size => {
                        let bytes: &[u8] = bytemuck::cast_slice(&self.buf);
                        let v: Resp = bytemuck::pod_read_unaligned(&bytes[HEADER..HEADER + size]);
                        Some((h, Some(Sample::inline(v))))
                    }
                    wire::STATUS_OK => None,
                    _ => Some((h, None)),
                })
            }
            Received::Inline { .. } => None,
            Received::Chunk { pool, chunk, len } => {
                let ptr = self.resp.chunk_ptr(pool, chunk);
                let place = Arc::clone(self.resp.place());
                if len < HEADER + size {
                    place.release_chunk(pool, chunk);
                    None
                } else {
                    // SAFETY: the chunk holds `len` ≥ 32 bytes (validated by
                    // the port against the chunk size), is 8-aligned and
                    // pinned by our receive.
                    let words = unsafe { wire::read_header(ptr) };
                    let body = Sample::chunk(
                        place,
                        pool,
                        chunk,
                        // SAFETY: HEADER < len, inside the chunk.
                        unsafe { ptr.add(HEADER) },
                        len - HEADER,
                    );
                    ResponseHeader::decode(words)
                        .map(|h| (h, (h.status == wire::STATUS_OK).then_some(body)))
                }
            }
        };
        let Some((h, body)) = decoded else {
            self.bump(ClientCounter::Malformed);
            return;
        };
        let i = self.slot_of(h.id);
        if !matches!(self.slots[i], Slot::Waiting(id, ..) if id == h.id) {
            self.bump(ClientCounter::Late);
            return;
        }
        let result = match (h.status, body) {
            (wire::STATUS_OK, Some(s)) => {
                self.bump(ClientCounter::Responses);
                Ok(s)
            }
            (wire::STATUS_UNANSWERED, _) => {
                self.bump(ClientCounter::Unanswered);
                Err(CallError::Unanswered)
            }
            _ => {
                self.bump(ClientCounter::Failed);
                Err(CallError::ReplyFailed)
            }
        };
        self.slots[i] = Slot::Done(h.id, result);
    }

    /// Takes call `id`'s result if it is there.
    fn take(&mut self, id: u64) -> Option<Result<Sample<Resp>, CallError>> {
        let i = self.slot_of(id);
        if matches!(self.slots[i], Slot::Done(d, _) if d == id) {
            if let Slot::Done(_, r) = std::mem::replace(&mut self.slots[i], Slot::Free) {
                return Some(r);
            }
        }
        None
    }

    /// Why untaken call `id` can no longer be served, if so: no server is
    /// left (`NoServer`), or every server that could see the request died
    /// or left without taking it (`ServerDied`; a server that started
    /// later never sees it). The call is withdrawn first; if a server took
    /// it meanwhile, it is not a failure.
    fn unclaimed_failure(&mut self, id: u64) -> Option<CallError> {
        let live = self.table.live_servers();
        let failure = if live == 0 {
            CallError::NoServer(self.svc.name.clone())
        } else {
            let Slot::Waiting(_, _, w) = &self.slots[self.slot_of(id)] else {
                return None;
            };
            // `live_servers` just reclaimed the dead: a place still owned
            // with the generation we saw is a live witness.
            let alive = (0..32).any(|s| {
                w.mask & (1 << s) != 0
                    && self
                        .table
                        .server_owner(s)
                        .is_some_and(|(_, g)| claim::gen_matches(g, u64::from(w.gens[s])))
            });
            if alive {
                return None;
            }
            CallError::ServerDied { pid: w.pid }
        };
        self.try_cancel(id).then_some(failure)
    }

    /// Whether call `id` has failed for a reason other than the clock: its
    /// server died, or no server is left to take it.
    fn check_liveness(&mut self, id: u64) -> Option<CallError> {
        let now = Instant::now();
        if now < self.next_check {
            return None;
        }
        self.next_check = now + LIVENESS_EVERY;
        let word = self.table.claim(self.k, id).load(Ordering::Acquire);
        let failed = match claim::state(word, id) {
            claim::State::Claimed { server, gen } => match self.table.server_owner(server) {
                Some((pid, g)) if claim::gen_matches(g, gen) => {
                    (!pid.is_alive()).then_some(CallError::ServerDied { pid: pid.pid })
                }
                // The place was given up or reclaimed since it took our call.
                _ => Some(CallError::ServerDied { pid: 0 }),
            },
            claim::State::Unclaimed => self.unclaimed_failure(id),
            claim::State::Cancelled | claim::State::Stale => {
                Some(CallError::NoServer(self.svc.name.clone()))
            }
        }?;
        let i = self.slot_of(id);
        self.slots[i] = Slot::Free;
        self.bump(match failed {
            CallError::ServerDied { .. } => {
                self.table.reclaim_dead();
                ClientCounter::ServerDied
            }
            _ => ClientCounter::NoServer,
        });
        Some(failed)
    }

    /// One non-blocking look at call `id`: its result, or its failure
    /// (deadline passed, server died, no server), or `None` while it waits.
    pub(crate) fn poll(
        &mut self,
        id: u64,
        deadline: Instant,
        timeout: Duration,
    ) -> Option<Result<Sample<Resp>, CallError>> {
        self.pump();
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
        if Instant::now() >= deadline {
            self.withdraw(id, ClientCounter::TimedOut);
            return Some(Err(CallError::Timeout(timeout)));
        }
        // A call answered within the first check period never pays for a
        // liveness check (it reads `/proc`).
        if sent.elapsed() < LIVENESS_EVERY {
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
    ) -> Option<Result<Sample<Resp>, CallError>> {
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
        if let Some(r) = self.resp.receive_blocking(&mut self.buf, SPIN, Some(until)) {
            self.route(r);
        }
        None
    }

    fn in_flight(&self) -> usize {
        self.slots
            .iter()
            .filter(|s| !matches!(s, Slot::Free))
            .count()
    }
}

use std::sync::atomic::Ordering;

impl<Resp> Drop for ClientCore<Resp> {
    fn drop(&mut self) {
        self.table.leave_client(self.k);
        // Only this client ever uses its response channel's name; servers
        // that still map it find the client gone (token cleared) and drop
        // their mapping.
        horus_shm::Segment::unlink(&self.resp_name);
    }
}

/// Calls a service: sends requests of type `Req`, receives responses of
/// type `Resp`. Every call has a timeout; failures are typed
/// ([`CallError`]) and counted ([`ClientStats`]).
///
/// A client may have up to [`Service::depth`](super::Service::depth) calls
/// in flight ([`Client::call_async`]). It is `Send`; pending calls share
/// it and can be waited for from any thread.
pub struct Client<Req, Resp> {
    core: Arc<Mutex<ClientCore<Resp>>>,
    timeout: Duration,
    _t: PhantomData<fn(Req)>,
}

/// Waits for call `id` until it settles or `deadline` passes, taking the
/// client's lock one slice at a time.
pub(crate) fn wait<Resp: Message>(
    core: &Mutex<ClientCore<Resp>>,
    id: u64,
    deadline: Instant,
    timeout: Duration,
) -> Result<Sample<Resp>, CallError> {
    loop {
        if let Some(r) = lock(core).wait_slice(id, deadline, timeout) {
            return r;
        }
    }
}

pub(crate) fn lock<Resp>(core: &Mutex<ClientCore<Resp>>) -> MutexGuard<'_, ClientCore<Resp>> {
    core.lock().unwrap_or_else(|e| e.into_inner())
}

impl<Req: Message, Resp: Message> Client<Req, Resp> {
    pub(crate) fn new(svc: Arc<ServiceInner>) -> Result<Self, ServiceError> {
        Ok(Client {
            core: Arc::new(Mutex::new(ClientCore::join(&svc)?)),
            timeout: DEFAULT_CALL_TIMEOUT,
            _t: PhantomData,
        })
    }

    /// The timeout of [`Client::call_default`] and of pending calls not
    /// waited for with an explicit one. Default [`DEFAULT_CALL_TIMEOUT`]
    /// (1 s).
    pub fn set_timeout(&mut self, timeout: Duration) {
        self.timeout = timeout;
    }

    /// The default timeout.
    pub fn timeout(&self) -> Duration {
        self.timeout
    }

    /// Calls the service with a copy of `req` and waits at most `timeout`
    /// for the response.
    pub fn call(&mut self, req: &Req, timeout: Duration) -> Result<Sample<Resp>, CallError> {
        self.call_with(0, |r, _| *r = *req, timeout)
    }

    /// [`Client::call`] with the client's default timeout.
    pub fn call_default(&mut self, req: &Req) -> Result<Sample<Resp>, CallError> {
        self.call(req, self.timeout)
    }

    /// Calls the service with a request written in place by `fill` (the
    /// fixed part and a tail of `tail_len` bytes; for types with a tail,
    /// the request is in shared memory: zero copy).
    pub fn call_with(
        &mut self,
        tail_len: usize,
        fill: impl FnOnce(&mut Req, &mut [u8]),
        timeout: Duration,
    ) -> Result<Sample<Resp>, CallError> {
        let deadline = Instant::now() + timeout;
        let id = lock(&self.core).start(tail_len, fill)?;
        wait(&self.core, id, deadline, timeout)
    }

    /// Sends a copy of `req` and returns at once with a handle on the
    /// call. Several calls may be in flight (up to the service's depth;
    /// beyond, [`CallError::Busy`]). The call times out after the client's
    /// default timeout unless waited for with another.
    pub fn call_async(&mut self, req: &Req) -> Result<PendingCall<Resp>, CallError> {
        self.call_async_with(0, |r, _| *r = *req)
    }

    /// [`Client::call_async`] with a request written in place (see
    /// [`Client::call_with`]).
    pub fn call_async_with(
        &mut self,
        tail_len: usize,
        fill: impl FnOnce(&mut Req, &mut [u8]),
    ) -> Result<PendingCall<Resp>, CallError> {
        let id = lock(&self.core).start(tail_len, fill)?;
        Ok(PendingCall::new(Arc::clone(&self.core), id, self.timeout))
    }

    /// Calls in flight (sent, result not yet taken).
    pub fn in_flight(&self) -> usize {
        lock(&self.core).in_flight()
    }

    /// Servers running now (reclaims dead ones: reads `/proc`).
    pub fn servers(&self) -> u32 {
        lock(&self.core).table.live_servers()
    }

    /// This client's counters.
    pub fn stats(&self) -> ClientStats {
        let core = lock(&self.core);
        ClientStats::from_counters(core.table.client_counters(core.k))
    }

    /// Counters of every client and server of the service.
    pub fn service_stats(&self) -> ServiceStats {
        ServiceStats::read(&lock(&self.core).table)
    }
}
