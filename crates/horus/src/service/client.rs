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

use super::client_core::{self, ClientCore};
use super::error::{CallError, ServiceError};
use super::pending::PendingCall;
use super::service::ServiceInner;
use super::stats::{ClientStats, ServiceStats};
use super::table::ClientCounter;
use crate::Sample;

/// The timeout of calls that do not name one.
pub const DEFAULT_CALL_TIMEOUT: Duration = Duration::from_secs(1);

/// Calls a service: sends requests of type `Req`, receives responses of
/// type `Resp`. Every call has a timeout; failures are typed
/// ([`CallError`]) and counted ([`ClientStats`]).
///
/// A client may have up to [`Service::depth`](super::Service::depth) calls
/// in flight ([`Client::call_async`]). It is `Send`; pending calls share
/// it and can be waited for from any thread.
pub struct Client<Req, Resp> {
    core: Arc<Mutex<ClientCore<Sample<Resp>>>>,
    timeout: Duration,
    _t: PhantomData<fn(Req)>,
}

/// Waits for call `id` until it settles or `deadline` passes, taking the client's lock
/// one slice at a time, and asking `stop` after each slice (a few milliseconds: the client's liveness
/// checks, see [`ClientCore::wait_slice`]); once it says so, the call is withdrawn and
/// [`CallError::Stopped`] returned. The slices are the wait's own: asking costs no
/// extra wake-ups.
pub(crate) fn wait_or_stop<Out>(
    core: &Mutex<ClientCore<Out>>,
    id: u64,
    deadline: Instant,
    timeout: Duration,
    stop: impl Fn() -> bool,
) -> Result<Out, CallError> {
    loop {
        let mut c = lock(core);
        if let Some(r) = c.wait_slice(id, deadline, timeout) {
            return r;
        }
        if stop() {
            c.withdraw(id, ClientCounter::Cancelled);
            return Err(CallError::Stopped);
        }
    }
}

pub(crate) fn lock<Resp>(core: &Mutex<ClientCore<Resp>>) -> MutexGuard<'_, ClientCore<Resp>> {
    core.lock().unwrap_or_else(|e| e.into_inner())
}

impl<Req: Message, Resp: Message> Client<Req, Resp> {
    pub(crate) fn new(svc: Arc<ServiceInner>) -> Result<Self, ServiceError> {
        Ok(Client {
            core: Arc::new(Mutex::new(ClientCore::join(
                &svc,
                client_core::typed::<Resp>,
                crate::sample::shares_buffer::<Resp>(),
            )?)),
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
        self.call_with_or_stop(tail_len, fill, timeout, || false)
    }

    /// [`Client::call`], asking `stop` every few milliseconds while it waits (between the
    /// wait's own slices: no extra wake-ups); once `stop` says so, the call is withdrawn:
    /// [`CallError::Stopped`]. For a caller whose `close()` from another thread must end
    /// a call in progress.
    pub fn call_or_stop(
        &mut self,
        req: &Req,
        timeout: Duration,
        stop: impl Fn() -> bool,
    ) -> Result<Sample<Resp>, CallError> {
        self.call_with_or_stop(0, |r, _| *r = *req, timeout, stop)
    }

    fn call_with_or_stop(
        &mut self,
        tail_len: usize,
        fill: impl FnOnce(&mut Req, &mut [u8]),
        timeout: Duration,
        stop: impl Fn() -> bool,
    ) -> Result<Sample<Resp>, CallError> {
        let started = lock(&self.core).start(tail_len, fill)?;
        wait_or_stop(
            &self.core,
            started.id,
            started.sent + timeout,
            timeout,
            stop,
        )
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
        let started = lock(&self.core).start(tail_len, fill)?;
        Ok(PendingCall::new(
            Arc::clone(&self.core),
            started,
            self.timeout,
        ))
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
