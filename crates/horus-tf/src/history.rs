//! Reading one frame's history: its newest sample, and the sample (or the two
//! samples to interpolate between) for a time, as tf2's `TimeCache` and
//! `StaticCache` answer them.
//!
//! A frame's ring holds positions `lo..head`, where `head` counts the samples
//! ever written and `lo = max(tail, head − history)`: `tail` is the oldest
//! position the writer still considers inside the window. Positions only
//! grow, stamps strictly increase with them (the writer refuses others), so a
//! time is found by looking at the newest two samples and, failing that, by
//! binary search. A slot overwritten while we search (the writer lapped us)
//! restarts the search with fresh bounds, a bounded number of times.

use horus_shm::sync::Ordering;

use crate::error::LookupError;
use crate::layout::{KIND_DYNAMIC, KIND_NONE, KIND_STATIC};
use crate::math::{norm2_error, Transform};
use crate::mem::Mem;
use crate::seqlock::{self, Read, DATA_WORDS};

/// Searches restarted before a lookup reports [`LookupError::Busy`].
pub(crate) const MAX_TRIES: u32 = 8;

/// One decoded, validated sample.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Sample {
    pub(crate) stamp: i64,
    pub(crate) parent: u32,
    pub(crate) tf: Transform,
}

/// What a frame's history says about a time.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum At {
    /// The frame has no transform (it is only ever a parent: a root).
    NoData,
    /// The frame's transform to `parent` at the time.
    Found { parent: u32, tf: Transform },
    /// Before the oldest sample.
    Past { earliest: i64, latest: i64 },
    /// After the newest sample.
    Future { earliest: i64, latest: i64 },
}

/// How a frame is kept.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    /// Nothing written yet.
    None,
    /// A history of stamped samples.
    Dynamic,
    /// One transform that holds at every time.
    Static,
}

pub(crate) fn kind(mem: &Mem, f: u32) -> Result<Kind, LookupError> {
    // Relaxed: the kind is stored before the first head is published, and we
    // read the head with Acquire before relying on any sample.
    match mem.kind(f).load(Ordering::Relaxed) {
        KIND_NONE => Ok(Kind::None),
        KIND_DYNAMIC => Ok(Kind::Dynamic),
        KIND_STATIC => Ok(Kind::Static),
        k => Err(LookupError::Corrupt(format!("frame #{f} has kind {k}"))),
    }
}

/// Encodes a sample as the slot's data words.
pub(crate) fn encode(stamp: i64, parent: u32, tf: &Transform) -> [u64; DATA_WORDS] {
    let t = tf.translation;
    let q = tf.rotation;
    [
        stamp as u64,
        u64::from(parent),
        t[0].to_bits(),
        t[1].to_bits(),
        t[2].to_bits(),
        q[0].to_bits(),
        q[1].to_bits(),
        q[2].to_bits(),
        q[3].to_bits(),
    ]
}

/// Decodes and validates a sample read from the segment. `frames` is the
/// frame count the caller loaded before reading; a parent past it is checked
/// against the count again before it is called garbage: a writer publishes a
/// new parent's record (count stored with Release) before the sample naming
/// it, and our seqlock read of that sample (Acquire) makes the newer count
/// visible to this load — a frame reparented under a new frame while we
/// looked is not corruption.
fn decode(mem: &Mem, f: u32, d: &[u64; DATA_WORDS], frames: u32) -> Result<Sample, LookupError> {
    if d[1] >= u64::from(frames) && d[1] >= u64::from(crate::names::frame_count(mem)) {
        return Err(LookupError::Corrupt(format!(
            "frame #{f} names parent #{} of {frames} frames",
            d[1]
        )));
    }
    let v = |i: usize| f64::from_bits(d[i]);
    let tf = Transform {
        translation: [v(2), v(3), v(4)],
        rotation: [v(5), v(6), v(7), v(8)],
    };
    let finite = tf
        .translation
        .iter()
        .chain(&tf.rotation)
        .all(|x| x.is_finite());
    if !finite || norm2_error(&tf.rotation).abs() > 1e-6 {
        return Err(LookupError::Corrupt(format!(
            "frame #{f} holds a transform that is not finite or not a unit rotation"
        )));
    }
    Ok(Sample {
        stamp: d[0] as i64,
        parent: d[1] as u32,
        tf,
    })
}

