//! The publishing end of a channel, at the byte level.
//!
//! A publisher place owns one ring (it is that ring's single producer) and
//! one chunk pool. Sending is: optionally check there is room for every
//! active subscriber (policies `Reject`/`Block`), write the slot, publish the
//! new head, and wake sleeping subscribers if any are registered.

use std::sync::Arc;

use crate::channel::{descriptor_word, Channel, RingView, KIND_CHUNK, KIND_INLINE};
use crate::error::{JoinError, PayloadError};
use crate::records::{self, Owner};
use crate::segment::Segment;
use crate::sync::Ordering;
use crate::{futex, pool, protocol, ring};

/// A chunk loaned from this publisher's pool, not yet sent.
#[derive(Debug, PartialEq, Eq)]
pub struct ChunkLoan {
    chunk: u32,
    gen: u32,
}

/// The publishing end of a channel.
#[derive(Debug)]
pub struct PublisherPort {
    chan: Arc<Channel>,
    k: usize,
    /// Our ring, bounds-checked once at join.
    ring: RingView,
    /// Our record, the membership word and the wake words, located once at
    /// join; valid while `chan` keeps the mapping alive.
    rec: *const records::PubRecord,
    membership: *const crate::sync::AtomicU64,
    wake: *const records::Wake,
    next_seq: u64,
    sent: u64,
    /// Membership word when `min_cursor` and `reliable` were computed.
    cached_members: u64,
    /// Active subscriber places that are not observers (as of
    /// `cached_members`): the ones whose cursors bound our room and that
    /// count as delivered to.
    reliable: u32,
    /// Lowest cursor of the reliable subscribers on our ring.
    min_cursor: u64,
    /// Every message below this sequence number has had its chunk's ring
    /// hold released (see `release_consumed`).
    released_upto: u64,
    /// The channel's retained history (transient-local durability): the
    /// ring keeps its hold on the chunks of the last `latched` messages
    /// whoever has read them, for subscribers that join later. It is not a
    /// subscriber: it never bounds our room (`has_space`), so it never makes
    /// a `Reject`/`Block` send refuse or wait.
    latched: u64,
    /// Calls of `make_room` left until the next touch of the segment's last
    /// page (see `pub_room.rs`).
    pub(crate) probe_in: u32,
    /// Registered for room wake-ups (`None`: not tried yet; see
    /// `pub_room.rs`).
    pub(crate) room_registered: Option<bool>,
    /// This port's refusals and undelivered sends (mirrored into the
    /// record, where tools read them for the place as a whole).
    rejected: u64,
    timed_out: u64,
    undelivered: u64,
}

// SAFETY: the raw pointers point into the shared mapping kept alive by
// `chan` (an Arc), and everything they reach is atomics; a port is used by
// one thread at a time (`&mut self`), which is what Send requires.
unsafe impl Send for PublisherPort {}

impl PublisherPort {
    /// Takes a publisher place, reclaiming places of dead processes first.
    pub fn join(chan: &Arc<Channel>) -> Result<PublisherPort, JoinError> {
        chan.reclaim_dead();
        let max = chan.layout().config.max_publishers;
        for k in 0..max as usize {
            let rec = chan.pub_record(k);
            if !matches!(
                records::classify(rec.owner.load(Ordering::Relaxed)),
                Owner::Free
            ) || !records::try_claim(&rec.owner)
            {
                continue;
            }
            rec.claims.fetch_add(1, Ordering::Relaxed);
            let head = chan.adopt_ring(k);
            let sent = rec.sent.load(Ordering::Relaxed);
            if !records::join(chan.membership(), records::pub_member(k)) {
                records::free(&rec.owner);
                return Err(JoinError::Closing);
            }
            return Ok(PublisherPort {
                chan: Arc::clone(chan),
                k,
                ring: chan.ring(k),
                rec,
                membership: chan.membership(),
                wake: chan.wake(),
                next_seq: head.saturating_add(1),
                sent,
                cached_members: u64::MAX,
                reliable: 0,
                min_cursor: 0,
                released_upto: head.saturating_add(1),
                latched: u64::from(chan.layout().config.latched()),
                probe_in: crate::pub_room::PROBE_EVERY,
                room_registered: None,
                rejected: 0,
                timed_out: 0,
                undelivered: 0,
            });
        }
        Err(JoinError::Full {
            role: "publisher",
            max,
        })
    }

