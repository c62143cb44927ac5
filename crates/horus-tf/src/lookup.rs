//! `lookup_transform` with tf2's semantics (`BufferCore::walkToTopParent` and
//! `getLatestCommonTime`).
//!
//! From the source frame we walk up, composing each frame's transform to its
//! parent at the lookup time, until we reach the target (the target is an
//! ancestor), a root (a frame with no transform) or a frame whose history
//! does not cover the time. From the target we walk up the same way until we
//! reach the frame the first walk stopped at (or the source: the source is an
//! ancestor). The result is `T(top←target)⁻¹ · T(top←source)`. Walks are
//! bounded: a walk longer than the frame count (or 1000 frames, tf2's
//! `MAX_GRAPH_DEPTH`) is a loop.
//!
//! A "latest" lookup (time 0) first computes, as tf2 does, the latest time at
//! which every dynamic transform on the path from source to target (up to
//! their common ancestor) has data: the smallest of their newest stamps.
//! Static transforms hold at every time and do not count; a path of static
//! transforms only gives time 0.

use crate::error::LookupError;
use crate::history::{self, At};
use crate::math::{StampedTransform, Transform};
use crate::mem::Mem;
use crate::names::{frame_count, Names};

/// tf2's `MAX_GRAPH_DEPTH`.
pub(crate) const MAX_DEPTH: usize = 1000;

/// Resolves a frame id (tf2 strips one leading `/`).
pub(crate) fn resolve(mem: &Mem, names: &Names, frame: &str) -> Result<u32, LookupError> {
    let key = frame.strip_prefix('/').unwrap_or(frame);
    names
        .find(mem, key)
        .ok_or_else(|| LookupError::UnknownFrame {
            frame: frame.to_owned(),
        })
}

/// The transform that maps coordinates in `source` to coordinates in
/// `target` at `time` (0: latest common time).
pub(crate) fn lookup(
    mem: &Mem,
    names: &Names,
    target: &str,
    source: &str,
    time: i64,
) -> Result<StampedTransform, LookupError> {
    let t = resolve(mem, names, target)?;
    let s = resolve(mem, names, source)?;
    let frames = frame_count(mem);
    let limit = (frames as usize).min(MAX_DEPTH);
    if t == s {
        let stamp = if time == 0 {
            match history::kind(mem, s)? {
                history::Kind::Dynamic => history::newest(mem, s, frames)?.map_or(0, |x| x.stamp),
                _ => 0,
            }
        } else {
            time
        };
        return Ok(StampedTransform {
            transform: Transform::IDENTITY,
            stamp_ns: stamp,
        });
    }
    let time = if time == 0 {
        latest_common_time(mem, names, t, s, frames, limit)?
    } else {
        time
    };

    // Source walk: T(top←source).
    let mut source_tf = Transform::IDENTITY;
    let mut frame = s;
    let mut source_gap: Option<LookupError> = None;
    let mut steps = 0;
    let top = loop {
        if frame == t {
            return Ok(StampedTransform {
                transform: source_tf,
                stamp_ns: time,
            });
        }
        match history::at(mem, frame, time, frames)? {
            At::NoData => break frame,
            At::Found { parent, tf } => {
                source_tf = tf.compose(&source_tf);
                frame = parent;
            }
            gap => {
                source_gap = Some(gap_error(mem, names, frame, time, gap));
                break frame;
            }
        }
        steps += 1;
        if steps > limit {
            return Err(loop_error(mem, names, frame, steps));
        }
    };

    // Target walk: T(top←target).
    let mut target_tf = Transform::IDENTITY;
    let mut frame = t;
    let mut steps = 0;
    while frame != top {
        if frame == s {
            // The source is an ancestor of the target.
            return Ok(StampedTransform {
                transform: target_tf.inverse(),
                stamp_ns: time,
            });
        }
        match history::at(mem, frame, time, frames)? {
            At::NoData => break,
            At::Found { parent, tf } => {
                target_tf = tf.compose(&target_tf);
                frame = parent;
            }
            gap => {
                return Err(source_gap.unwrap_or_else(|| gap_error(mem, names, frame, time, gap)))
            }
        }
        steps += 1;
        if steps > limit {
            return Err(loop_error(mem, names, frame, steps));
        }
    }
    if frame != top {
        if let Some(e) = source_gap {
            return Err(e);
        }
        return Err(LookupError::Disconnected {
            target_frame: target.to_owned(),
            source_frame: source.to_owned(),
            target_root: names.name_of(mem, frame),
            source_root: names.name_of(mem, top),
        });
    }
    Ok(StampedTransform {
        transform: target_tf.inverse().compose(&source_tf),
        stamp_ns: time,
    })
}

