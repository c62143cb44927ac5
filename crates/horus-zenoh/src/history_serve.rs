//! A latched topic's history, served to other hosts: a queryable (`<domain>/lh/<host>/<topic>`)
//! declared while this host offers the topic latched. A host that starts receiving the topic
//! asks for it once, and gets the last messages of every local publisher (as a subscriber
//! joining here would), each behind the wire header, then the live stream.
//!
//! No gap between the two: the history is read from an observer joined (at the history) when
//! the query arrives, and read only once the topic's outbound stream has joined the local
//! topic (at the next message, see `outbound`), or after [`WAIT_FOR_STREAM`] if it never
//! does: the answer holds the history as it was when asked and everything published since,
//! the stream everything published after it joined, and what is in both is recognised by
//! the receiver from its publisher place and sequence number.
//!
//! Each answer's header carries, in the `epoch` field, the identity of the publisher that
//! wrote the message (a hash of this machine's boot id, the process id and its start time):
//! the receiver takes a history message it already has for a duplicate only if it came from
//! the same publisher, so a publisher restarted in the same place (its sequence numbered
//! anew) is not mistaken for the old one.
//!
//! Bounded: queries wait in a queue of [`QUEUE`] (more are dropped unanswered and counted as
//! `history_queries_refused`); an answer holds at most `limits.max_history_messages` messages
//! and `max_history_bytes` bytes; the history is read from a fresh observer (never in the
//! publishers' room check) that is dropped after each answer.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc::{sync_channel, RecvTimeoutError, TrySendError};
use std::sync::Arc;
use std::time::{Duration, Instant};

use horus::inspect::{RawObserver, TopicView};
use horus::StartAt;
use zenoh::query::{Query, Queryable};
use zenoh::{Session, Wait};

use crate::keys::SchemaKey;
use crate::status::LiveCounters;
use crate::wire::{WireHeader, HEADER_LEN};
use crate::worker::Worker;

/// History queries waiting to be answered, per topic.
const QUEUE: usize = 16;

/// How long a query waits for the topic's outbound stream to join the local topic.
pub(crate) const WAIT_FOR_STREAM: Duration = Duration::from_secs(2);

/// A latched topic's history queryable and the thread answering it, and the queryable
/// answering with the topic's shape (`topic_shape`: from which other hosts create it).
pub(crate) struct HistoryServer {
    _queryable: Queryable<()>,
    _shape: Queryable<()>,
    _worker: Worker,
}

/// What a history server needs.
pub(crate) struct HistorySpec {
    pub(crate) namespace: String,
    pub(crate) topic: String,
    pub(crate) key: String,
    /// Where the topic's shape is asked for.
    pub(crate) shape_key: String,
    pub(crate) schema: SchemaKey,
    /// This bridge's own publisher place on the topic (messages from other hosts: not ours
    /// to serve).
    pub(crate) own_place: Arc<AtomicUsize>,
    /// Set while the topic's outbound stream has joined the local topic.
    pub(crate) streaming: Arc<AtomicBool>,
    pub(crate) counters: Arc<LiveCounters>,
    pub(crate) max_messages: usize,
    pub(crate) max_bytes: usize,
}