    #[inline]
    fn rec(&self) -> &records::PubRecord {
        // SAFETY: located by Channel::pub_record (bounds-checked) at join;
        // the mapping lives as long as self.chan.
        unsafe { &*self.rec }
    }

    #[inline]
    fn members(&self) -> &crate::sync::AtomicU64 {
        // SAFETY: as in `rec`.
        unsafe { &*self.membership }
    }

    /// The channel this port publishes on.
    pub fn channel(&self) -> &Arc<Channel> {
        &self.chan
    }

    /// Whether the segment was truncated under this port (one relaxed
    /// load; see [`Channel::is_lost`]).
    #[inline]
    pub fn is_lost(&self) -> bool {
        self.chan.is_lost()
    }

    /// [`is_lost`](Self::is_lost) after touching the segment's last page,
    /// so any truncation is noticed (see [`Channel::probe_lost`]).
    pub fn probe_lost(&self) -> bool {
        self.chan.probe_lost()
    }

    /// Bytes a message may have inline (in a ring slot).
    pub fn slot_payload(&self) -> usize {
        self.chan.layout().config.slot_payload as usize
    }

    /// Bytes a loaned chunk holds (0: the channel has no chunks).
    pub fn chunk_size(&self) -> usize {
        self.chan.chunk_size()
    }

    /// Every endpoint's counters on this port's channel, in every process.
    pub fn snapshot(&self) -> crate::ChannelSnapshot {
        self.chan.snapshot()
    }

    /// Frees the places of dead processes on this port's channel (see
    /// [`Channel::reclaim_dead`]); returns how many were freed.
    pub fn reclaim_dead(&self) -> usize {
        self.chan.reclaim_dead()
    }

    /// This publisher's place index.
    pub fn place(&self) -> usize {
        self.k
    }

    /// Number of reliable (non-observer) subscribers active right now.
    #[inline]
    pub fn subscribers(&self) -> u32 {
        let m = self.members().load(Ordering::Relaxed);
        let observers = self.chan.wake().observers.load(Ordering::Relaxed);
        (self.chan.sub_places(m) & !observers).count_ones()
    }

    /// Whether the next message can be written without overwriting one that
    /// a reliable subscriber has not read yet. Observers never count.
    #[inline]
    pub fn has_space(&mut self) -> bool {
        let depth = u64::from(self.chan.layout().config.depth);
        let m = self.members().load(Ordering::Acquire);
        if m == self.cached_members && protocol::has_room(self.next_seq, self.min_cursor, depth) {
            return true;
        }
        self.refresh_min_cursor(m);
        protocol::has_room(self.next_seq, self.min_cursor, depth)
    }

    /// Recomputes, for membership word `m`, the reliable subscribers and the
    /// slowest one's cursor on our ring (the next sequence number it will
    /// read; `next_seq` if there is none), and starts the cursors of
    /// subscribers that joined since we last looked.
    #[cold]
    fn refresh_min_cursor(&mut self, m: u64) {
        // `m` was loaded with Acquire: it synchronises with the joins
        // (Release) of the places it shows, so the observer bits and the
        // `CURSOR_JOINING` cursors they stored before joining are visible.
        let observers = self.chan.wake().observers.load(Ordering::Relaxed);
        let (chan, k) = (&self.chan, self.k);
        let (reliable, min_cursor) =
            protocol::scan_cursors(self.chan.sub_places(m), observers, self.next_seq, |j| {
                chan.cursor(j, k)
            });
        self.cached_members = m;
        self.reliable = reliable;
        self.min_cursor = min_cursor;
    }

