//! When the drain gives up on a reservation that is never committed.
//!
//! A writer reserves cells, writes its record and commits it (ring.rs). One that dies in
//! between — a process killed while it logged into a ring it shares with its parent, a peer
//! scribbling on the segment — leaves a reservation that is never committed, and the
//! drain, which consumes in order, would wait at it for good while the ring fills and every
//! later record is dropped. So the drain, stuck at a position while later cells are
//! reserved, waits [`ABANDON_AFTER`]; then it notes `head` and waits [`GRACE`] more; then it
//! skips to the first committed record start before the noted `head` (or to that `head`):
//! every cell it skips belongs to a reservation made before the note and still not
//! committed a grace period later. The skipped cells are counted (`abandoned`).
//!
//! Not protected: a writer that is alive but stalled longer than that (preempted for over a
//! second between reserving and committing, which takes nanoseconds) loses its record
//! (counted as abandoned), and if the ring laps before it resumes, its late writes can
//! garble a newer record there (which a reader then decodes as malformed or, rarely, wrong).

use std::time::{Duration, Instant};

use crate::ring;
use crate::view::View;

/// How long the record at the drain's position may stay uncommitted while later cells are
/// reserved before its writer is presumed gone.
pub(crate) const ABANDON_AFTER: Duration = Duration::from_secs(1);
/// After that, how long the cells to skip must stay uncommitted.
pub(crate) const GRACE: Duration = Duration::from_millis(250);

/// The drain's watch over the position it is stuck at.
#[derive(Debug, Default)]
pub(crate) struct AbandonWatch {
    stall: Option<Stall>,
}

#[derive(Debug)]
struct Stall {
    /// The position the drain waits at.
    pos: u64,
    /// When it first found it uncommitted.
    since: Instant,
    /// `head` once [`ABANDON_AFTER`] passed, and when it was read.
    noted: Option<(u64, Instant)>,
}

impl AbandonWatch {
    /// The drain found no committed record at `pos` although cells up to `head` are
    /// reserved. Returns where to resume once the reservation at `pos` is deemed abandoned.
    pub(crate) fn stuck(&mut self, view: &View, pos: u64, head: u64, now: Instant) -> Option<u64> {
        let s = match &mut self.stall {
            Some(s) if s.pos == pos => s,
            _ => {
                self.stall = Some(Stall {
                    pos,
                    since: now,
                    noted: None,
                });
                return None;
            }
        };
        if now.duration_since(s.since) < ABANDON_AFTER {
            return None;
        }
        let Some((noted, at)) = s.noted else {
            s.noted = Some((head, now));
            return None;
        };
        if now.duration_since(at) < GRACE {
            return None;
        }
        self.stall = None;
        // Within one ring of `pos`, whatever a scribbled `head` said.
        let noted = noted.min(pos.saturating_add(view.cap));
        let to = ring::next_committed(|q| view.stamp(q), pos, noted, view.cap).unwrap_or(noted);
        (to > pos).then_some(to)
    }
}
