//! Asking other hosts for a latched topic's history (the receiving side of `history_serve`):
//! one Zenoh query to every host offering the topic latched, its replies checked and kept
//! (bounded) until the query ends, then handed over at once to the inbound topic, which
//! publishes them before the live messages it held back meanwhile (see `inbound`).
//!
//! Untrusted input, bounded: a reply is kept only if it comes from a host that the query was
//! for, has a readable header of the topic's type, is no larger than the topic takes, and fits
//! in `limits.max_history_messages` / `max_history_bytes` for this query; every other reply is
//! counted as `history_refused`. The query ends after [`ASK_TIMEOUT`] at the latest.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use zenoh::query::{ConsolidationMode, QueryTarget, Reply};
use zenoh::{Session, Wait};

use crate::history_serve::WAIT_FOR_STREAM;
use crate::keys::{Keys, SchemaKey};
use crate::status::LiveCounters;
use crate::wire::WireHeader;

/// How long a history query lasts at most: the serving bridge may wait `WAIT_FOR_STREAM` for
/// its stream first.
const ASK_TIMEOUT: Duration = Duration::from_secs(5);

/// One message of a remote host's history.
pub(crate) struct HistoryMessage {
    /// The host it came from.
    pub(crate) host: String,
    /// Its header (`epoch`: the writer's identity, see `history_serve`).
    pub(crate) header: WireHeader,
    /// The whole reply, header included.
    pub(crate) bytes: Vec<u8>,
}

/// What a history query asks for and how much it takes.
pub(crate) struct Ask {
    pub(crate) keys: Keys,
    pub(crate) topic: String,
    /// Hosts offering the topic latched.
    pub(crate) hosts: Vec<String>,
    pub(crate) schema: SchemaKey,
    /// Largest message the local topic takes (header included).
    pub(crate) max_message_bytes: usize,
    pub(crate) max_messages: usize,
    pub(crate) max_bytes: usize,
    pub(crate) counters: Arc<LiveCounters>,
}

/// The replies of one query; handed to `done` when the query ends (the callback holding it
/// is dropped by Zenoh then, or at once if the query could not be sent).
struct Collected<F: FnOnce(Vec<HistoryMessage>)> {
    ask: Ask,
    kept: Mutex<(Vec<HistoryMessage>, usize)>,
    done: Mutex<Option<F>>,
}

impl<F: FnOnce(Vec<HistoryMessage>)> Collected<F> {
    fn reply(&self, reply: &Reply) {
        let Ok(sample) = reply.result() else {
            return;
        };
        let a = &self.ask;
        let payload = sample.payload();
        let mut kept = self.kept.lock().unwrap_or_else(|e| e.into_inner());
        // The size is checked before the payload is copied.
        let fits = kept_fits(a, &kept, payload.len());
        let bytes = fits.then(|| payload.to_bytes().into_owned());
        match bytes
            .as_deref()
            .and_then(|b| check_reply(a, sample.key_expr().as_str(), b))
        {
            Some((host, header)) => {
                LiveCounters::add(&a.counters.history_received, 1);
                kept.1 += payload.len();
                kept.0.push(HistoryMessage {
                    host,
                    header,
                    bytes: bytes.unwrap_or_default(),
                });
            }
            None => LiveCounters::add(&a.counters.history_refused, 1),
        }
    }
}

/// Whether a reply of `len` bytes fits in the topic and in what this query still takes.
fn kept_fits(a: &Ask, kept: &(Vec<HistoryMessage>, usize), len: usize) -> bool {
    len <= a.max_message_bytes
        && kept.0.len() < a.max_messages
        && kept.1.saturating_add(len) <= a.max_bytes
}

/// The host and header of a reply that may be kept: from a host the query was for (named by
/// the reply's key), with a readable header of the topic's type.
fn check_reply(a: &Ask, key: &str, bytes: &[u8]) -> Option<(String, WireHeader)> {
    let host = a
        .keys
        .history_host(key)
        .filter(|h| a.hosts.iter().any(|x| x == h))?;
    let (header, _) = WireHeader::read(bytes).ok()?;
    (header.schema_id == a.schema.id && header.layout_hash == a.schema.layout)
        .then(|| (host.to_owned(), header))
}

