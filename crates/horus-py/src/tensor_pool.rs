//! A pool of fixed-size tensor slots in one shared-memory segment, with
//! per-process reference bits so that memory returns to the pool when the
//! last holder drops it, also when a holder dies.
//!
//! This module knows nothing about Python; the bindings and the Rust peer of
//! the cross-language tests share it.
//!
//! # Layout (all little-endian, offsets from the segment start)
//!
//! ```text
//! 0      PoolHeader (magic last, written by the creator once initialised)
//! 128    holder places: HOLDERS × AtomicU64 owner tokens (pid + start time)
//! 384    slot states: slots × AtomicU64
//! …      padding to a page
//! data   slots × slot_bytes, each slot page aligned
//! ```
//!
//! # Slot state word
//!
//! ```text
//!  63 ........... 32 | 31 ............ 0
//!  generation        | one bit per holder place (process)
//! ```
//!
//! The scheme is the one of `horus-shm`'s chunk pool (a bitmap variant of
//! iceoryx's generation-tagged reference counts): a slot is free when no bit
//! is set; allocating claims a free slot and bumps its generation in one
//! CAS; taking a reference from a descriptor sets the holder's bit with a
//! CAS that also checks the generation, so a stale descriptor can never pin
//! a slot that was freed and reused. Each process holds at most one bit per
//! slot and counts its own handles locally, so a dead process's references
//! are exactly its bit, cleared with an idempotent `fetch_and`.
//!
//! Holder places and the membership word follow `horus_shm::place` (the
//! topics' and services' code): a dead holder's place is reclaimed by
//! whoever notices, also when the reclaimer itself dies half-way, and the
//! last holder out unlinks the segment — also a process whose NumPy or
//! DLPack views outlive its interpreter's exit ([`PoolInner::depart`]).

use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use horus_shm::place::{self, Owner};
use horus_shm::sync::AtomicU64;
use horus_shm::{Segment, SegmentError};

const MAGIC: u64 = u64::from_le_bytes(*b"HORUSTP1");
/// 2: holder places and membership word as `horus_shm::place` (named reclaimers, epoch).
const VERSION: u32 = 2;
/// Holder places (processes mapping the pool at once).
pub const HOLDERS: usize = 32;
const HOLDER_BITS: u64 = 0xffff_ffff;
const PLACES_OFFSET: usize = 128;
const STATES_OFFSET: usize = PLACES_OFFSET + HOLDERS * 8;
const PAGE: usize = 4096;
/// Most slots a pool may have.
pub const MAX_SLOTS: u32 = 1 << 16;

/// Default slot count.
pub const DEFAULT_SLOTS: u32 = 16;
/// Default slot size (8 MiB: a 1920×1080 RGBA image, a 1024² f32 tensor).
pub const DEFAULT_SLOT_BYTES: u64 = 8 << 20;

/// The fixed header at the start of a pool segment.
#[repr(C)]
struct PoolHeader {
    /// [`MAGIC`] once the creator has initialised everything below.
    magic: AtomicU64,
    version: u32,
    slots: u32,
    slot_bytes: u64,
    pool_id: u64,
    data_offset: u64,
    total_len: u64,
    /// Bits 0..32: active holder places; epoch and `CLOSING` as in
    /// `horus_shm::place`.
    members: AtomicU64,
    /// Allocation hint: where the next search for a free slot starts.
    next: AtomicU32,
}

const _: () = assert!(std::mem::size_of::<PoolHeader>() <= PLACES_OFFSET);

