//! Writing transforms: input checks (tf2's, plus this buffer's), then, under
//! the writer lease, frame creation and the sample write.
//!
//! Frame creation: the writer fills record `n = frame count` (name, kind 0,
//! head 0, tail 0) and then stores `n + 1` with Release. A writer killed
//! before that store leaves an unpublished record that the next writer
//! simply fills again. Sample write: position `p = head`, slot `p mod
//! history` written through the seqlock, then `tail` and `head = p + 1`
//! stored with Release. A writer killed inside leaves the slot's sequence
//! odd and `head` at `p`: readers never look at position `p`, and the next
//! writer writes it again.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use horus_shm::sync::Ordering;

use crate::error::SetError;
use crate::history::{self, Kind};
use crate::layout::{FRAME_COUNT_OFF, KIND_DYNAMIC, KIND_NONE, KIND_STATIC, MAX_FRAME_ID};
use crate::math::{norm2_error, normalize, Transform};
use crate::mem::Mem;
use crate::names::{frame_count, write_name, Names};
use crate::seqlock;

/// tf2's `QUATERNION_NORMALIZATION_TOLERANCE`, on `| |q|² − 1 |`.
pub const QUATERNION_TOLERANCE: f64 = 0.01;

/// A transform to store, checked.
#[derive(Clone, Debug)]
pub(crate) struct Checked<'a> {
    pub(crate) parent: &'a str,
    pub(crate) child: &'a str,
    pub(crate) stamp: i64,
    pub(crate) tf: Transform,
    pub(crate) is_static: bool,
}

fn frame_id<'a>(id: &'a str, which: &'static str) -> Result<&'a str, SetError> {
    let id = id.strip_prefix('/').unwrap_or(id);
    if id.is_empty() {
        return Err(SetError::EmptyFrameId { which });
    }
    if id.len() > MAX_FRAME_ID {
        let mut cut = 64;
        while !id.is_char_boundary(cut) {
            cut -= 1;
        }
        return Err(SetError::FrameIdTooLong {
            frame: format!("{}…", &id[..cut]),
            len: id.len(),
            max: MAX_FRAME_ID,
        });
    }
    if id.chars().any(char::is_control) {
        return Err(SetError::BadFrameId {
            frame: id.escape_debug().to_string(),
        });
    }
    Ok(id)
}

/// How far ahead of the host clock a dynamic stamp may be, and the clock: read once for a
/// whole batch of transforms.
#[derive(Clone, Copy, Debug)]
pub(crate) struct FutureLimit {
    max: Duration,
    now: i64,
}

impl FutureLimit {
    /// `max` ahead of the clock now (None: no limit).
    pub(crate) fn from_now(max: Option<Duration>) -> Option<FutureLimit> {
        max.map(|max| FutureLimit { max, now: now_ns() })
    }
}

/// The checks that need no buffer: frame ids, self-parent, finiteness, the
/// quaternion (normalised when within tf2's tolerance), the future stamp.
pub(crate) fn check<'a>(
    parent: &'a str,
    child: &'a str,
    stamp: i64,
    tf: &Transform,
    is_static: bool,
    future: Option<FutureLimit>,
) -> Result<Checked<'a>, SetError> {
    let parent = frame_id(parent, "parent")?;
    let child = frame_id(child, "child")?;
    if parent == child {
        return Err(SetError::SelfParent {
            frame: child.to_owned(),
        });
    }
    if !tf
        .translation
        .iter()
        .chain(&tf.rotation)
        .all(|x| x.is_finite())
    {
        return Err(SetError::NotFinite {
            child: child.to_owned(),
        });
    }
    let err = norm2_error(&tf.rotation);
    if err.abs() >= QUATERNION_TOLERANCE {
        return Err(SetError::DenormalizedQuaternion {
            child: child.to_owned(),
            norm2: err + 1.0,
        });
    }
    if let (false, Some(FutureLimit { max, now })) = (is_static, future) {
        let ahead = i128::from(stamp) - i128::from(now);
        if ahead > max.as_nanos() as i128 {
            return Err(SetError::StampInFuture {
                child: child.to_owned(),
                stamp_ns: stamp,
                ahead: Duration::from_nanos(ahead.min(u64::MAX as i128) as u64),
                max,
            });
        }
    }
    Ok(Checked {
        parent,
        child,
        stamp,
        tf: Transform {
            translation: tf.translation,
            rotation: normalize(&tf.rotation),
        },
        is_static,
    })
}

