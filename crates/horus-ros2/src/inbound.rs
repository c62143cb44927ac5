//! A topic coming from ROS 2: a DDS reader and a publisher on the horus topic. Each
//! message's wire bytes are checked against the topic's type (bounded in time and memory
//! by their length: a DDS peer is untrusted) and copied once into a chunk, never converted.
//!
//! The route runs on a thread of its own (route_thread.rs) that waits on the DDS reader's
//! readiness (RustDDS's `mio` event source: no CPU while idle) and publishes each sample as
//! soon as RustDDS hands it over. Publishing into a `Block` horus topic whose subscriber is
//! slow waits, retrying after each block timeout, until it fits or the route closes (then
//! counted `refused`): only this route waits, never the others. Meanwhile its reliable DDS
//! reader takes at most the topic's depth more (its ack window, qos.rs): a reliable
//! KEEP_ALL ROS 2 writer is held back; what a KEEP_LAST one overwrites meanwhile is a gap in
//! its sequence numbers, counted `lost` (sequence_gaps.rs).
//!
//! When the writers leave, the route carries what its reader acknowledged of them before
//! it closes ([`Inbound::drained`]; the bridge keeps it open until then while the horus
//! subscriber is there), as a ROS 2 subscriber gets what its reader received from a
//! publisher that left. What its ack window held back of a writer that left never comes:
//! counted `lost` then (`Mover::claim_departed_lost`).
//!
//! When the writers on the topic come to need another reader QoS (a volatile writer joins
//! a transient-local topic, a best-effort one a reliable topic), only the DDS reader is
//! replaced ([`Inbound::reopen_reader`]): the thread keeps its horus publisher, and with it
//! the latched history it holds for horus subscribers that join later (a horus publisher's
//! history lives as long as the publisher; the new reader's replay of the writers' history
//! is dropped as already carried, sequence_gaps.rs).

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use horus::inspect::{RawRosPublisher, RawRosSendError, RawSendError, TopicView};
use horus::Overflow;
use rustdds::no_key::{DataReader, DataSample};
use rustdds::{RTPSEntity, SequenceNumber, GUID};

use crate::dds::Dds;
use crate::local::LocalTopic;
use crate::qos::ReaderKind;
use crate::raw::{PassThrough, WireCdr};
use crate::route_error::RouteError;
use crate::route_thread::{OwnPlace, RouteThread, SharedCounters, StopFlag, STOP_POLL};
use crate::sequence_gaps::{new_reader_incarnation, Newness, ReaderId, SequenceGaps};
use crate::status::RouteCounters;
use crate::type_check::PayloadCheck;

/// Under `Block`, how long the route waits before trying again when every chunk of its
/// publisher's pool is still held by the horus topic's rings.
const POOL_RETRY: std::time::Duration = std::time::Duration::from_millis(10);

/// Samples carried between two looks for a reader waiting to replace the route's own.
const NEXT_READER_EVERY: usize = 16;

/// The poll token of the DDS reader.
const READER: mio::Token = mio::Token(0);
/// The poll token of the route's waker (asked to stop, or a new reader to take).
const WAKE: mio::Token = mio::Token(1);

/// The DDS reader of a route from ROS 2.
type Reader = DataReader<WireCdr, PassThrough>;

/// A reader with another QoS, made by the bridge loop, waiting for the route's thread to
/// take it in place of its own.
/// A reader to take in place of the route's, whether it is reliable, and its number
/// ([`ReadersMade`]).
type NextReader = Arc<Mutex<Option<(Reader, bool, u64)>>>;

/// How many DDS readers the route has made (the first, and each [`Inbound::reopen_reader`]),
/// counted before each is made: the route's thread claims what writers that left held back
/// (`Mover::claim_departed_lost`) only from the newest one. Both readers are matched to a
/// writer while the old one is drained, and each counts what the writer announced above
/// what it accepted: claimed from both, the same samples would count twice.
type ReadersMade = Arc<AtomicU64>;

/// A route's writers' sequence numbers, kept by the route across reopening its reader
/// (sequence_gaps.rs) and used by its thread.
pub(crate) type SharedGaps = Arc<Mutex<SequenceGaps>>;