/// Why a pool could not be opened or used.
#[derive(Debug, thiserror::Error)]
pub enum PoolError {
    /// The segment could not be created, opened or mapped.
    #[error("tensor pool {pool_id}: {source}")]
    Segment {
        /// Pool id.
        pool_id: u64,
        /// Details.
        source: SegmentError,
    },
    /// The segment is not a tensor pool of this version, or is corrupt.
    #[error("tensor pool {pool_id}: {reason}")]
    Corrupt {
        /// Pool id.
        pool_id: u64,
        /// What failed validation.
        reason: String,
    },
    /// The pool exists with other settings than explicitly requested.
    #[error("tensor pool {pool_id} exists with {found}; requested {requested}")]
    ConfigMismatch {
        /// Pool id.
        pool_id: u64,
        /// What the pool has.
        found: String,
        /// What was requested.
        requested: String,
    },
    /// The request is invalid.
    #[error("tensor pool {pool_id}: {reason}")]
    Invalid {
        /// Pool id.
        pool_id: u64,
        /// Why.
        reason: String,
    },
    /// Every holder place is taken by a live process.
    #[error("tensor pool {0}: all {HOLDERS} holder places are taken by live processes")]
    TooManyHolders(u64),
    /// Every slot is held.
    #[error("tensor pool {pool_id}: all {slots} slots are in use")]
    Exhausted {
        /// Pool id.
        pool_id: u64,
        /// Slots in the pool.
        slots: u32,
    },
    /// The tensor does not fit in a slot.
    #[error("tensor of {requested} B does not fit in a slot of {slot_bytes} B (pool {pool_id})")]
    TooLarge {
        /// Pool id.
        pool_id: u64,
        /// Requested bytes.
        requested: u64,
        /// Slot size.
        slot_bytes: u64,
    },
    /// The descriptor names a tensor that was freed (and maybe reused), or
    /// does not describe this pool.
    #[error("stale or foreign tensor descriptor: {0}")]
    Stale(String),
    /// This process left the pool ([`PoolInner::depart`], at interpreter
    /// exit): its views still read and write the memory, but it takes no
    /// new tensors or references.
    #[error("tensor pool {0}: this process has left the pool (interpreter exit)")]
    Departed(u64),
}

/// Settings of a pool; `None` adopts what an existing pool has (or the
/// default when creating).
#[derive(Clone, Copy, Debug, Default)]
pub struct PoolConfig {
    /// Number of slots.
    pub slots: Option<u32>,
    /// Bytes per slot (rounded up to a page).
    pub slot_bytes: Option<u64>,
}

/// One process's mapping of a pool and its holder place.
pub struct PoolInner {
    seg: Segment,
    name: String,
    pool_id: u64,
    place: usize,
    slots: u32,
    slot_bytes: u64,
    data_offset: u64,
    /// Handles this process holds per slot; the holder bit is set while > 0.
    local: Mutex<Vec<u32>>,
    /// Set (under `local`'s lock) once this process left the pool: from
    /// then on its holder place and bits may be someone else's, and nothing
    /// here touches them.
    departed: AtomicBool,
}

// The struct holds a mapping and plain data; the mapping is Send + Sync.
const _: () = {
    const fn assert_send_sync<T: Send + Sync>() {}
    assert_send_sync::<PoolInner>();
};

fn page_up(n: u64) -> u64 {
    n.div_ceil(PAGE as u64) * PAGE as u64
}

impl PoolInner {
    /// Opens pool `pool_id` in `namespace`, creating it if it does not exist.
    pub fn open(
        namespace: &str,
        pool_id: u64,
        cfg: PoolConfig,
    ) -> Result<Arc<PoolInner>, PoolError> {
        let name =
            horus_shm::name::segment_name(namespace, "tp", &pool_id.to_string()).map_err(|e| {
                PoolError::Invalid {
                    pool_id,
                    reason: e.to_string(),
                }
            })?;
        for _ in 0..16 {
            let seg = match Segment::open(&name, STATES_OFFSET) {
                Ok(seg) => seg,
                Err(SegmentError::NotFound(_)) => match Self::create(&name, pool_id, cfg) {
                    Ok(seg) => seg,
                    Err(PoolError::Segment {
                        source: SegmentError::Exists(_),
                        ..
                    }) => continue,
                    Err(e) => return Err(e),
                },
                Err(source) => return Err(PoolError::Segment { pool_id, source }),
            };
            match Self::attach(seg, name.clone(), pool_id, cfg)? {
                Some(inner) => return Ok(Arc::new(inner)),
                // The pool was being removed: open (or create) a fresh one.
                None => std::thread::sleep(Duration::from_millis(1)),
            }
        }
        Err(PoolError::Corrupt {
            pool_id,
            reason: "the pool segment kept disappearing while opening it".into(),
        })
    }

