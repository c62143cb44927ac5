//! The subscribing end of a channel, at the byte level.
//!
//! A subscriber keeps its own cursor on every publisher's ring (a broadcast
//! ring has no shared read index), so any number of subscribers read without
//! affecting each other or the publisher. It polls the rings of the active
//! publishers, plus the rings of publishers that left while messages were
//! still unread, round-robin. Cursors are mirrored into the subscriber's
//! record, where `Reject`/`Block` publishers read them to know when the ring
//! is full.

use std::sync::Arc;
use std::time::Instant;

use crate::channel::{Channel, RingView, KIND_CHUNK, KIND_INLINE};
use crate::error::JoinError;
use crate::records::{self, Owner};
use crate::ring::{self, ReadOutcome};
use crate::segment::Segment;
use crate::sync::Ordering;
use crate::wait::{Futex, Spin, WaitStrategy, Waitable, Yield};
use crate::{futex, pool, protocol, room};

mod latency;
mod pending;

/// Yields (each followed by a poll) between the spin and the sleep of a blocking receive
/// (see [`SubscriberPort::receive_blocking`]).
const YIELDS_BEFORE_SLEEP: u32 = 4;

/// Bytes per cache line.
const CACHE_LINE: usize = 64;
/// Bytes of a chunk message prefetched before it is pinned (see
/// `SubscriberPort::pin_chunk`).
const PREFETCH_MAX: usize = 2048;

/// A subscriber place, shared by the port and the chunk samples it handed
/// out: the place is only given up when all of them are gone, so a sample
/// dropped late never clears a bit that belongs to the place's next owner.
#[derive(Debug)]
pub struct SubPlace {
    chan: Arc<Channel>,
    j: usize,
    /// Registered for futex wake-ups (and the registration's barrier ran).
    blocking: bool,
}

impl SubPlace {
    /// Drops this place's reference on chunk `c` of pool `k`.
    pub fn release_chunk(&self, k: usize, c: usize) {
        if let Some(state) = self.chan.chunk_state(k, c) {
            // As the only reliable subscriber, this also drops the ring's
            // hold (see `protocol::release_pinned`).
            let latched = self.chan.layout().config.latched() > 0;
            protocol::release_pinned(
                state,
                self.j,
                self.chan.membership(),
                self.chan.wake(),
                latched,
            );
        }
    }

    /// The channel.
    pub fn channel(&self) -> &Arc<Channel> {
        &self.chan
    }
}

impl Drop for SubPlace {
    fn drop(&mut self) {
        let rec = self.chan.sub_record(self.j);
        self.chan.release_sub_everywhere(self.j);
        self.chan.clear_wake_bits(self.j);
        records::free(&rec.owner);
    }
}

/// What [`SubscriberPort::try_receive`] delivered.
#[derive(Debug, PartialEq, Eq)]
pub enum Received {
    /// `len` payload bytes were copied into the caller's buffer.
    Inline {
        /// Payload length.
        len: usize,
    },
    /// A chunk was pinned for reading; release it with
    /// [`SubPlace::release_chunk`].
    Chunk {
        /// Publisher place (pool) index.
        pool: usize,
        /// Chunk index.
        chunk: usize,
        /// Payload length.
        len: usize,
    },
}

/// Where a joining subscriber starts on each publisher's ring.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum StartAt {
    /// As the channel's durability says: on a transient-local channel
    /// ([`ChannelConfig::latched`](crate::ChannelConfig::latched) > 0) the
    /// last `latched` messages of every live publisher, then the live
    /// stream; on a volatile one, [`StartAt::Next`].
    #[default]
    Durability,
    /// The next message each publisher sends once it notices the join.
    Next,
    /// The oldest message each ring still holds (whatever the durability,
    /// including a departed publisher's): for tools that join late and
    /// want everything still there, such as a recorder. Chunk messages
    /// whose chunk was already reused are not "still held": the start is
    /// past them.
    Oldest,
}

/// Ways a message can fail to reach this subscriber, each counted.
#[derive(Clone, Copy)]
enum Loss {
    Overrun,
    Skipped,
    Malformed,
}

