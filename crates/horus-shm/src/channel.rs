//! A channel: one mapped segment holding a topic's rings, pools and records.
//!
//! [`Channel`] owns the mapping and hands out references to the structures
//! inside it. Every accessor takes indices that were either produced by this
//! process or bounds-checked against the validated [`Layout`]; no offset is
//! ever read from shared memory.

use std::sync::Arc;
use std::time::Instant;

use crate::error::OpenError;
use crate::init::{self, Created, INIT_WAIT};
use crate::layout::{ChannelConfig, Layout, RawHeader, MAGIC, MEMBERSHIP_OFFSET, WAKE_OFFSET};
use crate::records::{self, Owner, PubRecord, SubRecord, Wake};
use crate::ring::SlotMem;
use crate::segment::Segment;
use crate::sync::{AtomicU64, Ordering};
use crate::{pool, ring};

/// Shortest file an opener maps: the header and the membership and wake
/// words after it.
const HEADER_LEN: usize = std::mem::size_of::<RawHeader>() + 128;

// The slot kinds and the chunk descriptor are part of the composed
// protocol (see `protocol.rs`, which the loom models check).
pub(crate) use crate::protocol::{descriptor_word, KIND_CHUNK, KIND_INLINE};

/// A mapped, validated channel segment.
#[derive(Debug)]
pub struct Channel {
    seg: Segment,
    layout: Layout,
}

/// One publisher's ring, validated once when a port is made: every slot of
/// it lies inside the mapping, so slot access needs no further checks.
#[derive(Clone, Copy, Debug)]
pub(crate) struct RingView {
    base: *const AtomicU64,
    slot_words: usize,
    mask: u64,
}

// SAFETY: a RingView only points into a shared mapping whose contents are
// accessed through atomics; the owner keeps the mapping alive (Arc<Channel>).
unsafe impl Send for RingView {}

impl RingView {
    /// The slot that holds message `seq`.
    #[inline]
    pub(crate) fn slot(&self, seq: u64) -> ShmSlot<'_> {
        let i = (seq & self.mask) as usize;
        // SAFETY: i <= mask < depth, and `Channel::ring` checked that all
        // `depth` slots of `slot_words` words lie inside the mapping.
        let base = unsafe { self.base.add(i * self.slot_words) };
        ShmSlot {
            base,
            words: self.slot_words,
            _ring: std::marker::PhantomData,
        }
    }
}

/// One slot of a ring inside the mapping: stamp, meta, payload words.
pub(crate) struct ShmSlot<'a> {
    base: *const AtomicU64,
    words: usize,
    _ring: std::marker::PhantomData<&'a ()>,
}

impl SlotMem for ShmSlot<'_> {
    #[inline]
    fn stamp(&self) -> &AtomicU64 {
        // SAFETY: word 0 of a slot inside the mapping (see RingView::slot).
        unsafe { &*self.base }
    }
    #[inline]
    fn meta(&self) -> &AtomicU64 {
        // SAFETY: word 1 of a slot inside the mapping; slots have ≥ 4 words.
        unsafe { &*self.base.add(1) }
    }
    #[inline]
    unsafe fn word(&self, i: usize) -> &AtomicU64 {
        debug_assert!(i < self.capacity_words());
        // SAFETY: the caller guarantees i < capacity_words, so 2 + i is a
        // word of this slot.
        unsafe { &*self.base.add(2 + i) }
    }
    #[inline]
    fn capacity_words(&self) -> usize {
        self.words - 2
    }
}

impl Channel {
    /// Opens the channel `name` (a shm name from [`crate::name::segment_name`])
    /// or creates it with `config`. An existing channel must carry the same
    /// schema ([`OpenError::SchemaMismatch`]) and configuration
    /// ([`OpenError::ConfigMismatch`]).
    pub fn open_or_create(name: &str, config: &ChannelConfig) -> Result<Arc<Channel>, OpenError> {
        Self::open_or_create_described(name, config, &[])
    }