/// The live positions `lo..head` of frame `f` (`head == 0`: no samples).
#[inline]
fn bounds(mem: &Mem, f: u32) -> (u64, u64) {
    // Acquire: pairs with the writer's Release stores of tail and head, so
    // the kind word and every sample below `head` are visible.
    let tail = mem.tail(f).load(Ordering::Acquire);
    let head = mem.head(f).load(Ordering::Acquire);
    if head == 0 {
        return (0, 0);
    }
    let cap = u64::from(mem.layout.caps.history);
    let lo = tail.max(head.saturating_sub(cap)).min(head - 1);
    (lo, head)
}

/// The sample at position `p` of frame `f`, if its slot still holds it.
#[inline]
fn read_at(mem: &Mem, f: u32, p: u64, frames: u32) -> Result<Option<Sample>, LookupError> {
    let cap = u64::from(mem.layout.caps.history);
    // history is a power of two, so `p % cap` is `p & (cap − 1)` < history.
    let slot = mem.slot(f, (p & (cap - 1)) as usize);
    match seqlock::read(slot, p / cap) {
        Read::Sample(d) => decode(mem, f, &d, frames).map(Some),
        Read::Gone { .. } => Ok(None),
    }
}

/// Only the stamp of position `p` of frame `f`, if its slot still holds it.
#[inline]
fn stamp_at(mem: &Mem, f: u32, p: u64) -> Option<i64> {
    let cap = u64::from(mem.layout.caps.history);
    let slot = mem.slot(f, (p & (cap - 1)) as usize);
    seqlock::read_first(slot, p / cap).map(|s| s as i64)
}

/// Whether the ring's oldest live position `lo` is the one the next write
/// overwrites: the ring is full (`head − lo` = history), so position `head`
/// goes into `lo`'s slot. A writer at work there — or killed there, leaving
/// an odd sequence until the frame is written again — makes `lo` unreadable
/// for good reason: that sample is gone, and `lo + 1` is the oldest.
#[inline]
fn next_overwritten(mem: &Mem, lo: u64, head: u64) -> bool {
    head - lo == u64::from(mem.layout.caps.history)
}

/// The oldest readable position of `lo..head` and its stamp: `lo`, or `lo + 1`
/// when `lo` is being (or was, by a writer that died) overwritten. None: the
/// writer lapped us (retry with fresh bounds).
#[inline]
fn oldest_stamp(mem: &Mem, f: u32, lo: u64, head: u64) -> Option<(u64, i64)> {
    if let Some(s) = stamp_at(mem, f, lo) {
        return Some((lo, s));
    }
    // `lo + 1 < head`: history ≥ 2.
    next_overwritten(mem, lo, head)
        .then(|| stamp_at(mem, f, lo + 1).map(|s| (lo + 1, s)))
        .flatten()
}

/// The newest sample of `f` (None: no samples).
pub(crate) fn newest(mem: &Mem, f: u32, frames: u32) -> Result<Option<Sample>, LookupError> {
    for _ in 0..MAX_TRIES {
        let (_, head) = bounds(mem, f);
        if head == 0 {
            return Ok(None);
        }
        if let Some(s) = read_at(mem, f, head - 1, frames)? {
            return Ok(Some(s));
        }
    }
    Err(busy(f))
}