    fn create(name: &str, pool_id: u64, cfg: PoolConfig) -> Result<Segment, PoolError> {
        let slots = cfg.slots.unwrap_or(DEFAULT_SLOTS);
        if slots == 0 || slots > MAX_SLOTS {
            return Err(PoolError::Invalid {
                pool_id,
                reason: format!("slots must be 1..={MAX_SLOTS}, not {slots}"),
            });
        }
        let slot_bytes = page_up(cfg.slot_bytes.unwrap_or(DEFAULT_SLOT_BYTES).max(1));
        let data_offset = page_up((STATES_OFFSET + slots as usize * 8) as u64);
        let total = slot_bytes
            .checked_mul(u64::from(slots))
            .and_then(|d| d.checked_add(data_offset))
            .filter(|&t| t <= isize::MAX as u64)
            .ok_or_else(|| PoolError::Invalid {
                pool_id,
                reason: "pool size overflows".into(),
            })?;
        let seg = Segment::create(name, total as usize)
            .map_err(|source| PoolError::Segment { pool_id, source })?;
        // SAFETY: the segment is freshly created, zeroed, at least
        // STATES_OFFSET bytes long, page aligned; nobody else writes the
        // header until `magic` is published below (openers wait for it).
        let h = unsafe { &mut *seg.base().cast::<PoolHeader>() };
        h.version = VERSION;
        h.slots = slots;
        h.slot_bytes = slot_bytes;
        h.pool_id = pool_id;
        h.data_offset = data_offset;
        h.total_len = total;
        // Release: the plain header writes above happen before an opener's
        // Acquire load of `magic` sees it.
        h.magic.store(MAGIC, Ordering::Release);
        Ok(seg)
    }

    /// Validates a mapped segment and joins it as a holder. `None` if the
    /// pool is closing.
    fn attach(
        seg: Segment,
        name: String,
        pool_id: u64,
        cfg: PoolConfig,
    ) -> Result<Option<PoolInner>, PoolError> {
        let corrupt = |reason: String| PoolError::Corrupt { pool_id, reason };
        let hp = seg.base().cast::<PoolHeader>();
        // SAFETY: the mapping is at least STATES_OFFSET (> size of the
        // header) bytes and page aligned; the atomic is read atomically.
        let magic = unsafe { &(*hp).magic };
        let start = Instant::now();
        // The creator publishes `magic` right after ftruncate; wait briefly.
        while magic.load(Ordering::Acquire) != MAGIC {
            if start.elapsed() > Duration::from_secs(2) {
                return Err(corrupt("segment is not an initialised tensor pool".into()));
            }
            std::thread::sleep(Duration::from_micros(100));
        }
        // SAFETY: as above; after the Acquire of `magic` the plain fields are
        // initialised and never written again.
        let h = unsafe { &*hp };
        if h.version != VERSION {
            return Err(corrupt(format!(
                "layout version {} (expected {VERSION})",
                h.version
            )));
        }
        if h.pool_id != pool_id {
            return Err(corrupt(format!("segment holds pool {}", h.pool_id)));
        }
        let (slots, slot_bytes, data_offset) = (h.slots, h.slot_bytes, h.data_offset);
        let expected_data = page_up((STATES_OFFSET as u64) + u64::from(slots) * 8);
        let total = slot_bytes
            .checked_mul(u64::from(slots))
            .and_then(|d| d.checked_add(data_offset));
        if slots == 0
            || slots > MAX_SLOTS
            || slot_bytes == 0
            || slot_bytes % PAGE as u64 != 0
            || data_offset != expected_data
            || total != Some(h.total_len)
            || h.total_len > seg.len() as u64
        {
            return Err(corrupt(format!(
                "inconsistent header ({slots} slots × {slot_bytes} B at {data_offset}, {} B mapped)",
                seg.len()
            )));
        }
        let requested_bytes = cfg.slot_bytes.map(|b| page_up(b.max(1)));
        if cfg.slots.is_some_and(|s| s != slots) || requested_bytes.is_some_and(|b| b != slot_bytes)
        {
            return Err(PoolError::ConfigMismatch {
                pool_id,
                found: format!("{slots} slots × {slot_bytes} B"),
                requested: format!(
                    "{} slots × {} B",
                    cfg.slots.map_or("any".into(), |s| s.to_string()),
                    requested_bytes.map_or("any".into(), |b| b.to_string())
                ),
            });
        }
        let mut inner = PoolInner {
            seg,
            name,
            pool_id,
            place: usize::MAX,
            slots,
            slot_bytes,
            data_offset,
            local: Mutex::new(vec![0; slots as usize]),
            departed: AtomicBool::new(false),
        };
        match inner.join()? {
            Some(place) => {
                inner.place = place;
                Ok(Some(inner))
            }
            None => Ok(None),
        }
    }