    /// As [`open_or_create`](Self::open_or_create); a channel this call
    /// creates carries `description` (opaque bytes, at most
    /// [`MAX_DESCRIPTION`](crate::layout::MAX_DESCRIPTION), for tools: see
    /// [`description`](Self::description)). An existing channel keeps the
    /// description its creator wrote: the schema, compared on open, is what
    /// says two endpoints agree.
    pub fn open_or_create_described(
        name: &str,
        config: &ChannelConfig,
        description: &[u8],
    ) -> Result<Arc<Channel>, OpenError> {
        let layout = Layout::described(*config, description.len()).map_err(OpenError::Config)?;
        let deadline = Instant::now() + INIT_WAIT;
        let chan = match init::create_or_open(name, layout.total, HEADER_LEN, deadline)? {
            Created::New(seg) => return Ok(Arc::new(Self::initialise(seg, layout, description))),
            Created::Existing(seg, _) => Self::validated(name, seg)?,
        };
        let found = chan.layout.config;
        if found.schema != config.schema {
            return Err(OpenError::SchemaMismatch {
                name: name.to_owned(),
                found: Box::new(found.schema),
            });
        }
        if found != *config {
            return Err(OpenError::ConfigMismatch {
                name: name.to_owned(),
                found: found.to_string(),
                requested: config.to_string(),
            });
        }
        Ok(Arc::new(chan))
    }

    /// Opens an existing channel whatever its configuration, checking only
    /// its schema (for tools such as `topic echo` that adopt the topic's QoS).
    pub fn open_existing(
        name: &str,
        schema: Option<&[u8; crate::layout::SCHEMA_BYTES]>,
    ) -> Result<Arc<Channel>, OpenError> {
        let chan = Self::open_validated(name, Instant::now() + INIT_WAIT)?;
        if let Some(schema) = schema {
            if chan.layout.config.schema != *schema {
                return Err(OpenError::SchemaMismatch {
                    name: name.to_owned(),
                    found: Box::new(chan.layout.config.schema),
                });
            }
        }
        Ok(Arc::new(chan))
    }

    /// Opens an existing channel without waiting for a creator that has not
    /// published its header yet ([`OpenError::NotInitialized`] at once).
    pub(crate) fn open_existing_now(name: &str) -> Result<Arc<Channel>, OpenError> {
        Self::open_validated(name, Instant::now()).map(Arc::new)
    }

    fn initialise(seg: Segment, layout: Layout, description: &[u8]) -> Channel {
        let header = RawHeader::for_layout(&layout);
        debug_assert_eq!(description.len(), layout.description_len);
        // SAFETY: the segment was just created by us (O_EXCL), is at least
        // `layout.total` ≥ 384 bytes, page aligned, and nobody else writes it
        // before the magic is published below. RawHeader is plain data.
        unsafe { std::ptr::write(seg.base().cast::<RawHeader>(), header) };
        // SAFETY: as above (nobody else reads or writes the segment before
        // the magic is published); the region [description,
        // description + description_len) lies before `rings` ≤ total by
        // construction of the layout, and the source is a distinct slice.
        unsafe {
            std::ptr::copy_nonoverlapping(
                description.as_ptr(),
                seg.base().add(layout.description),
                layout.description_len,
            )
        };
        init::publish(&seg, MAGIC);
        Channel { seg, layout }
    }

    fn open_validated(name: &str, deadline: Instant) -> Result<Channel, OpenError> {
        let (seg, _) = init::open_initialised(name, HEADER_LEN, deadline)?;
        Self::validated(name, seg)
    }

    /// Validates the header of `seg`, a segment whose magic was published.
    fn validated(name: &str, seg: Segment) -> Result<Channel, OpenError> {
        // SAFETY: `open_initialised` checked the mapping holds at least
        // HEADER_LEN ≥ size_of::<RawHeader>() bytes; it is page aligned and
        // RawHeader is plain data valid for any bit pattern. A volatile read
        // copies it out once so later changes by another process cannot alter
        // what we validate.
        let header = unsafe { std::ptr::read_volatile(seg.base().cast::<RawHeader>()) };
        let layout = header.validate(name, seg.len() as u64)?;
        Ok(Channel { seg, layout })
    }