/// The subscribing end of a channel.
#[derive(Debug)]
pub struct SubscriberPort {
    place: Arc<SubPlace>,
    cursors: Vec<u64>,
    /// Every publisher's ring, bounds-checked once at join.
    rings: Vec<RingView>,
    /// Our record, our shared cursor words and the membership word, located
    /// once at join; valid while `place.chan` keeps the mapping alive.
    rec: *const records::SubRecord,
    shared_cursors: *const crate::sync::AtomicU64,
    membership: *const crate::sync::AtomicU64,
    /// The channel's wake words (see `wake_room_waiters`).
    wake: *const records::Wake,
    /// Rings to poll: active publishers plus departed ones with unread data.
    poll: u32,
    members: u64,
    next_ring: usize,
    /// The ring (publisher place) and sequence number of the last message received.
    last_ring: usize,
    last_seq: u64,
    received: u64,
    overrun: u64,
    skipped: u64,
    malformed: u64,
}

// SAFETY: the raw pointers point into the shared mapping kept alive by
// `place` (an Arc), and everything they reach is atomics; a port is used by
// one thread at a time (`&mut self`), which is what Send requires.
unsafe impl Send for SubscriberPort {}
// SAFETY: the `&self` methods only read atomics in the mapping (and
// immutable fields), so sharing references across threads is sound.
unsafe impl Sync for SubscriberPort {}

impl SubscriberPort {
    /// Takes a subscriber place. With `blocking`, the place registers for
    /// futex wake-ups (costs a global memory barrier once, here). An
    /// `observer` reads the same rings but never back-pressures a
    /// `Reject`/`Block` publisher: it is left out of the publisher's room
    /// check and counts what it misses as its own overrun.
    ///
    /// The subscriber receives every message its publishers send from the
    /// moment each of them notices the join (see [`records::CURSOR_JOINING`]);
    /// nothing published before counts as lost.
    ///
    /// On a transient-local channel it first receives the retained history
    /// (see [`StartAt::Durability`]): [`join_at`](Self::join_at) with that.
    pub fn join(
        chan: &Arc<Channel>,
        blocking: bool,
        observer: bool,
    ) -> Result<SubscriberPort, JoinError> {
        Self::join_at(chan, blocking, observer, StartAt::Durability)
    }

    /// As [`join`](Self::join), starting where `start` says. A start in the
    /// past ([`StartAt::Oldest`], or [`StartAt::Durability`] on a
    /// transient-local channel) is chosen by the subscriber itself at join
    /// (the publisher may never send again); every message from there is
    /// validated like any other, so one overwritten (or whose chunk was
    /// reused) before it is read counts as `overrun`, and none is skipped
    /// or delivered twice.
    pub fn join_at(
        chan: &Arc<Channel>,
        blocking: bool,
        observer: bool,
        start: StartAt,
    ) -> Result<SubscriberPort, JoinError> {
        chan.reclaim_dead();
        let cfg = chan.layout().config;
        for j in 0..cfg.max_subscribers as usize {
            let rec = chan.sub_record(j);
            if !matches!(
                records::classify(rec.owner.load(Ordering::Relaxed)),
                Owner::Free
            ) || !records::try_claim(&rec.owner)
            {
                continue;
            }
            rec.claims.fetch_add(1, Ordering::Relaxed);
            for c in [&rec.received, &rec.overrun, &rec.skipped, &rec.malformed] {
                c.store(0, Ordering::Relaxed);
            }
            chan.latency_record(j).reset();
            // No start yet on any ring: each publisher picks ours when it
            // notices the join (not-member markers until we are one). The membership join below (Release) orders
            // these stores, and the observer bit, before our bit becomes
            // visible, so a publisher that sees the bit sees them.
            let mut cursors = vec![records::CURSOR_JOINING; cfg.max_publishers as usize];
            let wake = chan.wake();
            protocol::prepare_join(
                (0..cursors.len()).map(|k| chan.cursor(j, k)),
                &wake.observers,
                j,
                observer,
            );
            let bit = records::sub_member(j) as u32;
            // A registration is only useful once the barrier has run: after
            // it, a publisher that still reads the `blocking` set as empty
            // has made its earlier slot writes visible to us. Without the
            // barrier (old kernel, seccomp), the place waits with bounded
            // sleeps instead and never relies on a wake-up.
            let blocking = blocking && {
                wake.blocking.fetch_or(bit, Ordering::SeqCst);
                let ok = futex::global_barrier();
                if !ok {
                    wake.blocking.fetch_and(!bit, Ordering::SeqCst);
                }
                ok
            };
            let place = Arc::new(SubPlace {
                chan: Arc::clone(chan),
                j,
                blocking,
            });
            if !records::join(chan.membership(), records::sub_member(j)) {
                return Err(JoinError::Closing);
            }
            // Only now, as a member, may our cursors be started (see
            // `records::CURSOR_NOT_MEMBER`); the touch makes publishers that
            // cached the word with our bit but a not-member cursor look again.
            for (k, cursor) in cursors.iter_mut().enumerate() {
                match self_start(chan, k, start) {
                    Some(s) => {
                        protocol::start_cursor_at(chan.cursor(j, k), s);
                        *cursor = s;
                    }
                    None => protocol::open_cursors(std::iter::once(chan.cursor(j, k))),
                }
            }
            records::touch(chan.membership());
            return Ok(SubscriberPort {
                rings: (0..cfg.max_publishers as usize)
                    .map(|k| chan.ring(k))
                    .collect(),
                rec,
                shared_cursors: chan.cursor(j, 0),
                membership: chan.membership(),
                wake: chan.wake(),
                place,
                cursors,
                poll: 0,
                members: u64::MAX,
                next_ring: 0,
                last_ring: 0,
                last_seq: 0,
                received: 0,
                overrun: 0,
                skipped: 0,
                malformed: 0,
            });
        }
        Err(JoinError::Full {
            role: "subscriber",
            max: cfg.max_subscribers,
        })
    }

