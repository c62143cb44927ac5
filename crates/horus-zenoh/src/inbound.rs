//! A topic arriving on this host: one Zenoh subscriber for every host's messages of the topic,
//! and a publisher place on the local topic (created by its subscribers). Each message's
//! header is checked (format, type) and its sequence followed per sending stream: a gap is
//! counted as `wire_lost` here, where it is seen.
//!
//! Messages are published into shared memory from Zenoh's subscriber callback, on Zenoh's
//! receiving thread: no queue and no thread between the network and the local ring (each
//! hand-off between threads costs a wake-up, about 25 µs on these VMs). When the local topic
//! is `Block` and its subscribers lag, the callback waits in `send` (bounded by the topic's
//! Block timeout), Zenoh's receiving side waits with it, and the back-pressure travels over
//! TCP to the sending host.

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use horus::inspect::{RawPublisher, TopicView};
use zenoh::pubsub::Subscriber;
use zenoh::sample::{Locality, Sample};
use zenoh::{Session, Wait};

use crate::keys::{Keys, SchemaKey};
use crate::status::LiveCounters;
use crate::wire::{WireHeader, HEADER_LEN};

/// A running inbound topic; dropping it undeclares the Zenoh subscriber and leaves the
/// local topic.
pub(crate) struct Inbound {
    subscriber: Option<Subscriber<()>>,
    state: Arc<Mutex<Receiving>>,
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
pub(crate) type Origins = Arc<Mutex<HashMap<String, HashMap<u16, u64>>>>;

/// Where one sending stream is.
struct Stream {
    epoch: u64,
    next: u64,
}

/// The receiving side's state, used by Zenoh's callback (one at a time: Zenoh may call from
/// several receiving threads, one per peer) and emptied when the topic stops.
struct Receiving {
    spec: InboundSpec,
    /// `None` once stopped: a callback already under way when the subscriber was undeclared
    /// publishes nothing more.
    publisher: Option<RawPublisher>,
    view: Option<TopicView>,
    streams: HashMap<String, Stream>,
}

impl Inbound {
    /// Joins the local topic as a publisher and starts receiving.
    pub(crate) fn start(session: &Session, spec: InboundSpec) -> Result<Inbound, String> {
        let view = TopicView::open(&spec.namespace, &spec.topic).map_err(|e| e.to_string())?;
        let size = match view.description() {
            Ok(d) => d.root().size,
            Err(_) => view.schema().map_or(0, |s| s.size as usize),
        };
        let publisher = view.publisher(size).map_err(|e| e.to_string())?;
        spec.own_place.store(publisher.place(), Ordering::Relaxed);
        let key = spec.keys.data_any_host(&spec.topic);
        let state = Arc::new(Mutex::new(Receiving {
            spec,
            publisher: Some(publisher),
            view: Some(view),
            streams: HashMap::new(),
        }));
        let s = Arc::clone(&state);
        let subscriber = session
            .declare_subscriber(key.clone())
            .callback(move |sample: Sample| lock(&s).receive(&sample))
            .allowed_origin(Locality::Remote)
            .wait()
            .map_err(|e| format!("zenoh subscriber {key}: {e}"))?;
        Ok(Inbound {
            subscriber: Some(subscriber),
            state,
        })
    }
}

impl Drop for Inbound {
    fn drop(&mut self) {
        if let Some(s) = self.subscriber.take() {
            let _ = s.undeclare().wait();
        }
        // Waits for a callback under way (at most the topic's Block timeout), then leaves
        // the local topic.
        let mut st = lock(&self.state);
        st.spec
            .own_place
            .store(crate::outbound::NO_PLACE, Ordering::Relaxed);
        st.publisher = None;
        st.view = None;
    }
}

fn lock(state: &Mutex<Receiving>) -> MutexGuard<'_, Receiving> {
    state.lock().unwrap_or_else(|e| e.into_inner())
}