    /// Drops the ring's hold on chunks of messages every reliable subscriber
    /// has already read, so they can be reused at once (while still hot in
    /// cache) instead of when their slot is overwritten (see
    /// [`protocol::release_consumed`]).
    fn release_consumed(&mut self) {
        let m = self.members().load(Ordering::Acquire);
        self.refresh_min_cursor(m);
        let depth = u64::from(self.chan.layout().config.depth);
        let (chan, ring, k) = (&self.chan, &self.ring, self.k);
        let bound = protocol::release_bound(self.min_cursor, self.next_seq, self.latched);
        self.released_upto = protocol::release_consumed(
            self.released_upto,
            bound,
            depth,
            |seq| ring.slot(seq),
            |c| chan.chunk_state(k, c),
        );
    }

    /// Writes `payload` into the next slot and publishes it. Returns the
    /// number of reliable subscribers active at that moment, or an error
    /// (nothing written) if the payload does not fit a slot.
    #[inline]
    pub fn send_inline(&mut self, payload: &[u8]) -> Result<u32, PayloadError> {
        let capacity = self.chan.layout().config.slot_payload as usize;
        if payload.len() > capacity {
            return Err(PayloadError::TooLarge {
                len: payload.len(),
                capacity,
                place: "slot",
            });
        }
        Ok(self.commit(KIND_INLINE, payload, payload.len()))
    }

    /// Loans a free chunk from the pool, or `None` if every chunk is in use
    /// (held by the ring or by subscribers' samples).
    pub fn loan_chunk(&mut self) -> Option<ChunkLoan> {
        // With one reliable subscriber, it frees each chunk itself when it
        // drops the sample (`release_last_reader`), so the lowest free chunk is the
        // hot one without reading its cursor line on every loan. With more,
        // free what every subscriber has consumed first; on a
        // transient-local channel subscribers never free chunks themselves
        // (the history may still need them), so always.
        if self.latched > 0 || self.subscribers() > 1 {
            self.release_consumed();
        }
        if let Some(loan) = self.claim_free_chunk() {
            return Some(loan);
        }
        self.release_consumed();
        if let Some(loan) = self.claim_free_chunk() {
            return Some(loan);
        }
        // Every chunk is in use. Some may be pinned by samples of a
        // subscriber that died, or kept in the ring for messages only it
        // had yet to read: nobody else may ever reclaim it (reclaiming runs
        // when an endpoint joins, or while a `Block` send waits), so do it
        // here — it drops the dead place's chunk references and its cursor
        // — and look once more. Only on this failure path: it reads /proc.
        if self.chan.reclaim_dead() > 0 {
            self.release_consumed();
            if let Some(loan) = self.claim_free_chunk() {
                return Some(loan);
            }
        }
        self.bump(|r| &r.loan_failures);
        None
    }

    /// Claims the first free chunk of our pool.
    fn claim_free_chunk(&mut self) -> Option<ChunkLoan> {
        // Lowest index first: the chunk freed most recently by a fast
        // consumer is reused while it is still in cache.
        for c in 0..self.chan.chunks() {
            let state = self.chan.chunk_state(self.k, c).expect("c < chunks");
            if let Some(gen) = pool::try_claim(state) {
                return Some(ChunkLoan {
                    chunk: c as u32,
                    gen,
                });
            }
        }
        None
    }

    /// The writable memory of a loaned chunk.
    pub fn chunk_bytes(&mut self, loan: &ChunkLoan) -> &mut [u8] {
        let ptr = self.chan.chunk_ptr(self.k, loan.chunk as usize);
        // SAFETY: the chunk is in bounds (chunk_ptr asserts) and is ours
        // alone: we claimed it (RING set, no subscriber bits), and readers
        // only ever get a reference after we publish its descriptor, which
        // consumes the loan. The borrow is tied to `&mut self`, and the
        // mapping outlives self through `chan`.
        unsafe { std::slice::from_raw_parts_mut(ptr, self.chan.chunk_size()) }
    }

