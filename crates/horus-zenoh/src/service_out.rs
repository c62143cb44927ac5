//! A service served on this host, offered to the others: a Zenoh queryable whose queries are
//! calls, made on the local server through a [`RawClient`] (the same client protocol, counters
//! and failure semantics as a local caller), and a second queryable answering with the
//! service's description (so the other side can stand in for it without knowing its types).

use std::sync::atomic::AtomicU64;
use std::sync::Arc;
use std::time::Duration;

use horus::{CallError, RawClient};
use zenoh::handlers::FifoChannel;
use zenoh::{Session, Wait};

use crate::keys::SchemaKey;
use crate::refusals::{Refusals, Refused, UNKNOWN_HOST};
use crate::remote::RemoteView;
use crate::status::LiveCounters;
use crate::wire::WireHeader;
use crate::worker::Worker;

const POLL: Duration = Duration::from_millis(50);

/// Calls waiting between Zenoh and the local server.
const QUEUE: usize = 64;

/// A failed call, as it travels back (a Zenoh error reply's text).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum RemoteCallError {
    /// The host has no server (any more).
    NoServer,
    /// The server died holding the call.
    ServerDied(u32),
    /// No answer within the bridge's call timeout.
    Timeout,
    /// The call itself was refused (bad header, other types, wrong size).
    Refused(String),
}

impl RemoteCallError {
    pub(crate) fn encode(&self) -> String {
        match self {
            RemoteCallError::NoServer => "no_server".into(),
            RemoteCallError::ServerDied(pid) => format!("server_died {pid}"),
            RemoteCallError::Timeout => "timeout".into(),
            RemoteCallError::Refused(why) => format!("refused {why}"),
        }
    }

    pub(crate) fn decode(text: &str) -> RemoteCallError {
        let (word, rest) = text.split_once(' ').unwrap_or((text, ""));
        match word {
            "no_server" => RemoteCallError::NoServer,
            "server_died" => RemoteCallError::ServerDied(rest.parse().unwrap_or(0)),
            "timeout" => RemoteCallError::Timeout,
            _ => RemoteCallError::Refused(rest.to_owned()),
        }
    }
}

/// Counters of a service's calls.
#[derive(Debug, Default)]
pub(crate) struct CallCounters {
    pub(crate) ok: AtomicU64,
    pub(crate) failed: AtomicU64,
}

/// How calls to one offered service are made: at most `concurrent` at once (each by a thread
/// with its own client place; fewer when the service has fewer client places free), each
/// given up after `timeout`.
#[derive(Clone, Copy, Debug)]
pub(crate) struct CallLimits {
    pub(crate) concurrent: usize,
    pub(crate) timeout: Duration,
}

/// A running offered service.
pub(crate) struct ServiceOut {
    _workers: Vec<Worker>,
    pub(crate) counters: Arc<CallCounters>,
}

impl ServiceOut {
    /// Opens the local service as a client and starts answering queries.
    pub(crate) fn start(
        session: &Session,
        namespace: &str,
        service: &str,
        call_key: String,
        describe_key: String,
        schema: SchemaKey,
        limits: CallLimits,
    ) -> Result<ServiceOut, String> {
        let call_timeout = limits.timeout;
        let client = RawClient::open(namespace, service).map_err(|e| e.to_string())?;
        let description = serde_json::to_vec(client.description()).map_err(|e| e.to_string())?;
        let describe = session
            .declare_queryable(describe_key.clone())
            .callback(move |q| {
                let _ = q.reply(q.key_expr().clone(), description.clone()).wait();
            })
            .wait()
            .map_err(|e| format!("zenoh queryable {describe_key}: {e}"))?;
        let calls = Arc::new(
            session
                .declare_queryable(call_key.clone())
                .with(FifoChannel::new(QUEUE))
                .wait()
                .map_err(|e| format!("zenoh queryable {call_key}: {e}"))?,
        );
        let describe = Arc::new(describe);
        let counters = Arc::new(CallCounters::default());
        let mut clients = vec![client];
        while clients.len() < limits.concurrent {
            match RawClient::open(namespace, service) {
                Ok(c) => clients.push(c),
                Err(_) => break,
            }
        }
        let mut workers = Vec::new();
        for (n, mut client) in clients.into_iter().enumerate() {
            let c = Arc::clone(&counters);
            let calls = Arc::clone(&calls);
            let describe = Arc::clone(&describe);
            workers.push(Worker::spawn(
                format!("srv-out{n}:{service}"),
                move |flag| {
                    let _describe = describe;
                    while !flag.is_set() {
                        let query = match calls.recv_timeout(POLL) {
                            Ok(Some(q)) => q,
                            Ok(None) => continue,
                            Err(_) => break,
                        };
                        serve(&query, &mut client, schema, call_timeout, &c);
                    }
                },
            )?);
        }
        Ok(ServiceOut {
            _workers: workers,
            counters,
        })
    }
}

