//! A topic leaving this host: a subscriber on the local topic (so a `Block` publisher waits
//! for the network like for any subscriber), each message copied once from shared memory into
//! the buffer Zenoh sends, behind the wire header.
//!
//! A put that waits holds the topic's local publishers: while it lasts, this bridge reads
//! nothing, and a `Block` publisher waits for its place in the ring. Two things make a put
//! wait, and they are told apart by how long it waits:
//!
//! * a *slow* link (packet loss: one TCP retransmission timeout is 200 ms, doubling while the
//!   same segment is lost again; a capped link) delays a put, which returns once TCP has
//!   caught up;
//! * a *stalled* remote reader (a stopped process, a frozen receiving thread) fills Zenoh's
//!   queue towards it, and the put waits until Zenoh gives up on the link (5 s).
//!
//! A watchdog bounds what either costs the publishers: when a put has lasted `stall_after`
//! (default 200 ms; at most half the 1 s Block timeout a segment records for the bridge) it
//! counts a slow put (`slow_puts`) and drains the ring itself until the put returns, keeping
//! the newest message it drained for the worker to send next (the others are counted in
//! `stall_dropped`): the publishers go on, and the last message of a burst — the one no
//! later message would reveal the loss of — still crosses, so the receivers count every gap.
//! Only a put that lasts `stalled_reader_after` (default 2 s, below Zenoh's 5 s) is a stall
//! (`stalls`, also counted against each host the topic was sent to): once it returns, the
//! topic is sent with congestion control `Drop` (Zenoh drops towards the stalled reader only)
//! for the cut-off time, doubled at each further stall. (Before, every put that lasted
//! `stall_after` was a stall: one retransmission on a lossy link cut a topic off for 10 s.)

use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use horus::inspect::{RawMessage, RawReader, TopicView};
use horus::{Overflow, StartAt};
use zenoh::qos::{CongestionControl, Reliability};
use zenoh::{Session, Wait};

use crate::keys::SchemaKey;
use crate::status::LiveCounters;
use crate::wire::{Batch, WireHeader, HEADER_LEN};
use crate::worker::Worker;

/// How long a wait for a local message lasts before the stop flag is looked at again.
const POLL: Duration = Duration::from_millis(50);

/// Bytes of messages sent in one put at most (a Zenoh batch is 64 KiB): see `wire::Batch`.
const BATCH_BYTES: usize = 60 << 10;

/// Messages sent in one put at most.
const MAX_BATCH: usize = crate::wire::MAX_BATCH_MESSAGES;

/// A message longer than this travels alone, never copied into a batch.
const ALONE_ABOVE: usize = BATCH_BYTES / 2;

/// No publisher place: what [`Outbound::own_place`] holds while this bridge does not also
/// publish the topic.
pub(crate) const NO_PLACE: usize = usize::MAX;

/// A running outbound topic.
pub(crate) struct Outbound {
    /// Stops before the worker (it drains the worker's reader).
    watchdog: Option<Worker>,
    worker: Worker,
    /// Until when the topic is sent without waiting for remote readers.
    pub(crate) cut_off: Arc<Mutex<Option<Instant>>>,
    /// Whether a put is under way (see the worker).
    busy: Arc<AtomicU64>,
}

impl Drop for Outbound {
    /// A worker blocked in a put (a stalled remote reader) is not waited for: the bridge's
    /// loop never waits for another host. It ends when Zenoh gives up on the link. The
    /// watchdog is detached with it and drains the ring until that put returns: joined, it
    /// would stop draining, and the topic's local `Block` publishers would wait out their
    /// timeout for every message until Zenoh gives up the link. (Not tested: it needs a
    /// topic stopped while a remote reader stalls its put; the drain itself is tested by
    /// `stalled_remote_reader_holds_block_publisher_at_most_timeout`.)
    fn drop(&mut self) {
        // Relaxed: a hint; a put that starts right after is waited for as usual (and
        // drained meanwhile: the watchdog drains while a put lasts once it is stopped).
        if self.busy.load(Ordering::Relaxed) != 0 {
            if let Some(w) = self.watchdog.as_mut() {
                w.detach();
            }
            self.worker.detach();
        }
    }
}