    /// Publishes a loaned chunk holding `len` bytes. If `len` exceeds the
    /// chunk, nothing is published and the chunk goes back to the pool.
    pub fn send_chunk(&mut self, loan: ChunkLoan, len: usize) -> Result<u32, PayloadError> {
        let capacity = self.chan.chunk_size();
        if len > capacity {
            self.abandon(loan);
            return Err(PayloadError::TooLarge {
                len,
                capacity,
                place: "chunk",
            });
        }
        let mut desc = [0u8; 16];
        desc[..8].copy_from_slice(&descriptor_word(loan.chunk, loan.gen).to_ne_bytes());
        desc[8..].copy_from_slice(&(len as u64).to_ne_bytes());
        Ok(self.commit(KIND_CHUNK, &desc, len))
    }

    /// Gives a loaned chunk back unsent.
    pub fn abandon(&mut self, loan: ChunkLoan) {
        if let Some(state) = self.chan.chunk_state(self.k, loan.chunk as usize) {
            pool::release_ring(state, loan.gen);
        }
    }

    #[inline]
    fn commit(&mut self, kind: u32, payload: &[u8], bytes: usize) -> u32 {
        // Acquire, as in `has_space`. A changed word means a subscriber
        // joined or left: start the new one's cursor at this message
        // (every policy: DropOldest publishers never look at cursors
        // otherwise).
        let members = self.members().load(Ordering::Acquire);
        if members != self.cached_members {
            self.refresh_min_cursor(members);
        }
        let seq = self.next_seq;
        let slot = self.ring.slot(seq);
        // The slot's previous message may reference a chunk: the ring's
        // hold on it ends now (if `release_consumed` has not ended it yet).
        if self.chan.chunks() != 0 {
            let (chan, k) = (&self.chan, self.k);
            protocol::release_slot_hold(&slot, |c| chan.chunk_state(k, c));
        }
        ring::write(&slot, seq, kind, payload);
        // Saturating / wrapping: both continue values a predecessor left in
        // shared memory (a corrupt `head` or `sent` near u64::MAX must not
        // panic or wrap the sequence back to 0).
        self.next_seq = seq.saturating_add(1);
        // SAFETY: as in `rec` (a raw read so the borrow does not overlap
        // the update of self.sent below).
        let rec = unsafe { &*self.rec };
        // Release: a subscriber joining reads head with Acquire and starts
        // after it; a publisher adopting the ring continues from it.
        rec.head.store(seq, Ordering::Release);
        self.sent = self.sent.wrapping_add(1);
        rec.sent.store(self.sent, Ordering::Relaxed);
        // Only this port writes its record's counters (single writer), so
        // a load and a store need no read-modify-write; Relaxed: a counter
        // for tools, ordered with nothing.
        let total = rec.bytes_sent.load(Ordering::Relaxed);
        rec.bytes_sent
            .store(total.wrapping_add(bytes as u64), Ordering::Relaxed);
        self.wake_sleepers();
        let reliable = self.reliable.count_ones();
        if reliable == 0 {
            self.undelivered += 1;
            self.bump(|r| &r.undelivered);
        }
        reliable
    }

    /// Wakes subscribers sleeping in a futex wait (after the slot's stamp
    /// was stored, in `commit`). Costs one load while no blocking
    /// subscriber is registered. The handshake with a subscriber about to
    /// sleep is [`protocol::must_wake`] / [`protocol::register_wait`].
    #[inline]
    fn wake_sleepers(&self) {
        // SAFETY: as in `rec`.
        let w = unsafe { &*self.wake };
        if protocol::must_wake(w) {
            protocol::bump_notify(w);
            futex::wake_all(&w.notify);
            // A subscriber killed while asleep stays marked until its place
            // is reclaimed; without this a DropOldest publisher (which never
            // waits, so never reclaims) would pay a wake-up system call on
            // every send for ever. Checking liveness reads /proc, so only
            // every 4096 wake-ups.
            if self.sent.is_multiple_of(4096) {
                self.chan.reclaim_dead();
            }
        }
    }

    fn bump(&self, field: impl Fn(&records::PubRecord) -> &crate::sync::AtomicU64) {
        field(self.rec()).fetch_add(1, Ordering::Relaxed);
    }

