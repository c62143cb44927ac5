//! A service served on another host, stood in for here: a raw server on the local service
//! (created from the description the other host's bridge gives) whose requests travel as Zenoh
//! queries. The local client sees what it would see with a local server: the response, or
//! `NoServer` when the remote host has none, `ServerDied` when the remote server died or its
//! host became unreachable during the call.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex, MutexGuard};
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

/// How long the other host's bridge has to send the service's description.
const DESCRIBE_TIMEOUT: Duration = Duration::from_secs(2);

/// A running stand-in server.
pub(crate) struct ServiceIn {
    _worker: Worker,
    pub(crate) counters: Arc<CallCounters>,
}

/// Which description: the service and the host asked.
pub(crate) type DescribeId = (String, String);

/// Asks other hosts' bridges for service descriptions, off the bridge's loop: each request
/// is a Zenoh query answered in Zenoh's callback (at most `max_in_flight` at once, each given
/// up after 2 s), the reply's size checked before it is read and the description validated
/// (untrusted input). The loop collects the outcomes.
#[derive(Clone)]
pub(crate) struct Describer {
    state: Arc<Mutex<Describing>>,
    max_in_flight: usize,
    max_bytes: usize,
}

#[derive(Default)]
struct Describing {
    in_flight: HashSet<DescribeId>,
    done: HashMap<DescribeId, Result<ServiceDescription, String>>,
}

impl Describer {
    pub(crate) fn new(max_in_flight: usize, max_bytes: usize) -> Describer {
        Describer {
            state: Arc::default(),
            max_in_flight,
            max_bytes,
        }
    }

    fn lock(&self) -> MutexGuard<'_, Describing> {
        // Plain data: usable after a panic elsewhere.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The outcome for `id`, if its query has ended; otherwise asks `key` for it (unless
    /// it is being asked already, or `max_in_flight` queries are) and returns `None`.
    pub(crate) fn poll(
        &self,
        session: &Session,
        id: &DescribeId,
        key: &str,
    ) -> Option<Result<ServiceDescription, String>> {
        let mut st = self.lock();
        if let Some(r) = st.done.remove(id) {
            return Some(r);
        }
        if st.in_flight.contains(id) || st.in_flight.len() >= self.max_in_flight {
            return None;
        }
        st.in_flight.insert(id.clone());
        drop(st);
        let guard = DescribeGuard {
            id: id.clone(),
            describer: self.clone(),
            outcome: Mutex::new(None),
        };
        let max = self.max_bytes;
        let asked = session
            .get(key)
            .timeout(DESCRIBE_TIMEOUT)
            .callback(move |reply| guard.answer(reply, max))
            .wait();
        if let Err(e) = asked {
            // The callback (and its guard) are gone: the outcome is in already; keep the
            // more precise one.
            self.lock()
                .done
                .insert(id.clone(), Err(format!("zenoh get {key}: {e}")));
        }
        None
    }

    /// Forgets outcomes nobody will collect (services no longer offered).
    pub(crate) fn retain(&self, wanted: impl Fn(&DescribeId) -> bool) {
        self.lock().done.retain(|id, _| wanted(id));
    }
}

/// One description query: the first reply decides; if the query ends without one, the drop
/// records that.
struct DescribeGuard {
    id: DescribeId,
    describer: Describer,
    outcome: Mutex<Option<Result<ServiceDescription, String>>>,
}

impl DescribeGuard {
    fn answer(&self, reply: Reply, max_bytes: usize) {
        let mut o = self.outcome.lock().unwrap_or_else(|e| e.into_inner());
        if o.is_none() {
            *o = Some(read_description(reply, max_bytes));
        }
    }
}

impl Drop for DescribeGuard {
    fn drop(&mut self) {
        let outcome = self
            .outcome
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take()
            .unwrap_or_else(|| Err(format!("no description from {}", self.id.1)));
        let mut st = self.describer.lock();
        st.in_flight.remove(&self.id);
        st.done.insert(self.id.clone(), outcome);
    }
}