impl Receiving {
    /// One message from the network: checked, its sequences followed, published.
    fn receive(&mut self, sample: &Sample) {
        let Receiving {
            spec,
            publisher,
            streams,
            ..
        } = self;
        let Some(publisher) = publisher else {
            return;
        };
        let c = &spec.counters;
        LiveCounters::add(&c.received, 1);
        // A large message arrives in several slices (Zenoh's fragments): they are copied
        // straight into the local chunk, not joined first. The header must lie in the first
        // slice (it does: 48 bytes at the front of every batch); otherwise the payload is
        // joined and read whole.
        let payload = sample.payload();
        let mut slices = payload.slices();
        let first = slices.next().unwrap_or(&[]);
        let joined;
        // The slices after the first (none for a message that fits one batch: no allocation).
        let rest: Vec<&[u8]>;
        let read = if first.len() >= HEADER_LEN {
            rest = slices.collect();
            WireHeader::read(first)
        } else {
            rest = Vec::new();
            joined = payload.to_bytes();
            WireHeader::read(&joined)
        };
        let Ok((header, body)) = read else {
            LiveCounters::add(&c.malformed, 1);
            return;
        };
        if header.schema_id != spec.schema.id || header.layout_hash != spec.schema.layout {
            LiveCounters::add(&c.schema_refused, 1);
            return;
        }
        let host = spec
            .keys
            .data_host(sample.key_expr().as_str())
            .unwrap_or("?");
        LiveCounters::add(&c.wire_lost, follow(streams, host, &header));
        let gap = {
            let mut o = spec.origins.lock().unwrap_or_else(|e| e.into_inner());
            follow_origin(&mut o, host, header.origin_place, header.origin_seq)
        };
        LiveCounters::add(&c.source_lost, gap);
        let sent = if rest.is_empty() {
            publisher.send(body)
        } else {
            let mut parts = Vec::with_capacity(rest.len() + 1);
            parts.push(body);
            parts.extend(rest);
            publisher.send_parts(&parts)
        };
        match sent {
            Ok(_) => LiveCounters::add(&c.published, 1),
            Err(_) => LiveCounters::add(&c.publish_failed, 1),
        }
    }
}

/// Follows a sending stream's sequence; returns how many messages are missing before this one.
/// A stream's first message (a new host, or a new epoch: the sender restarted the topic)
/// starts it wherever it is: what was sent before we subscribed was not ours to lose.
fn follow(streams: &mut HashMap<String, Stream>, host: &str, h: &WireHeader) -> u64 {
    match streams.get_mut(host) {
        Some(s) if s.epoch == h.epoch => {
            let lost = h.seq.saturating_sub(s.next);
            // A repeated or older sequence number (not something reliable Zenoh does) does
            // not move the stream back.
            s.next = s.next.max(h.seq.saturating_add(1));
            lost
        }
        _ => {
            streams.insert(
                host.to_owned(),
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
    origins: &mut HashMap<String, HashMap<u16, u64>>,
    host: &str,
    place: u16,
    seq: u64,
) -> u64 {
    let places = match origins.get_mut(host) {
        Some(p) => p,
        None => origins.entry(host.to_owned()).or_default(),
    };
    let next = places.entry(place).or_insert(seq);
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
        assert_eq!(follow(&mut s, "a", &h(1, 10)), 0, "joined mid-stream");
        assert_eq!(follow(&mut s, "a", &h(1, 11)), 0);
        assert_eq!(follow(&mut s, "a", &h(1, 14)), 2, "12 and 13 lost");
        assert_eq!(follow(&mut s, "a", &h(1, 14)), 0, "a repeat is not a loss");
        assert_eq!(follow(&mut s, "a", &h(2, 0)), 0, "sender restarted");
        assert_eq!(follow(&mut s, "b", &h(1, 5)), 0, "another host");
        assert_eq!(follow(&mut s, "a", &h(2, 2)), 1);
    }

    #[test]
    fn publisher_gaps_count_across_streams() {
        let mut o = HashMap::new();
        assert_eq!(follow_origin(&mut o, "a", 0, 100), 0, "first seen");
        assert_eq!(follow_origin(&mut o, "a", 0, 101), 0);
        assert_eq!(follow_origin(&mut o, "a", 0, 150), 48, "a bridge restart");
        assert_eq!(follow_origin(&mut o, "a", 1, 7), 0, "another publisher");
        assert_eq!(
            follow_origin(&mut o, "a", 0, 3),
            0,
            "a new publisher in place 0"
        );
        assert_eq!(follow_origin(&mut o, "a", 0, 5), 1);
    }
}