    /// A copy of the description the channel's creator wrote (empty when
    /// it wrote none). The bytes come from shared memory any peer can
    /// write: parse them as untrusted input.
    pub fn description(&self) -> Vec<u8> {
        let (start, len) = (self.layout.description, self.layout.description_len);
        let words = len.div_ceil(8);
        let mut out = Vec::with_capacity(words * 8);
        for w in 0..words {
            // SAFETY: the region starts 64-byte aligned and spans
            // round_up(len, 8) ≤ rings − start bytes (the layout rounds the
            // rings up past it), inside the validated mapping, so every word
            // is an aligned AtomicU64. Atomic loads: a peer may write the
            // region concurrently, which must not be a data race.
            let word = unsafe { &*self.seg.base().add(start + 8 * w).cast::<AtomicU64>() };
            out.extend_from_slice(&word.load(Ordering::Relaxed).to_ne_bytes());
        }
        out.truncate(len);
        out
    }

    /// The validated layout.
    pub fn layout(&self) -> &Layout {
        &self.layout
    }

    /// The segment name.
    pub fn name(&self) -> &str {
        self.seg.name()
    }

    /// Whether the segment was truncated under this mapping (see
    /// [`Segment::is_lost`]): one relaxed load while it is intact.
    #[inline]
    pub fn is_lost(&self) -> bool {
        self.seg.is_lost()
    }

    /// [`Channel::is_lost`], after touching the mapping's last page so that
    /// any truncation is noticed (see [`Segment::probe_lost`]).
    pub fn probe_lost(&self) -> bool {
        self.seg.probe_lost()
    }

    /// The mapped segment.
    pub(crate) fn segment(&self) -> &Segment {
        &self.seg
    }

    /// A reference to a `T` at `offset`, which must lie inside the layout.
    #[inline]
    fn at<T>(&self, offset: usize) -> &T {
        assert!(offset + std::mem::size_of::<T>() <= self.layout.total);
        debug_assert_eq!(offset % std::mem::align_of::<T>(), 0);
        // SAFETY: in bounds of the validated mapping (asserted above; the
        // mapping is at least layout.total bytes), aligned (all layout
        // offsets are multiples of 8 and the base is page aligned), and T is
        // only ever an atomic or a struct of atomics, valid for any bits and
        // sound to share between threads and processes.
        unsafe { &*self.seg.base().add(offset).cast::<T>() }
    }

    #[inline]
    pub(crate) fn membership(&self) -> &AtomicU64 {
        self.at(MEMBERSHIP_OFFSET)
    }

    #[inline]
    pub(crate) fn wake(&self) -> &Wake {
        self.at(WAKE_OFFSET)
    }

    #[inline]
    pub(crate) fn pub_record(&self, k: usize) -> &PubRecord {
        assert!(k < self.layout.config.max_publishers as usize);
        self.at(self.layout.pub_record(k))
    }

    #[inline]
    pub(crate) fn sub_record(&self, j: usize) -> &SubRecord {
        assert!(j < self.layout.config.max_subscribers as usize);
        self.at(self.layout.sub_record(j))
    }

    /// Subscriber place `j`'s latency histogram.
    #[inline]
    pub(crate) fn latency_record(&self, j: usize) -> &crate::latency::LatencyRecord {
        assert!(j < self.layout.config.max_subscribers as usize);
        self.at(self.layout.latency_record(j))
    }

    /// Subscriber `j`'s cursor (next sequence number to read) on ring `k`.
    #[inline]
    pub(crate) fn cursor(&self, j: usize, k: usize) -> &AtomicU64 {
        assert!(k < self.layout.config.max_publishers as usize);
        assert!(j < self.layout.config.max_subscribers as usize);
        self.at(self.layout.sub_record(j) + crate::layout::SUB_RECORD_HEAD + 8 * k)
    }

