//! The publishing end of a channel, at the byte level.
//!
//! A publisher place owns one ring (it is that ring's single producer) and
//! one chunk pool. Sending is: optionally check there is room for every
//! active subscriber (policies `Reject`/`Block`), write the slot, publish the
//! new head, and wake sleeping subscribers if any are registered.

use std::sync::Arc;

use crate::channel::{descriptor_word, Channel, RingView, KIND_CHUNK, KIND_INLINE};
use crate::error::JoinError;
use crate::records::{self, Owner};
use crate::segment::Segment;
use crate::sync::{fence, Ordering};
use crate::{futex, pool, ring};

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
    /// Membership word when `min_cursor` was computed.
    cached_members: u64,
    /// Lowest cursor of the active subscribers on our ring.
    min_cursor: u64,
    /// Every message below this sequence number has had its chunk's ring
    /// hold released (see `release_consumed`).
    released_upto: u64,
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
                min_cursor: 0,
                released_upto: head.saturating_add(1),
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

    /// This publisher's place index.
    pub fn place(&self) -> usize {
        self.k
    }

    /// Number of subscribers active right now.
    #[inline]
    pub fn subscribers(&self) -> u32 {
        records::subs_of(self.members().load(Ordering::Relaxed)).count_ones()
    }

    /// Whether the next message can be written without overwriting one that
    /// an active subscriber has not read yet.
    #[inline]
    pub fn has_space(&mut self) -> bool {
        let depth = u64::from(self.chan.layout().config.depth);
        let m = self.members().load(Ordering::Acquire);
        if m == self.cached_members && self.next_seq < self.min_cursor + depth {
            return true;
        }
        self.refresh_min_cursor(m);
        self.next_seq < self.min_cursor + depth
    }

    /// Recomputes the slowest active subscriber's cursor on our ring (the
    /// next sequence number it will read; `next_seq` if there is none).
    fn refresh_min_cursor(&mut self, m: u64) {
        // Acquire pairs with the subscriber's Release store of its cursor
        // after it finished copying the slot, so our overwrite (or the reuse
        // of a chunk it has consumed) cannot tear its read.
        let mut min = u64::MAX;
        let mut subs = records::subs_of(m);
        while subs != 0 {
            let j = subs.trailing_zeros() as usize;
            subs &= subs - 1;
            min = min.min(self.chan.cursor(j, self.k).load(Ordering::Acquire));
        }
        self.cached_members = m;
        self.min_cursor = if min == u64::MAX {
            self.next_seq
        } else {
            min.min(self.next_seq)
        };
    }

    /// Drops the ring's hold on chunks of messages every active subscriber
    /// has already read, so they can be reused at once (while still hot in
    /// cache) instead of when their slot is overwritten. A subscriber that
    /// joins later starts after the head, so it never needs them; one that
    /// still holds a sample keeps its own reference bit.
    fn release_consumed(&mut self) {
        let m = self.members().load(Ordering::Acquire);
        self.refresh_min_cursor(m);
        while self.released_upto < self.min_cursor {
            let seq = self.released_upto;
            let slot = self.ring.slot(seq);
            if ring::committed_seq(&slot) == Some(seq) {
                if let Some((KIND_CHUNK, desc, _)) = ring::peek_descriptor(&slot) {
                    if let Some(state) =
                        self.chan.chunk_state(self.k, (desc & 0xffff_ffff) as usize)
                    {
                        pool::release_ring(state, (desc >> 32) as u32);
                    }
                }
            }
            self.released_upto += 1;
        }
    }

    /// Writes `payload` into the next slot and publishes it. Returns the
    /// number of subscribers active at that moment.
    #[inline]
    pub fn send_inline(&mut self, payload: &[u8]) -> u32 {
        self.commit(KIND_INLINE, payload)
    }

    /// Loans a free chunk from the pool, or `None` if every chunk is in use
    /// (held by the ring or by subscribers' samples).
    pub fn loan_chunk(&mut self) -> Option<ChunkLoan> {
        // With one subscriber, it frees each chunk itself when it drops the
        // sample (`release_last_reader`), so the lowest free chunk is the
        // hot one without reading its cursor line on every loan. With more,
        // free what every subscriber has consumed first.
        let m = self.members().load(Ordering::Relaxed);
        if records::subs_of(m).count_ones() > 1 {
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

    /// Publishes a loaned chunk holding `len` bytes.
    pub fn send_chunk(&mut self, loan: ChunkLoan, len: usize) -> u32 {
        assert!(
            len <= self.chan.chunk_size(),
            "chunk payload exceeds chunk size"
        );
        let mut desc = [0u8; 16];
        desc[..8].copy_from_slice(&descriptor_word(loan.chunk, loan.gen).to_ne_bytes());
        desc[8..].copy_from_slice(&(len as u64).to_ne_bytes());
        self.commit(KIND_CHUNK, &desc)
    }

    /// Gives a loaned chunk back unsent.
    pub fn abandon(&mut self, loan: ChunkLoan) {
        if let Some(state) = self.chan.chunk_state(self.k, loan.chunk as usize) {
            pool::release_ring(state, loan.gen);
        }
    }

    #[inline]
    fn commit(&mut self, kind: u32, payload: &[u8]) -> u32 {
        let seq = self.next_seq;
        let slot = self.ring.slot(seq);
        // The slot's previous message may reference a chunk: the ring's
        // hold on it ends now (if `release_consumed` has not ended it yet).
        if self.chan.chunks() != 0 {
            if let Some((KIND_CHUNK, desc, _)) = ring::peek_descriptor(&slot) {
                if let Some(state) = self.chan.chunk_state(self.k, (desc & 0xffff_ffff) as usize) {
                    pool::release_ring(state, (desc >> 32) as u32);
                }
            }
        }
        ring::write(&slot, seq, kind, payload);
        self.next_seq = seq + 1;
        // SAFETY: as in `rec` (a raw read so the borrow does not overlap
        // the update of self.sent below).
        let rec = unsafe { &*self.rec };
        // Release: a subscriber joining reads head with Acquire and starts
        // after it; a publisher adopting the ring continues from it.
        rec.head.store(seq, Ordering::Release);
        self.sent += 1;
        rec.sent.store(self.sent, Ordering::Relaxed);
        let members = self.members().load(Ordering::Relaxed);
        self.wake_sleepers();
        records::subs_of(members).count_ones()
    }

    /// Wakes subscribers sleeping in a futex wait. Costs one load while no
    /// blocking subscriber is registered. The SeqCst fence pairs with the
    /// SeqCst increment of `waiters` by a subscriber about to sleep
    /// (Dekker's pattern): either we see its increment and wake it, or it
    /// sees our slot write when it re-checks before sleeping. A subscriber
    /// registering as blocking runs a global membarrier, so a publisher that
    /// read `blocking_subs == 0` has its slot write visible to it.
    #[inline]
    fn wake_sleepers(&self) {
        // SAFETY: as in `rec`.
        let w = unsafe { &*self.wake };
        if w.blocking_subs.load(Ordering::Relaxed) == 0 {
            return;
        }
        fence(Ordering::SeqCst);
        if w.waiters.load(Ordering::Relaxed) != 0 {
            w.notify.fetch_add(1, Ordering::Release);
            futex::wake_all(&w.notify);
            // A subscriber killed while asleep stays counted until its place
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
    pub fn count_rejected(&self) {
        self.bump(|r| &r.rejected);
    }

    /// Counts a message handed back after waiting for room (`Block`).
    pub fn count_timed_out(&self) {
        self.bump(|r| &r.timed_out);
    }

    /// Counts a message sent while no subscriber was active.
    pub fn count_undelivered(&self) {
        self.bump(|r| &r.undelivered);
    }

    /// Messages this place has published.
    pub fn sent(&self) -> u64 {
        self.sent
    }
}

impl Drop for PublisherPort {
    fn drop(&mut self) {
        let rec = self.chan.pub_record(self.k);
        let left = records::leave(self.members(), records::pub_member(self.k));
        records::free(&rec.owner);
        if left == 0 && records::try_close(self.members()) {
            Segment::unlink_if_same(self.chan.segment());
        }
    }
}
