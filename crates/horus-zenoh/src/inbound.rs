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
//!
//! Untrusted input, bounded: only hosts that offer the topic (their token) may send it
//! (others' messages are dropped and counted as `unknown_sender`), so the per-host stream
//! and publisher maps hold known hosts only, and the bridge's loop removes a host's entries
//! once it forgets the host; a message larger than the topic can hold is dropped before it
//! is published (`oversize`; its header is read and its sequences followed first, so it
//! is not a gap); a sequence number that jumps further than `limits.max_seq_jump`
//! is counted as `suspect`, not as loss, and not followed unless the next message continues
//! it (a real loss that large).
//!
//! A latched topic (another host offers it transient-local): when this side starts, it asks
//! the offering hosts for the topic's history (`history_fetch`) and holds the live messages
//! back until the answer is in (at most `limits.max_history_messages` of them and
//! `max_history_bytes`; beyond, it gives the history up, counted as `history_refused` when it
//! arrives, and goes on live). Then, per remote publisher place, the history is published
//! oldest first, except what this host already received from the same publisher (the
//! publisher's identity travels with the history), and the held-back and later live messages
//! that the history already brought are dropped (`history_duplicates`) until the stream passes
//! the history's newest, or its epoch changes (the sending bridge restarted).

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use horus::inspect::{RawPublisher, TopicView};
use zenoh::pubsub::Subscriber;
use zenoh::sample::{Locality, Sample};
use zenoh::{Session, Wait};

use crate::history_fetch::{ask_history, Ask, HistoryMessage};
use crate::keys::{Keys, SchemaKey};
use crate::status::LiveCounters;
use crate::wire::{batch_frames, is_batch, WireHeader, BATCH_MAGIC, HEADER_LEN};

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
    /// The hosts that may send the topic (those offering it) and their streams.
    pub(crate) senders: Senders,
    /// Largest message taken (header included).
    pub(crate) max_message_bytes: usize,
    /// Largest sequence jump counted as loss.
    pub(crate) max_seq_jump: u64,
    /// Publisher places followed per host.
    pub(crate) max_places_per_host: usize,
    /// The remote publishers' identities as their histories stated them, kept and cleared
    /// with `origins`.
    pub(crate) writers: Writers,
    /// Hosts offering the topic latched (their history is asked for at start).
    pub(crate) latched_hosts: Vec<String>,
    /// Bounds of one history (messages, bytes).
    pub(crate) max_history: (usize, usize),
}

/// Each remote publisher's identity (`history_serve`), by host and publisher place.
pub(crate) type Writers = Arc<Mutex<HashMap<String, HashMap<u16, u64>>>>;

/// Live messages held back while the history is asked for: (host, whole payload).
#[derive(Default)]
struct HeldBack {
    messages: Vec<(String, Vec<u8>)>,
    bytes: usize,
}

/// Where the history brought a remote publisher place: live messages before `next` are
/// duplicates. `epoch`: the sending stream's, adopted from its first live message.
struct Floor {
    epoch: Option<u64>,
    next: u64,
}

/// Next expected sequence number of each remote publisher, by host and publisher place.
pub(crate) type Origins = Arc<Mutex<HashMap<String, HashMap<u16, u64>>>>;

/// The hosts that may send a topic, and where each one's stream is; shared with the bridge's
/// loop, which sets the hosts and removes forgotten ones (a short lock, never held while a
/// message is published).
pub(crate) type Senders = Arc<Mutex<SenderState>>;

/// See [`Senders`].
#[derive(Default)]
pub(crate) struct SenderState {
    /// Hosts offering the topic now.
    pub(crate) allowed: Vec<String>,
    streams: HashMap<String, Stream>,
}

impl SenderState {
    /// Removes the streams of hosts the bridge has forgotten.
    pub(crate) fn forget(&mut self, gone: &[String]) {
        self.streams.retain(|h, _| !gone.contains(h));
    }
}

/// Where one sending stream is.
struct Stream {
    epoch: u64,
    next: u64,
    /// After a suspect jump, the number that would continue it: a message with that number
    /// says the jump was real (a loss larger than `max_seq_jump`), and the stream is
    /// followed from there. A lone forged number moves nothing.
    ahead: Option<u64>,
}