/// The writers the last scan accepted (type and hash checked), by their GUID as discovery
/// prints it, with a generation that changes with them. A writer accepted before that the
/// scan no longer sees (it left) stays accepted until the route's reader runs empty: what
/// the reader acknowledged of it is carried, as a ROS 2 subscriber still gets what its
/// reader received from a publisher that left.
#[derive(Default)]
struct Accepted {
    guids: HashSet<String>,
    /// Those of them that serve a reader joining late their history (transient-local or
    /// more): what this route's reader was sent of it is no loss when evicted.
    with_history: HashSet<String>,
    /// Every writer of the topic the last scan saw, refused ones too: RustDDS's eviction
    /// counts of others are forgotten (a writer not accepted yet keeps its count for its
    /// claim; one gone does not fill the bounded map for good: review of ba8ee47).
    present: HashSet<String>,
    generation: u64,
}

/// What the route does with a writer's samples (per writer, since the scan's last change).
#[derive(Clone, Copy, Debug)]
struct Verdict {
    /// The scan accepted it.
    carried: bool,
    /// It serves late joiners its history (`Accepted::with_history`).
    with_history: bool,
}

/// One DDS topic being published into horus: its thread (stopped when this drops) and
/// what the scan hands it.
pub(crate) struct Inbound {
    /// The reader's QoS request (the route reopens when the writers need another).
    pub(crate) kind: ReaderKind,
    accepted: Arc<Mutex<Accepted>>,
    /// The route's thread last found its reader empty (nothing taken since).
    drained: Arc<AtomicBool>,
    next_reader: NextReader,
    readers_made: ReadersMade,
    waker: Arc<mio::Waker>,
    thread: RouteThread,
}

/// What the route's thread owns.
struct Mover {
    reader: Reader,
    /// A reader to take in place of `reader` (the route reopened for other QoS).
    next_reader: NextReader,
    /// The readers the route made, and the number of `reader` among them.
    readers_made: ReadersMade,
    reader_number: u64,
    /// The horus topic's depth: what the DDS reader's history keeps per writer.
    depth: usize,
    publisher: RawRosPublisher,
    /// The horus topic's overflow policy is `Block`: a publish that times out is retried
    /// until it fits or the route closes.
    block: bool,
    /// The topic's type, to check payloads (`None`: its definition does not resolve; then
    /// only the encapsulation header is checked).
    check: Option<PayloadCheck>,
    /// Largest message carried.
    max_bytes: usize,
    /// This bridge's participant.
    me: GUID,
    /// RustDDS matches writers by topic name alone, so samples of a refused writer (same
    /// name, other type) reach this reader too: only the accepted ones are carried.
    accepted: Arc<Mutex<Accepted>>,
    /// The verdict on each writer seen since `accepted` last changed (its generation here),
    /// so that a GUID is printed once per change, not per sample. Bounded by the writers.
    verdicts: HashMap<GUID, Verdict>,
    verdicts_of: u64,
    /// This route and its DDS reader (a reader swapped in has a new number:
    /// sequence_gaps.rs), and whether `reader` is reliable: it hands a writer's samples
    /// over in sequence order, so what its history evicted before the route's first take
    /// all lies below that take's number. A best-effort reader hands them over as they
    /// arrive (a lower number may come after a higher one): an eviction before the first
    /// take may show again as a gap, so there the evictions are not counted (HORUS-PATCH
    /// item 19; never a false loss).
    at: ReaderId,
    gaps: SharedGaps,
    counters: SharedCounters,
    /// What `reader` had withheld for its ack window when last added to the counters'
    /// `held_back` (each route and reader adds only what grew since: the counters outlive
    /// both).
    held_back_seen: u64,
    /// Where the bridge's publisher place is told to the other direction's route.
    own_place: OwnPlace,
    /// Set when the reader is found empty, cleared when a sample is taken
    /// ([`Inbound::drained`]).
    drained: Arc<AtomicBool>,
}

/// Adds to `c.held_back` what `reader` withheld for its ack window since `seen`, which
/// becomes its count now.
fn add_held_back(c: &mut RouteCounters, reader: &Reader, seen: &mut u64) {
    let now = reader.horus_withheld();
    c.held_back = c.held_back.saturating_add(now.saturating_sub(*seen));
    *seen = now;
}