    /// Counts a message handed back because the ring was full (`Reject`).
    pub(crate) fn count_rejected(&mut self) {
        self.rejected += 1;
        self.bump(|r| &r.rejected);
    }

    /// Counts a message handed back after waiting for room (`Block`).
    pub(crate) fn count_timed_out(&mut self) {
        self.timed_out += 1;
        self.bump(|r| &r.timed_out);
    }

    /// Messages this port handed back because the ring was full (`Reject`).
    pub fn rejected(&self) -> u64 {
        self.rejected
    }

    /// Messages this port handed back after waiting for room (`Block`).
    pub fn timed_out(&self) -> u64 {
        self.timed_out
    }

    /// Messages this port sent while no reliable subscriber was active
    /// (counted by the send).
    pub fn undelivered(&self) -> u64 {
        self.undelivered
    }

    /// Messages this place has published.
    pub fn sent(&self) -> u64 {
        self.sent
    }
}

impl Drop for PublisherPort {
    fn drop(&mut self) {
        let rec = self.chan.pub_record(self.k);
        // Our latched history leaves with us: a subscriber that joins from
        // now on starts after our last message (see
        // `protocol::latched_start`). Stored before we leave; Release pairs
        // with the joining subscriber's Acquire load.
        rec.history_floor.store(self.next_seq, Ordering::Release);
        self.chan.clear_room_bits(self.k);
        let left = records::leave(self.members(), records::pub_member(self.k));
        records::free(&rec.owner);
        if left == 0 && records::try_close(self.members()) {
            Segment::unlink_if_same(self.chan.segment());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::layout::{ChannelConfig, SCHEMA_BYTES};

    fn channel(tag: &str, chunks: bool) -> Arc<Channel> {
        let name = format!("/horus.unit.pubport.{}.{}", std::process::id(), tag);
        let config = ChannelConfig {
            schema: [1; SCHEMA_BYTES],
            depth: 8,
            slot_payload: 16,
            max_publishers: 1,
            max_subscribers: 4,
            chunk_size: if chunks { 256 } else { 0 },
            chunks_per_publisher: if chunks { 20 } else { 0 },
            qos_code: 0,
        };
        let chan = Channel::open_or_create(&name, &config).unwrap();
        Segment::unlink(&name);
        chan
    }

    /// Regression: the public port asserted (panicked) on a payload larger
    /// than the slot or the chunk instead of returning an error.
    #[test]
    fn oversized_payloads_are_errors_and_write_nothing() {
        let chan = channel("oversized", true);
        let mut p = PublisherPort::join(&chan).unwrap();
        assert_eq!(
            p.send_inline(&[0; 17]),
            Err(PayloadError::TooLarge {
                len: 17,
                capacity: 16,
                place: "slot"
            })
        );
        let loan = p.loan_chunk().unwrap();
        assert!(matches!(
            p.send_chunk(loan, 257),
            Err(PayloadError::TooLarge { capacity: 256, .. })
        ));
        assert_eq!(p.sent(), 0);
        // The refused chunk went back to the pool: all 20 can be loaned.
        let loans: Vec<_> = (0..20).map(|_| p.loan_chunk().unwrap()).collect();
        assert_eq!(loans.len(), 20);
    }

    /// Regression: `released_upto` only advanced in `release_consumed`,
    /// which runs with two or more subscribers; after a long stretch with
    /// fewer, the first loan walked every message ever sent (10⁸ after a
    /// day at 1 kHz). It now walks at most one ring.
    #[test]
    fn release_consumed_walks_at_most_one_ring() {
        let chan = channel("catchup", true);
        let mut p = PublisherPort::join(&chan).unwrap();
        // As after 2⁴⁰ sends with no reader that consumes chunks.
        p.next_seq = 1 << 40;
        p.released_upto = 1;
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            p.release_consumed();
            tx.send(p.released_upto).unwrap();
        });
        // A generous bound that only turns the old 2⁴⁰-step walk into a
        // failure instead of a hang.
        let upto = rx
            .recv_timeout(std::time::Duration::from_secs(60))
            .expect("release_consumed returned");
        assert_eq!(upto, 1 << 40);
    }
}