/// The receiving side's state, used by Zenoh's callback (one at a time: Zenoh may call from
/// several receiving threads, one per peer) and emptied when the topic stops.
struct Receiving {
    spec: InboundSpec,
    /// `None` once stopped: a callback already under way when the subscriber was undeclared
    /// publishes nothing more.
    publisher: Option<RawPublisher>,
    view: Option<TopicView>,
    /// Largest message this topic takes (header included).
    max_bytes: usize,
    /// `Some` while the history is being asked for.
    held_back: Option<HeldBack>,
    /// History queries not yet ended; what is held back goes out when the last one ends.
    asking: usize,
    /// The history was given up (too many live messages held back while waiting for it).
    history_given_up: bool,
    /// See [`Floor`], by host and place.
    floors: HashMap<(String, u16), Floor>,
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
        let q = view.qos();
        let room = usize::try_from(q.chunk_bytes)
            .unwrap_or(usize::MAX)
            .max(q.inline_bytes as usize);
        let max_bytes = spec.max_message_bytes.min(room.saturating_add(HEADER_LEN));
        spec.own_place.store(publisher.place(), Ordering::Relaxed);
        let key = spec.keys.data_any_host(&spec.topic);
        let hosts = spec.latched_hosts.clone();
        let state = Arc::new(Mutex::new(Receiving {
            spec,
            publisher: Some(publisher),
            view: Some(view),
            max_bytes,
            held_back: None,
            asking: 0,
            history_given_up: false,
            floors: HashMap::new(),
        }));
        let s = Arc::clone(&state);
        let subscriber = session
            .declare_subscriber(key.clone())
            .callback(move |sample: Sample| lock(&s).receive(&sample))
            .allowed_origin(Locality::Remote)
            .wait()
            .map_err(|e| format!("zenoh subscriber {key}: {e}"))?;
        let inbound = Inbound {
            subscriber: Some(subscriber),
            state,
        };
        // Asked once the live subscriber is declared: what the history misses, the stream has.
        inbound.ask_history_of(session, hosts);
        Ok(inbound)
    }

    /// Asks `hosts` (offering the topic latched) for its history, holding the live messages
    /// back until it is in (see the module's documentation). Nothing for no hosts.
    pub(crate) fn ask_history_of(&self, session: &Session, hosts: Vec<String>) {
        if hosts.is_empty() {
            return;
        }
        let ask = {
            let mut st = lock(&self.state);
            st.asking += 1;
            st.history_given_up = false;
            st.held_back.get_or_insert_with(HeldBack::default);
            Ask {
                keys: st.spec.keys.clone(),
                topic: st.spec.topic.clone(),
                hosts,
                schema: st.spec.schema,
                max_message_bytes: st.max_bytes,
                max_messages: st.spec.max_history.0,
                max_bytes: st.spec.max_history.1,
                counters: Arc::clone(&st.spec.counters),
            }
        };
        let s = Arc::clone(&self.state);
        ask_history(session, ask, move |history| lock(&s).merge(history));
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
    /// One message from the network: held back while the history is asked for, else
    /// checked, its sequences followed, published.
    fn receive(&mut self, sample: &Sample) {
        if starts_with_batch(sample.payload().slices()) {
            let host = self
                .spec
                .keys
                .data_host(sample.key_expr().as_str())
                .unwrap_or("?")
                .to_owned();
            // A batch of small messages (at most ~90 KiB): contiguous, or joined once.
            let bytes = sample.payload().to_bytes();
            self.receive_batch(&host, &bytes);
            return;
        }
        if self.held_back.is_some() {
            self.hold_back(sample);
            return;
        }
        let Receiving {
            spec,
            publisher,
            max_bytes,
            floors,
            ..
        } = self;
        let Some(publisher) = publisher else {
            return;
        };
        let c = &spec.counters;
        let host = spec
            .keys
            .data_host(sample.key_expr().as_str())
            .unwrap_or("?");
        let payload = sample.payload();
        // A large message arrives in several slices (Zenoh's fragments): they are copied
        // straight into the local chunk, not joined first. The header lies in the first
        // slice (48 bytes at the front of every batch); otherwise the payload is joined and
        // read whole.
        let mut slices = payload.slices();
        let first = slices.next().unwrap_or(&[]);
        let header_in_first = first.len() >= HEADER_LEN;
        // The header is read before any refusal, so that the sequences are followed for
        // every message from a known sender (an oversize message is not a gap).
        let header = if header_in_first {
            WireHeader::read(first).map(|(h, _)| h)
        } else {
            read_split_header(payload.slices())
        };
        if !admit(spec, *max_bytes, host, payload.len(), header, floors) {
            return;
        }
        let joined;
        // The slices after the first (none for a message that fits one batch: no allocation).
        let rest: Vec<&[u8]>;
        let read = if header_in_first {
            rest = slices.collect();
            WireHeader::read(first)
        } else {
            rest = Vec::new();
            joined = payload.to_bytes();
            WireHeader::read(&joined)
        };
        // Read once already by `admit`: cannot fail here, but counted if it did.
        let Ok((_, body)) = read else {
            LiveCounters::add(&c.malformed, 1);
            return;
        };
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

impl Receiving {
    /// Keeps a live message until the history is in (from hosts offering the topic only;
    /// beyond the bounds, the history is given up and everything held back goes out).
    fn hold_back(&mut self, sample: &Sample) {
        let host = self
            .spec
            .keys
            .data_host(sample.key_expr().as_str())
            .unwrap_or("?")
            .to_owned();
        let bytes = sample.payload().to_bytes();
        self.hold_back_bytes(host, &bytes);
    }

    /// [`hold_back`](Self::hold_back) of one message's bytes.
    fn hold_back_bytes(&mut self, host: String, bytes: &[u8]) {
        if !lock_senders(&self.spec.senders).allowed.contains(&host) {
            LiveCounters::add(&self.spec.counters.unknown_sender, 1);
            return;
        }
        let len = bytes.len();
        let (max_messages, max_bytes) = self.spec.max_history;
        let Some(held) = self.held_back.as_mut() else {
            return;
        };
        if held.messages.len() < max_messages && held.bytes.saturating_add(len) <= max_bytes {
            held.bytes += len;
            held.messages.push((host, bytes.to_vec()));
            return;
        }
        self.history_given_up = true;
        self.release_held_back();
        self.deliver(&host, bytes);
    }

    /// The messages of a batch (`wire::Batch`), each taken as if it had come alone. A frame
    /// that cannot be delimited ends the batch, counted as one malformed message (the
    /// messages it hid show as a gap in the sender's sequence: they were not delivered).
    fn receive_batch(&mut self, host: &str, bytes: &[u8]) {
        for frame in batch_frames(bytes) {
            let frame = frame.unwrap_or(&[]);
            if self.held_back.is_some() {
                self.hold_back_bytes(host.to_owned(), frame);
            } else {
                self.deliver(host, frame);
            }
            if frame.is_empty() {
                break;
            }
        }
    }

    /// Delivers what was held back, in order, as live messages.
    fn release_held_back(&mut self) {
        let Some(held) = self.held_back.take() else {
            return;
        };
        for (host, bytes) in held.messages {
            self.deliver(&host, &bytes);
        }
    }

    /// One held-back live message, as `receive` would have taken it.
    fn deliver(&mut self, host: &str, bytes: &[u8]) {
        let Receiving {
            spec,
            publisher,
            max_bytes,
            floors,
            ..
        } = self;
        let Some(publisher) = publisher else {
            return;
        };
        let header = WireHeader::read(bytes).map(|(h, _)| h);
        if !admit(spec, *max_bytes, host, bytes.len(), header, floors) {
            return;
        }
        let c = &spec.counters;
        match publisher.send(&bytes[HEADER_LEN..]) {
            Ok(_) => LiveCounters::add(&c.published, 1),
            Err(_) => LiveCounters::add(&c.publish_failed, 1),
        }
    }

    /// The history is in: published (oldest first per publisher place, without what this host
    /// already has from the same publisher), then what was held back meanwhile.
    fn merge(&mut self, mut history: Vec<HistoryMessage>) {
        let c = Arc::clone(&self.spec.counters);
        self.asking = self.asking.saturating_sub(1);
        if self.publisher.is_none() || self.history_given_up || self.held_back.is_none() {
            // Stopped meanwhile, or given up: the live stream went on without it.
            LiveCounters::add(&c.history_refused, history.len() as u64);
            if self.asking == 0 {
                self.release_held_back();
            }
            return;
        }
        history.sort_by(|a, b| {
            (&a.host, a.header.origin_place, a.header.origin_seq).cmp(&(
                &b.host,
                b.header.origin_place,
                b.header.origin_seq,
            ))
        });
        let before = history.len();
        history.dedup_by(|a, b| {
            a.host == b.host
                && a.header.origin_place == b.header.origin_place
                && a.header.origin_seq == b.header.origin_seq
        });
        LiveCounters::add(&c.history_duplicates, (before - history.len()) as u64);
        // What to publish, decided under the sequence locks; published after them (a send
        // may wait for a `Block` topic's subscribers).
        let mut publish = Vec::with_capacity(history.len());
        {
            let mut origins = self.spec.origins.lock().unwrap_or_else(|e| e.into_inner());
            let mut writers = self.spec.writers.lock().unwrap_or_else(|e| e.into_inner());
            for m in history {
                let (place, seq, writer) =
                    (m.header.origin_place, m.header.origin_seq, m.header.epoch);
                let same_writer = writer != 0
                    && writers.get(&m.host).and_then(|w| w.get(&place)) == Some(&writer);
                let next = origins.get(&m.host).and_then(|o| o.get(&place)).copied();
                if same_writer && next.is_some_and(|n| seq < n) {
                    LiveCounters::add(&c.history_duplicates, 1);
                    continue;
                }
                let places = origins.entry(m.host.clone()).or_default();
                if places.contains_key(&place) || places.len() < self.spec.max_places_per_host {
                    places.insert(place, seq.saturating_add(1));
                    writers
                        .entry(m.host.clone())
                        .or_default()
                        .insert(place, writer);
                }
                self.floors.insert(
                    (m.host.clone(), place),
                    Floor {
                        epoch: None,
                        next: seq.saturating_add(1),
                    },
                );
                publish.push(m);
            }
        }
        if let Some(p) = self.publisher.as_mut() {
            for m in &publish {
                match p.send(&m.bytes[HEADER_LEN..]) {
                    Ok(_) => LiveCounters::add(&c.history_published, 1),
                    Err(_) => LiveCounters::add(&c.publish_failed, 1),
                }
            }
        }
        if self.asking == 0 {
            self.release_held_back();
        }
    }
}

/// Counts one message from the network and says whether it may be published: refused if
/// its host does not offer the topic (`unknown_sender`, not `received`), its header is bad
/// (`malformed`), it is larger than the topic takes (`oversize`) or of another type
/// (`schema_refused`). The sequences are followed for every message whose header is readable,
/// refused or not, so a refusal never shows as a gap in the next message (no false loss):
/// `received` counts every message from a sender that offers the topic, and
/// `sent(sender) = received + wire_lost` holds.
fn admit(
    spec: &InboundSpec,
    max_bytes: usize,
    host: &str,
    len: usize,
    header: Result<WireHeader, crate::wire::WireError>,
    floors: &mut HashMap<(String, u16), Floor>,
) -> bool {
    let c = &spec.counters;
    if !lock_senders(&spec.senders)
        .allowed
        .iter()
        .any(|h| h == host)
    {
        LiveCounters::add(&c.unknown_sender, 1);
        return false;
    }
    LiveCounters::add(&c.received, 1);
    let Ok(header) = header else {
        LiveCounters::add(&c.malformed, 1);
        return false;
    };
    let wire = follow(
        &mut lock_senders(&spec.senders).streams,
        host,
        &header,
        spec.max_seq_jump,
    );
    if duplicate_of_history(floors, host, &header) {
        LiveCounters::add(&c.wire_lost, wire.lost);
        LiveCounters::add(&c.history_duplicates, 1);
        return false;
    }
    let source = {
        let mut o = spec.origins.lock().unwrap_or_else(|e| e.into_inner());
        follow_origin(
            &mut o,
            host,
            (header.origin_place, header.origin_seq),
            spec.max_seq_jump,
            spec.max_places_per_host,
        )
    };
    LiveCounters::add(&c.wire_lost, wire.lost);
    LiveCounters::add(&c.source_lost, source.lost);
    LiveCounters::add(
        &c.suspect,
        u64::from(wire.suspect) + u64::from(source.suspect),
    );
    if len > max_bytes {
        LiveCounters::add(&c.oversize, 1);
        return false;
    }
    if header.schema_id != spec.schema.id || header.layout_hash != spec.schema.layout {
        LiveCounters::add(&c.schema_refused, 1);
        return false;
    }
    true
}

/// Whether a live message is one the history already brought (see [`Floor`]); a floor
/// goes once the stream passes it or its epoch changes.
fn duplicate_of_history(
    floors: &mut HashMap<(String, u16), Floor>,
    host: &str,
    h: &WireHeader,
) -> bool {
    if floors.is_empty() {
        return false;
    }
    let key = (host.to_owned(), h.origin_place);
    let Some(f) = floors.get_mut(&key) else {
        return false;
    };
    let epoch = *f.epoch.get_or_insert(h.epoch);
    if epoch == h.epoch && h.origin_seq < f.next {
        return true;
    }
    floors.remove(&key);
    false
}

/// Whether a payload (its slices) starts with the batch magic (`wire::Batch`).
fn starts_with_batch<'a>(slices: impl Iterator<Item = &'a [u8]>) -> bool {
    let mut head = [0u8; BATCH_MAGIC.len()];
    let mut n = 0;
    for s in slices {
        let k = (head.len() - n).min(s.len());
        head[n..n + k].copy_from_slice(&s[..k]);
        n += k;
        if n == head.len() {
            break;
        }
    }
    is_batch(&head[..n])
}

/// Reads the header of a payload whose first slice is shorter than the header, copying at
/// most the header's bytes (never the whole payload, which may be oversize).
fn read_split_header<'a>(
    slices: impl Iterator<Item = &'a [u8]>,
) -> Result<WireHeader, crate::wire::WireError> {
    let mut buf = [0u8; HEADER_LEN];
    let mut n = 0;
    for s in slices {
        let k = (HEADER_LEN - n).min(s.len());
        buf[n..n + k].copy_from_slice(&s[..k]);
        n += k;
        if n == HEADER_LEN {
            break;
        }
    }
    WireHeader::read(&buf[..n]).map(|(h, _)| h)
}