impl Inbound {
    /// Creates the DDS reader (asking for `kind`), joins the horus topic as a publisher and
    /// starts the route's thread, carrying the samples of the writers in `accepted` (GUIDs
    /// as discovery prints them; given before the thread starts, so that a latched writer's
    /// history delivered at once is not refused), those in `with_history` serving late
    /// joiners their history; `present`: every writer of the topic the scan saw.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn open(
        dds: &Dds,
        view: &TopicView,
        local: &LocalTopic,
        dds_topic: &str,
        dds_type: &str,
        kind: ReaderKind,
        max_bytes: usize,
        shared: (SharedCounters, SharedGaps, OwnPlace),
        (accepted, with_history, present): (HashSet<String>, HashSet<String>, HashSet<String>),
    ) -> Result<Inbound, RouteError> {
        let (counters, gaps, own_place) = shared;
        let mut reader = create_reader(dds, local, dds_topic, dds_type, kind)?;
        let publisher = view
            .ros_publisher()
            .map_err(|e| RouteError::horus(view.name(), e))?;
        let thread_err = |e| RouteError::thread(view.name(), e);
        let poll = mio::Poll::new().map_err(thread_err)?;
        poll.registry()
            .register(&mut reader, READER, mio::Interest::READABLE)
            .map_err(thread_err)?;
        let waker = Arc::new(mio::Waker::new(poll.registry(), WAKE).map_err(thread_err)?);
        let check = PayloadCheck::new(&local.ty.type_name, &local.ty.definition);
        // A chunk holds 8 bytes of frame (4 reserved + the header) before the body.
        let chunk_room =
            usize::try_from(local.qos.chunk_bytes.saturating_sub(4)).unwrap_or(usize::MAX);
        let accepted = Arc::new(Mutex::new(Accepted {
            guids: accepted,
            with_history,
            present,
            generation: 1,
        }));
        // Before the thread publishes anything: the other direction skips it from now on.
        let place = publisher.place();
        own_place.set(Some(place));
        let next_reader = NextReader::default();
        let readers_made = ReadersMade::new(AtomicU64::new(1));
        let drained = Arc::new(AtomicBool::new(true));
        let mut mover = Mover {
            reader,
            next_reader: Arc::clone(&next_reader),
            readers_made: Arc::clone(&readers_made),
            reader_number: 1,
            depth: usize::try_from(local.qos.depth.max(1)).unwrap_or(usize::MAX),
            publisher,
            block: is_block(local),
            check,
            max_bytes: max_bytes.min(chunk_room),
            me: dds.participant().guid(),
            accepted: Arc::clone(&accepted),
            verdicts: HashMap::new(),
            verdicts_of: 0,
            at: ReaderId {
                route: new_reader_incarnation(),
                reader: new_reader_incarnation(),
                reliable: kind.reliable,
            },
            gaps,
            counters,
            held_back_seen: 0,
            own_place: own_place.clone(),
            drained: Arc::clone(&drained),
        };
        let thread = RouteThread::spawn(
            format!("ros2-in {}", view.name()),
            Some(Arc::clone(&waker)),
            move |stop| mover.run(poll, &stop),
        )
        .inspect_err(|_| own_place.clear_if(place))
        .map_err(thread_err)?;
        Ok(Inbound {
            kind,
            accepted,
            drained,
            next_reader,
            readers_made,
            waker,
            thread,
        })
    }

    /// Whether the route's thread last found its DDS reader empty: nothing it acknowledged
    /// is left to carry. A route whose writers left stays open until then (while its
    /// horus subscriber is there). Relaxed: a stale answer closes the route one scan later
    /// or sooner, as a scan just before or after the last take would.
    pub(crate) fn drained(&self) -> bool {
        self.drained.load(Ordering::Relaxed)
    }

    /// The writers whose samples are carried: those the scan accepted last, and those
    /// accepted before that left, until the reader runs empty.
    pub(crate) fn carried(&self) -> HashSet<String> {
        self.accepted
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .guids
            .clone()
    }

    /// Replaces the route's DDS reader with one asking for `kind`, keeping its horus
    /// publisher (and the latched history that publisher holds for horus subscribers that
    /// join later). The thread carries what the old reader holds (at most its history's
    /// worth once the new one waits: `Mover::drain`), then takes the new one; the writers'
    /// history the new one is sent again is dropped as already carried (`replayed`,
    /// sequence_gaps.rs).
    pub(crate) fn reopen_reader(
        &mut self,
        dds: &Dds,
        local: &LocalTopic,
        dds_topic: &str,
        dds_type: &str,
        kind: ReaderKind,
    ) -> Result<(), RouteError> {
        // Counted before the reader exists (it may match a writer at once): from now on
        // the route's current reader's departed counts are not claimed. SeqCst: the route's
        // thread reads it while claiming (under RustDDS's lock of the counts), after the
        // new reader can have been matched, and must not see the old number then.
        let number = self.readers_made.fetch_add(1, Ordering::SeqCst) + 1;
        let reader = create_reader(dds, local, dds_topic, dds_type, kind)?;
        // A reader made by an earlier call and not yet taken is dropped: this one asks for
        // what the writers need now.
        *self.next_reader.lock().unwrap_or_else(|p| p.into_inner()) =
            Some((reader, kind.reliable, number));
        self.kind = kind;
        // A failed wake leaves the swap to the thread's next turn (at most STOP_POLL away).
        let _ = self.waker.wake();
        Ok(())
    }

    /// The writers whose samples are carried from now on (those the scan accepted, and
    /// those accepted before that left, until the reader runs empty: [`Accepted`]);
    /// samples of any other writer are dropped and counted refused. Those in
    /// `with_history` serve late joiners their history; `present`: every writer of the
    /// topic the scan saw, refused ones too.
    pub(crate) fn accept_writers(
        &mut self,
        mut guids: HashSet<String>,
        mut with_history: HashSet<String>,
        present: HashSet<String>,
    ) {
        let mut a = self.accepted.lock().unwrap_or_else(|p| p.into_inner());
        for gone in a.guids.iter().filter(|g| !present.contains(*g)) {
            if a.with_history.contains(gone) {
                with_history.insert(gone.clone());
            }
            guids.insert(gone.clone());
        }
        if guids != a.guids || with_history != a.with_history || present != a.present {
            a.guids = guids;
            a.with_history = with_history;
            a.present = present;
            a.generation += 1;
        }
    }

    /// Stops the route's thread; returns it to be joined off the bridge loop.
    pub(crate) fn stop(self) -> Option<std::thread::JoinHandle<()>> {
        self.thread.stop()
    }
}