/// Oldest and newest stamps and the number of live samples of `f`.
pub(crate) fn span(mem: &Mem, f: u32, frames: u32) -> Result<Option<(i64, i64, u64)>, LookupError> {
    for _ in 0..MAX_TRIES {
        let (mut lo, head) = bounds(mem, f);
        if head == 0 {
            return Ok(None);
        }
        let mut first = read_at(mem, f, lo, frames)?;
        if first.is_none() && next_overwritten(mem, lo, head) {
            // Being overwritten (or torn by a writer that died): gone.
            lo += 1;
            first = read_at(mem, f, lo, frames)?;
        }
        let (Some(first), Some(last)) = (first, read_at(mem, f, head - 1, frames)?) else {
            continue;
        };
        return Ok(Some((first.stamp, last.stamp, head - lo)));
    }
    Err(busy(f))
}

fn busy(f: u32) -> LookupError {
    LookupError::Busy {
        frame: format!("#{f}"),
        tries: MAX_TRIES,
    }
}

/// Frame `f`'s transform to its parent at `time` (0: the newest), as tf2's
/// caches give it: a static frame's one transform at any time; a dynamic
/// frame's sample at exactly that stamp, or the interpolation of the two
/// samples around it (the older one alone when their parents differ), or an
/// extrapolation verdict with the span held.
pub(crate) fn at(mem: &Mem, f: u32, time: i64, frames: u32) -> Result<At, LookupError> {
    let static_frame = kind(mem, f)? == Kind::Static;
    'retry: for _ in 0..MAX_TRIES {
        let (lo, head) = bounds(mem, f);
        if head == 0 {
            return Ok(At::NoData);
        }
        let Some(latest) = stamp_at(mem, f, head - 1) else {
            continue;
        };
        if static_frame || time == 0 || time == latest {
            let Some(newest) = read_at(mem, f, head - 1, frames)? else {
                continue;
            };
            return Ok(found(&newest));
        }
        if time > latest {
            return Ok(At::Future {
                earliest: oldest_stamp(mem, f, lo, head).map_or(latest, |(_, s)| s),
                latest,
            });
        }
        if head - 1 == lo {
            return Ok(At::Past {
                earliest: latest,
                latest,
            });
        }
        // The common case: between the two newest samples.
        let Some(prev) = stamp_at(mem, f, head - 2) else {
            if head - 2 == lo && next_overwritten(mem, lo, head) {
                // A ring of two whose older sample is being overwritten
                // (or torn by a dead writer): only the newest is left.
                return Ok(At::Past {
                    earliest: latest,
                    latest,
                });
            }
            continue;
        };
        if prev <= time {
            let (Some(prev), Some(newest)) = (
                read_at(mem, f, head - 2, frames)?,
                read_at(mem, f, head - 1, frames)?,
            ) else {
                continue;
            };
            return Ok(between(&prev, &newest, time));
        }
        // A steady stream: guess the position from the newest spacing and check
        // it and its successor (two neighbouring slots), before any search.
        if latest > prev {
            let back =
                (i128::from(prev) - i128::from(time)) / (i128::from(latest) - i128::from(prev));
            let back = u64::try_from(back).unwrap_or(u64::MAX);
            let g = (head - 2).saturating_sub(back.saturating_add(1));
            if g >= lo {
                match (stamp_at(mem, f, g), stamp_at(mem, f, g + 1)) {
                    (Some(sg), Some(sn)) if sg <= time && time <= sn => {
                        let (Some(sa), Some(sb)) =
                            (read_at(mem, f, g, frames)?, read_at(mem, f, g + 1, frames)?)
                        else {
                            continue;
                        };
                        return Ok(between(&sa, &sb, time));
                    }
                    // The oldest being overwritten: the search below starts after it.
                    (None, _) if g == lo && next_overwritten(mem, lo, head) => {}
                    (None, _) | (_, None) => continue,
                    _ => {}
                }
            }
        }
        let Some((lo, first)) = oldest_stamp(mem, f, lo, head) else {
            continue;
        };
        if lo > head - 2 {
            // Only with a ring of two whose stamps do not increase (a
            // peer's garbage): no interval to search.
            continue;
        }
        if time < first {
            return Ok(At::Past {
                earliest: first,
                latest,
            });
        }
        // Invariant: stamp(a) ≤ time < stamp(b). Interpolation search (stamps of
        // a steady stream are evenly spaced: one or two probes), with a bisection
        // step whenever a probe did not halve the interval, so at most about
        // 2·log2(history) probes.
        let (mut a, mut sa) = (lo, first);
        let (mut b, mut sb) = (head - 2, prev);
        let mut bisect = false;
        while b - a > 1 {
            let m = if bisect || sb <= sa {
                a + (b - a) / 2
            } else {
                let frac = (i128::from(time) - i128::from(sa)) as f64
                    / (i128::from(sb) - i128::from(sa)) as f64;
                (a + ((b - a) as f64 * frac) as u64).clamp(a + 1, b - 1)
            };
            let Some(sm) = stamp_at(mem, f, m) else {
                continue 'retry;
            };
            let before = b - a;
            if sm <= time {
                (a, sa) = (m, sm);
            } else {
                (b, sb) = (m, sm);
            }
            bisect = !bisect && (b - a) * 2 > before;
        }
        let (Some(sa), Some(sb)) = (read_at(mem, f, a, frames)?, read_at(mem, f, b, frames)?)
        else {
            continue;
        };
        return Ok(between(&sa, &sb, time));
    }
    Err(busy(f))
}