/// How a slow or stalled put is noticed and what follows it.
#[derive(Clone, Copy, Debug)]
pub(crate) struct StallLimits {
    /// How long a put may hold the topic before the ring is drained (a slow put).
    pub(crate) after: Duration,
    /// How long a put must last to be a stall (its remote readers stopped reading).
    pub(crate) stalled_after: Duration,
    /// How long the topic is sent without waiting after a stall (doubled at each further
    /// stall, up to 16 times).
    pub(crate) cutoff: Duration,
}

/// What an outbound topic needs to start.
pub(crate) struct OutboundSpec {
    pub(crate) namespace: String,
    pub(crate) topic: String,
    pub(crate) data_key: String,
    pub(crate) schema: SchemaKey,
    pub(crate) overflow: Overflow,
    /// The place of this bridge's own publisher on the topic (inbound messages), whose
    /// messages must not go back out.
    pub(crate) own_place: Arc<AtomicUsize>,
    pub(crate) counters: Arc<LiveCounters>,
    pub(crate) stall: StallLimits,
    /// Set while the stream's reader is on the local topic (a latched topic's history
    /// server answers only then: see `history_serve`).
    pub(crate) streaming: Arc<AtomicBool>,
}

/// The topic's reader, shared by the worker and the watchdog, and the message the watchdog
/// kept from its last drain. One lock for both keeps the order: whatever the watchdog keeps
/// was read after anything the worker read before, and the worker takes it before it reads
/// the ring again.
#[derive(Default)]
struct Tap {
    reader: Option<RawReader>,
    /// The newest message drained during a slow put: the next to send.
    kept: Option<RawMessage>,
}

impl Tap {
    /// The kept message, else the ring's next one (waiting at most `timeout`).
    fn next(&mut self, timeout: Duration) -> Option<RawMessage> {
        match self.kept.take() {
            Some(m) => Some(m),
            None => self.reader.as_mut()?.recv_timeout(timeout),
        }
    }
}

