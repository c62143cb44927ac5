//! Loss from ROS 2 counted at the bridge, from the writers' own sequence numbers.
//!
//! Every DDS writer numbers its samples (RTPS sequence numbers 1, 2, 3, … per writer GUID),
//! and RustDDS hands the number over with each sample. A sample more than one past the last
//! one taken from the same writer means that the ones between never reached the bridge (a
//! best-effort sample lost on the way, a reliable writer's KEEP_LAST history overwriting
//! them before they were acknowledged, the bridge's reader cache overflowing): they are
//! counted `lost` at the bridge.
//!
//! No false loss:
//! - A writer's first sample (a writer that joined, the bridge's reader that joined a
//!   writer mid-stream, a writer restarted: a new GUID) sets its starting point, counts
//!   nothing.
//! - A reader reopened (the route closed, e.g. the last horus subscriber left, and opened
//!   again) restarts at the next new sample of each writer: what the writers published
//!   while no route was open had nobody in horus to lose it.
//! - A sample RustDDS could not hand over (not little-endian CDR: counted `malformed`
//!   where it happened, without its identity) leaves a hole in its writer's numbers; the
//!   next gap absorbs it instead of counting it a second time as lost.
//!
//! No duplicate: a reopened transient-local reader is sent each writer's history again
//! (DDS serves a new reader the last N samples: right for a new ROS 2 subscriber, but the
//! horus subscribers behind the bridge already had them). Samples of a writer numbered at
//! or below the last one the bridge carried from it are that replay: dropped and counted
//! `replayed`, never delivered to horus a second time.
//!
//! Bounded: one entry per writer the scan accepted; writers no longer accepted are
//! forgotten at each scan ([`SequenceGaps::forget_writers_except`]).

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicU64, Ordering};

use rustdds::{SequenceNumber, GUID};

use crate::status::RouteCounters;

/// Samples RustDDS failed to hand over that are remembered for absorbing into a later gap
/// (past this they stay counted as malformed and a gap counts its full size).
const MAX_UNATTRIBUTED: u64 = 1 << 16;

/// Where one writer stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct WriterPosition {
    /// The last sequence number carried (or dropped) from it.
    last: i64,
    /// The reader incarnation that took it.
    reader: u64,
}

/// Numbers each DDS reader the bridge opens, so that a reopened reader is told apart.
static NEXT_READER: AtomicU64 = AtomicU64::new(1);

/// A fresh reader incarnation number (one per DDS reader the bridge creates).
pub(crate) fn new_reader_incarnation() -> u64 {
    // Relaxed: only uniqueness matters, no other memory is published through it.
    NEXT_READER.fetch_add(1, Ordering::Relaxed)
}

/// What a route from ROS 2 knows of its writers' sequence numbers. Kept by the route (it
/// survives the DDS reader being closed and reopened).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct SequenceGaps {
    writers: HashMap<GUID, WriterPosition>,
    /// Samples RustDDS took but could not hand over (their numbers show as a gap later).
    unattributed: u64,
}

impl SequenceGaps {
    /// Looks at the sample numbered `seq` from `writer`, taken by reader incarnation
    /// `reader`; counts a gap before it in `c.lost`. Returns whether the sample must be
    /// dropped as a replay of one already carried (counted in `c.replayed`).
    pub(crate) fn is_replay(
        &mut self,
        reader: u64,
        writer: GUID,
        seq: SequenceNumber,
        c: &mut RouteCounters,
    ) -> bool {
        let seq = i64::from(seq);
        let Some(pos) = self.writers.get_mut(&writer) else {
            self.writers
                .insert(writer, WriterPosition { last: seq, reader });
            return false;
        };
        if pos.reader != reader {
            // A reopened reader: the writer's history again, then its new samples.
            if seq <= pos.last {
                c.replayed += 1;
                return true;
            }
            *pos = WriterPosition { last: seq, reader };
            return false;
        }
        if seq <= pos.last {
            // Not a replay on the same reader (DDS hands a reader each sample once): a
            // writer restarted under the same GUID, or a best-effort sample out of order.
            // Carried; nothing counted (no false loss), the position kept.
            return false;
        }
        let gap = u64::try_from(seq - pos.last - 1).unwrap_or(0);
        let absorbed = gap.min(self.unattributed);
        self.unattributed -= absorbed;
        c.lost += gap - absorbed;
        pos.last = seq;
        false
    }

