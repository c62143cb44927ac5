//! One process's mapping of a pool: opening (creating it if needed),
//! validating, and the per-slot operations (alloc, acquire, release).
//! Holder places and leaving are in `holders.rs`.

use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Instant;

use horus_shm::init::{self, InitError};
use horus_shm::sync::{AtomicU32, AtomicU64, Ordering};
use horus_shm::{Segment, SegmentError};

use crate::header::{
    self, Fixed, Geometry, MAGIC, MEMBERS_OFFSET, NEXT_OFFSET, PLACES_OFFSET, STATES_OFFSET,
};
use crate::refs::{self, ShareError};
use crate::{
    array_layout, buffer_format, AllocError, AttachError, OpenError, Tensor, TensorRef, HOLDERS,
    MAX_SLOTS,
};

/// Default slot count.
pub const DEFAULT_SLOTS: u32 = 16;
/// Default slot size (8 MiB: a 1920×1080 RGBA image, a 1024² f32 tensor).
pub const DEFAULT_SLOT_BYTES: u64 = 8 << 20;
/// How many times `open` retries a segment that its last holder removes
/// while we open it (each retry finds the name gone and creates afresh).
const OPEN_TRIES: u32 = 16;

/// Settings of a pool; `None` adopts what an existing pool has (or the
/// default when creating).
#[derive(Clone, Copy, Debug, Default)]
pub struct PoolConfig {
    /// Number of slots (creating: default [`DEFAULT_SLOTS`]; opening: must
    /// match when given).
    pub slots: Option<u32>,
    /// Bytes per slot, rounded up to a page (creating: default
    /// [`DEFAULT_SLOT_BYTES`]; opening: must match when given).
    pub slot_bytes: Option<u64>,
}

/// One process's mapping of a tensor pool and its holder place.
///
/// Open it with [`TensorPool::open`]; every [`Tensor`] keeps its pool alive.
/// Dropping the last handle gives the holder place back and, if this was
/// the last holder, removes the pool's name.
pub struct TensorPool {
    pub(crate) seg: Segment,
    pub(crate) name: String,
    pub(crate) pool_id: u64,
    pub(crate) place: usize,
    pub(crate) geo: Geometry,
    /// Handles this process holds per slot; the holder bit is set while > 0.
    pub(crate) local: Mutex<Vec<u32>>,
    /// Set (under `local`'s lock) once this process left the pool: from
    /// then on its holder place and bits may be someone else's, and nothing
    /// here touches them.
    pub(crate) departed: AtomicBool,
}

impl std::fmt::Debug for TensorPool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TensorPool")
            .field("name", &self.name)
            .field("place", &self.place)
            .field("slots", &self.geo.slots)
            .field("slot_bytes", &self.geo.slot_bytes)
            .finish()
    }
}

impl TensorPool {
    /// Opens pool `pool_id` in `namespace`, creating it if it does not exist.
    pub fn open(namespace: &str, pool_id: u64, cfg: PoolConfig) -> Result<Arc<Self>, OpenError> {
        let name = horus_shm::name::segment_name(namespace, "tp", &pool_id.to_string())
            .map_err(|source| OpenError::Name { pool_id, source })?;
        for _ in 0..OPEN_TRIES {
            let seg = match init::open_initialised(&name, STATES_OFFSET, deadline()) {
                Ok((seg, _magic)) => seg,
                Err(InitError::Segment(SegmentError::NotFound(_))) => {
                    match Self::create(&name, pool_id, cfg) {
                        Ok(seg) => seg,
                        // Another process created it first: open theirs.
                        Err(OpenError::Segment {
                            source: SegmentError::Exists(_),
                            ..
                        }) => continue,
                        Err(e) => return Err(e),
                    }
                }
                Err(InitError::Segment(source)) => {
                    return Err(OpenError::Segment { pool_id, source })
                }
                Err(InitError::NotInitialised(_)) => {
                    return Err(OpenError::NotInitialised { pool_id })
                }
            };
            match Self::attach_segment(seg, name.clone(), pool_id, cfg)? {
                Some(pool) => return Ok(Arc::new(pool)),
                // The pool is being removed: open (or create) a fresh one.
                None => std::thread::sleep(std::time::Duration::from_millis(1)),
            }
        }
        Err(OpenError::KeptClosing(pool_id))
    }

