//! The answering end of a service.
//!
//! A server is a subscriber on the service's request channel: it sees
//! every client's requests and takes each one by a compare-and-swap on the
//! call's claim word, so with several servers each request is served by
//! exactly one. It answers on the client's own response channel, as one of
//! its publishers.

use std::marker::PhantomData;
use std::sync::Arc;
use std::time::{Duration, Instant};

use horus_msgs::Message;
use horus_shm::SubscriberPort;

use super::client_core::typed;
use super::error::ServiceError;
use super::receiver::Receiver;
use super::request::Request;
use super::service::ServiceInner;
use super::stats::{ServerStats, ServiceStats};
use super::wire::RequestHeader;
use crate::Sample;

/// Serves a service: receives requests of type `Req` and answers each with
/// a `Resp` exactly once, through the [`Request`] guard.
pub struct Server<Req, Resp> {
    rx: Receiver,
    _t: PhantomData<fn(Req) -> Resp>,
}

impl<Req: Message, Resp: Message> Server<Req, Resp> {
    pub(crate) fn new(svc: Arc<ServiceInner>) -> Result<Self, ServiceError> {
        Ok(Server {
            rx: Receiver::join(svc, crate::sample::shares_buffer::<Req>())?,
            _t: PhantomData,
        })
    }

    fn request(&self, taken: Option<(RequestHeader, Sample<Req>)>) -> Option<Request<Req, Resp>> {
        let (header, sample) = taken?;
        Some(Request::new(sample, header, Arc::clone(&self.rx.replier)))
    }

    /// The next request, if one is waiting. Never blocks; bounded however
    /// many records (honest or not) the clients wrote.
    pub fn try_recv(&mut self) -> Option<Request<Req, Resp>> {
        let taken = self.rx.try_recv(typed::<Req>);
        self.request(taken)
    }

    /// Waits for the next request (futex sleep while idle).
    pub fn recv(&mut self) -> Request<Req, Resp> {
        loop {
            let taken = self.rx.wait(None, typed::<Req>);
            if let Some(r) = self.request(taken) {
                return r;
            }
        }
    }

    /// Waits at most `timeout` for the next request.
    pub fn recv_timeout(&mut self, timeout: Duration) -> Option<Request<Req, Resp>> {
        let taken = self.rx.wait(Some(Instant::now() + timeout), typed::<Req>);
        self.request(taken)
    }

    /// Whether a request record is waiting (for a scheduler's readiness
    /// check): copies nothing, moves nothing. With several servers, a
    /// `true` may be a request another server takes first.
    pub fn has_pending(&self) -> bool {
        self.rx.has_pending()
    }

    /// The request-channel port (for the readiness source).
    pub(crate) fn port(&self) -> &SubscriberPort {
        self.rx.port()
    }

    /// This server's counters.
    pub fn stats(&self) -> ServerStats {
        self.rx.stats()
    }

    /// Counters of every client and server of the service.
    pub fn service_stats(&self) -> ServiceStats {
        self.rx.service_stats()
    }
}
