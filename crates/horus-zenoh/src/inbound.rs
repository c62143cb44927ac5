//! A topic arriving on this host: one Zenoh subscriber for every host's messages of the topic,
//! and a publisher place on the local topic (created by its subscribers). Each message's
//! header is checked (format, type) and its sequence followed per sending stream: a gap is
//! counted as `wire_lost` here, where it is seen.

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use horus::inspect::TopicView;
use zenoh::handlers::FifoChannel;
use zenoh::sample::Locality;
use zenoh::{Session, Wait};

use crate::keys::{Keys, SchemaKey};
use crate::status::LiveCounters;
use crate::wire::WireHeader;
use crate::worker::Worker;

/// How long a wait for a network message lasts before the stop flag is looked at again.
const POLL: Duration = Duration::from_millis(50);

/// Messages queued between Zenoh's receiving thread and the local publisher. When full (the
/// local topic is `Block` and its subscribers lag), Zenoh's receiving side waits, and the
/// back-pressure travels over TCP to the sending host.
const QUEUE: usize = 64;

/// A running inbound topic.
pub(crate) struct Inbound {
    _worker: Worker,
}

/// What an inbound topic needs to start.
pub(crate) struct InboundSpec {
    pub(crate) namespace: String,
    pub(crate) topic: String,
    pub(crate) keys: Keys,
    pub(crate) schema: SchemaKey,
    /// Where to say which publisher place is ours (so the outbound side skips our messages).
    pub(crate) own_place: Arc<AtomicUsize>,
    pub(crate) counters: Arc<LiveCounters>,
    /// The remote publishers' sequences, kept across restarts of this inbound side (and of
    /// the sending bridge) while this host's subscribers stay.
    pub(crate) origins: Origins,
}

/// Next expected sequence number of each remote publisher, by host and publisher place.
pub(crate) type Origins = Arc<Mutex<HashMap<(String, u16), u64>>>;

/// Where one sending stream is.
struct Stream {
    epoch: u64,
    next: u64,
}

impl Inbound {
    /// Joins the local topic as a publisher and starts receiving.
    pub(crate) fn start(session: &Session, spec: InboundSpec) -> Result<Inbound, String> {
        let view = TopicView::open(&spec.namespace, &spec.topic).map_err(|e| e.to_string())?;
        let size = match view.description() {
            Ok(d) => d.root().size,
            Err(_) => view.schema().map_or(0, |s| s.size as usize),
        };
        let mut publisher = view.publisher(size).map_err(|e| e.to_string())?;
        spec.own_place.store(publisher.place(), Ordering::Relaxed);
        let key = spec.keys.data_any_host(&spec.topic);
        let subscriber = session
            .declare_subscriber(key.clone())
            .with(FifoChannel::new(QUEUE))
            .allowed_origin(Locality::Remote)
            .wait()
            .map_err(|e| format!("zenoh subscriber {key}: {e}"))?;
        let worker = Worker::spawn(format!("in:{}", spec.topic), move |flag| {
            let c = &spec.counters;
            let mut streams: HashMap<String, Stream> = HashMap::new();
            // Relaxed: a stop flag read in a loop; nothing is published through it.
            while !flag.is_set() {
                let sample = match subscriber.recv_timeout(POLL) {
                    Ok(Some(s)) => s,
                    Ok(None) => continue,
                    Err(_) => break,
                };
                LiveCounters::add(&c.received, 1);
                let bytes = sample.payload().to_bytes();
                let Ok((header, body)) = WireHeader::read(&bytes) else {
                    LiveCounters::add(&c.malformed, 1);
                    continue;
                };
                if header.schema_id != spec.schema.id || header.layout_hash != spec.schema.layout {
                    LiveCounters::add(&c.schema_refused, 1);
                    continue;
                }
                let host = spec
                    .keys
                    .data_host(sample.key_expr().as_str())
                    .unwrap_or("?")
                    .to_owned();
                let lost = follow(&mut streams, host.clone(), &header);
                LiveCounters::add(&c.wire_lost, lost);
                let gap = {
                    let mut o = spec.origins.lock().unwrap_or_else(|e| e.into_inner());
                    follow_origin(&mut o, host, header.origin_place, header.origin_seq)
                };
                LiveCounters::add(&c.source_lost, gap);
                match publisher.send(body) {
                    Ok(_) => LiveCounters::add(&c.published, 1),
                    Err(_) => LiveCounters::add(&c.publish_failed, 1),
                }
            }
            spec.own_place
                .store(crate::outbound::NO_PLACE, Ordering::Relaxed);
            drop(publisher);
            drop(view);
        })?;
        Ok(Inbound { _worker: worker })
    }
}