    fn header(&self) -> &PoolHeader {
        // SAFETY: validated in `attach`; the mapping lives as long as self.
        unsafe { &*self.seg.base().cast::<PoolHeader>() }
    }

    fn owner(&self, j: usize) -> &AtomicU64 {
        debug_assert!(j < HOLDERS);
        // SAFETY: j < HOLDERS, so the word lies within the places array,
        // inside the mapping, 8-byte aligned (page-aligned base + 128 + 8j).
        unsafe {
            &*self
                .seg
                .base()
                .add(PLACES_OFFSET + 8 * j)
                .cast::<AtomicU64>()
        }
    }

    fn state(&self, slot: u32) -> &AtomicU64 {
        debug_assert!(slot < self.slots);
        // SAFETY: slot < slots (checked by every caller), so the word lies
        // within the states array, which `attach` checked lies before
        // data_offset <= the mapping length; 8-byte aligned.
        unsafe {
            &*self
                .seg
                .base()
                .add(STATES_OFFSET + 8 * slot as usize)
                .cast::<AtomicU64>()
        }
    }

    /// Claims a holder place and marks it active. `None` if closing.
    fn join(&self) -> Result<Option<usize>, PoolError> {
        let mut reclaimed = false;
        let place = loop {
            let free = (0..HOLDERS).find(|&j| place::try_claim(self.owner(j)));
            match free {
                Some(j) => break j,
                None if !reclaimed => {
                    self.reclaim_dead();
                    reclaimed = true;
                }
                None => return Err(PoolError::TooManyHolders(self.pool_id)),
            }
        };
        if place::join(&self.header().members, 1 << place) {
            Ok(Some(place))
        } else {
            place::free(self.owner(place));
            Ok(None)
        }
    }

    /// Clears the references and places of holders whose process died (or
    /// finishes a reclaim whose reclaimer died). Returns how many places
    /// were reclaimed.
    pub fn reclaim_dead(&self) -> usize {
        let mut n = 0;
        for j in 0..HOLDERS {
            let owner = self.owner(j);
            let Owner::Dead(seen) = place::classify(owner.load(Ordering::Acquire)) else {
                continue;
            };
            // Exactly one process cleans a dead place up; each step is
            // idempotent, for a successor of a reclaimer that died.
            if !place::try_begin_reclaim(owner, seen) {
                continue;
            }
            for s in 0..self.slots {
                // Release: pairs with the Acquire of the next `alloc` CAS.
                self.state(s).fetch_and(!(1u64 << j), Ordering::Release);
            }
            place::leave(&self.header().members, 1 << j);
            place::free(owner);
            n += 1;
        }
        n
    }

    /// Leaves the pool now, while tensors of this process may still be
    /// alive: drops every reference this process holds, gives up its holder
    /// place and, if it was the last holder, unlinks the segment. The
    /// mapping stays until the last handle drops, so live views keep
    /// working on memory nobody else will hand out (once the name is gone,
    /// a pool of the same id is a new segment); this process takes no new
    /// tensors or references ([`PoolError::Departed`]). For the
    /// interpreter's exit, which may never free objects still referenced.
    /// Idempotent.
    pub fn depart(&self) {
        let mut local = self.local.lock().unwrap_or_else(|p| p.into_inner());
        if self.place >= HOLDERS || self.departed.swap(true, Ordering::Relaxed) {
            return;
        }
        local.iter_mut().for_each(|n| *n = 0);
        self.leave_place();
    }

    /// Clears our bits, gives up our place and unlinks the segment if we
    /// were the last holder.
    fn leave_place(&self) {
        for s in 0..self.slots {
            // Release: our accesses to the data happen before the next
            // allocation's Acquire CAS on this word.
            self.state(s)
                .fetch_and(!(1u64 << self.place), Ordering::Release);
        }
        self.reclaim_dead();
        let members = &self.header().members;
        let left = place::leave(members, 1 << self.place);
        place::free(self.owner(self.place));
        // Last one out removes the name (existing mappings stay valid).
        if left & HOLDER_BITS == 0 && place::try_close(members) {
            Segment::unlink(&self.name);
        }
    }

    /// Pool id.
    pub fn pool_id(&self) -> u64 {
        self.pool_id
    }