/// A local service other hosts may not call (policy): its call key answers every query
/// with a refusal, counted per calling host (the host the query's attachment names, if this
/// bridge knows it; `?` otherwise). No offer token and no description are given for it.
pub(crate) struct RefusedService {
    _calls: zenoh::query::Queryable<()>,
}

impl RefusedService {
    pub(crate) fn start(
        session: &Session,
        call_key: String,
        remote: RemoteView,
        refusals: Refusals,
    ) -> Result<RefusedService, String> {
        let calls = session
            .declare_queryable(call_key.clone())
            .callback(move |q| {
                let caller = q
                    .attachment()
                    .map(|a| a.to_bytes().into_owned())
                    .and_then(|a| String::from_utf8(a).ok())
                    .filter(|h| remote.knows(h))
                    .unwrap_or_else(|| UNKNOWN_HOST.to_owned());
                refusals.add(&caller, Refused::Call);
                let refusal =
                    RemoteCallError::Refused("policy: not callable from other hosts".into());
                let _ = q.reply_err(refusal.encode()).wait();
            })
            .wait()
            .map_err(|e| format!("zenoh queryable {call_key}: {e}"))?;
        Ok(RefusedService { _calls: calls })
    }
}

/// Makes one call on the local server for a query and replies with the response or the failure.
fn serve(
    query: &zenoh::query::Query,
    client: &mut RawClient,
    schema: SchemaKey,
    call_timeout: Duration,
    c: &CallCounters,
) {
    let bytes = query.payload().map(|p| p.to_bytes().into_owned());
    let outcome = match bytes.as_deref().map(WireHeader::read) {
        None => Err(RemoteCallError::Refused("no request".into())),
        Some(Err(e)) => Err(RemoteCallError::Refused(e.to_string())),
        Some(Ok((h, _))) if h.schema_id != schema.id || h.layout_hash != schema.layout => Err(
            RemoteCallError::Refused("the caller has other types".into()),
        ),
        Some(Ok((_, body))) => client.call(body, call_timeout).map_err(|e| match e {
            CallError::NoServer(_) => RemoteCallError::NoServer,
            CallError::ServerDied { pid } => RemoteCallError::ServerDied(pid),
            CallError::Timeout(_) => RemoteCallError::Timeout,
            other => RemoteCallError::Refused(other.to_string()),
        }),
    };
    // A reply that cannot be sent means the caller's host is gone: its stand-in counts the
    // call as failed.
    let _ = match outcome {
        Ok(resp) => {
            LiveCounters::add(&c.ok, 1);
            query.reply(query.key_expr().clone(), resp).wait()
        }
        Err(e) => {
            LiveCounters::add(&c.failed, 1);
            query.reply_err(e.encode()).wait()
        }
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn call_errors_round_trip() {
        for e in [
            RemoteCallError::NoServer,
            RemoteCallError::ServerDied(42),
            RemoteCallError::Timeout,
            RemoteCallError::Refused("other types".into()),
        ] {
            assert_eq!(RemoteCallError::decode(&e.encode()), e);
        }
        assert_eq!(
            RemoteCallError::decode("garbage"),
            RemoteCallError::Refused(String::new())
        );
    }
}