/// Follows a sending stream's sequence; returns how many messages are missing before this one.
/// A stream's first message (a new host, or a new epoch: the sender restarted the topic)
/// starts it wherever it is: what was sent before we subscribed was not ours to lose.
fn follow(streams: &mut HashMap<String, Stream>, host: String, h: &WireHeader) -> u64 {
    match streams.get_mut(&host) {
        Some(s) if s.epoch == h.epoch => {
            let lost = h.seq.saturating_sub(s.next);
            // A repeated or older sequence number (not something reliable Zenoh does) does
            // not move the stream back.
            s.next = s.next.max(h.seq.saturating_add(1));
            lost
        }
        _ => {
            streams.insert(
                host,
                Stream {
                    epoch: h.epoch,
                    next: h.seq.saturating_add(1),
                },
            );
            0
        }
    }
}

/// Follows a remote publisher's sequence; returns how many of its messages are missing before
/// this one. The first message seen starts it; a sequence going back is a new publisher in the
/// same place (nothing lost).
fn follow_origin(
    origins: &mut HashMap<(String, u16), u64>,
    host: String,
    place: u16,
    seq: u64,
) -> u64 {
    let next = origins.entry((host, place)).or_insert(seq);
    let lost = seq.saturating_sub(*next);
    *next = seq.saturating_add(1);
    lost
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gaps_count_once_and_new_streams_start_fresh() {
        let mut s = HashMap::new();
        let h = |epoch, seq| WireHeader {
            epoch,
            schema_id: 0,
            layout_hash: 0,
            seq,
            origin_place: 0,
            origin_seq: seq,
        };
        assert_eq!(
            follow(&mut s, "a".into(), &h(1, 10)),
            0,
            "joined mid-stream"
        );
        assert_eq!(follow(&mut s, "a".into(), &h(1, 11)), 0);
        assert_eq!(follow(&mut s, "a".into(), &h(1, 14)), 2, "12 and 13 lost");
        assert_eq!(
            follow(&mut s, "a".into(), &h(1, 14)),
            0,
            "a repeat is not a loss"
        );
        assert_eq!(follow(&mut s, "a".into(), &h(2, 0)), 0, "sender restarted");
        assert_eq!(follow(&mut s, "b".into(), &h(1, 5)), 0, "another host");
        assert_eq!(follow(&mut s, "a".into(), &h(2, 2)), 1);
    }

    #[test]
    fn publisher_gaps_count_across_streams() {
        let mut o = HashMap::new();
        assert_eq!(follow_origin(&mut o, "a".into(), 0, 100), 0, "first seen");
        assert_eq!(follow_origin(&mut o, "a".into(), 0, 101), 0);
        assert_eq!(
            follow_origin(&mut o, "a".into(), 0, 150),
            48,
            "a bridge restart"
        );
        assert_eq!(
            follow_origin(&mut o, "a".into(), 1, 7),
            0,
            "another publisher"
        );
        assert_eq!(
            follow_origin(&mut o, "a".into(), 0, 3),
            0,
            "a new publisher in place 0"
        );
        assert_eq!(follow_origin(&mut o, "a".into(), 0, 5), 1);
    }
}