fn lock_senders(s: &Mutex<SenderState>) -> MutexGuard<'_, SenderState> {
    // Plain data: a panic while holding the lock leaves it usable.
    s.lock().unwrap_or_else(|e| e.into_inner())
}

/// What one message's sequence number says.
#[derive(Debug, Default, PartialEq, Eq)]
struct Gap {
    /// Messages missing before this one.
    lost: u64,
    /// The number jumped further than is plausible: followed from there, nothing counted
    /// as lost (a forged or corrupted number must not report a loss that did not happen).
    suspect: bool,
}

impl Gap {
    fn of(jump: u64, max_jump: u64) -> Gap {
        if jump > max_jump {
            Gap {
                lost: 0,
                suspect: true,
            }
        } else {
            Gap {
                lost: jump,
                suspect: false,
            }
        }
    }
}

/// Follows a sending stream's sequence. A stream's first message (a new host, or a new
/// epoch: the sender restarted the topic) starts it wherever it is: what was sent before we
/// subscribed was not ours to lose.
fn follow(streams: &mut HashMap<String, Stream>, host: &str, h: &WireHeader, max_jump: u64) -> Gap {
    match streams.get_mut(host) {
        Some(s) if s.epoch == h.epoch => {
            if s.ahead.take() == Some(h.seq) {
                // The jump before was real: followed from there (counted as suspect then).
                s.next = h.seq.saturating_add(1);
                return Gap::default();
            }
            let gap = Gap::of(h.seq.saturating_sub(s.next), max_jump);
            if gap.suspect {
                // Not followed: a forged number near u64::MAX would otherwise make every
                // real message after it look older, and no loss would count again.
                s.ahead = Some(h.seq.saturating_add(1));
            } else {
                // A repeated or older sequence number (not something reliable Zenoh does)
                // does not move the stream back.
                s.next = s.next.max(h.seq.saturating_add(1));
            }
            gap
        }
        _ => {
            streams.insert(
                host.to_owned(),
                Stream {
                    epoch: h.epoch,
                    next: h.seq.saturating_add(1),
                    ahead: None,
                },
            );
            Gap::default()
        }
    }
}