fn found(s: &Sample) -> At {
    At::Found {
        parent: s.parent,
        tf: s.tf,
    }
}

/// Interpolates between `a` and `b` at `time`, `a.stamp ≤ time ≤ b.stamp`.
#[inline]
fn between(a: &Sample, b: &Sample, time: i64) -> At {
    if time == a.stamp || a.parent != b.parent || b.stamp <= a.stamp {
        // tf2: samples with different parents are not interpolated.
        return found(a);
    }
    if time >= b.stamp {
        return found(b);
    }
    // i128: a peer's stamps may be anywhere in i64; the differences may not fit it.
    let ratio = (i128::from(time) - i128::from(a.stamp)) as f64
        / (i128::from(b.stamp) - i128::from(a.stamp)) as f64;
    At::Found {
        parent: a.parent,
        tf: Transform::interpolate(&a.tf, &b.tf, ratio),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::layout::{Capacities, Layout};
    use crate::names::{frame_count, Names};
    use crate::writer::{check, write_locked};

    fn set(mem: &Mem, names: &Names, parent: &str, child: &str, stamp: i64) {
        let c = check(parent, child, stamp, &Transform::IDENTITY, false, None).unwrap();
        write_locked(mem, names, &c, 1).unwrap();
    }

    /// Regression: a lookup loads the frame count once, then reads samples.
    /// A writer that meanwhile reparented a frame under a brand-new frame
    /// (record published, then the sample naming it) made that sample's
    /// parent index reach past the count the lookup held: it was reported
    /// as `Corrupt`, a false error from a legitimate race.
    #[test]
    fn a_parent_published_after_the_reader_loaded_the_frame_count_is_not_corrupt() {
        let caps = Capacities {
            max_frames: 8,
            history: 4,
            ..Capacities::default()
        };
        let mem = Mem::heap(Layout::new(caps).unwrap());
        let names = Names::default();
        set(&mem, &names, "odom", "base", 1_000);
        let base = names.find(&mem, "base").unwrap();
        // The lookup's frame count: odom and base.
        let frames = frame_count(&mem);
        assert_eq!(frames, 2);
        // Then `base` moves under a new frame, record #2.
        set(&mem, &names, "map", "base", 2_000);
        assert_eq!(newest(&mem, base, frames).unwrap().unwrap().parent, 2);
        assert!(matches!(
            at(&mem, base, 0, frames),
            Ok(At::Found { parent: 2, .. })
        ));
        // A parent past every published record is still a peer's garbage.
        let slot = mem.slot(base, 2);
        seqlock::write(slot, 0, &encode(3_000, 7, &Transform::IDENTITY));
        mem.head(base).store(3, Ordering::Release);
        assert!(matches!(
            newest(&mem, base, frames),
            Err(LookupError::Corrupt(_))
        ));
    }
}