fn gap_error(mem: &Mem, names: &Names, f: u32, time: i64, gap: At) -> LookupError {
    let frame = names.name_of(mem, f);
    match gap {
        At::Past { earliest, latest } => LookupError::ExtrapolationPast {
            frame,
            requested_ns: time,
            earliest_ns: earliest,
            latest_ns: latest,
        },
        At::Future { earliest, latest } => LookupError::ExtrapolationFuture {
            frame,
            requested_ns: time,
            earliest_ns: earliest,
            latest_ns: latest,
        },
        At::NoData | At::Found { .. } => unreachable!("only gaps are errors"),
    }
}

fn loop_error(mem: &Mem, names: &Names, f: u32, depth: usize) -> LookupError {
    LookupError::Loop {
        frame: names.name_of(mem, f),
        depth,
    }
}

/// Frames on a walk, with the newest stamp of each dynamic one. Small chains
/// stay on the stack.
struct Chain {
    len: usize,
    inline: [(u32, i64); 16],
    more: Vec<(u32, i64)>,
}

impl Chain {
    fn new() -> Chain {
        Chain {
            len: 0,
            inline: [(0, 0); 16],
            more: Vec::new(),
        }
    }
    fn push(&mut self, e: (u32, i64)) {
        if self.len < self.inline.len() {
            self.inline[self.len] = e;
        } else {
            self.more.push(e);
        }
        self.len += 1;
    }
    fn iter(&self) -> impl Iterator<Item = &(u32, i64)> {
        self.inline[..self.len.min(16)].iter().chain(&self.more)
    }
    fn position(&self, f: u32) -> Option<usize> {
        self.iter().position(|e| e.0 == f)
    }
}

/// tf2's `getLatestCommonTime`: the smallest newest-stamp of the dynamic
/// frames on the path between `t` and `s` (0 when there are none).
fn latest_common_time(
    mem: &Mem,
    names: &Names,
    t: u32,
    s: u32,
    frames: u32,
    limit: usize,
) -> Result<i64, LookupError> {
    // Each entry: a frame and its newest stamp (i64::MAX when static: ignored).
    let mut source_chain = Chain::new();
    let mut frame = s;
    let source_top = loop {
        let Some(newest) = history::newest(mem, frame, frames)? else {
            break frame;
        };
        let stamp = match history::kind(mem, frame)? {
            history::Kind::Static => i64::MAX,
            _ => newest.stamp,
        };
        source_chain.push((frame, stamp));
        frame = newest.parent;
        if frame == t {
            return Ok(common(source_chain.iter()));
        }
        if source_chain.len > limit {
            return Err(loop_error(mem, names, frame, source_chain.len));
        }
    };
    let mut target_chain = Chain::new();
    let mut frame = t;
    loop {
        if frame == s {
            return Ok(common(target_chain.iter()));
        }
        if let Some(i) = source_chain.position(frame) {
            // The common ancestor: only the frames below it count.
            return Ok(common(
                source_chain.iter().take(i).chain(target_chain.iter()),
            ));
        }
        if frame == source_top {
            return Ok(common(source_chain.iter().chain(target_chain.iter())));
        }
        let Some(newest) = history::newest(mem, frame, frames)? else {
            return Err(LookupError::Disconnected {
                target_frame: names.name_of(mem, t),
                source_frame: names.name_of(mem, s),
                target_root: names.name_of(mem, frame),
                source_root: names.name_of(mem, source_top),
            });
        };
        let stamp = match history::kind(mem, frame)? {
            history::Kind::Static => i64::MAX,
            _ => newest.stamp,
        };
        target_chain.push((frame, stamp));
        frame = newest.parent;
        if target_chain.len > limit {
            return Err(loop_error(mem, names, frame, target_chain.len));
        }
    }
}

fn common<'a>(entries: impl Iterator<Item = &'a (u32, i64)>) -> i64 {
    let m = entries.map(|e| e.1).min().unwrap_or(i64::MAX);
    if m == i64::MAX {
        0
    } else {
        m
    }
}