/// This host's clock (CLOCK_REALTIME) in nanoseconds since the epoch.
pub fn now_ns() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos().min(i64::MAX as u128) as i64)
}

/// Finds or creates the record of `name`. The caller holds the lease.
fn frame_of(mem: &Mem, names: &Names, name: &str) -> Result<u32, SetError> {
    if let Some(f) = names.find(mem, name) {
        return Ok(f);
    }
    let n = frame_count(mem);
    if n >= mem.layout.caps.max_frames {
        return Err(SetError::TooManyFrames {
            frame: name.to_owned(),
            max: mem.layout.caps.max_frames as usize,
        });
    }
    // Relaxed stores: the record is published by the Release store of the count.
    write_name(mem, n, name);
    mem.kind(n).store(KIND_NONE, Ordering::Relaxed);
    mem.head(n).store(0, Ordering::Relaxed);
    mem.tail(n).store(0, Ordering::Relaxed);
    mem.writer(n).store(0, Ordering::Relaxed);
    // Release: readers that Acquire-load the count see the whole record.
    mem.word(FRAME_COUNT_OFF)
        .store(u64::from(n) + 1, Ordering::Release);
    names.refresh(mem);
    Ok(n)
}

/// Stores one checked transform. The caller holds the writer lease.
pub(crate) fn write_locked(
    mem: &Mem,
    names: &Names,
    c: &Checked<'_>,
    me: u64,
) -> Result<(), SetError> {
    let corrupt = |e: crate::LookupError| SetError::Corrupt(e.to_string());
    // Refuse before creating any frame for a transform that cannot be stored.
    let existing_child = names.find(mem, c.child);
    let existing_parent = names.find(mem, c.parent);
    // The child's newest sample, read once for the loop, kind and stamp checks.
    let newest = match existing_child {
        Some(child) => history::newest(mem, child, frame_count(mem)),
        None => Ok(None),
    };
    if let (Some(child), Some(parent)) = (existing_child, existing_parent) {
        // An edge already in the latest tree (the child's newest sample has this parent)
        // adds no loop: only a new parent needs the walk up the tree.
        let same_edge = matches!(&newest, Ok(Some(s)) if s.parent == parent);
        if !same_edge {
            would_loop(mem, c, child, parent)?;
        }
    }
    if let Some(child) = existing_child {
        check_kind_and_stamp(mem, c, child, &newest).map_err(|e| match e {
            Refused::Set(e) => e,
            Refused::Read(e) => corrupt(e),
        })?;
    }
    let parent = match existing_parent {
        Some(f) => f,
        None => frame_of(mem, names, c.parent)?,
    };
    let child = match existing_child {
        Some(f) => f,
        None => frame_of(mem, names, c.child)?,
    };
    let frames = frame_count(mem);
    let kind = if c.is_static {
        KIND_STATIC
    } else {
        KIND_DYNAMIC
    };
    // Relaxed: published with the head's Release store below.
    mem.kind(child).store(kind, Ordering::Relaxed);

    let cap = u64::from(mem.layout.caps.history);
    // Relaxed: we are the only writer (lease), and the lease's Acquire made
    // the previous writer's stores visible.
    let p = mem.head(child).load(Ordering::Relaxed);
    if p == u64::MAX {
        // Only a peer's garbage gets here (2^64 writes): there is no next position.
        return Err(SetError::Corrupt(format!(
            "frame {:?} claims {p} samples written",
            c.child
        )));
    }
    let slot = mem.slot(child, (p & (cap - 1)) as usize);
    seqlock::write(slot, p / cap, &history::encode(c.stamp, parent, &c.tf));
    let tail = if c.is_static {
        p
    } else {
        let mut tail = mem
            .tail(child)
            .load(Ordering::Relaxed)
            .max((p + 1).saturating_sub(cap))
            .min(p);
        // tf2 prunes samples older than the newest minus the window; at most
        // `history` steps.
        let oldest_kept = c.stamp.saturating_sub(mem.layout.window_ns);
        while tail < p {
            match read_stamp(mem, child, tail, frames) {
                Some(s) if s >= oldest_kept => break,
                _ => tail += 1,
            }
        }
        tail
    };
    // Release (both): a reader that Acquire-loads them sees the slot written above.
    mem.tail(child).store(tail, Ordering::Release);
    mem.head(child).store(p + 1, Ordering::Release);
    mem.writer(child).store(me, Ordering::Relaxed);
    Ok(())
}