    /// Number of slots.
    pub fn slots(&self) -> u32 {
        self.slots
    }

    /// Bytes per slot.
    pub fn slot_bytes(&self) -> u64 {
        self.slot_bytes
    }

    /// Slots no process holds.
    pub fn free_slots(&self) -> u32 {
        (0..self.slots)
            .filter(|&s| self.state(s).load(Ordering::Relaxed) & HOLDER_BITS == 0)
            .count() as u32
    }

    /// Processes holding the pool mapped (live or not yet reclaimed).
    pub fn holders(&self) -> u32 {
        (self.header().members.load(Ordering::Relaxed) & HOLDER_BITS).count_ones()
    }

    /// Processes holding a reference on `slot` (at generation `gen`).
    pub fn refcount(&self, slot: u32, gen: u32) -> u32 {
        let v = self.state(slot).load(Ordering::Acquire);
        if (v >> 32) as u32 != gen {
            return 0;
        }
        (v & HOLDER_BITS).count_ones()
    }

    fn data_ptr(&self, slot: u32) -> *mut u8 {
        debug_assert!(slot < self.slots);
        let off = self.data_offset + u64::from(slot) * self.slot_bytes;
        debug_assert!(off + self.slot_bytes <= self.seg.len() as u64);
        // SAFETY: `attach` checked data_offset + slots × slot_bytes lies
        // within the mapping, and slot < slots.
        unsafe { self.seg.base().add(off as usize) }
    }

    /// Allocates a slot for `nbytes` bytes. The memory is not zeroed: it
    /// holds whatever the previous tensor left there.
    pub fn alloc(self: &Arc<Self>, nbytes: u64) -> Result<Tensor, PoolError> {
        if nbytes > self.slot_bytes {
            return Err(PoolError::TooLarge {
                pool_id: self.pool_id,
                requested: nbytes,
                slot_bytes: self.slot_bytes,
            });
        }
        if self.departed.load(Ordering::Relaxed) {
            return Err(PoolError::Departed(self.pool_id));
        }
        let bit = 1u64 << self.place;
        for attempt in 0..2 {
            let start = self.header().next.load(Ordering::Relaxed) % self.slots;
            for k in 0..self.slots {
                let slot = (start + k) % self.slots;
                let state = self.state(slot);
                let v = state.load(Ordering::Relaxed);
                if v & HOLDER_BITS != 0 {
                    continue;
                }
                let gen = ((v >> 32) as u32).wrapping_add(1);
                // Acquire: pairs with the Release of the last holder's
                // `release`, so its reads of the old tensor happen before the
                // caller's writes into the slot.
                if state
                    .compare_exchange(
                        v,
                        (u64::from(gen) << 32) | bit,
                        Ordering::Acquire,
                        Ordering::Relaxed,
                    )
                    .is_ok()
                {
                    let mut local = self.local.lock().expect("pool mutex poisoned");
                    if self.departed.load(Ordering::Relaxed) {
                        // Left while we allocated: the place is no longer ours.
                        state.fetch_and(!bit, Ordering::Release);
                        return Err(PoolError::Departed(self.pool_id));
                    }
                    local[slot as usize] = 1;
                    drop(local);
                    self.header().next.store(slot + 1, Ordering::Relaxed);
                    return Ok(self.tensor(slot, gen, nbytes));
                }
            }
            if attempt == 0 && self.reclaim_dead() == 0 {
                break;
            }
        }
        Err(PoolError::Exhausted {
            pool_id: self.pool_id,
            slots: self.slots,
        })
    }

    fn tensor(self: &Arc<Self>, slot: u32, gen: u32, nbytes: u64) -> Tensor {
        Tensor {
            pool: Arc::clone(self),
            slot,
            gen,
            nbytes: nbytes as usize,
            ptr: self.data_ptr(slot),
        }
    }

    /// Offset of `slot`'s data from the start of the segment.
    pub fn offset_of(&self, slot: u32) -> u64 {
        self.data_offset + u64::from(slot) * self.slot_bytes
    }