impl<F: FnOnce(Vec<HistoryMessage>)> Drop for Collected<F> {
    fn drop(&mut self) {
        let kept = std::mem::take(&mut self.kept.get_mut().unwrap_or_else(|e| e.into_inner()).0);
        if let Some(done) = self
            .done
            .get_mut()
            .unwrap_or_else(|e| e.into_inner())
            .take()
        {
            done(kept);
        }
    }
}

/// Asks `ask.hosts` for the topic's history; `done` receives what came back (possibly
/// nothing) exactly once, from Zenoh's thread when the query ends.
pub(crate) fn ask_history(
    session: &Session,
    ask: Ask,
    done: impl FnOnce(Vec<HistoryMessage>) + Send + Sync + 'static,
) {
    let key = ask.keys.history("*", &ask.topic);
    let collected = Arc::new(Collected {
        ask,
        kept: Mutex::new((Vec::new(), 0)),
        done: Mutex::new(Some(done)),
    });
    let c = Arc::clone(&collected);
    // If the query cannot be sent, the callback is dropped at once and `done` gets nothing.
    let _ = session
        .get(key)
        .target(QueryTarget::All)
        // Every reply: they share the serving host's key, which consolidation would reduce
        // to the last one.
        .consolidation(ConsolidationMode::None)
        .timeout(ASK_TIMEOUT.max(WAIT_FOR_STREAM * 2))
        .callback(move |r| c.reply(&r))
        .wait();
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::HEADER_LEN;

    fn ask() -> Ask {
        Ask {
            keys: Keys::new("d"),
            topic: "map".into(),
            hosts: vec!["a".into()],
            schema: SchemaKey { id: 1, layout: 2 },
            max_message_bytes: HEADER_LEN + 8,
            max_messages: 2,
            max_bytes: 2 * (HEADER_LEN + 8),
            counters: Arc::default(),
        }
    }

    fn reply(schema: SchemaKey, body: usize) -> Vec<u8> {
        let mut b = vec![0u8; HEADER_LEN + body];
        WireHeader {
            epoch: 9,
            schema_id: schema.id,
            layout_hash: schema.layout,
            seq: 0,
            origin_place: 0,
            origin_seq: 1,
        }
        .write(&mut b);
        b
    }

    #[test]
    fn history_replies_from_others_of_another_type_or_garbage_are_refused() {
        let a = ask();
        let ok = reply(a.schema, 8);
        let from = |host: &str| a.keys.history(host, "map");
        assert!(check_reply(&a, &from("a"), &ok).is_some());
        assert!(
            check_reply(&a, &from("evil"), &ok).is_none(),
            "a host not asked"
        );
        assert!(
            check_reply(&a, "d/d/a/map", &ok).is_none(),
            "not a history key"
        );
        let other = reply(SchemaKey { id: 1, layout: 3 }, 8);
        assert!(
            check_reply(&a, &from("a"), &other).is_none(),
            "another type"
        );
        assert!(check_reply(&a, &from("a"), &ok[..HEADER_LEN - 1]).is_none());
        let mut garbage = ok.clone();
        garbage[0] = b'X';
        assert!(check_reply(&a, &from("a"), &garbage).is_none());
    }

    #[test]
    fn history_replies_beyond_the_message_count_bytes_or_topic_size_are_refused() {
        let a = ask();
        let msg = |n: usize| HistoryMessage {
            host: "a".into(),
            header: WireHeader::read(&reply(a.schema, 0)).unwrap().0,
            bytes: vec![0; n],
        };
        let none = (Vec::new(), 0);
        assert!(kept_fits(&a, &none, HEADER_LEN + 8));
        assert!(
            !kept_fits(&a, &none, HEADER_LEN + 9),
            "larger than the topic takes"
        );
        let one = (vec![msg(HEADER_LEN + 8)], HEADER_LEN + 8);
        assert!(kept_fits(&a, &one, HEADER_LEN + 8));
        let two = (vec![msg(1), msg(1)], 2);
        assert!(!kept_fits(&a, &two, 1), "max_history_messages");
        let full = (vec![msg(1)], 2 * (HEADER_LEN + 8));
        assert!(!kept_fits(&a, &full, 1), "max_history_bytes");
    }
}