    fn create(name: &str, pool_id: u64, cfg: PoolConfig) -> Result<Segment, OpenError> {
        let invalid = |reason: String| OpenError::InvalidConfig { pool_id, reason };
        let slots = cfg.slots.unwrap_or(DEFAULT_SLOTS);
        if slots == 0 || slots > MAX_SLOTS {
            return Err(invalid(format!(
                "slots must be 1..={MAX_SLOTS}, not {slots}"
            )));
        }
        let slot_bytes = header::page_up(cfg.slot_bytes.unwrap_or(DEFAULT_SLOT_BYTES).max(1));
        let total = header::total_for(slots, slot_bytes)
            .ok_or_else(|| invalid(format!("{slots} slots × {slot_bytes} B overflow")))?;
        let seg = Segment::create(name, total as usize)
            .map_err(|source| OpenError::Segment { pool_id, source })?;
        let fixed = Fixed::new(pool_id, slots, slot_bytes, total);
        // SAFETY: the segment is freshly created by us (O_EXCL), zeroed, at
        // least STATES_OFFSET > size_of::<Fixed>() bytes, page aligned; nobody
        // reads the fixed fields before the magic is published below (openers
        // wait for it), and `Fixed` is plain data.
        unsafe { std::ptr::write(seg.base().cast::<Fixed>(), fixed) };
        init::publish(&seg, MAGIC);
        Ok(seg)
    }

    /// Validates a mapped segment and joins it as a holder. `None` if the
    /// pool is closing.
    fn attach_segment(
        seg: Segment,
        name: String,
        pool_id: u64,
        cfg: PoolConfig,
    ) -> Result<Option<Self>, OpenError> {
        // SAFETY: `open_initialised` checked the mapping holds at least
        // STATES_OFFSET bytes, page aligned; `Fixed` is plain data valid for
        // any bits. One volatile copy: a peer changing the header later
        // cannot change what we validated and use.
        let fixed = unsafe { std::ptr::read_volatile(seg.base().cast::<Fixed>()) };
        let geo = fixed
            .validate(pool_id, seg.len() as u64)
            .map_err(|source| OpenError::Corrupt { pool_id, source })?;
        let requested_bytes = cfg.slot_bytes.map(|b| header::page_up(b.max(1)));
        if cfg.slots.is_some_and(|s| s != geo.slots)
            || requested_bytes.is_some_and(|b| b != geo.slot_bytes)
        {
            let any = |v: Option<u64>| v.map_or("any".into(), |v| v.to_string());
            return Err(OpenError::ConfigMismatch {
                pool_id,
                found: format!("{} slots × {} B", geo.slots, geo.slot_bytes),
                requested: format!(
                    "{} slots × {} B",
                    any(cfg.slots.map(u64::from)),
                    any(requested_bytes)
                ),
            });
        }
        let mut pool = TensorPool {
            seg,
            name,
            pool_id,
            place: usize::MAX,
            geo,
            local: Mutex::new(vec![0; geo.slots as usize]),
            departed: AtomicBool::new(false),
        };
        Ok(pool.join()?.map(|place| {
            pool.place = place;
            pool
        }))
    }

    pub(crate) fn members(&self) -> &AtomicU64 {
        // SAFETY: MEMBERS_OFFSET + 8 <= PLACES_OFFSET <= the validated
        // mapping; 8-aligned in a page-aligned mapping; lives as long as self.
        unsafe { &*self.seg.base().add(MEMBERS_OFFSET).cast::<AtomicU64>() }
    }

    fn next_hint(&self) -> &AtomicU32 {
        // SAFETY: NEXT_OFFSET + 4 <= PLACES_OFFSET (asserted in header.rs),
        // inside the mapping, 4-aligned; lives as long as self.
        unsafe { &*self.seg.base().add(NEXT_OFFSET).cast::<AtomicU32>() }
    }

