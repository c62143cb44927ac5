//! Removing tensor pools whose holders all died.
//!
//! A pool is normally unlinked by its last holder. When every holder died
//! (kill -9), nobody is left to do it. [`remove_stale_pools`] walks a
//! namespace's pool segments and, for each, reclaims the places of dead
//! holders exactly as a joining process would; a pool left with no active
//! holder is closed and unlinked through the same `CLOSING` protocol the
//! last holder uses (`horus_shm::place`), so a process opening it at that
//! moment creates a fresh one. A pool with any live holder is never touched.

use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::sync::Mutex;
use std::time::Instant;

use horus_shm::init;
use horus_shm::place;
use horus_shm::sync::Ordering;
use horus_shm::{CleanError, Segment, SegmentFate, Unopened, Verdict};

use crate::header::{Fixed, STATES_OFFSET};
use crate::{refs, TensorPool, HOLDERS};

/// What happened to one pool segment.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PoolFate {
    /// Every holder was dead (or none was left): unlinked.
    Removed,
    /// The creator died before initialising it: unlinked.
    RemovedUninitialised,
    /// At least one live holder: kept.
    Live {
        /// Active holder places.
        holders: u32,
    },
    /// Being created right now: kept.
    Initialising,
    /// Not a pool of this build (garbage, another layout version): kept.
    Unreadable(String),
}

/// One pool segment found in the namespace.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PoolReport {
    /// File path (`/dev/shm/horus.<ns>.tp.<id>`).
    pub path: PathBuf,
    /// What was done.
    pub fate: PoolFate,
}

/// Removes the pools of `namespace` whose holders are all dead, and reports
/// every pool segment of the namespace with its fate.
pub fn remove_stale_pools(namespace: &str) -> Result<Vec<PoolReport>, CleanError> {
    Ok(horus_shm::sweep(namespace, "tp", clean_one)?
        .into_iter()
        .map(|r| PoolReport {
            path: r.path,
            fate: r.fate.into(),
        })
        .collect())
}

/// A pool's fate travels through horus-shm's sweep as a segment's: a live
/// pool's holders as its "publishers".
impl From<PoolFate> for SegmentFate {
    fn from(f: PoolFate) -> SegmentFate {
        match f {
            PoolFate::Removed => SegmentFate::Removed,
            PoolFate::RemovedUninitialised => SegmentFate::RemovedUninitialised,
            PoolFate::Live { holders } => SegmentFate::Live {
                publishers: holders,
                subscribers: 0,
            },
            PoolFate::Initialising => SegmentFate::Initialising,
            PoolFate::Unreadable(why) => SegmentFate::Unreadable(why),
        }
    }
}

impl From<SegmentFate> for PoolFate {
    fn from(f: SegmentFate) -> PoolFate {
        match f {
            SegmentFate::Removed => PoolFate::Removed,
            SegmentFate::RemovedUninitialised => PoolFate::RemovedUninitialised,
            SegmentFate::Live { publishers, .. } => PoolFate::Live {
                holders: publishers,
            },
            SegmentFate::Initialising => PoolFate::Initialising,
            SegmentFate::Unreadable(why) => PoolFate::Unreadable(why),
        }
    }
}

/// What a pool segment is, judged without changing anything: what
/// [`remove_stale_pools`] would do with it now (the same opening, the same
/// holder rule).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PoolVerdict {
    /// At least one holder place's process (or a reclaimer's) is alive: kept.
    Live {
        /// Holder places owned by live processes.
        holders: u32,
    },
    /// No holder is alive: removed by [`remove_stale_pools`].
    Stale {
        /// Holder places whose process died (not yet reclaimed).
        dead_holders: u32,
    },
    /// Could not be opened; horus-shm's verdict (an uninitialised one is
    /// removed, the rest kept).
    Unopened(Verdict),
    /// Its header is not a pool of this build: kept.
    Unreadable(String),
}

/// Judges the pool segment `shm_name` (`/horus.<ns>.tp.<id>`, file at
/// `path`) without changing it: no place is reclaimed, nothing unlinked.
pub fn judge_pool(shm_name: &str, path: &Path) -> PoolVerdict {
    match observe(shm_name, path) {
        Ok(pool) => {
            let (live, dead) = holder_places(&pool);
            if live > 0 {
                PoolVerdict::Live { holders: live }
            } else {
                PoolVerdict::Stale { dead_holders: dead }
            }
        }
        Err(Observed::Unopened(v)) => PoolVerdict::Unopened(v),
        Err(Observed::Unreadable(why)) => PoolVerdict::Unreadable(why),
    }
}

/// Why a pool segment could not be looked at.
enum Observed {
    Unopened(Verdict),
    Unreadable(String),
}

/// Opens the pool `shm_name` as an observer (no holder place: dropping it
/// leaves nothing), its id from the name's last part.
fn observe(shm_name: &str, path: &Path) -> Result<TensorPool, Observed> {
    let pool_id = shm_name
        .rsplit('.')
        .next()
        .and_then(|id| id.parse::<u64>().ok())
        .ok_or_else(|| Observed::Unreadable("not a pool id".into()))?;
    let seg = match init::open_initialised(shm_name, STATES_OFFSET, Instant::now()) {
        Ok((seg, _)) => seg,
        Err(e) => return Err(Observed::Unopened(Unopened::from(&e).verdict(path))),
    };
    // SAFETY: as in `TensorPool::attach_segment`: at least STATES_OFFSET
    // bytes, page aligned, `Fixed` valid for any bits, copied once.
    let fixed = unsafe { std::ptr::read_volatile(seg.base().cast::<Fixed>()) };
    let geo = fixed
        .validate(pool_id, seg.len() as u64)
        .map_err(|e| Observed::Unreadable(e.to_string()))?;
    Ok(TensorPool {
        seg,
        name: shm_name.to_owned(),
        pool_id,
        place: usize::MAX,
        geo,
        local: Mutex::new(Vec::new()),
        departed: AtomicBool::new(false),
    })
}

/// The one holder rule judging and cleaning share: (places whose owner or
/// reclaimer is alive, places whose owner or reclaimer died). A pool is
/// stale when the first is zero.
fn holder_places(pool: &TensorPool) -> (u32, u32) {
    (0..HOLDERS).fold((0, 0), |(live, dead), j| {
        match place::classify(pool.owner(j).load(Ordering::Acquire)) {
            place::Owner::Alive | place::Owner::Busy => (live + 1, dead),
            place::Owner::Dead(_) => (live, dead + 1),
            place::Owner::Free => (live, dead),
        }
    })
}

fn clean_one(name: &str, path: &Path) -> SegmentFate {
    let pool = match observe(name, path) {
        Ok(pool) => pool,
        Err(Observed::Unopened(v)) => return v.settle(name),
        Err(Observed::Unreadable(why)) => return SegmentFate::Unreadable(why),
    };
    // Same rule as `judge_pool`: with a live holder the pool stays (its dead
    // holders' places are reclaimed meanwhile).
    pool.reclaim_dead();
    let (live, _) = holder_places(&pool);
    if live == 0 && place::try_close(pool.members()) {
        Segment::unlink(name);
        SegmentFate::Removed
    } else {
        PoolFate::Live {
            holders: (pool.members().load(Ordering::Relaxed) & refs::HOLDER_BITS).count_ones(),
        }
        .into()
    }
}