    /// Whether a sample of `writer` was seen (since the route opened or the writer was last
    /// forgotten).
    pub(crate) fn knows(&self, writer: GUID) -> bool {
        self.writers.contains_key(&writer)
    }

    /// A sample RustDDS took but could not hand over (counted `malformed` by the caller):
    /// its number will show as a gap, which must not count it again as lost.
    pub(crate) fn undecodable(&mut self) {
        self.unattributed = (self.unattributed + 1).min(MAX_UNATTRIBUTED);
    }

    /// Forgets the writers not in `accepted` (GUIDs as discovery prints them): gone, or
    /// refused. A writer that comes back under the same GUID starts afresh.
    pub(crate) fn forget_writers_except(&mut self, accepted: &HashSet<String>) {
        self.writers
            .retain(|g, _| accepted.contains(&format!("{g:?}")));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn guid(n: u8) -> GUID {
        let mut b = [n; 16];
        b[15] = 0x03; // a no-key writer
        GUID::from_bytes(b)
    }

    fn feed(g: &mut SequenceGaps, reader: u64, w: GUID, seqs: &[i64]) -> (RouteCounters, Vec<i64>) {
        let mut c = RouteCounters::default();
        let carried = seqs
            .iter()
            .copied()
            .filter(|s| !g.is_replay(reader, w, SequenceNumber::new(*s), &mut c))
            .collect();
        (c, carried)
    }

    #[test]
    fn a_gap_in_a_writers_numbers_is_counted_lost() {
        let mut g = SequenceGaps::default();
        let (c, carried) = feed(&mut g, 1, guid(1), &[1, 2, 5, 6, 10]);
        assert_eq!(c.lost, 2 + 3);
        assert_eq!(carried, vec![1, 2, 5, 6, 10]);
    }

    #[test]
    fn a_writers_first_sample_after_join_is_not_a_gap() {
        let mut g = SequenceGaps::default();
        let (c, _) = feed(&mut g, 1, guid(1), &[1000, 1001]);
        assert_eq!(c.lost, 0);
        // A second writer on the same route starts its own numbering.
        let (c, _) = feed(&mut g, 1, guid(2), &[40, 41]);
        assert_eq!(c.lost, 0);
    }

    #[test]
    fn a_restarted_writer_resets_no_false_loss() {
        let mut g = SequenceGaps::default();
        let (c, _) = feed(&mut g, 1, guid(1), &[1, 2, 3, 4]);
        assert_eq!(c.lost, 0);
        // Restarted: a new GUID (the old one forgotten once discovery lost it).
        g.forget_writers_except(&HashSet::from([format!("{:?}", guid(2))]));
        let (c, carried) = feed(&mut g, 1, guid(2), &[1, 2]);
        assert_eq!((c.lost, carried), (0, vec![1, 2]));
        // Restarted under the same GUID on the same reader: carried, nothing counted.
        let (c, carried) = feed(&mut g, 1, guid(2), &[1, 2, 3]);
        assert_eq!((c.lost, c.replayed, carried), (0, 0, vec![1, 2, 3]));
    }

    #[test]
    fn a_reopened_reader_does_not_deliver_latched_samples_again() {
        let mut g = SequenceGaps::default();
        let (c, _) = feed(&mut g, 1, guid(1), &[1, 2, 3]);
        assert_eq!(c.lost, 0);
        // Reader 2 (reopened): the writer's history (2, 3) again, then new 7: the ones
        // published while no route was open are not loss at the bridge.
        let (c, carried) = feed(&mut g, 2, guid(1), &[2, 3, 7, 9]);
        assert_eq!(carried, vec![7, 9]);
        assert_eq!((c.replayed, c.lost), (2, 1));
    }

    #[test]
    fn an_undecodable_sample_is_not_counted_lost_as_well() {
        let mut g = SequenceGaps::default();
        let (_, _) = feed(&mut g, 1, guid(1), &[1]);
        g.undecodable();
        let (c, _) = feed(&mut g, 1, guid(1), &[3, 5]);
        assert_eq!(c.lost, 1, "2 was the undecodable one; 4 is lost");
    }
}