    /// Whether this place is an observer.
    pub fn is_observer(&self) -> bool {
        let bit = records::sub_member(self.place.j) as u32;
        self.chan().wake().observers.load(Ordering::Relaxed) & bit != 0
    }

    /// Whether `recv` sleeps on the futex with wake-ups (false when the
    /// registration's barrier is unavailable: then it sleeps at most 1 ms
    /// at a time).
    pub fn wakes_registered(&self) -> bool {
        self.place.blocking
    }

    /// Whether the segment was truncated under this port (one relaxed
    /// load; see [`Channel::is_lost`]).
    #[inline]
    pub fn is_lost(&self) -> bool {
        self.chan().is_lost()
    }

    /// [`is_lost`](Self::is_lost) after touching the segment's last page,
    /// so any truncation is noticed (see [`Channel::probe_lost`]).
    pub fn probe_lost(&self) -> bool {
        self.chan().probe_lost()
    }

    /// Bytes a message may have inline (in a ring slot): the size of the
    /// buffer [`try_receive`](Self::try_receive) copies into.
    pub fn slot_payload(&self) -> usize {
        self.chan().layout().config.slot_payload as usize
    }

    /// Every endpoint's counters on this port's channel, in every process.
    pub fn snapshot(&self) -> crate::ChannelSnapshot {
        self.chan().snapshot()
    }

    /// The shared place (samples keep it alive).
    pub fn place(&self) -> &Arc<SubPlace> {
        &self.place
    }

    fn chan(&self) -> &Channel {
        &self.place.chan
    }

    #[inline]
    fn rec(&self) -> &records::SubRecord {
        // SAFETY: located by Channel::sub_record (bounds-checked) at join;
        // the mapping lives as long as self.place.chan.
        unsafe { &*self.rec }
    }

    #[inline]
    fn members(&self) -> &crate::sync::AtomicU64 {
        // SAFETY: as in `rec`.
        unsafe { &*self.membership }
    }

    #[inline]
    fn shared_cursor(&self, k: usize) -> &crate::sync::AtomicU64 {
        assert!(k < self.cursors.len());
        // SAFETY: Channel::cursor(j, 0) located our first cursor word; the
        // record holds one per publisher place (k < max_publishers, as
        // cursors.len() is), all inside the mapping (checked at join by
        // Channel::cursor for k = 0 and by the layout's record size).
        unsafe { &*self.shared_cursors.add(k) }
    }