fn read_stamp(mem: &Mem, f: u32, p: u64, frames: u32) -> Option<i64> {
    let cap = u64::from(mem.layout.caps.history);
    match seqlock::read(mem.slot(f, (p & (cap - 1)) as usize), p / cap) {
        seqlock::Read::Sample(d) if d[1] < u64::from(frames) => Some(d[0] as i64),
        _ => None,
    }
}

enum Refused {
    Set(SetError),
    Read(crate::LookupError),
}

/// `newest`: the child's newest sample as read by the caller (under the lease: nobody else
/// writes it meanwhile).
fn check_kind_and_stamp(
    mem: &Mem,
    c: &Checked<'_>,
    child: u32,
    newest: &Result<Option<history::Sample>, crate::LookupError>,
) -> Result<(), Refused> {
    let kind = history::kind(mem, child).map_err(Refused::Read)?;
    let conflict = |existing| {
        Refused::Set(SetError::KindConflict {
            child: c.child.to_owned(),
            existing,
            offered: if c.is_static { "static" } else { "dynamic" },
        })
    };
    match (kind, c.is_static) {
        (Kind::Static, false) => return Err(conflict("static")),
        (Kind::Dynamic, true) => return Err(conflict("dynamic")),
        (Kind::Dynamic, false) => {}
        _ => return Ok(()),
    }
    // A newest sample we cannot read (a peer's garbage) does not block writing.
    let Ok(Some(newest)) = newest else {
        return Ok(());
    };
    if c.stamp < newest.stamp.saturating_sub(mem.layout.window_ns) {
        return Err(Refused::Set(SetError::TooOld {
            child: c.child.to_owned(),
            stamp_ns: c.stamp,
            newest_ns: newest.stamp,
            window: mem.layout.caps.window,
        }));
    }
    if c.stamp <= newest.stamp {
        return Err(Refused::Set(SetError::NotNewer {
            child: c.child.to_owned(),
            stamp_ns: c.stamp,
            newest_ns: newest.stamp,
        }));
    }
    Ok(())
}

/// Refuses making `parent` the parent of `child` when `child` is an ancestor
/// of `parent` in the latest tree (a walk bounded by the frame count).
fn would_loop(mem: &Mem, c: &Checked<'_>, child: u32, parent: u32) -> Result<(), SetError> {
    let frames = frame_count(mem);
    let mut f = parent;
    for _ in 0..=frames {
        if f == child {
            return Err(SetError::WouldLoop {
                child: c.child.to_owned(),
                parent: c.parent.to_owned(),
            });
        }
        match history::newest(mem, f, frames) {
            Ok(Some(s)) => f = s.parent,
            _ => return Ok(()),
        }
    }
    // A loop above `parent` that does not pass through `child` (a peer's
    // doing): not ours to refuse; lookups through it report the loop.
    Ok(())
}