/// Counts a message read from the ring and never sent: drained during a slow put.
fn count_drained(counters: &LiveCounters) {
    LiveCounters::add(&counters.read, 1);
    LiveCounters::add(&counters.send_failed, 1);
    LiveCounters::add(&counters.stall_dropped, 1);
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // A reader or an instant: usable after a panic elsewhere.
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// Nanoseconds since `base`, never 0 (0 means "no put under way").
fn stamp(base: Instant) -> u64 {
    u64::try_from(base.elapsed().as_nanos())
        .unwrap_or(u64::MAX)
        .max(1)
}

impl Outbound {
    /// Joins the local topic as a subscriber and starts forwarding.
    pub(crate) fn start(session: &Session, spec: OutboundSpec) -> Result<Outbound, String> {
        let view = TopicView::open(&spec.namespace, &spec.topic).map_err(|e| e.to_string())?;
        // Block → reliable, congestion control Block: nothing is dropped, back-pressure
        // reaches the publisher through our subscriber place. Otherwise Zenoh may drop under
        // congestion (the receiver counts the gap).
        let (congestion, block_timeout) = match spec.overflow {
            Overflow::Block { timeout } => (CongestionControl::Block, Some(timeout)),
            _ => (CongestionControl::Drop, None),
        };
        // Not express: Zenoh packs what is put while its sending thread is busy into one
        // batch (one TCP write, one wake-up of that thread, for a burst), and a lone message
        // leaves as soon as the sending thread looks — measured no later than an express one
        // (docs/multi-host.md). Express made every message its own batch and wake-up: with
        // the publisher, this worker and Zenoh's sending thread sharing a CPU it halved the
        // small-message throughput.
        let publisher = session
            .declare_publisher(spec.data_key.clone())
            .congestion_control(congestion)
            .reliability(Reliability::Reliable)
            .express(false)
            .wait()
            .map_err(|e| format!("zenoh publisher {}: {e}", spec.data_key))?;
        // Whether a remote subscriber matches: Zenoh drops a put nobody matches without a
        // word, so the local subscriber place is taken only once one does, and puts made
        // while none does are counted as failed sends.
        let matching = Arc::new(AtomicBool::new(false));
        let m = Arc::clone(&matching);
        let listener = publisher
            .matching_listener()
            // Relaxed: a status flag; the put it gates carries no data published through it.
            .callback(move |s| m.store(s.matching(), Ordering::Relaxed))
            .wait()
            .map_err(|e| format!("zenoh matching listener {}: {e}", spec.data_key))?;
        // The reader is shared with the watchdog, which drains it while a put is slow (the
        // worker holds it only while it waits for a message, never during a put).
        let tap: Arc<Mutex<Tap>> = Arc::default();
        let base = Instant::now();
        // 0: no put under way; else when the put under way started (ns since `base`).
        let busy = Arc::new(AtomicU64::new(0));
        // Set by the watchdog when a put has lasted `stall.stalled_after`.
        let stalled = Arc::new(AtomicBool::new(false));
        let cut_off: Arc<Mutex<Option<Instant>>> = Arc::default();
        let watchdog = match block_timeout {
            Some(t) => {
                let after = spec.stall.after.min(t / 2).max(Duration::from_millis(1));
                Some(spawn_watchdog(
                    &spec,
                    Arc::clone(&tap),
                    (Arc::clone(&busy), base),
                    Arc::clone(&stalled),
                    (after, spec.stall.stalled_after.max(after)),
                )?)
            }
            None => None,
        };
        let (session, data_key) = (session.clone(), spec.data_key.clone());
        let cut = Arc::clone(&cut_off);
        let busy_out = Arc::clone(&busy);
        let worker = Worker::spawn(format!("out:{}", spec.topic), move |flag| {
            let _listener = listener;
            // Relaxed: stop and matching flags read in a loop; nothing is published
            // through them.
            while !matching.load(Ordering::Relaxed) {
                if flag.is_set() {
                    return;
                }
                std::thread::sleep(Duration::from_millis(5));
            }
            // At the next message: a latched topic's history goes to each host once, in
            // answer to its query (`history_serve`), never again in the stream (a host
            // already receiving it would get it twice when the stream restarts).
            match view.subscriber_at(true, StartAt::Next) {
                Ok(r) => lock(&tap).reader = Some(r.with_prefix(HEADER_LEN)),
                Err(_) => return,
            };
            // Relaxed: a flag; the reader's place is in shared memory before it is set.
            spec.streaming.store(true, Ordering::Relaxed);
            // A new sequence per outbound stream: receivers start counting afresh.
            let epoch = epoch_now();
            let mut seq = 0u64;
            let mut stalls_in_a_row = 0u32;
            // When the last cut-off ends.
            let mut last_cut_off_end: Option<Instant> = None;
            // One put: counted per message it carries; a stalled one starts a cut-off.
            let mut put = |bytes: Vec<u8>, n: u64| {
                let until = *lock(&cut);
                let now = Instant::now();
                let put = if until.is_some_and(|u| now < u) {
                    // Cut off: Zenoh drops towards a reader whose queue is full.
                    session
                        .put(&data_key, bytes)
                        .congestion_control(CongestionControl::Drop)
                        .reliability(Reliability::Reliable)
                        .express(false)
                        .wait()
                } else {
                    if until.is_some() {
                        *lock(&cut) = None;
                    }
                    // Relaxed: the watchdog only compares this time; the put's data is
                    // not published through it.
                    busy.store(stamp(base), Ordering::Relaxed);
                    let r = publisher.put(bytes).wait();
                    busy.store(0, Ordering::Relaxed);
                    r
                };
                match put {
                    Ok(()) => LiveCounters::add(&spec.counters.sent, n),
                    Err(_) => LiveCounters::add(&spec.counters.send_failed, n),
                }
                // Relaxed: the watchdog's flag; what it counted is in atomics of its own. Set
                // only by a put that lasted `stalled_after`: a slow one was drained, not cut.
                if stalled.swap(false, Ordering::Relaxed) {
                    let now = Instant::now();
                    // A whole base cut-off time without a stall since the last cut-off
                    // ended: the reader is forgiven, the next cut-off is the base one.
                    if last_cut_off_end.is_some_and(|e| now >= e + spec.stall.cutoff) {
                        stalls_in_a_row = 0;
                    }
                    stalls_in_a_row = (stalls_in_a_row + 1).min(5);
                    let end = now + spec.stall.cutoff * (1u32 << (stalls_in_a_row - 1));
                    *lock(&cut) = Some(end);
                    last_cut_off_end = Some(end);
                }
            };
            while !flag.is_set() {
                // `recv_timeout` spins, then yields the CPU a few times before it sleeps: a
                // publisher streaming on this CPU is read without a wake-up per message. What
                // the watchdog kept from a slow put comes first.
                let got = lock(&tap).next(POLL);
                let Some(first) = got else {
                    continue;
                };
                // What the ring already holds behind it goes in the same put (a batch, see
                // `wire::Batch`), up to BATCH_BYTES: a burst costs one put, one Zenoh batch
                // and one receiving callback; a lone message goes at once, alone.
                let mut next_header = |source: usize, origin_seq: u64| {
                    let h = WireHeader {
                        epoch,
                        schema_id: spec.schema.id,
                        layout_hash: spec.schema.layout,
                        seq,
                        origin_place: u16::try_from(source).unwrap_or(u16::MAX),
                        origin_seq,
                    };
                    seq += 1;
                    h
                };
                // Whether a message read is to be sent (not ours, a remote reader there);
                // counted either way.
                let to_send = |source: usize| {
                    // Relaxed: the place is written once by the inbound side before its
                    // first send; a stale read can only be NO_PLACE before any such message.
                    if source == spec.own_place.load(Ordering::Relaxed) {
                        return false;
                    }
                    LiveCounters::add(&spec.counters.read, 1);
                    if !matching.load(Ordering::Relaxed) {
                        LiveCounters::add(&spec.counters.send_failed, 1);
                        return false;
                    }
                    true
                };
                let mut first = first;
                if !to_send(first.source) {
                    continue;
                }
                next_header(first.source, first.seq).write(&mut first.bytes);
                if first.bytes.len() > ALONE_ABOVE {
                    put(std::mem::take(&mut first.bytes), 1);
                    continue;
                }
                let mut total = first.bytes.len();
                let mut pending = Pending::One(std::mem::take(&mut first.bytes));
                // A large message met while batching: sent alone after the batch.
                let mut large = None;
                if let Some(r) = lock(&tap).reader.as_mut() {
                    // Read in place and copied once, into the batch (no put while the reader
                    // is held: the watchdog drains through it during a stalled put).
                    while total < BATCH_BYTES && pending.len() < MAX_BATCH {
                        let Some(m) = r.try_recv_sample() else {
                            break;
                        };
                        if !to_send(m.source()) {
                            continue;
                        }
                        let header = next_header(m.source(), m.seq());
                        let body = m.bytes();
                        if HEADER_LEN + body.len() > ALONE_ABOVE {
                            let mut bytes = vec![0u8; HEADER_LEN];
                            header.write(&mut bytes);
                            bytes.extend_from_slice(body);
                            large = Some(bytes);
                            break;
                        }
                        total += HEADER_LEN + body.len();
                        pending.add(&header, body);
                    }
                }
                pending.flush(&mut put);
                if let Some(bytes) = large {
                    put(bytes, 1);
                }
            }
            {
                // Taken together: the watchdog (still draining a put that outlived the stop)
                // reads nothing after this, and what it kept is counted, not lost unseen.
                let mut t = lock(&tap);
                t.reader.take();
                if t.kept.take().is_some() {
                    count_drained(&spec.counters);
                }
            }
            spec.streaming.store(false, Ordering::Relaxed);
            drop(view);
        })?;
        Ok(Outbound {
            watchdog,
            worker,
            cut_off,
            busy: busy_out,
        })
    }
}

/// Messages waiting for one put: a lone one goes as it is (never copied into a batch), two
/// or more as a batch.
enum Pending {
    One(Vec<u8>),
    Many(Batch),
}

impl Pending {
    /// Messages pending.
    fn len(&self) -> usize {
        match self {
            Pending::One(_) => 1,
            Pending::Many(b) => b.len(),
        }
    }

    /// Adds a message (its header, its body), copied into the batch.
    fn add(&mut self, header: &WireHeader, body: &[u8]) {
        if let Pending::One(first) = self {
            let mut b = Batch::with_capacity(BATCH_BYTES + ALONE_ABOVE);
            b.push(first);
            *self = Pending::Many(b);
        }
        if let Pending::Many(b) = self {
            b.push_parts(header, body);
        }
    }

    /// Puts what is pending, with the number of messages it carries.
    fn flush(self, put: &mut impl FnMut(Vec<u8>, u64)) {
        match self {
            Pending::One(m) => put(m, 1),
            Pending::Many(b) => {
                let n = b.len() as u64;
                put(b.into_bytes(), n);
            }
        }
    }
}

/// Watches a `Block` topic's puts: one that lasts `after` is slow: the ring is then drained
/// (keeping the newest message, see [`drain_while_put`]) until the put returns; one that lasts
/// `stalled_after` is a stall (`stalled`: the worker cuts the topic off once it returns). Told
/// to stop while a put is under way (the topic stopped during a slow put), it drains until
/// that put returns and then ends: the worker stops after that put, and nobody else reads the
/// ring meanwhile.
fn spawn_watchdog(
    spec: &OutboundSpec,
    tap: Arc<Mutex<Tap>>,
    (busy, base): (Arc<AtomicU64>, Instant),
    stalled: Arc<AtomicBool>,
    (after, stalled_after): (Duration, Duration),
) -> Result<Worker, String> {
    let counters = Arc::clone(&spec.counters);
    let own_place = Arc::clone(&spec.own_place);
    let ns = |d: Duration| u64::try_from(d.as_nanos()).unwrap_or(u64::MAX);
    let (after_ns, stalled_ns) = (ns(after), ns(stalled_after));
    let check = (after / 4).max(Duration::from_millis(1));
    Worker::spawn(format!("stall:{}", spec.topic), move |flag| {
        let drain = |started: u64, verdict: Option<&dyn Fn()>| {
            let put = Put {
                busy: &busy,
                started,
                base,
                stalled_ns,
            };
            drain_while_put(&tap, &put, &own_place, &counters, verdict)
        };
        loop {
            if flag.is_set() {
                // Relaxed: see the worker's stores.
                let started = busy.load(Ordering::Relaxed);
                if started != 0 {
                    drain(started, None);
                }
                return;
            }
            std::thread::sleep(check);
            // Relaxed: see the worker's stores.
            let started = busy.load(Ordering::Relaxed);
            if started == 0 || stamp(base).saturating_sub(started) < after_ns {
                continue;
            }
            LiveCounters::add(&counters.slow_puts, 1);
            // Drain while this same put lasts: the local publishers go on. If it lasts
            // `stalled_after`, its readers stalled.
            let verdict = || {
                LiveCounters::add(&counters.stalls, 1);
                stalled.store(true, Ordering::Relaxed);
            };
            drain(started, Some(&verdict));
        }
    })
}

/// The put a drain lasts for.
struct Put<'a> {
    /// The worker's put start (0: none), see `Outbound::start`.
    busy: &'a AtomicU64,
    /// This put's start.
    started: u64,
    base: Instant,
    /// How long it may last before it is a stall, ns.
    stalled_ns: u64,
}