impl HistoryServer {
    /// Declares the queryable and starts answering.
    pub(crate) fn start(session: &Session, spec: HistorySpec) -> Result<HistoryServer, String> {
        let view = TopicView::open(&spec.namespace, &spec.topic).map_err(|e| e.to_string())?;
        let shape = crate::topic_shape::encode(&view)
            .ok_or_else(|| "no latched shape to tell other hosts".to_owned())?;
        let shape_key = spec.shape_key.clone();
        let shape = session
            .declare_queryable(spec.shape_key.clone())
            // Answered at once, from Zenoh's thread: a few hundred bytes made once.
            .callback(move |q| {
                let _ = q.reply(shape_key.as_str(), shape.clone()).wait();
            })
            .wait()
            .map_err(|e| format!("zenoh queryable {}: {e}", spec.shape_key))?;
        let (tx, rx) = sync_channel::<Query>(QUEUE);
        let counters = Arc::clone(&spec.counters);
        let queryable = session
            .declare_queryable(spec.key.clone())
            .callback(move |q| {
                if let Err(TrySendError::Full(_) | TrySendError::Disconnected(_)) = tx.try_send(q) {
                    // Dropped unanswered: the asking host's query ends without a reply.
                    LiveCounters::add(&counters.history_queries_refused, 1);
                }
            })
            .wait()
            .map_err(|e| format!("zenoh queryable {}: {e}", spec.key))?;
        let worker = Worker::spawn(format!("hist:{}", spec.topic), move |flag| loop {
            let q = match rx.recv_timeout(Duration::from_millis(50)) {
                Ok(q) => q,
                Err(RecvTimeoutError::Timeout) if !flag.is_set() => continue,
                Err(_) => return,
            };
            // The history as it is when the query arrives: the observer's start is fixed now,
            // and what is published while the stream joins is read by it too.
            let Ok(reader) = view.observer_at(false, StartAt::Durability) else {
                continue;
            };
            let deadline = Instant::now() + WAIT_FOR_STREAM;
            // Relaxed: a flag; the stream's reader is in shared memory already when it is set.
            while !spec.streaming.load(Ordering::Relaxed) && Instant::now() < deadline {
                if flag.is_set() {
                    return;
                }
                std::thread::sleep(Duration::from_millis(5));
            }
            answer(reader.with_prefix(HEADER_LEN), &view, &spec, &q);
        })?;
        Ok(HistoryServer {
            _queryable: queryable,
            _shape: shape,
            _worker: worker,
        })
    }
}

/// Answers one query with what `reader` (joined at the history) reads now, oldest first per
/// publisher.
fn answer(mut reader: RawObserver, view: &TopicView, spec: &HistorySpec, q: &Query) {
    let writers = writer_ids(view);
    let (mut n, mut bytes) = (0usize, 0usize);
    let own = spec.own_place.load(Ordering::Relaxed);
    while n < spec.max_messages {
        let Some(mut msg) = reader.try_recv() else {
            break;
        };
        if msg.source == own {
            continue;
        }
        bytes = bytes.saturating_add(msg.bytes.len());
        if bytes > spec.max_bytes {
            break;
        }
        WireHeader {
            epoch: writers.get(&msg.source).copied().unwrap_or(0),
            schema_id: spec.schema.id,
            layout_hash: spec.schema.layout,
            seq: n as u64,
            origin_place: u16::try_from(msg.source).unwrap_or(u16::MAX),
            origin_seq: msg.seq,
        }
        .write(&mut msg.bytes);
        if q
            // This host's own key (the query's may name every host): the asker reads the
            // host from it.
            .reply(spec.key.as_str(), std::mem::take(&mut msg.bytes))
            .wait()
            .is_ok()
        {
            LiveCounters::add(&spec.counters.history_served, 1);
        }
        n += 1;
    }
}

/// Each live publisher place's writer identity: a hash of the boot id, its process id and its
/// start time (see the module's documentation).
fn writer_ids(view: &TopicView) -> HashMap<usize, u64> {
    let boot = std::fs::read("/proc/sys/kernel/random/boot_id").unwrap_or_default();
    view.snapshot()
        .publishers
        .iter()
        .map(|p| {
            let started = std::fs::read_to_string(format!("/proc/{}/stat", p.pid))
                .ok()
                .and_then(|s| start_time(&s))
                .unwrap_or(0);
            let mut id = horus_msgs::fnv1a64(&boot);
            id = horus_msgs::fnv1a64_extend(id, &p.pid.to_le_bytes());
            id = horus_msgs::fnv1a64_extend(id, &started.to_le_bytes());
            (p.place, id)
        })
        .collect()
}

/// A process's start time (field 22 of `/proc/<pid>/stat`, after the parenthesised name).
fn start_time(stat: &str) -> Option<u64> {
    let after = &stat[stat.rfind(')')? + 1..];
    after.split_whitespace().nth(19)?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn start_time_is_read_after_the_process_name() {
        let stat = "42 (a (b) c) S 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 777 19";
        assert_eq!(start_time(stat), Some(777));
        assert_eq!(start_time("garbage"), None);
    }
}