    /// Number of publishers active right now.
    pub fn publishers(&self) -> u32 {
        self.chan()
            .pub_places(self.chan().membership().load(Ordering::Relaxed))
            .count_ones()
    }

    /// Refreshes the set of rings to poll when membership changed.
    #[inline]
    fn refresh_poll(&mut self) {
        let m = self.members().load(Ordering::Acquire);
        if m == self.members {
            return;
        }
        self.members = m;
        let mut poll = self.place.chan.pub_places(m);
        for k in 0..self.cursors.len() {
            // A publisher may have started our cursor, sent, and left since
            // we last looked: pick up the start, or its messages would never
            // be polled.
            if self.cursors[k] == records::CURSOR_JOINING {
                self.start_cursor(k);
            }
            if self.chan().pub_record(k).head.load(Ordering::Acquire) >= self.cursors[k] {
                poll |= 1 << k;
            }
        }
        self.poll = poll;
    }

    /// Receives the next message if one is ready. Inline payloads are copied
    /// into `out` (which must hold the channel's slot payload).
    #[inline]
    pub fn try_receive(&mut self, out: &mut [u64]) -> Option<Received> {
        self.refresh_poll();
        let rings = self.poll;
        if rings == 0 {
            return None;
        }
        // Fast path: a single ring (1:1 and 1:N topics).
        if rings.is_power_of_two() {
            return self.receive_from(rings.trailing_zeros() as usize, out);
        }
        let n = self.cursors.len();
        for i in 0..n {
            let k = (self.next_ring + i) % n;
            if rings & (1 << k) != 0 {
                if let Some(r) = self.receive_from(k, out) {
                    self.next_ring = (k + 1) % n;
                    return Some(r);
                }
            }
        }
        None
    }

    /// Makes our private cursor on ring `k` live if its publisher has
    /// started it; false while it is still [`records::CURSOR_JOINING`].
    #[cold]
    fn start_cursor(&mut self, k: usize) -> bool {
        match protocol::subscriber_start(self.shared_cursor(k)) {
            Some(c) => {
                self.cursors[k] = c;
                true
            }
            None => false,
        }
    }

    #[inline]
    fn receive_from(&mut self, k: usize, out: &mut [u64]) -> Option<Received> {
        if self.cursors[k] == records::CURSOR_JOINING && !self.start_cursor(k) {
            return None;
        }
        // Every pass either returns or moves the cursor forward, and a lap
        // jumps straight to the oldest message still in the ring, so an
        // honest ring is done within `depth + 2` passes. The bound is for
        // slots a corrupt or hostile peer wrote: `try_recv` never waits.
        let depth = u64::from(self.place.chan.layout().config.depth);
        for _ in 0..depth + 2 {
            let seq = self.cursors[k];
            let outcome = ring::read(&self.rings[k].slot(seq), seq, out);
            match outcome {
                ReadOutcome::Ready { len, kind } => match kind {
                    KIND_INLINE => {
                        self.advance(k, seq.wrapping_add(1));
                        self.last_ring = k;
                        self.last_seq = seq;
                        self.count_received();
                        return Some(Received::Inline { len });
                    }
                    KIND_CHUNK if len == 16 => {
                        // Pin the chunk *before* moving the cursor past the
                        // message: a Reject/Block publisher treats a chunk
                        // below every cursor as consumed and may reuse it.
                        let pinned = self.pin_chunk(k, out[0], out[1]);
                        self.advance(k, seq.wrapping_add(1));
                        if let Some(r) = pinned {
                            self.last_ring = k;
                            self.last_seq = seq;
                            self.count_received();
                            return Some(r);
                        }
                    }
                    _ => {
                        self.advance(k, seq.wrapping_add(1));
                        self.count(Loss::Malformed, 1);
                    }
                },
                ReadOutcome::NotReady { stamp } => {
                    // An honest slot holds message `seq - depth` (or `seq`
                    // half-written): our cursor is never more than a lap
                    // ahead of it. Further means a corrupt stamp and head
                    // sent it past the real messages; resynchronise on the
                    // head (which the publisher rewrites on every send) so
                    // that a single scribble cannot mute the topic for good.
                    if (stamp / 2).saturating_add(depth) < seq {
                        let head = self.place.chan.pub_record(k).head.load(Ordering::Acquire);
                        let resync = head.saturating_add(1);
                        if resync < seq {
                            self.count(Loss::Malformed, 1);
                            self.advance(k, resync);
                            continue;
                        }
                    }
                    if self.place.chan.pub_places(self.members) & (1 << k) == 0 {
                        // Publisher gone and ring drained: stop polling it.
                        self.poll &= !(1 << k);
                    }
                    return None;
                }
                ReadOutcome::Lapped { found } => {
                    let chan = &self.place.chan;
                    // Acquire: the writer stores `head` before it starts a
                    // slot, so having seen message `found` in a slot we see
                    // a head of at least `found - 1`.
                    let head = chan.pub_record(k).head.load(Ordering::Acquire);
                    if found > head.saturating_add(1) {
                        // A stamp no honest writer could have made yet: the
                        // slot is corrupt. Count it and step over it.
                        self.count(Loss::Malformed, 1);
                        self.advance(k, seq.wrapping_add(1));
                        continue;
                    }
                    // Overrun (DropOldest, or an observer): skip past what was
                    // overwritten and count it. The writer writes in order, so
                    // having written `found` it has overwritten every message
                    // up to `found - depth`. (`head` would allow a longer jump,
                    // but a corrupt `head` would then send our cursor far past
                    // the real messages for good; `found` was checked against
                    // it above, and a later lap is counted when we meet it.)
                    let next = seq
                        .saturating_add(1)
                        .max(found.saturating_add(1).saturating_sub(depth));
                    self.count(Loss::Overrun, next.saturating_sub(seq));
                    self.advance(k, next);
                }
                ReadOutcome::Torn => {
                    self.count(Loss::Overrun, 1);
                    self.advance(k, seq.wrapping_add(1));
                }
                ReadOutcome::Malformed => {
                    self.count(Loss::Malformed, 1);
                    self.advance(k, seq.wrapping_add(1));
                }
            }
        }
        None
    }