/// Whether the horus topic's overflow policy is `Block`.
fn is_block(local: &LocalTopic) -> bool {
    matches!(local.qos.overflow, Some(Overflow::Block { .. }))
}

/// A DDS reader on `dds_topic` asking for `kind`, keeping the horus topic's depth (with an
/// ack window of that depth into a `Block` topic: qos.rs).
fn create_reader(
    dds: &Dds,
    local: &LocalTopic,
    dds_topic: &str,
    dds_type: &str,
    kind: ReaderKind,
) -> Result<Reader, RouteError> {
    dds.raw_reader(
        dds_topic,
        dds_type,
        &local.ty.type_hash,
        kind.qos(local.qos.depth, is_block(local)),
    )
    .map_err(|e| RouteError::dds(dds_topic, e))
}

impl Mover {
    /// Takes what DDS has, then waits for more (or the stop waker), until asked to stop.
    fn run(&mut self, mut poll: mio::Poll, stop: &StopFlag) {
        let mut events = mio::Events::with_capacity(4);
        loop {
            self.drain(stop);
            if stop.is_set() {
                break;
            }
            if self.take_next_reader(&poll) {
                continue; // drain the new reader at once (the writers' history is there)
            }
            // The timeout only bounds a missed readiness edge; samples and the waker end
            // the wait at once.
            if let Err(e) = poll.poll(&mut events, Some(STOP_POLL)) {
                if e.kind() != std::io::ErrorKind::Interrupted {
                    std::thread::sleep(STOP_POLL);
                }
            }
        }
        // The bridge closes a route whose writers all left once its reader was found
        // empty (`drained`), which may be before this thread, not woken by a writer's
        // proxy being forgotten (only by samples, or STOP_POLL), found it empty again
        // since RustDDS recorded what that writer held back: claimed now, or never
        // (review 148). Only when drained: a route closed with samples still in its
        // reader (its horus subscriber left) has no one in horus to lose them.
        if self.drained.load(Ordering::Relaxed) {
            let departed_lost = self.claim_departed_lost();
            if departed_lost > 0 {
                let mut c = self.counters.lock();
                c.lost = c.lost.saturating_add(departed_lost);
            }
        }
        let _ = poll.registry().deregister(&mut self.reader);
        self.note_held_back();
        self.own_place.clear_if(self.publisher.place());
    }

