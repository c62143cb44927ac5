//! A service served on another host, stood in for here: a raw server on the local service
//! (created from the description the other host's bridge gives) whose requests travel as Zenoh
//! queries. The local client sees what it would see with a local server: the response, or
//! `NoServer` when the remote host has none, `ServerDied` when the remote server died or its
//! host became unreachable during the call.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use horus::description::ServiceDescription;
use horus::{RawRequest, RawServer, RemoteFailure};
use zenoh::query::{ConsolidationMode, QueryTarget, Reply};
use zenoh::{Session, Wait};

use crate::keys::SchemaKey;
use crate::outbound::epoch_now;
use crate::service_out::{CallCounters, RemoteCallError};
use crate::status::LiveCounters;
use crate::wire::{WireHeader, HEADER_LEN};
use crate::worker::Worker;

const POLL: Duration = Duration::from_millis(50);

/// A running stand-in server.
pub(crate) struct ServiceIn {
    _worker: Worker,
    pub(crate) counters: Arc<CallCounters>,
}

/// Parses a service description reply (the one parser of untrusted service description
/// JSON: its own byte limit, then validation).
pub(crate) fn parse_service_description(bytes: &[u8]) -> Result<ServiceDescription, String> {
    horus::description::parse_service(bytes).map_err(|e| format!("invalid description: {e}"))
}

/// Where a stand-in forwards calls.
pub(crate) struct ForwardTo {
    /// The remote server's call key.
    pub(crate) call_key: String,
    /// The service's schema key.
    pub(crate) schema: SchemaKey,
    /// How long a call may take.
    pub(crate) call_timeout: Duration,
    /// This host's name, sent with each call (the serving bridge counts refusals per host).
    pub(crate) me: String,
}

impl ServiceIn {
    /// Creates (or joins) the local service and starts standing in for the remote server.
    pub(crate) fn start(
        session: &Session,
        namespace: &str,
        service: &str,
        description: &ServiceDescription,
        to: ForwardTo,
    ) -> Result<ServiceIn, String> {
        let ForwardTo {
            call_key,
            schema,
            call_timeout,
            me,
        } = to;
        let mut server =
            RawServer::create(namespace, service, description).map_err(|e| e.to_string())?;
        let querier = session
            .declare_querier(call_key.clone())
            .target(QueryTarget::BestMatching)
            .consolidation(ConsolidationMode::None)
            .timeout(call_timeout)
            .wait()
            .map_err(|e| format!("zenoh querier {call_key}: {e}"))?;
        let counters = Arc::new(CallCounters::default());
        let c = Arc::clone(&counters);
        let worker = Worker::spawn(format!("srv-in:{service}"), move |flag| {
            let epoch = epoch_now();
            let mut seq = 0u64;
            // Relaxed: a stop flag; nothing is published through it.
            while !flag.is_set() {
                let Some(request) = server.recv_timeout(POLL) else {
                    continue;
                };
                let body = request.bytes();
                let mut bytes = vec![0u8; HEADER_LEN + body.len()];
                WireHeader {
                    epoch,
                    schema_id: schema.id,
                    layout_hash: schema.layout,
                    seq,
                    origin_place: 0,
                    origin_seq: seq,
                }
                .write(&mut bytes);
                seq += 1;
                bytes[HEADER_LEN..].copy_from_slice(body);
                // The call is answered from Zenoh's callback when the reply arrives, so that
                // calls of several clients are in flight at once; the guard answers it with
                // `ServerDied` if the query ends without a reply (the host gone, or silent
                // past the call timeout).
                let guard = Arc::new(CallGuard {
                    request: Mutex::new(Some(request)),
                    counters: Arc::clone(&c),
                });
                let on_reply = Arc::clone(&guard);
                let sent = querier
                    .get()
                    .payload(bytes)
                    .attachment(me.as_bytes().to_vec())
                    .callback(move |reply| on_reply.answer(reply))
                    .wait();
                drop(guard);
                // A query that could not be sent ended at once: the guard (dropped with the
                // callback) has failed the call.
                let _ = sent;
            }
        })?;
        Ok(ServiceIn {
            _worker: worker,
            counters,
        })
    }
}

/// A forwarded call waiting for its reply: answered exactly once, by the reply or, when the
/// query ends without one, by the drop.
struct CallGuard {
    request: Mutex<Option<RawRequest>>,
    counters: Arc<CallCounters>,
}

impl CallGuard {
    fn take(&self) -> Option<RawRequest> {
        self.request
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take()
    }

    /// Answers the local client from the remote reply (the first one; any further reply is
    /// ignored).
    fn answer(&self, reply: Reply) {
        let Some(request) = self.take() else {
            return;
        };
        let c = &self.counters;
        match reply.into_result() {
            Ok(sample) => {
                if request.reply(&sample.payload().to_bytes()).is_ok() {
                    LiveCounters::add(&c.ok, 1);
                } else {
                    LiveCounters::add(&c.failed, 1);
                }
            }
            Err(e) => {
                LiveCounters::add(&c.failed, 1);
                match RemoteCallError::decode(&String::from_utf8_lossy(&e.payload().to_bytes())) {
                    RemoteCallError::NoServer => request.fail(RemoteFailure::NoServer),
                    RemoteCallError::ServerDied(pid) => {
                        request.fail(RemoteFailure::ServerDied { pid })
                    }
                    // The remote side gave up; the local client's own timeout decides what it
                    // sees.
                    RemoteCallError::Timeout | RemoteCallError::Refused(_) => drop(request),
                }
            }
        }
    }
}

impl Drop for CallGuard {
    fn drop(&mut self) {
        if let Some(request) = self.take() {
            LiveCounters::add(&self.counters.failed, 1);
            request.fail(RemoteFailure::ServerDied { pid: 0 });
        }
    }
}