/// Follows a remote publisher's sequence (`(place, seq)`). The first message seen starts it;
/// a sequence going back is a new publisher in the same place (nothing lost). At most
/// `max_places` places are followed per host; a message from a further place counts as
/// `suspect`.
fn follow_origin(
    origins: &mut HashMap<String, HashMap<u16, u64>>,
    host: &str,
    (place, seq): (u16, u64),
    max_jump: u64,
    max_places: usize,
) -> Gap {
    let places = match origins.get_mut(host) {
        Some(p) => p,
        None => origins.entry(host.to_owned()).or_default(),
    };
    if !places.contains_key(&place) && places.len() >= max_places {
        return Gap {
            lost: 0,
            suspect: true,
        };
    }
    let next = places.entry(place).or_insert(seq);
    let gap = Gap::of(seq.saturating_sub(*next), max_jump);
    *next = seq.saturating_add(1);
    gap
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
        let lost = |s: &mut HashMap<String, Stream>, host, h| follow(s, host, &h, 1000).lost;
        assert_eq!(lost(&mut s, "a", h(1, 10)), 0, "joined mid-stream");
        assert_eq!(lost(&mut s, "a", h(1, 11)), 0);
        assert_eq!(lost(&mut s, "a", h(1, 14)), 2, "12 and 13 lost");
        assert_eq!(lost(&mut s, "a", h(1, 14)), 0, "a repeat is not a loss");
        assert_eq!(lost(&mut s, "a", h(2, 0)), 0, "sender restarted");
        assert_eq!(lost(&mut s, "b", h(1, 5)), 0, "another host");
        assert_eq!(lost(&mut s, "a", h(2, 2)), 1);
    }

    #[test]
    fn publisher_gaps_count_across_streams() {
        let mut o = HashMap::new();
        let mut lost = |place, seq| follow_origin(&mut o, "a", (place, seq), 1000, 8).lost;
        assert_eq!(lost(0, 100), 0, "first seen");
        assert_eq!(lost(0, 101), 0);
        assert_eq!(lost(0, 150), 48, "a bridge restart");
        assert_eq!(lost(1, 7), 0, "another publisher");
        assert_eq!(lost(0, 3), 0, "a new publisher in place 0");
        assert_eq!(lost(0, 5), 1);
    }

    #[test]
    fn forged_sequence_jump_reports_no_false_loss() {
        // A peer that sends a sequence number far ahead (or a corrupted one) makes neither
        // wire_lost nor source_lost report a loss; the jump is counted as suspect and the
        // stream is followed from there. (Before: u64::MAX - 11 messages "lost".)
        let h = |seq| WireHeader {
            epoch: 1,
            schema_id: 0,
            layout_hash: 0,
            seq,
            origin_place: 0,
            origin_seq: seq,
        };
        let mut s = HashMap::new();
        assert_eq!(follow(&mut s, "a", &h(10), 1000), Gap::default());
        let forged = follow(&mut s, "a", &h(u64::MAX - 1), 1000);
        assert_eq!(
            forged,
            Gap {
                lost: 0,
                suspect: true
            }
        );
        assert_eq!(
            follow(&mut s, "a", &h(11), 1000),
            Gap::default(),
            "the forged number is not followed: 11 is next, no loss"
        );
        let mut o = HashMap::new();
        assert_eq!(follow_origin(&mut o, "a", (0, 10), 1000, 8), Gap::default());
        let forged = follow_origin(&mut o, "a", (0, 1 << 40), 1000, 8);
        assert_eq!(
            forged,
            Gap {
                lost: 0,
                suspect: true
            }
        );
        assert_eq!(
            follow_origin(&mut o, "a", (0, (1 << 40) + 3), 1000, 8).lost,
            2
        );
        // Places beyond the bound are not followed (memory stays bounded).
        for place in 1..8 {
            follow_origin(&mut o, "a", (place, 0), 1000, 8);
        }
        assert!(follow_origin(&mut o, "a", (100, 5), 1000, 8).suspect);
        assert_eq!(o["a"].len(), 8);
    }

    #[test]
    fn live_messages_the_history_brought_are_duplicates_until_the_stream_passes_it() {
        let mut floors = HashMap::new();
        floors.insert(
            ("a".to_owned(), 0u16),
            Floor {
                epoch: None,
                next: 5,
            },
        );
        let h = |epoch, origin_seq| WireHeader {
            epoch,
            schema_id: 0,
            layout_hash: 0,
            seq: 0,
            origin_place: 0,
            origin_seq,
        };
        assert!(duplicate_of_history(&mut floors, "a", &h(1, 3)));
        assert!(duplicate_of_history(&mut floors, "a", &h(1, 4)));
        assert!(
            !duplicate_of_history(&mut floors, "b", &h(1, 4)),
            "another host"
        );
        assert!(!duplicate_of_history(&mut floors, "a", &h(1, 5)), "new");
        assert!(floors.is_empty(), "passed: the floor is gone");
        // A new stream (the sending bridge restarted) ends the floor too.
        floors.insert(
            ("a".to_owned(), 0u16),
            Floor {
                epoch: Some(1),
                next: 5,
            },
        );
        assert!(!duplicate_of_history(&mut floors, "a", &h(2, 1)));
        assert!(floors.is_empty());
    }

    fn header(seq: u64, schema: SchemaKey) -> WireHeader {
        WireHeader {
            epoch: 1,
            schema_id: schema.id,
            layout_hash: schema.layout,
            seq,
            origin_place: 0,
            origin_seq: seq,
        }
    }

    #[test]
    fn real_loss_after_a_forged_jump_is_still_counted() {
        // (Before: the forged number near u64::MAX became the stream's next, every real
        // message looked older, and no loss was counted again until the epoch changed.)
        let h = |seq| header(seq, SchemaKey { id: 0, layout: 0 });
        let mut s = HashMap::new();
        follow(&mut s, "a", &h(10), 1000);
        assert!(follow(&mut s, "a", &h(u64::MAX - 1), 1000).suspect);
        assert_eq!(follow(&mut s, "a", &h(11), 1000), Gap::default());
        assert_eq!(follow(&mut s, "a", &h(14), 1000).lost, 2, "12 and 13 lost");
        // A real loss larger than the bound: suspect once, then followed from there.
        assert!(follow(&mut s, "a", &h(5000), 1000).suspect);
        assert_eq!(follow(&mut s, "a", &h(5001), 1000), Gap::default());
        assert_eq!(follow(&mut s, "a", &h(5003), 1000).lost, 1, "5002 lost");
    }

    #[test]
    fn oversize_message_is_not_counted_as_wire_loss() {
        // (Before: an oversize or schema-refused message was dropped before its sequence was
        // followed, so the next message showed a gap: +1 wire_lost and +1 source_lost for a
        // message counted as oversize. And a message from an unknown sender was counted as
        // received.)
        let schema = SchemaKey { id: 7, layout: 9 };
        let spec = InboundSpec {
            namespace: String::new(),
            topic: "t".into(),
            keys: Keys::new("d"),
            schema,
            own_place: Arc::default(),
            counters: Arc::default(),
            origins: Arc::default(),
            senders: Arc::default(),
            max_message_bytes: 100,
            max_seq_jump: 1000,
            max_places_per_host: 8,
            writers: Arc::default(),
            latched_hosts: Vec::new(),
            max_history: (16, 1 << 20),
        };
        let mut floors = HashMap::new();
        lock_senders(&spec.senders).allowed = vec!["a".into()];
        let other = SchemaKey { id: 1, layout: 2 };
        assert!(admit(
            &spec,
            100,
            "a",
            60,
            Ok(header(0, schema)),
            &mut floors
        ));
        assert!(!admit(
            &spec,
            100,
            "a",
            1000,
            Ok(header(1, schema)),
            &mut floors
        ));
        assert!(admit(
            &spec,
            100,
            "a",
            60,
            Ok(header(2, schema)),
            &mut floors
        ));
        assert!(!admit(
            &spec,
            100,
            "a",
            60,
            Ok(header(3, other)),
            &mut floors
        ));
        assert!(admit(
            &spec,
            100,
            "a",
            60,
            Ok(header(4, schema)),
            &mut floors
        ));
        assert!(!admit(
            &spec,
            100,
            "evil",
            60,
            Ok(header(9, schema)),
            &mut floors
        ));
        let c = spec.counters.snapshot();
        assert_eq!((c.oversize, c.schema_refused, c.unknown_sender), (1, 1, 1));
        assert_eq!(
            (c.wire_lost, c.source_lost, c.suspect),
            (0, 0, 0),
            "no false loss"
        );
        // Five sent by "a": sent = received + wire_lost.
        assert_eq!(c.received + c.wire_lost, 5);
        // A header split across slices is read without joining the payload.
        let mut bytes = [0u8; HEADER_LEN + 4];
        header(3, schema).write(&mut bytes);
        let split = read_split_header([&bytes[..10], &bytes[10..30], &bytes[30..]].into_iter());
        assert_eq!(split.map(|h| h.seq), Ok(3));
        assert!(read_split_header([&bytes[..10]].into_iter()).is_err());
    }
}