impl Put<'_> {
    fn lasts(&self) -> bool {
        // Relaxed: the watchdog only compares the put's start time (see the worker's stores).
        self.busy.load(Ordering::Relaxed) == self.started
    }

    fn stalled(&self) -> bool {
        stamp(self.base).saturating_sub(self.started) >= self.stalled_ns
    }
}

/// Drains the topic's ring while `put` lasts (or until the worker has left the topic). The
/// newest message read is kept for the worker to send when the put returns; each one it
/// replaces is counted as read, failed and `stall_dropped`: the publishers are never held
/// longer, and the receivers still get the last message and so see (and count) every gap.
/// Calls `verdict` once if the put lasts `stalled_ns`.
fn drain_while_put(
    tap: &Mutex<Tap>,
    put: &Put<'_>,
    own_place: &AtomicUsize,
    counters: &LiveCounters,
    mut verdict: Option<&dyn Fn()>,
) {
    while put.lasts() {
        if verdict.is_some() && put.stalled() {
            if let Some(v) = verdict.take() {
                v();
            }
        }
        let mut t = lock(tap);
        let Some(r) = t.reader.as_mut() else {
            return;
        };
        let Some(msg) = r.recv_timeout(Duration::from_millis(5)) else {
            continue;
        };
        // Relaxed: see the worker's `to_send`.
        if msg.source == own_place.load(Ordering::Relaxed) {
            continue;
        }
        if t.kept.replace(msg).is_some() {
            count_drained(counters);
        }
    }
}

/// Nanoseconds since the Unix epoch (a stream's identity; never compared as time).
pub(crate) fn epoch_now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_nanos()).unwrap_or(u64::MAX))
}