    fn pin_chunk(&mut self, k: usize, desc: u64, len: u64) -> Option<Received> {
        let (c, gen) = protocol::split_descriptor(desc);
        let chan = &self.place.chan;
        let valid = chan
            .chunk_state(k, c)
            .filter(|_| len as usize <= chan.chunk_size());
        let Some(state) = valid else {
            self.count(Loss::Malformed, 1);
            return None;
        };
        // Start fetching the message (up to its first `PREFETCH_MAX` bytes;
        // the hardware prefetcher streams the rest) while the pinning CAS
        // below waits for the state word: a locked instruction holds back
        // every later load until it completes, so without this the payload's
        // misses would start only after the state word's.
        let base = chan.chunk_ptr(k, c);
        for off in (0..(len as usize).clamp(1, PREFETCH_MAX)).step_by(CACHE_LINE) {
            prefetch(base.wrapping_add(off));
        }
        if !pool::acquire(state, gen, self.place.j) {
            // Freed and reused before we got to it: it was overwritten.
            self.count(Loss::Overrun, 1);
            return None;
        }
        Some(Received::Chunk {
            pool: k,
            chunk: c,
            len: len as usize,
        })
    }

    #[inline]
    fn advance(&mut self, k: usize, next: u64) {
        self.cursors[k] = next;
        protocol::publish_cursor(self.shared_cursor(k), next);
        self.wake_room_waiters();
    }

    /// Wakes `Block` publishers sleeping for room (after a cursor store):
    /// one load while no publisher ever waited (see `crate::room`).
    #[inline]
    fn wake_room_waiters(&self) {
        // SAFETY: located by Channel::wake at join; the mapping lives as
        // long as self.place.chan.
        let wake = unsafe { &*self.wake };
        if room::must_wake(wake) {
            room::bump(wake);
            futex::wake_all(&wake.room);
        }
    }

    #[inline]
    fn count_received(&mut self) {
        self.received += 1;
        let r = self.received;
        self.rec().received.store(r, Ordering::Relaxed);
    }

