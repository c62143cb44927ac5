//! A topic leaving this host: a subscriber on the local topic (so a `Block` publisher waits
//! for the network like for any subscriber), each message copied once from shared memory into
//! the buffer Zenoh sends, behind the wire header.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use horus::inspect::TopicView;
use horus::Overflow;
use zenoh::qos::{CongestionControl, Reliability};
use zenoh::{Session, Wait};

use crate::keys::SchemaKey;
use crate::status::LiveCounters;
use crate::wire::{WireHeader, HEADER_LEN};
use crate::worker::Worker;

/// How long a wait for a local message lasts before the stop flag is looked at again.
const POLL: Duration = Duration::from_millis(50);

/// No publisher place: what [`Outbound::own_place`] holds while this bridge does not also
/// publish the topic.
pub(crate) const NO_PLACE: usize = usize::MAX;

/// A running outbound topic.
pub(crate) struct Outbound {
    _worker: Worker,
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
}

impl Outbound {
    /// Joins the local topic as a subscriber and starts forwarding.
    pub(crate) fn start(session: &Session, spec: OutboundSpec) -> Result<Outbound, String> {
        let view = TopicView::open(&spec.namespace, &spec.topic).map_err(|e| e.to_string())?;
        // Block → reliable, congestion control Block: nothing is dropped, back-pressure
        // reaches the publisher through our subscriber place. Otherwise Zenoh may drop under
        // congestion (the receiver counts the gap).
        let congestion = match spec.overflow {
            Overflow::Block { .. } => CongestionControl::Block,
            _ => CongestionControl::Drop,
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
            let mut reader = match view.subscriber(true) {
                Ok(r) => r.with_prefix(HEADER_LEN),
                Err(_) => return,
            };
            // A new sequence per outbound stream: receivers start counting afresh.
            let epoch = epoch_now();
            let mut seq = 0u64;
            while !flag.is_set() {
                // `recv_timeout` spins, then yields the CPU a few times before it sleeps: a
                // publisher streaming on this CPU is read without a wake-up per message.
                let Some(mut msg) = reader.recv_timeout(POLL) else {
                    continue;
                };
                // Relaxed: the place is written once by the inbound side before its
                // first send; a stale read can only be NO_PLACE before any such message.
                if msg.source == spec.own_place.load(Ordering::Relaxed) {
                    continue;
                }
                LiveCounters::add(&spec.counters.read, 1);
                if !matching.load(Ordering::Relaxed) {
                    LiveCounters::add(&spec.counters.send_failed, 1);
                    continue;
                }
                WireHeader {
                    epoch,
                    schema_id: spec.schema.id,
                    layout_hash: spec.schema.layout,
                    seq,
                    origin_place: u16::try_from(msg.source).unwrap_or(u16::MAX),
                    origin_seq: msg.seq,
                }
                .write(&mut msg.bytes);
                seq += 1;
                match publisher.put(std::mem::take(&mut msg.bytes)).wait() {
                    Ok(()) => LiveCounters::add(&spec.counters.sent, 1),
                    Err(_) => LiveCounters::add(&spec.counters.send_failed, 1),
                }
            }
            drop(reader);
            drop(view);
        })?;
        Ok(Outbound { _worker: worker })
    }
}

/// Nanoseconds since the Unix epoch (a stream's identity; never compared as time).
pub(crate) fn epoch_now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_nanos()).unwrap_or(u64::MAX))
}