/// A description reply, checked: its size first, then JSON, then the description itself.
fn read_description(reply: Reply, max_bytes: usize) -> Result<ServiceDescription, String> {
    let sample = reply
        .into_result()
        .map_err(|e| format!("description refused: {:?}", e.payload().to_bytes()))?;
    let len = sample.payload().len();
    if len > max_bytes {
        return Err(format!(
            "description of {len} bytes: more than limits.max_description_bytes ({max_bytes})"
        ));
    }
    // The one parser of untrusted description JSON (its own byte limit, then validation).
    horus::description::parse_service(&sample.payload().to_bytes())
        .map_err(|e| format!("invalid description: {e}"))
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Instant;

    /// A session of its own, reaching nothing else.
    fn lone_session() -> Session {
        let mut config = zenoh::Config::default();
        for (k, v) in [
            ("mode", "\"peer\""),
            ("listen/endpoints", "[]"),
            ("connect/endpoints", "[]"),
            ("scouting/multicast/enabled", "false"),
        ] {
            config.insert_json5(k, v).unwrap();
        }
        zenoh::open(config).wait().unwrap()
    }

    /// Polls until the outcome for `id` is in (bounded).
    fn outcome(d: &Describer, s: &Session, id: &DescribeId, key: &str) -> Result<(), String> {
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            if let Some(r) = d.poll(s, id, key) {
                return r.map(|_| ());
            }
            assert!(Instant::now() < deadline, "no outcome for {id:?}");
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    #[test]
    fn describes_in_flight_are_bounded_and_oversized_replies_refused() {
        let s = lone_session();
        // Descriptions that never come: each query is held.
        let held = Arc::new(Mutex::new(Vec::new()));
        let h = Arc::clone(&held);
        let _hang = s
            .declare_queryable("t/sd/slow/**")
            .callback(move |q| h.lock().unwrap().push(q))
            .wait()
            .unwrap();
        let d = Describer::new(2, 1024);
        for i in 0..10 {
            let id = (format!("svc/{i}"), "slow".to_owned());
            assert!(d.poll(&s, &id, &format!("t/sd/slow/svc/{i}")).is_none());
        }
        // Queries reach the queryable from Zenoh's threads: wait (bounded) for two.
        let deadline = Instant::now() + Duration::from_secs(10);
        while held.lock().unwrap().len() < 2 && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(10));
        }
        std::thread::sleep(Duration::from_millis(100));
        assert_eq!(held.lock().unwrap().len(), 2, "at most 2 asked at once");
        assert_eq!(d.lock().in_flight.len(), 2);
        // Answered (the held queries end without a reply): room for the next.
        held.lock().unwrap().clear();
        let first = ("svc/0".to_owned(), "slow".to_owned());
        let err = outcome(&d, &s, &first, "t/sd/slow/svc/0").unwrap_err();
        assert!(err.contains("no description"), "{err}");

        // A reply larger than the limit is refused before it is parsed.
        let _big = s
            .declare_queryable("t/sd/big/**")
            .callback(|q| {
                let _ = q.reply(q.key_expr().clone(), vec![b' '; 4096]).wait();
            })
            .wait()
            .unwrap();
        let id = ("svc/x".to_owned(), "big".to_owned());
        let err = outcome(&d, &s, &id, "t/sd/big/svc/x").unwrap_err();
        assert!(err.contains("max_description_bytes"), "{err}");
        // And garbage that fits is a typed refusal too.
        let _junk = s
            .declare_queryable("t/sd/junk/**")
            .callback(|q| {
                let _ = q
                    .reply(q.key_expr().clone(), b"{\"no\": 1}".to_vec())
                    .wait();
            })
            .wait()
            .unwrap();
        let id = ("svc/y".to_owned(), "junk".to_owned());
        let err = outcome(&d, &s, &id, "t/sd/junk/svc/y").unwrap_err();
        assert!(err.contains("not valid JSON"), "{err}");
    }
}