    /// Takes a reference on the tensor a descriptor names. Fails if it was
    /// freed since (stale generation) or the descriptor does not fit the pool.
    pub fn acquire(
        self: &Arc<Self>,
        slot: u32,
        gen: u32,
        offset: u64,
        nbytes: u64,
    ) -> Result<Tensor, PoolError> {
        if slot >= self.slots || offset != self.offset_of(slot) || nbytes > self.slot_bytes {
            return Err(PoolError::Stale(format!(
                "slot {slot}, offset {offset}, {nbytes} B do not describe a slot of pool {} \
                 ({} slots × {} B)",
                self.pool_id, self.slots, self.slot_bytes
            )));
        }
        let bit = 1u64 << self.place;
        let state = self.state(slot);
        let mut local = self.local.lock().expect("pool mutex poisoned");
        if self.departed.load(Ordering::Relaxed) {
            return Err(PoolError::Departed(self.pool_id));
        }
        if local[slot as usize] > 0 {
            // We already hold the bit, so the generation cannot change.
            if (state.load(Ordering::Relaxed) >> 32) as u32 != gen {
                return Err(self.stale(slot, gen));
            }
            local[slot as usize] += 1;
            return Ok(self.tensor(slot, gen, nbytes));
        }
        let mut v = state.load(Ordering::Relaxed);
        loop {
            if (v >> 32) as u32 != gen || v & HOLDER_BITS == 0 {
                return Err(self.stale(slot, gen));
            }
            // Acquire: pairs with the writer's Release (its `release` or the
            // topic that carried the descriptor), so its data is visible.
            match state.compare_exchange_weak(v, v | bit, Ordering::Acquire, Ordering::Relaxed) {
                Ok(_) => break,
                Err(now) => v = now,
            }
        }
        local[slot as usize] = 1;
        Ok(self.tensor(slot, gen, nbytes))
    }

    fn stale(&self, slot: u32, gen: u32) -> PoolError {
        PoolError::Stale(format!(
            "slot {slot} of pool {} is no longer at generation {gen} (the tensor was freed)",
            self.pool_id
        ))
    }

    fn release(&self, slot: u32) {
        let mut local = self.local.lock().expect("pool mutex poisoned");
        if self.departed.load(Ordering::Relaxed) {
            // Our references went when we left; the place may be another's.
            return;
        }
        let n = &mut local[slot as usize];
        debug_assert!(*n > 0);
        *n -= 1;
        if *n == 0 {
            // Release: our accesses to the data happen before the next
            // allocation's Acquire CAS on this word.
            self.state(slot)
                .fetch_and(!(1u64 << self.place), Ordering::Release);
        }
    }
}

impl Drop for PoolInner {
    fn drop(&mut self) {
        // Every Tensor holds an Arc of the pool, so none is alive: our bits
        // are clear (`leave_place` clears them anyway, in case of a leaked
        // local count). Nothing to do if we left already.
        if self.place >= HOLDERS || *self.departed.get_mut() {
            return;
        }
        self.leave_place();
    }
}

/// A reference to one tensor slot. The slot returns to the pool when the
/// last `Tensor` of every process is dropped (or its process dies).
pub struct Tensor {
    pool: Arc<PoolInner>,
    slot: u32,
    gen: u32,
    nbytes: usize,
    ptr: *mut u8,
}

// SAFETY: `ptr` points into the pool mapping, which `pool` keeps alive and
// which has no thread affinity; the reference bit is per process.
unsafe impl Send for Tensor {}
// SAFETY: as above; `Tensor` hands out raw pointers only, whose use the
// caller (the buffer protocol) makes sound.
unsafe impl Sync for Tensor {}

impl Tensor {
    /// Start of the data (page aligned).
    pub fn as_ptr(&self) -> *mut u8 {
        self.ptr
    }

    /// Bytes of data.
    pub fn nbytes(&self) -> usize {
        self.nbytes
    }

    /// Slot index.
    pub fn slot(&self) -> u32 {
        self.slot
    }

    /// Generation of the slot for this tensor.
    pub fn generation(&self) -> u32 {
        self.gen
    }

    /// The pool.
    pub fn pool(&self) -> &Arc<PoolInner> {
        &self.pool
    }

    /// Byte offset of the data in the pool segment.
    pub fn offset(&self) -> u64 {
        self.pool.offset_of(self.slot)
    }

    /// Processes holding a reference on this tensor (this one included).
    pub fn refcount(&self) -> u32 {
        self.pool.refcount(self.slot, self.gen)
    }