    fn count(&mut self, which: Loss, n: u64) {
        // SAFETY: as in `rec` (a raw read so the borrow does not overlap
        // the mutable borrow of the local counters below).
        let rec = unsafe { &*self.rec };
        let (local, shared) = match which {
            Loss::Overrun => (&mut self.overrun, &rec.overrun),
            Loss::Skipped => (&mut self.skipped, &rec.skipped),
            Loss::Malformed => (&mut self.malformed, &rec.malformed),
        };
        *local = local.saturating_add(n);
        // Only this place writes its counters: a plain store suffices.
        shared.store(*local, Ordering::Relaxed);
    }

    /// Counts a delivered payload the typed layer rejected (wrong size).
    pub fn count_malformed(&mut self) {
        self.count(Loss::Malformed, 1);
    }

    /// Moves every cursor so that the next receive returns the newest
    /// message of each ring; returns how many messages were passed over
    /// (counted as `skipped`, not lost).
    pub fn skip_to_newest(&mut self) -> u64 {
        self.refresh_poll();
        let mut skipped = 0;
        for k in 0..self.cursors.len() {
            if self.poll & (1 << k) == 0 {
                continue;
            }
            if self.cursors[k] == records::CURSOR_JOINING && !self.start_cursor(k) {
                continue;
            }
            let head = self.chan().pub_record(k).head.load(Ordering::Acquire);
            if head > self.cursors[k] {
                skipped += head - self.cursors[k];
                self.advance(k, head);
            }
        }
        if skipped > 0 {
            self.count(Loss::Skipped, skipped);
        }
        skipped
    }

    /// Receives, sleeping on the channel's futex while nothing is ready
    /// (after `spin` empty polls). `None` once `deadline` passes.
    pub fn receive_blocking(
        &mut self,
        out: &mut [u64],
        spin: u32,
        deadline: Option<Instant>,
    ) -> Option<Received> {
        // Then give the CPU away a few times before sleeping. When the publisher shares our
        // CPU (a bridge's receiving thread and its subscriber on one core, or more busy
        // threads than cores) spinning cannot see its next message — it cannot run while we
        // spin — and sleeping makes each of its sends a futex wake-up that switches to us for
        // one message and back. A yield lets it run on: it sends the next messages to a
        // subscriber that is not asleep (no wake-up), and we take them in one go. With the
        // CPU to ourselves a yield returns at once, a poll slower than a spin.
        let yields = if spin > 0 { YIELDS_BEFORE_SLEEP } else { 0 };
        let chan = Arc::clone(&self.place.chan);
        let (bit, registered) = (records::port_wait_bit(self.place.j), self.place.blocking);
        let mut w = SubscriberWait::new(chan.wake(), bit, registered, || self.try_receive(out));
        Spin { polls: spin }
            .wait(&mut w, deadline)
            .or_else(|| Yield { polls: yields }.wait(&mut w, deadline))
            .or_else(|| Futex.wait(&mut w, deadline))
    }

    /// Bytes of chunk `c` of pool `k`, pinned by a previous receive.
    pub fn chunk_ptr(&self, k: usize, c: usize) -> *const u8 {
        self.chan().chunk_ptr(k, c)
    }

    /// The publisher place whose ring the last received message came from, and the message's
    /// sequence number in it (a bridge leaves out the messages it published itself, and
    /// carries the sequence number so that the receiving host sees every gap).
    pub fn last_source(&self) -> (usize, u64) {
        (self.last_ring, self.last_seq)
    }

    /// Messages delivered to this subscriber.
    pub fn received(&self) -> u64 {
        self.received
    }

    /// Messages overwritten before this subscriber read them.
    pub fn overrun(&self) -> u64 {
        self.overrun
    }

    /// Messages passed over by [`SubscriberPort::skip_to_newest`].
    pub fn skipped(&self) -> u64 {
        self.skipped
    }

    /// Slots or descriptors rejected as corrupt.
    pub fn malformed(&self) -> u64 {
        self.malformed
    }
}

impl Drop for SubscriberPort {
    fn drop(&mut self) {
        // Leave at once so publishers stop waiting on our cursors; the place
        // itself is freed when the last sample drops (SubPlace::drop).
        let chan = &self.place.chan;
        let left = records::leave(chan.membership(), records::sub_member(self.place.j));
        // Our cursors no longer bound the publishers' room.
        self.wake_room_waiters();
        if left == 0 && records::try_close(chan.membership()) {
            Segment::unlink_if_same(chan.segment());
        }
    }
}