    pub(crate) fn owner(&self, j: usize) -> &AtomicU64 {
        assert!(j < HOLDERS, "holder place {j} out of range");
        // SAFETY: j < HOLDERS, so the word lies within the places array
        // [PLACES_OFFSET, STATES_OFFSET), inside the mapping, 8-aligned.
        unsafe {
            &*self
                .seg
                .base()
                .add(PLACES_OFFSET + 8 * j)
                .cast::<AtomicU64>()
        }
    }

    pub(crate) fn state(&self, slot: u32) -> &AtomicU64 {
        assert!(slot < self.geo.slots, "slot {slot} out of range");
        // SAFETY: slot < slots (validated, our own copy), so the word lies
        // within the states array, which ends before data_offset <= total_len
        // <= the mapping length (validated); 8-aligned.
        unsafe {
            &*self
                .seg
                .base()
                .add(STATES_OFFSET + 8 * slot as usize)
                .cast::<AtomicU64>()
        }
    }

    pub(crate) fn lock_local(&self) -> MutexGuard<'_, Vec<u32>> {
        // A panic while holding the lock leaves plain counts behind: usable.
        self.local.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Pool id.
    pub fn pool_id(&self) -> u64 {
        self.pool_id
    }

    /// The segment name (`/horus.<namespace>.tp.<id>`).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Number of slots.
    pub fn slots(&self) -> u32 {
        self.geo.slots
    }

    /// Bytes per slot.
    pub fn slot_bytes(&self) -> u64 {
        self.geo.slot_bytes
    }

    /// Slots no process holds.
    pub fn free_slots(&self) -> u32 {
        (0..self.geo.slots)
            .filter(|&s| refs::holders(self.state(s).load(Ordering::Relaxed)) == 0)
            .count() as u32
    }

    /// Processes holding a reference on `slot` at generation `gen` (0 for a
    /// slot out of range or at another generation).
    pub fn refcount(&self, slot: u32, gen: u32) -> u32 {
        if slot >= self.geo.slots {
            return 0;
        }
        let v = self.state(slot).load(Ordering::Acquire);
        if refs::generation(v) != gen {
            return 0;
        }
        refs::holders(v)
    }

    /// Offset of `slot`'s data from the start of the segment (`slot` must
    /// be below [`slots`](Self::slots) for the offset to lie in the pool).
    pub fn offset_of(&self, slot: u32) -> u64 {
        self.geo.data_offset + u64::from(slot) * self.geo.slot_bytes
    }

    fn data_ptr(&self, slot: u32) -> *mut u8 {
        assert!(slot < self.geo.slots);
        let off = self.offset_of(slot);
        debug_assert!(off + self.geo.slot_bytes <= self.seg.len() as u64);
        // SAFETY: validated: data_offset + slots × slot_bytes = total_len <=
        // the mapping, and slot < slots, so the slot lies in the mapping.
        unsafe { self.seg.base().add(off as usize) }
    }

    pub(crate) fn tensor(self: &Arc<Self>, slot: u32, gen: u32, nbytes: u64) -> Tensor {
        Tensor::new(
            Arc::clone(self),
            slot,
            gen,
            nbytes as usize,
            self.data_ptr(slot),
        )
    }

    /// Allocates a slot for `nbytes` bytes. The memory is not zeroed: it
    /// holds whatever the previous tensor left there.
    pub fn alloc(self: &Arc<Self>, nbytes: u64) -> Result<Tensor, AllocError> {
        if nbytes > self.geo.slot_bytes {
            return Err(AllocError::TooLarge {
                pool_id: self.pool_id,
                requested: nbytes,
                slot_bytes: self.geo.slot_bytes,
            });
        }
        if self.departed.load(Ordering::Relaxed) {
            return Err(AllocError::Departed(self.pool_id));
        }
        let bit = refs::bit(self.place);
        let slots = self.geo.slots;
        // Two passes at most: the second only if reclaiming dead holders
        // freed something.
        for attempt in 0..2 {
            // A hint only (a peer may write anything): reduced modulo our
            // own slot count.
            let start = self.next_hint().load(Ordering::Relaxed) % slots;
            for k in 0..slots {
                let slot = (start + k) % slots;
                let Some(gen) = refs::try_alloc(self.state(slot), bit) else {
                    continue;
                };
                let mut local = self.lock_local();
                if self.departed.load(Ordering::Relaxed) {
                    // Left while we allocated: the place is no longer ours.
                    refs::drop_holder(self.state(slot), bit);
                    return Err(AllocError::Departed(self.pool_id));
                }
                local[slot as usize] = 1;
                drop(local);
                self.next_hint()
                    .store(slot.wrapping_add(1), Ordering::Relaxed);
                return Ok(self.tensor(slot, gen, nbytes));
            }
            if attempt == 0 && self.reclaim_dead() == 0 {
                break;
            }
        }
        Err(AllocError::Exhausted {
            pool_id: self.pool_id,
            slots,
        })
    }