    /// The data as bytes.
    pub fn bytes(&self) -> &[u8] {
        // SAFETY: ptr..ptr+nbytes lies within this slot (nbytes <= slot_bytes
        // checked at alloc/acquire), which stays mapped while `pool` lives.
        // Other holders may write concurrently: the bytes may change under
        // us, but u8 has no invalid values.
        unsafe { std::slice::from_raw_parts(self.ptr, self.nbytes) }
    }

    /// A second handle on the same tensor (bumps the local count).
    pub fn try_clone(&self) -> Result<Tensor, PoolError> {
        self.pool
            .acquire(self.slot, self.gen, self.offset(), self.nbytes as u64)
    }
}

impl Drop for Tensor {
    fn drop(&mut self) {
        self.pool.release(self.slot);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ns(tag: &str) -> String {
        format!("tp-unit-{}-{tag}", std::process::id())
    }

    #[test]
    fn alloc_release_and_generations() {
        let cfg = PoolConfig {
            slots: Some(2),
            slot_bytes: Some(4096),
        };
        let pool = PoolInner::open(&ns("gen"), 7, cfg).unwrap();
        let a = pool.alloc(100).unwrap();
        let b = pool.alloc(100).unwrap();
        assert!(matches!(pool.alloc(1), Err(PoolError::Exhausted { .. })));
        let (slot, gen, off) = (a.slot(), a.generation(), a.offset());
        let a2 = pool.acquire(slot, gen, off, 100).unwrap();
        assert_eq!(a.refcount(), 1, "one process, one bit");
        drop(a);
        assert_eq!(pool.free_slots(), 0, "a2 still holds it");
        drop(a2);
        assert_eq!(pool.free_slots(), 1);
        assert!(matches!(
            pool.acquire(slot, gen, off, 100),
            Err(PoolError::Stale(_))
        ));
        let c = pool.alloc(10).unwrap();
        assert_ne!(c.generation(), gen);
        drop((b, c));
        assert_eq!(pool.free_slots(), 2);
    }

    #[test]
    fn too_large_and_config_mismatch() {
        let cfg = PoolConfig {
            slots: Some(1),
            slot_bytes: Some(4096),
        };
        let pool = PoolInner::open(&ns("cfg"), 8, cfg).unwrap();
        assert!(matches!(pool.alloc(4097), Err(PoolError::TooLarge { .. })));
        let other = PoolConfig {
            slots: Some(2),
            slot_bytes: None,
        };
        assert!(matches!(
            PoolInner::open(&ns("cfg"), 8, other),
            Err(PoolError::ConfigMismatch { .. })
        ));
        let adopt = PoolInner::open(&ns("cfg"), 8, PoolConfig::default()).unwrap();
        assert_eq!(adopt.slots(), 1);
    }

    /// Regression (issue 22): a process whose tensors outlive it (Python
    /// views the interpreter never frees at exit) left the pool in /dev/shm.
    #[test]
    fn departing_with_live_tensors_unlinks_and_keeps_them_readable() {
        let name = horus_shm::name::segment_name(&ns("depart"), "tp", "10").unwrap();
        let path = format!("/dev/shm{name}");
        let cfg = PoolConfig {
            slots: Some(2),
            slot_bytes: Some(4096),
        };
        let pool = PoolInner::open(&ns("depart"), 10, cfg).unwrap();
        let t = pool.alloc(100).unwrap();
        let t2 = t.try_clone().unwrap();
        // SAFETY: 100 bytes of our slot, nobody else uses the pool.
        unsafe { t.as_ptr().write_bytes(7, 100) };
        pool.depart();
        assert!(!std::path::Path::new(&path).exists());
        assert_eq!(t2.bytes()[99], 7, "a live view still reads its memory");
        assert!(matches!(pool.alloc(1), Err(PoolError::Departed(10))));
        assert!(matches!(t.try_clone(), Err(PoolError::Departed(10))));
        pool.depart();
        drop((t, t2, pool));
        assert!(!std::path::Path::new(&path).exists());
    }

    #[test]
    fn last_one_out_unlinks() {
        let name = horus_shm::name::segment_name(&ns("unlink"), "tp", "9").unwrap();
        let pool = PoolInner::open(&ns("unlink"), 9, PoolConfig::default()).unwrap();
        assert!(std::path::Path::new(&format!("/dev/shm{name}")).exists());
        drop(pool);
        assert!(!std::path::Path::new(&format!("/dev/shm{name}")).exists());
    }
}