    /// Adds to the counters what the reader withheld since they were last told.
    fn note_held_back(&mut self) {
        let mut c = self.counters.lock();
        add_held_back(&mut c, &self.reader, &mut self.held_back_seen);
    }

    /// Takes the reader [`Inbound::reopen_reader`] left, if any, in place of the current
    /// one (drained just before: what it held is carried). Returns whether it did.
    fn take_next_reader(&mut self, poll: &mio::Poll) -> bool {
        let next = self
            .next_reader
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .take();
        let Some((mut next, reliable, number)) = next else {
            return false;
        };
        let registry = poll.registry();
        let _ = registry.deregister(&mut self.reader);
        // Should registering fail, the poll's timeout still drains the reader every
        // STOP_POLL: the route goes on, slower, rather than stopping.
        let _ = registry.register(&mut next, READER, mio::Interest::READABLE);
        // What the old reader withheld since the counters were last told, before it goes.
        self.note_held_back();
        // The old reader drops here: its endpoint leaves the DDS graph.
        self.reader = next;
        self.reader_number = number;
        self.held_back_seen = 0;
        self.at.reader = new_reader_incarnation();
        self.at.reliable = reliable;
        true
    }

    /// Moves every sample RustDDS holds into the horus topic (stops early when asked to).
    /// While a reader waits to replace this one (`reopen_reader`), at most what this one's
    /// history holds is carried still (the topic's depth per writer, one writer more for
    /// those that left), then the route returns to take the new one. Was: the swap waited
    /// until this reader was empty, which it never was while the writers published at
    /// least as fast as the route carried (a KEEP_LAST writer into a slow `Block` topic):
    /// the new reader, taking nothing meanwhile, waited forever (found in review). What
    /// the old reader held past that is dropped with it; what the writers sent since the
    /// new reader matched reaches the new one too (sequence_gaps.rs drops the repeats and
    /// counts what neither carried as lost). The swap is not made while a sample waits for
    /// room under `Block`: that would drop what this reader holds of a held-back writer.
    fn drain(&mut self, stop: &StopFlag) {
        let mut since_look = 0usize;
        // Samples still carried from this reader once another one waits.
        let mut before_swap: Option<usize> = None;
        while !stop.is_set() {
            match &mut before_swap {
                Some(0) => return,
                Some(left) => *left -= 1,
                None => {
                    since_look += 1;
                    if since_look >= NEXT_READER_EVERY {
                        since_look = 0;
                        if self.next_reader_waits() {
                            before_swap = Some(self.history_bound());
                        }
                    }
                }
            }
            match self.reader.take_next_sample() {
                Ok(Some(s)) => {
                    if self.drained.load(Ordering::Relaxed) {
                        self.drained.store(false, Ordering::Relaxed);
                    }
                    self.carry(&s, stop);
                }
                Ok(None) => {
                    // Empty: writers that left have nothing more here. What they had
                    // announced and the reader's ack window never accepted (withheld,
                    // never sent again) is lost: claimed before they are forgotten.
                    let departed_lost = self.claim_departed_lost();
                    let carried = self.forget_departed();
                    // What a best-effort reader still misses is lost now, as is what
                    // a writer that left still missed (sequence_gaps.rs).
                    let mut c = self.counters.lock();
                    c.lost = c.lost.saturating_add(departed_lost);
                    let mut gaps = self.gaps.lock().unwrap_or_else(|p| p.into_inner());
                    gaps.settle(&mut c);
                    if let Some(carried) = carried {
                        gaps.forget_writers_except(&carried, &mut c);
                    }
                    drop(gaps);
                    add_held_back(&mut c, &self.reader, &mut self.held_back_seen);
                    drop(c);
                    self.drained.store(true, Ordering::Relaxed);
                    break;
                }
                // Not little-endian CDR: RustDDS has moved past it.
                Err(_) => {
                    self.counters.lock().malformed += 1;
                    self.gaps
                        .lock()
                        .unwrap_or_else(|p| p.into_inner())
                        .undecodable();
                }
            }
        }
    }