    /// Allocates a tensor of `shape` of `dtype` (a plain numeric NumPy type
    /// string such as `<f4`) and returns it with its descriptor.
    pub fn alloc_array(
        self: &Arc<Self>,
        dtype: &str,
        shape: &[u64],
        meta: crate::Meta<'_>,
    ) -> Result<(Tensor, TensorRef), AllocError> {
        let (_, itemsize) = buffer_format(dtype.as_bytes())
            .ok_or_else(|| AllocError::UnknownDtype(dtype.to_owned()))?;
        let nbytes = array_layout::array_bytes(itemsize, shape, u64::MAX)?;
        let tensor = self.alloc(nbytes)?;
        let r = TensorRef::describe(&tensor, dtype, shape, meta)?;
        Ok((tensor, r))
    }

    /// Takes a reference on the tensor a descriptor's fields name. Fails if
    /// it was freed since (stale generation) or the fields do not describe
    /// a slot of this pool.
    pub fn acquire(
        self: &Arc<Self>,
        slot: u32,
        gen: u32,
        offset: u64,
        nbytes: u64,
    ) -> Result<Tensor, AttachError> {
        if slot >= self.geo.slots || offset != self.offset_of(slot) || nbytes > self.geo.slot_bytes
        {
            return Err(AttachError::OutOfBounds {
                pool_id: self.pool_id,
                slot,
                offset,
                nbytes,
                slots: self.geo.slots,
                slot_bytes: self.geo.slot_bytes,
            });
        }
        let bit = refs::bit(self.place);
        let state = self.state(slot);
        let stale = || AttachError::Stale {
            pool_id: self.pool_id,
            slot,
            generation: gen,
        };
        let mut local = self.lock_local();
        if self.departed.load(Ordering::Relaxed) {
            return Err(AttachError::Departed(self.pool_id));
        }
        if local[slot as usize] > 0 {
            // We hold the bit, so the generation cannot change (only a
            // hostile peer could change it; then the descriptor is stale).
            if refs::generation(state.load(Ordering::Relaxed)) != gen {
                return Err(stale());
            }
            local[slot as usize] = local[slot as usize].saturating_add(1);
            return Ok(self.tensor(slot, gen, nbytes));
        }
        refs::share(state, gen, bit).map_err(|e| match e {
            ShareError::Stale => stale(),
            ShareError::Contended => AttachError::Contended {
                pool_id: self.pool_id,
                slot,
            },
        })?;
        local[slot as usize] = 1;
        Ok(self.tensor(slot, gen, nbytes))
    }

    /// Takes a reference on the tensor `r` names, after checking that it
    /// names this pool and that its dimensions are valid.
    pub fn attach(self: &Arc<Self>, r: &TensorRef) -> Result<Tensor, AttachError> {
        if r.pool_id != self.pool_id {
            return Err(AttachError::ForeignPool {
                pool_id: self.pool_id,
                named: r.pool_id,
            });
        }
        r.dims()?;
        self.acquire(r.slot, r.generation, r.offset, r.nbytes)
    }

    /// Drops one of this process's handles on `slot` (a `Tensor`'s drop).
    pub(crate) fn release(&self, slot: u32) {
        let mut local = self.lock_local();
        if self.departed.load(Ordering::Relaxed) {
            // Our references went when we left; the place may be another's.
            return;
        }
        let n = &mut local[slot as usize];
        debug_assert!(*n > 0);
        *n = n.saturating_sub(1);
        if *n == 0 {
            refs::drop_holder(self.state(slot), refs::bit(self.place));
        }
    }
}

fn deadline() -> Instant {
    Instant::now() + init::INIT_WAIT
}