    #[inline]
    pub(crate) fn slot(&self, k: usize, seq: u64) -> ShmSlot<'_> {
        // Only for cold paths (adoption, tests); hot paths keep a RingView.
        let ring = self.ring(k);
        let slot = ring.slot(seq);
        ShmSlot {
            base: slot.base,
            words: slot.words,
            _ring: std::marker::PhantomData,
        }
    }

    /// Publisher `k`'s ring, bounds-checked once.
    pub(crate) fn ring(&self, k: usize) -> RingView {
        let depth = self.layout.config.depth as usize;
        assert!(k < self.layout.config.max_publishers as usize);
        let start = self.layout.slot(k, 0);
        assert!(start + depth * self.layout.slot_size <= self.layout.total);
        assert!(self.layout.slot_size >= 32 && self.layout.slot_size.is_multiple_of(8));
        // SAFETY: `start` is inside the mapping (asserted) and 64-byte
        // aligned; the whole ring fits (asserted).
        let base = unsafe { self.seg.base().add(start) }.cast::<AtomicU64>();
        RingView {
            base,
            slot_words: self.layout.slot_size / 8,
            mask: depth as u64 - 1,
        }
    }

    #[inline]
    pub(crate) fn chunks(&self) -> usize {
        self.layout.config.chunks_per_publisher as usize
    }

    /// State word of chunk `c` of pool `k`, or `None` if `c` is out of range
    /// (as a descriptor from a corrupt writer might be).
    #[inline]
    pub(crate) fn chunk_state(&self, k: usize, c: usize) -> Option<&AtomicU64> {
        (k < self.layout.config.max_publishers as usize && c < self.chunks())
            .then(|| self.at(self.layout.chunk_state(k, c)))
    }

    /// Start of chunk `c` of pool `k`; `c` must be in range.
    pub(crate) fn chunk_ptr(&self, k: usize, c: usize) -> *mut u8 {
        assert!(k < self.layout.config.max_publishers as usize && c < self.chunks());
        let off = self.layout.chunk_data(k, c);
        assert!(off + self.layout.chunk_stride <= self.layout.total);
        // SAFETY: in bounds of the mapping, as asserted.
        unsafe { self.seg.base().add(off) }
    }

    /// Bytes usable in each chunk.
    pub fn chunk_size(&self) -> usize {
        self.layout.config.chunk_size as usize
    }

    /// Active publisher and subscriber places.
    pub fn members(&self) -> (u32, u32) {
        let m = self.membership().load(Ordering::Acquire);
        (
            self.pub_places(m).count_ones(),
            self.sub_places(m).count_ones(),
        )
    }

    /// The subscriber places a membership word shows, limited to the places
    /// this channel has: a corrupt word may set bits beyond them, and every
    /// loop over places indexes records and cursors with these bits.
    #[inline]
    pub(crate) fn sub_places(&self, m: u64) -> u32 {
        records::subs_of(m) & low_bits(self.layout.config.max_subscribers)
    }

    /// The publisher places a membership word shows, limited as in
    /// [`Channel::sub_places`].
    #[inline]
    pub(crate) fn pub_places(&self, m: u64) -> u32 {
        records::pubs_of(m) & low_bits(self.layout.config.max_publishers)
    }

    /// Finds places whose owner process died and frees them: their
    /// membership bit, their chunk references, their wake registrations.
    /// Returns how many places were reclaimed. Safe to call from anywhere at
    /// any time; concurrent callers clean each place once.
    pub fn reclaim_dead(&self) -> usize {
        let mut n = 0;
        for k in 0..self.layout.config.max_publishers as usize {
            let rec = self.pub_record(k);
            if let Owner::Dead(t) = records::classify(rec.owner.load(Ordering::Acquire)) {
                if records::try_begin_reclaim(&rec.owner, t) {
                    // The ring and its chunks stay readable; the next
                    // publisher to take this place sweeps loans left behind.
                    // Its latched history died with it, as when a publisher
                    // leaves (see `PublisherPort::drop`): subscribers that
                    // join from now on start after its last message.
                    rec.history_floor
                        .store(self.ring_end(k).saturating_add(1), Ordering::Release);
                    records::leave(self.membership(), records::pub_member(k));
                    self.clear_room_bits(k);
                    records::free(&rec.owner);
                    n += 1;
                }
            }
        }
        for j in 0..self.layout.config.max_subscribers as usize {
            let rec = self.sub_record(j);
            if let Owner::Dead(t) = records::classify(rec.owner.load(Ordering::Acquire)) {
                if records::try_begin_reclaim(&rec.owner, t) {
                    records::leave(self.membership(), records::sub_member(j));
                    self.release_sub_everywhere(j);
                    self.clear_wake_bits(j);
                    records::free(&rec.owner);
                    n += 1;
                }
            }
        }
        n
    }

    /// Removes the segment's name if no place is active (after reclaiming
    /// dead ones): a handle that never made an endpoint must not leave its
    /// segment behind. Returns whether it unlinked. A concurrent opener that
    /// then tries to join sees [`crate::JoinError::Closing`] and reopens.
    pub fn unlink_if_unused(&self) -> bool {
        self.reclaim_dead();
        if records::try_close(self.membership()) {
            self.seg.unlink_if_same();
            true
        } else {
            false
        }
    }

    /// Clears place `j`'s wake registration and waits (idempotent: the
    /// owner on drop, or a reclaimer after its death).
    pub(crate) fn clear_wake_bits(&self, j: usize) {
        let wake = self.wake();
        wake.blocking
            .fetch_and(!(records::sub_member(j) as u32), Ordering::AcqRel);
        wake.waiting.fetch_and(
            !(records::port_wait_bit(j) | records::pending_wait_bit(j)),
            Ordering::AcqRel,
        );
    }

    /// Clears publisher place `k`'s room wake-up registration and wait
    /// (idempotent: the owner on drop, or a reclaimer after its death).
    pub(crate) fn clear_room_bits(&self, k: usize) {
        let wake = self.wake();
        let bit = records::room_wait_bit(k);
        wake.room_blocking.fetch_and(!bit, Ordering::AcqRel);
        wake.room_waiting.fetch_and(!bit, Ordering::AcqRel);
    }

    /// Drops every chunk reference subscriber place `j` holds.
    pub(crate) fn release_sub_everywhere(&self, j: usize) {
        for k in 0..self.layout.config.max_publishers as usize {
            for c in 0..self.chunks() {
                if let Some(s) = self.chunk_state(k, c) {
                    if pool::held_by(s, j) {
                        pool::release(s, j);
                    }
                }
            }
        }
    }

    /// Publisher place `k` was just claimed: find where its ring really ends
    /// (a predecessor may have died between committing a slot and
    /// publishing `head`) and release pool chunks held for loans that were
    /// never sent.
    pub(crate) fn adopt_ring(&self, k: usize) -> u64 {
        let depth = self.layout.config.depth as u64;
        let rec = self.pub_record(k);
        let head = self.ring_end(k);
        let mut referenced = Vec::new();
        for i in 0..depth {
            let slot = self.slot(k, i);
            if let Some((KIND_CHUNK, desc, _len)) = ring::peek_descriptor(&slot) {
                referenced.push(desc);
            }
        }
        for c in 0..self.chunks() {
            let state = self.chunk_state(k, c).expect("c < chunks");
            if let Some(gen) = pool::held_by_ring(state) {
                if !referenced.contains(&descriptor_word(c as u32, gen)) {
                    pool::release_ring(state, gen);
                }
            }
        }
        rec.head.store(head, Ordering::Release);
        head
    }
}

impl Channel {
    /// The last message ring `k` holds: its `head`, or a later committed
    /// slot (a publisher may die between committing a slot and publishing
    /// `head`). Reads every slot's stamp: a cold path.
    pub(crate) fn ring_end(&self, k: usize) -> u64 {
        let mut head = self.pub_record(k).head.load(Ordering::Acquire);
        for i in 0..u64::from(self.layout.config.depth) {
            if let Some(seq) = ring::committed_seq(&self.slot(k, i)) {
                head = head.max(seq);
            }
        }
        head
    }

    /// The retained history (transient-local durability) of this channel:
    /// see [`ChannelConfig::latched`].
    pub fn latched(&self) -> u32 {
        self.layout.config.latched()
    }
}

/// The lowest `n` bits set (`n` ≤ 32; capacities are validated ≥ 1).
#[inline]
fn low_bits(n: u32) -> u32 {
    u32::MAX.checked_shr(32 - n.min(32)).unwrap_or(0)
}