    /// What writers that left had announced to the reader (their last HEARTBEAT's last
    /// sequence number, or a DATA's if higher) above the highest sample it accepted of
    /// them: withheld by its ack window (counted `held_back`) and never sent again, since
    /// the writer is gone (RustDDS HORUS-PATCH item 24). Claimed for the writers this route
    /// carries (accepted, or accepted and left: they stay in `Accepted` until the reader
    /// runs empty); a refused writer's count is dropped (its samples were never carried).
    /// Nothing of a writer above the highest sample the reader accepted reaches the route,
    /// so no gap (sequence_gaps.rs) counts them too, and none at or below the last number
    /// the route took or counted of the writer is counted (a reader swapped in may have
    /// accepted less than the old one carried); one that comes back under the same GUID
    /// is not taken again what was claimed here. 0 for a reader without a window.
    /// Only the newest reader's counts are claimed ([`ReadersMade`]): a reader being
    /// replaced drops its own (the new one counts the writers it matched). On a reader
    /// swapped in, a writer the route has no position for (forgotten) has its count
    /// dropped: what the old reader carried of it is not known any more.
    /// The route's position for each writer claimed moves over what was counted
    /// (`SequenceGaps::counted_lost_through`, review 148): a writer back under its GUID
    /// before the route forgot it sends the number after the claimed ones next (RustDDS
    /// marks those not available), which must show no gap counting them again.
    fn claim_departed_lost(&self) -> u64 {
        let a = self.accepted.lock().unwrap_or_else(|p| p.into_inner());
        let mut gaps = self.gaps.lock().unwrap_or_else(|p| p.into_inner());
        let (made, mine) = (&self.readers_made, self.reader_number);
        let mut slid = 0u64;
        let claimed = self.reader.horus_claim_departed_lost(|g, upto| {
            // SeqCst: see Inbound::reopen_reader. Read here, under RustDDS's lock of the
            // counts, so that a count recorded after a new reader was made is seen with it.
            if made.load(Ordering::SeqCst) != mine || !a.guids.contains(&format!("{g:?}")) {
                return None;
            }
            let floor = match gaps.last_taken(*g) {
                Some(last) => SequenceNumber::new(last),
                None if mine == 1 => SequenceNumber::zero(),
                None => return None,
            };
            slid = slid.saturating_add(gaps.counted_lost_through(*g, upto));
            Some(floor)
        });
        claimed.saturating_add(slid)
    }

    /// The reader is empty: the writers that left (accepted, no longer seen by the scan)
    /// are no longer carried. Returns the writers still carried if any left, so that
    /// their sequence numbers are forgotten too (what they still missed counted lost).
    fn forget_departed(&mut self) -> Option<HashSet<String>> {
        let mut a = self.accepted.lock().unwrap_or_else(|p| p.into_inner());
        let Accepted {
            guids,
            with_history,
            present,
            generation,
        } = &mut *a;
        if guids.iter().all(|g| present.contains(g)) {
            return None;
        }
        guids.retain(|g| present.contains(g));
        with_history.retain(|g| present.contains(g));
        *generation += 1;
        Some(guids.clone())
    }

    /// Whether [`Inbound::reopen_reader`] left a reader to take in place of this one.
    fn next_reader_waits(&self) -> bool {
        self.next_reader
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .is_some()
    }

    /// At most how many samples the DDS reader's history holds: the topic's depth per
    /// writer (per writer with an ack window, RustDDS HORUS-PATCH item 18), the accepted
    /// writers and one more (for writers that left).
    fn history_bound(&self) -> usize {
        let writers = self
            .accepted
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .guids
            .len();
        self.depth.saturating_mul(writers.saturating_add(1))
    }

    /// What to do with samples of `writer` (the scan's verdict on it).
    fn verdict(&mut self, writer: GUID) -> Verdict {
        let a = self.accepted.lock().unwrap_or_else(|p| p.into_inner());
        if a.generation != self.verdicts_of {
            self.verdicts.clear();
            self.verdicts_of = a.generation;
            // RustDDS's eviction counts (HORUS-PATCH item 19) of the writers the scan no
            // longer sees are forgotten: bounded by the writers that exist. A writer seen
            // but not accepted (yet) keeps its count, for its claim once it is; one the
            // route no longer accepts keeps its claim (its position is forgotten: accepted
            // again, it restarts, docs/ros2-bridge.md).
            // A writer that left and is still carried (Accepted) keeps its count too, for
            // its claim at the route's first take of it (review of a0ecf29).
            self.reader.horus_retain_evicted_counts(|g| {
                let g = format!("{g:?}");
                a.present.contains(&g) || a.guids.contains(&g)
            });
        }
        *self.verdicts.entry(writer).or_insert_with(|| {
            let g = format!("{writer:?}");
            Verdict {
                carried: a.guids.contains(&g),
                with_history: a.with_history.contains(&g),
            }
        })
    }

