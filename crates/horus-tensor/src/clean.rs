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
use std::time::{Duration, Instant};

use horus_shm::init::{self, InitError};
use horus_shm::place;
use horus_shm::{CleanError, Segment, SegmentError};

use crate::header::{Fixed, STATES_OFFSET};
use crate::{refs, TensorPool};

/// A segment whose creator never published its header is left alone this
/// long (it may still be initialising it).
const INIT_GRACE: Duration = Duration::from_secs(5);

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
    let entries = std::fs::read_dir("/dev/shm").map_err(CleanError::List)?;
    let mut files: Vec<String> = entries
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|n| n.starts_with(&prefix))
        .collect();
    files.sort();
    Ok(files
        .into_iter()
        .map(|file| {
            let path = PathBuf::from("/dev/shm").join(&file);
            let id = file[prefix.len()..].parse::<u64>().ok();
            let fate = match id {
                Some(id) => clean_one(&format!("/{file}"), id, &path),
                None => PoolFate::Unreadable("not a pool id".into()),
            };
            PoolReport { path, fate }
        })
        .collect())
}

fn clean_one(name: &str, pool_id: u64, path: &std::path::Path) -> PoolFate {
    let seg = match init::open_initialised(name, STATES_OFFSET, Instant::now()) {
        Ok((seg, _)) => seg,
        Err(InitError::NotInitialised(_))
        | Err(InitError::Segment(SegmentError::Truncated { .. }))
            if young(path) =>
        {
            return PoolFate::Initialising
        }
        Err(InitError::NotInitialised(_)) => {
            Segment::unlink(name);
            return PoolFate::RemovedUninitialised;
        }
        Err(InitError::Segment(SegmentError::NotFound(_))) => return PoolFate::Removed,
        Err(e) => return PoolFate::Unreadable(e.to_string()),
    };
    // SAFETY: as in `TensorPool::attach_segment`: at least STATES_OFFSET
    // bytes, page aligned, `Fixed` valid for any bits, copied once.
    let fixed = unsafe { std::ptr::read_volatile(seg.base().cast::<Fixed>()) };
    let geo = match fixed.validate(pool_id, seg.len() as u64) {
        Ok(g) => g,
        Err(e) => return PoolFate::Unreadable(e.to_string()),
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
        PoolFate::Removed
    } else {
        PoolFate::Live {
            holders: (pool.members().load(horus_shm::sync::Ordering::Relaxed) & refs::HOLDER_BITS)
                .count_ones(),
        }
    }
}

fn young(path: &std::path::Path) -> bool {
    std::fs::metadata(path)
        .and_then(|m| m.modified())
        .ok()
        .and_then(|t| t.elapsed().ok())
        .is_none_or(|age| age < INIT_GRACE)
}
