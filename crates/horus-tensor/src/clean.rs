//! Removing tensor pools whose holders all died.
//!
//! A pool is normally unlinked by its last holder. When every holder died
//! (kill -9), nobody is left to do it. [`remove_stale_pools`] walks a
//! namespace's pool segments and, for each, reclaims the places of dead
//! holders exactly as a joining process would; a pool left with no active
//! holder is closed and unlinked through the same `CLOSING` protocol the
//! last holder uses (`horus_shm::place`), so a process opening it at that
//! moment creates a fresh one. A pool with any live holder is never touched.

use std::path::PathBuf;
use std::sync::atomic::AtomicBool;
use std::sync::Mutex;
use std::time::Instant;

use horus_shm::init;
use horus_shm::place;
use horus_shm::{CleanError, Segment, SegmentFate, Unopened};

use crate::header::{Fixed, STATES_OFFSET};
use crate::{refs, TensorPool};

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
    let prefix = horus_shm::segment_prefix(namespace, "tp")?;
    Ok(horus_shm::sweep(namespace, "tp", |name, path| {
        let id = name[1 + prefix.len()..].parse::<u64>().ok();
        match id {
            Some(id) => clean_one(name, id, path),
            None => PoolFate::Unreadable("not a pool id".into()).into(),
        }
    })?
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

fn clean_one(name: &str, pool_id: u64, path: &std::path::Path) -> SegmentFate {
    let seg = match init::open_initialised(name, STATES_OFFSET, Instant::now()) {
        Ok((seg, _)) => seg,
        Err(e) => return Unopened::from(&e).verdict(path).settle(name),
    };
    // SAFETY: as in `TensorPool::attach_segment`: at least STATES_OFFSET
    // bytes, page aligned, `Fixed` valid for any bits, copied once.
    let fixed = unsafe { std::ptr::read_volatile(seg.base().cast::<Fixed>()) };
    let geo = match fixed.validate(pool_id, seg.len() as u64) {
        Ok(g) => g,
        Err(e) => return SegmentFate::Unreadable(e.to_string()),
    };
    // An observer: no holder place (`place` out of range), so dropping it
    // leaves nothing.
    let pool = TensorPool {
        seg,
        name: name.to_owned(),
        pool_id,
        place: usize::MAX,
        geo,
        local: Mutex::new(Vec::new()),
        departed: AtomicBool::new(false),
    };
    pool.reclaim_dead();
    if place::try_close(pool.members()) {
        Segment::unlink(name);
        SegmentFate::Removed
    } else {
        PoolFate::Live {
            holders: (pool.members().load(horus_shm::sync::Ordering::Relaxed) & refs::HOLDER_BITS)
                .count_ones(),
        }
        .into()
    }
}