    /// Checks one sample and publishes it into horus, counting what happens to it.
    fn carry(&mut self, sample: &DataSample<WireCdr>, stop: &StopFlag) {
        // This bridge's own writer (the topic also crosses the other way): not again.
        let writer = sample.sample_info().writer_guid();
        if writer.prefix == self.me.prefix {
            return;
        }
        // A writer the scan refused (or has not checked yet): not carried, counted.
        let verdict = self.verdict(writer);
        if !verdict.carried {
            self.counters.lock().refused += 1;
            return;
        }
        let seq = sample.sample_info().sample_identity().sequence_number;
        {
            let mut c = self.counters.lock();
            let mut gaps = self.gaps.lock().unwrap_or_else(|p| p.into_inner());
            let newness = gaps.newness(self.at, writer);
            if newness != Newness::Known {
                // The writer's first sample this reader hands over that the route keeps
                // (one it refused before, a writer the scan had not accepted yet, does
                // not count: review M1): RustDDS counted what the reader's history
                // evicted of it until now (a burst past the topic's depth before the
                // route took any), and stops counting at this call (HORUS-PATCH item 19);
                // no gap shows those below the writer's first sample. A writer serving
                // late joiners its history may have sent this reader samples written
                // before it joined: evicted, they are no loss, and nothing RTPS hands the
                // reader tells them from its live samples without risking a false loss,
                // so none is counted (a live burst evicted so stays uncounted:
                // docs/ros2-bridge.md, "Losses and bad input"); nor are a
                // best-effort reader's (`Mover::at`). On a reader swapped in, the
                // gap from the last sample the old one carried holds them
                // (sequence_gaps.rs): not added.
                let evicted = self.reader.horus_take_evicted_before_first_take(writer);
                if newness == Newness::NewToRoute && self.at.reliable && !verdict.with_history {
                    c.lost = c.lost.saturating_add(evicted);
                }
            }
            if gaps.is_replay(self.at, writer, seq, &mut c) {
                return;
            }
        }
        let mut wire = &sample.value().0[..];
        if wire.len() > self.max_bytes {
            self.counters.lock().oversize += 1;
            return;
        }
        if let Some(check) = &self.check {
            match check.message_end(wire) {
                // The message ends where its type says: RTPS pads a payload to a
                // multiple of 4 bytes (and rmw's buffers may run on); horus carries the
                // message alone, as `serialize_message` gives it.
                Ok(end) => wire = &wire[..end],
                Err(_) => {
                    self.counters.lock().malformed += 1;
                    return;
                }
            }
        }
        // May wait (a `Block` topic with a slow subscriber): no lock is held here. Under
        // `Block` a publish that found no room within the topic's timeout is retried while
        // the route is open: the message is neither refused nor dropped, and the DDS reader
        // takes no more than its ack window meanwhile (back-pressure to the ROS 2 writer).
        let sent = loop {
            match self.publisher.send_cdr(wire) {
                // Waiting for room is when the reader withholds (its window is full):
                // reported while it lasts, not only once the sample is carried.
                Err(RawRosSendError::Send(RawSendError::Timeout(_)))
                    if self.block && !stop.is_set() =>
                {
                    self.note_held_back();
                }
                // Every chunk of the bridge's pool is still in a ring (a pool smaller than
                // the subscribers' depth): nothing to wait on but time.
                Err(RawRosSendError::Send(RawSendError::PoolExhausted))
                    if self.block && !stop.is_set() =>
                {
                    std::thread::sleep(POOL_RETRY);
                }
                other => break other,
            }
        };
        let mut c = self.counters.lock();
        add_held_back(&mut c, &self.reader, &mut self.held_back_seen);
        match sent {
            Ok(_) => {
                c.messages += 1;
                c.bytes += wire.len() as u64;
            }
            Err(RawRosSendError::NotCdr(_)) => c.malformed += 1,
            Err(RawRosSendError::Send(_)) => c.refused += 1,
        }
    }
}