/// A subscriber's wait (a blocking receive, `SubPlace::wait_pending`) as a
/// [`Waitable`]: `poll` checks for a message; the futex handshake with the
/// publisher is `protocol::register_wait` / `protocol::must_wake` on the
/// channel's `notify` word, announced with the waiter's own bit `bit`.
pub(crate) struct SubscriberWait<'a, P> {
    poll: P,
    wake: &'a records::Wake,
    bit: u64,
    /// Registered for wake-ups (its barrier ran); if not, a publisher may
    /// not wake us: sleep at most 1 ms at a time, polling.
    registered: bool,
}

impl<'a, P> SubscriberWait<'a, P> {
    pub(crate) fn new(wake: &'a records::Wake, bit: u64, registered: bool, poll: P) -> Self {
        SubscriberWait {
            poll,
            wake,
            bit,
            registered,
        }
    }
}

impl<R, P: FnMut() -> Option<R>> Waitable for SubscriberWait<'_, P> {
    type Ready = R;

    fn poll(&mut self) -> Option<R> {
        (self.poll)()
    }

    fn word(&self) -> &crate::sync::AtomicU32 {
        &self.wake.notify
    }

    fn token(&self) -> u32 {
        protocol::wait_token(self.wake)
    }

    fn announce(&self) {
        protocol::register_wait(self.wake, self.bit);
    }

    fn withdraw(&self) {
        protocol::unregister_wait(self.wake, self.bit);
    }

    fn tick_every(&self) -> Option<std::time::Duration> {
        (!self.registered).then_some(std::time::Duration::from_millis(1))
    }
}

/// Where a subscriber joining with `start` begins on ring `k`, if it picks
/// its start itself; `None` leaves it to the ring's publisher
/// (`CURSOR_JOINING`).
fn self_start(chan: &Channel, k: usize, start: StartAt) -> Option<u64> {
    let cfg = chan.layout().config;
    let depth = u64::from(cfg.depth);
    let rec = chan.pub_record(k);
    match start {
        StartAt::Next => None,
        StartAt::Durability if cfg.latched() == 0 => None,
        StartAt::Durability => {
            // Acquire: pairs with the publisher's Release stores of `head`
            // (the slots up to it are committed) and of the floor.
            let head = rec.head.load(Ordering::Acquire);
            let floor = rec.history_floor.load(Ordering::Acquire);
            Some(protocol::latched_start(
                head,
                floor,
                u64::from(cfg.latched()),
                depth,
            ))
        }
        StartAt::Oldest => {
            let head = rec.head.load(Ordering::Acquire);
            let first = protocol::latched_start(head, 0, depth, depth);
            // The first message still held: its slot not yet overwritten and,
            // for a chunk, its chunk not yet reused. Racy by nature (the
            // publisher moves on meanwhile); the receive validates each
            // message again and counts what went in between as overrun.
            // At most `depth` slots, whatever `head` says.
            let held = (first..=head).take(cfg.depth as usize).find(|&seq| {
                let slot = chan.slot(k, seq);
                if ring::committed_seq(&slot) != Some(seq) {
                    return false;
                }
                match ring::peek_descriptor(&slot) {
                    Some((KIND_CHUNK, desc, _)) => {
                        let (c, gen) = protocol::split_descriptor(desc);
                        chan.chunk_state(k, c)
                            .is_some_and(|s| pool::generation(s.load(Ordering::Acquire)) == gen)
                    }
                    _ => true,
                }
            });
            let start = held.unwrap_or(head.saturating_add(1)).max(1);
            // A corrupt `head` near u64::MAX must not make a "not started"
            // marker (see `protocol::latched_start`).
            Some(start.min(records::CURSOR_NOT_MEMBER - 1))
        }
    }
}

/// Hints the CPU to start loading the cache line at `p`.
#[inline(always)]
fn prefetch(p: *const u8) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch is only a hint: it never faults, whatever the
    // address, and has no effect on program semantics.
    unsafe {
        core::arch::x86_64::_mm_prefetch::<{ core::arch::x86_64::_MM_HINT_T0 }>(p.cast());
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}
