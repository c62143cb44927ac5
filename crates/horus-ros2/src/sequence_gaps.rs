//! Loss from ROS 2 counted at the bridge, from the writers' own sequence numbers.
//!
//! Every DDS writer numbers its samples (RTPS sequence numbers 1, 2, 3, … per writer GUID),
//! and RustDDS hands the number over with each sample. A sample more than one past the last
//! one taken from the same writer means that the ones between never reached the bridge (a
//! best-effort sample lost on the way, a reliable writer's KEEP_LAST history overwriting
//! them before they were acknowledged, the bridge's reader cache overflowing): they are
//! counted `lost` at the bridge.
//!
//! A reliable reader hands a writer's samples over in sequence order: a gap there is final,
//! counted at once. A best-effort reader hands them over as they arrive, and RustDDS may
//! hand it a late sample below one already taken: the numbers missing just below the
//! highest one taken (a window of 64) are counted lost only when the route's thread finds
//! the reader empty ([`SequenceGaps::settle`]), when they leave the window, when the
//! writer is forgotten, when every writer is (no horus subscriber left) or when a route
//! opened anew takes the writer; one arriving before that is carried, not counted. One
//! arriving after it was counted lost already, while still in the window: it is dropped,
//! never carried (the `lost` count holds it: a real loss to horus, made by the bridge
//! rather than the network). Below the window nothing tells such a sample from a restarted
//! writer's or a hostile one's: carried, not counted (docs/ros2-bridge.md lists it).
//! Was: the gap was counted at once, and the late sample carried as well (a false loss;
//! found in review).
//!
//! No false loss:
//! - A writer's first sample (a writer that joined, the bridge's reader that joined a
//!   writer mid-stream, a writer restarted: a new GUID) sets its starting point, counts
//!   nothing.
//! - A route opened anew (it closed, e.g. no accepted writer was left, and opened again)
//!   restarts at the next new sample of each writer: what the writers published while no
//!   route was open had nobody in horus to lose it. (When the last horus subscriber
//!   leaves, the bridge forgets every position.)
//!
//! No silent loss when a route swaps its DDS reader for one with other QoS
//! (`Inbound::reopen_reader`; the route, its horus publisher and its subscribers stay): a
//! writer's first new sample on the new reader more than one past the last one carried
//! from the old reader is a gap like any other, counted `lost`. The writer published the
//! samples between while the route was open: the old reader was dropped holding them
//! (it carries at most its history's worth once the new one waits), or they were written
//! while neither reader was matched with it, or the new reader's history evicted them
//! before the route took them (RustDDS's count of those, HORUS-PATCH item 19, is then
//! not added: the gap holds them, and its replays evicted are no loss). Was: the position
//! restarted there, counting nothing (review L4).
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

/// How many sequence numbers below a best-effort writer's highest one taken may still
/// arrive late before their absence is counted lost.
const WINDOW: u64 = 64;

/// Where one writer stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct WriterPosition {
    /// The highest sequence number carried (or dropped) from it.
    last: i64,
    /// The numbers just below `last` not taken yet (bit `i`: number `last - 1 - i`),
    /// counted lost when they slide out of the window (or the writer is forgotten). Only a
    /// best-effort reader sets them: a reliable one hands a writer's samples over in order.
    missing: u64,
    /// The numbers just below `last` counted lost while still in the window (the reader
    /// was found empty since they went missing: [`SequenceGaps::settle`]): arriving late,
    /// they are dropped, not carried after being counted.
    counted: u64,
    /// The reader that took it.
    at: ReaderId,
}

/// What a sample below a writer's highest number is, by the window.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Below {
    /// Missing, not counted yet: carried.
    Late,
    /// Counted lost already: dropped.
    Counted,
    /// Taken already, or not in the window.
    Other,
}

impl WriterPosition {
    /// Moves `last` up by `ahead` (at least 1); the numbers skipped are marked missing when
    /// `mark` (else left to the caller). Returns the missing numbers now out of the window
    /// and, when `mark`, the skipped ones that never fit in it. Bounded work whatever the
    /// jump.
    fn advance(&mut self, ahead: u64, mark: bool) -> u64 {
        let skipped = ahead - 1;
        let (shifted, slid) = if ahead >= WINDOW {
            (0, self.missing.count_ones())
        } else {
            (
                self.missing << ahead,
                (self.missing >> (WINDOW - ahead)).count_ones(),
            )
        };
        self.missing = shifted;
        self.counted = if ahead >= WINDOW {
            0
        } else {
            self.counted << ahead
        };
        let slid = u64::from(slid);
        if !mark {
            return slid;
        }
        let inside = skipped.min(WINDOW);
        self.missing |= if inside == WINDOW {
            u64::MAX
        } else {
            (1u64 << inside) - 1
        };
        slid.saturating_add(skipped - inside)
    }

    /// Looks at the sample `behind` below `last`: one missing is no longer.
    fn fill(&mut self, behind: u64) -> Below {
        if behind == 0 || behind > WINDOW {
            return Below::Other;
        }
        let bit = 1u64 << (behind - 1);
        if self.missing & bit != 0 {
            self.missing &= !bit;
            Below::Late
        } else if self.counted & bit != 0 {
            self.counted &= !bit;
            Below::Counted
        } else {
            Below::Other
        }
    }

    /// Counts the missing numbers lost now (they may still arrive: then dropped).
    fn settle(&mut self) -> u64 {
        let n = u64::from(self.missing.count_ones());
        self.counted |= self.missing;
        self.missing = 0;
        n
    }
}

/// Which DDS reader took a sample: the route (one per [`crate::inbound::Inbound::open`]) and
/// the reader (a new one each time the route swaps its reader for other QoS).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct ReaderId {
    pub(crate) route: u64,
    pub(crate) reader: u64,
    /// A reliable reader hands each writer's samples over in sequence order; a best-effort
    /// one as they arrive (RustDDS may hand over a late one below one already taken).
    pub(crate) reliable: bool,
}

/// What a writer's sample is to the route, before its number is looked at
/// ([`SequenceGaps::newness`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Newness {
    /// This reader handed over a sample of the writer before.
    Known,
    /// The first sample of the writer this reader hands over; an earlier reader (of this
    /// route or an earlier one) took some.
    NewToReader,
    /// The route has no position for the writer (never seen, or forgotten since).
    NewToRoute,
}

/// Numbers each DDS reader the bridge opens, so that a reopened reader is told apart.
static NEXT_READER: AtomicU64 = AtomicU64::new(1);

/// A fresh number for a route or a DDS reader (unique in the process).
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
    /// Some writer may have a number missing, not counted yet ([`Self::settle`]).
    pending: bool,
}

impl SequenceGaps {
    /// Looks at the sample numbered `seq` from `writer`, taken by reader `at`; counts a gap
    /// before it in `c.lost`. Returns whether the sample must be dropped as a replay of one
    /// already carried (counted in `c.replayed`).
    pub(crate) fn is_replay(
        &mut self,
        at: ReaderId,
        writer: GUID,
        seq: SequenceNumber,
        c: &mut RouteCounters,
    ) -> bool {
        let seq = i64::from(seq);
        let Some(pos) = self.writers.get_mut(&writer) else {
            self.writers.insert(
                writer,
                WriterPosition {
                    last: seq,
                    missing: 0,
                    counted: 0,
                    at,
                },
            );
            return false;
        };
        if seq > pos.last {
            let ahead = seq.abs_diff(pos.last);
            let lost = if pos.at.route == at.route {
                // The same reader, or the same route's reader swapped: the route stayed
                // open, what the writer published between is a gap (module docs). A
                // best-effort reader may still hand it over late: counted once it leaves
                // the window.
                let slid = pos.advance(ahead, !at.reliable);
                self.pending |= pos.missing != 0;
                if at.reliable {
                    slid.saturating_add(ahead - 1)
                } else {
                    slid
                }
            } else {
                // A route opened anew: no route was open meanwhile, nothing counted; what
                // the old route still missed was lost to it.
                let lost = pos.settle();
                pos.counted = 0;
                lost
            };
            pos.last = seq;
            pos.at = at;
            self.count_gap(lost, c);
            return false;
        }
        let behind = pos.last.abs_diff(seq);
        match pos.fill(behind) {
            // A sample that arrived late (a best-effort reader's, or the writer's history
            // sent to a reader swapped in): carried, no longer missing.
            Below::Late => return false,
            // Counted lost already: dropped, or the count would be a false loss.
            Below::Counted => return true,
            Below::Other => {}
        }
        if pos.at.reader != at.reader {
            // Another reader: the writer's history again, then its new samples.
            c.replayed += 1;
            return true;
        }
        // Not a replay on the same reader (DDS hands a reader each sample once): a writer
        // restarted under the same GUID, a hostile writer's numbers, a sample skipped when
        // a route opened anew, or a best-effort sample later than the window. Carried;
        // nothing counted, the position kept. Dropping it instead would be a silent loss
        // in the first three cases (found in review); in the last, when that sample had
        // been counted lost on leaving the window, carrying it makes that count a false
        // loss: a best-effort sample overtaken by more than 64 newer ones of its writer,
        // which RTPS over one host's loopback or a LAN does not do in practice
        // (docs/ros2-bridge.md, "Still uncounted").
        false
    }

    /// Counts `gap` missing sequence numbers `lost`, less the undecodable samples not yet
    /// attributed (counted `malformed` already).
    fn count_gap(&mut self, gap: u64, c: &mut RouteCounters) {
        let absorbed = gap.min(self.unattributed);
        self.unattributed -= absorbed;
        // Saturating: a hostile writer's numbers may jump by up to i64::MAX, and several
        // such would overflow.
        c.lost = c.lost.saturating_add(gap - absorbed);
    }

    /// Whether reader `at` handed over a sample of `writer` before, or an earlier reader
    /// did (since the route opened or the writer was last forgotten).
    pub(crate) fn newness(&self, at: ReaderId, writer: GUID) -> Newness {
        match self.writers.get(&writer) {
            None => Newness::NewToRoute,
            Some(pos) if pos.at.reader == at.reader => Newness::Known,
            Some(_) => Newness::NewToReader,
        }
    }

    /// The highest sequence number of `writer` carried, dropped or counted lost by the
    /// route (any of its readers), if it has a position for the writer.
    pub(crate) fn last_taken(&self, writer: GUID) -> Option<i64> {
        self.writers.get(&writer).map(|pos| pos.last)
    }

    /// Every sequence number of `writer` up to `upto` is now taken or counted lost (what a
    /// writer that left had held back, claimed from RustDDS: inbound.rs): the position
    /// moves there without counting a gap, so that the writer, back under its GUID and
    /// sending `upto + 1` next (RustDDS marks the claimed numbers not available), is not
    /// counted those numbers lost a second time (review 148). Returns the numbers a
    /// best-effort reader still missed that slide out of the window (lost now, as in
    /// [`Self::is_replay`]). No position: nothing to move (a writer back starts afresh).
    pub(crate) fn counted_lost_through(&mut self, writer: GUID, upto: SequenceNumber) -> u64 {
        let upto = i64::from(upto);
        let Some(pos) = self.writers.get_mut(&writer) else {
            return 0;
        };
        if upto <= pos.last {
            return 0;
        }
        let slid = pos.advance(upto.abs_diff(pos.last), false);
        pos.last = upto;
        self.pending |= pos.missing != 0;
        slid
    }

    /// A sample RustDDS took but could not hand over (counted `malformed` by the caller):
    /// its number will show as a gap, which must not count it again as lost.
    pub(crate) fn undecodable(&mut self) {
        self.unattributed = (self.unattributed + 1).min(MAX_UNATTRIBUTED);
    }

    /// Forgets the writers not in `accepted` (GUIDs as discovery prints them): gone, or
    /// refused. A writer that comes back under the same GUID starts afresh. What a
    /// best-effort reader still missed of them is counted lost now.
    pub(crate) fn forget_writers_except(
        &mut self,
        accepted: &HashSet<String>,
        c: &mut RouteCounters,
    ) {
        let mut lost = 0u64;
        self.writers.retain(|g, pos| {
            let keep = accepted.contains(&format!("{g:?}"));
            if !keep {
                lost += u64::from(pos.missing.count_ones());
            }
            keep
        });
        self.count_gap(lost, c);
    }

    /// Counts what is still missing of every writer lost: the reader was found empty, so a
    /// late sample would come out of order by more than a whole take of the reader. One
    /// that comes all the same is dropped (counted already). Without this a best-effort
    /// loss would show only 64 samples of its writer later (a writer that stops would
    /// hold it until it leaves).
    pub(crate) fn settle(&mut self, c: &mut RouteCounters) {
        if !self.pending {
            return;
        }
        self.pending = false;
        let lost = self
            .writers
            .values_mut()
            .map(WriterPosition::settle)
            .fold(0u64, u64::saturating_add);
        self.count_gap(lost, c);
    }

    /// Forgets every writer (no horus subscriber is left), counting what a best-effort
    /// reader still missed of them lost.
    pub(crate) fn forget_all(&mut self, c: &mut RouteCounters) {
        self.forget_writers_except(&HashSet::new(), c);
        self.unattributed = 0;
        self.pending = false;
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

    /// Reader `reader` of route 1 (a reader of another route: [`feed_at`]).
    fn feed(g: &mut SequenceGaps, reader: u64, w: GUID, seqs: &[i64]) -> (RouteCounters, Vec<i64>) {
        feed_at(
            g,
            ReaderId {
                route: 1,
                reader,
                reliable: true,
            },
            w,
            seqs,
        )
    }

    /// Best-effort reader `reader` of route 1.
    fn feed_best_effort(
        g: &mut SequenceGaps,
        reader: u64,
        w: GUID,
        seqs: &[i64],
    ) -> (RouteCounters, Vec<i64>) {
        feed_at(
            g,
            ReaderId {
                route: 1,
                reader,
                reliable: false,
            },
            w,
            seqs,
        )
    }

    fn feed_at(
        g: &mut SequenceGaps,
        at: ReaderId,
        w: GUID,
        seqs: &[i64],
    ) -> (RouteCounters, Vec<i64>) {
        let mut c = RouteCounters::default();
        let carried = seqs
            .iter()
            .copied()
            .filter(|s| !g.is_replay(at, w, SequenceNumber::new(*s), &mut c))
            .collect();
        (c, carried)
    }

    /// Review 148: a writer that left having held back 34..=100 (claimed lost from RustDDS,
    /// HORUS-PATCH item 24) comes back under its GUID before the route forgot it; RustDDS
    /// marks 1..=100 not available, so its next sample is 101: no gap, or 34..=100 would
    /// be counted lost twice.
    #[test]
    fn what_a_departed_writers_claim_counted_is_no_gap_when_it_comes_back() {
        let mut g = SequenceGaps::default();
        let w = guid(1);
        let (c, _) = feed(&mut g, 1, w, &(1..=33).collect::<Vec<_>>());
        assert_eq!(c.lost, 0);
        assert_eq!(g.counted_lost_through(w, SequenceNumber::new(100)), 0);
        assert_eq!(g.last_taken(w), Some(100));
        let (c, carried) = feed(&mut g, 1, w, &[101, 102]);
        assert_eq!(
            (c.lost, carried),
            (0, vec![101, 102]),
            "counted once, by the claim"
        );
        // Below what it is at: nothing moves; no position: nothing made.
        assert_eq!(g.counted_lost_through(w, SequenceNumber::new(50)), 0);
        assert_eq!(g.last_taken(w), Some(102));
        assert_eq!(g.counted_lost_through(guid(2), SequenceNumber::new(9)), 0);
        assert_eq!(g.last_taken(guid(2)), None);
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
        g.forget_writers_except(
            &HashSet::from([format!("{:?}", guid(2))]),
            &mut RouteCounters::default(),
        );
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
        // Route 2's reader (the route opened anew): the writer's history (2, 3) again, then
        // new 7: the ones published while no route was open are not loss at the bridge.
        let at = ReaderId {
            route: 2,
            reader: 2,
            reliable: true,
        };
        assert_eq!(g.newness(at, guid(1)), Newness::NewToReader);
        let (c, carried) = feed_at(&mut g, at, guid(1), &[2, 3, 7, 9]);
        assert_eq!(carried, vec![7, 9]);
        assert_eq!((c.replayed, c.lost), (2, 1));
        assert_eq!(g.newness(at, guid(1)), Newness::Known);
    }

    /// Review L4: the route swapped its reader (other QoS) while the writer kept publishing
    /// reliably: 4 to 6 reached neither reader's route (the old reader dropped holding
    /// them, or written while neither was matched). Was: the position restarted at 7,
    /// counting nothing (lost 1, the 8, instead of 4).
    #[test]
    fn a_gap_across_a_swapped_reader_of_the_same_route_is_counted_lost() {
        let mut g = SequenceGaps::default();
        let (c, _) = feed(&mut g, 1, guid(1), &[1, 2, 3]);
        assert_eq!(c.lost, 0);
        assert_eq!(
            g.newness(
                ReaderId {
                    route: 1,
                    reader: 2,
                    reliable: true,
                },
                guid(1)
            ),
            Newness::NewToReader
        );
        // Reader 2: the history it was sent (2, 3) dropped as replays, then 7.
        let (c, carried) = feed(&mut g, 2, guid(1), &[2, 3, 7, 9]);
        assert_eq!(carried, vec![7, 9]);
        assert_eq!((c.replayed, c.lost), (2, 3 + 1));
        // No repeat replay or overlap: the next swap continuing at once counts nothing.
        let (c, carried) = feed(&mut g, 3, guid(1), &[10, 11]);
        assert_eq!((c.replayed, c.lost, carried), (0, 0, vec![10, 11]));
        // An undecodable sample in the gap is not counted again.
        g.undecodable();
        let (c, _) = feed(&mut g, 4, guid(1), &[14]);
        assert_eq!(c.lost, 1, "12 undecodable, 13 lost");
    }

    #[test]
    fn a_writer_is_new_to_the_route_until_a_sample_of_it_is_taken_and_after_it_is_forgotten() {
        let mut g = SequenceGaps::default();
        let at = ReaderId {
            route: 1,
            reader: 1,
            reliable: true,
        };
        assert_eq!(g.newness(at, guid(1)), Newness::NewToRoute);
        feed(&mut g, 1, guid(1), &[5]);
        assert_eq!(g.newness(at, guid(1)), Newness::Known);
        assert_eq!(g.newness(at, guid(2)), Newness::NewToRoute);
        g.forget_writers_except(&HashSet::new(), &mut RouteCounters::default());
        assert_eq!(g.newness(at, guid(1)), Newness::NewToRoute);
    }

    #[test]
    fn an_undecodable_sample_is_not_counted_lost_as_well() {
        let mut g = SequenceGaps::default();
        let (_, _) = feed(&mut g, 1, guid(1), &[1]);
        g.undecodable();
        let (c, _) = feed(&mut g, 1, guid(1), &[3, 5]);
        assert_eq!(c.lost, 1, "2 was the undecodable one; 4 is lost");
    }

    /// Review: RustDDS may hand a best-effort reader a late sample below one already taken.
    /// Was: at 3 the 2 was counted lost, then carried (a false loss).
    #[test]
    fn a_best_effort_sample_out_of_order_is_not_counted_lost() {
        let mut g = SequenceGaps::default();
        let (c, carried) = feed_best_effort(&mut g, 1, guid(1), &[1, 3, 2, 4]);
        assert_eq!(carried, vec![1, 3, 2, 4]);
        assert_eq!(c.lost, 0, "every sample carried, none lost");
    }

    /// Review: the same across a swapped reader (the old one carried 1 to 3).
    #[test]
    fn a_best_effort_sample_out_of_order_after_a_swap_is_not_counted_lost() {
        let mut g = SequenceGaps::default();
        feed(&mut g, 1, guid(1), &[1, 2, 3]);
        let (c, carried) = feed_best_effort(&mut g, 2, guid(1), &[6, 4, 5, 7]);
        assert_eq!(carried, vec![6, 4, 5, 7]);
        assert_eq!(c.lost, 0, "every sample carried, none lost");
    }

    /// A best-effort writer's missing number is counted lost once, when it leaves the
    /// window; arriving later still, below the window, it is carried (review B1).
    #[test]
    fn a_best_effort_gap_is_counted_lost_once_it_leaves_the_window() {
        let mut g = SequenceGaps::default();
        let (c, _) = feed_best_effort(&mut g, 1, guid(1), &[1, 3]);
        assert_eq!(c.lost, 0, "2 may still come");
        let more: Vec<i64> = (4..=66).collect();
        let (c, _) = feed_best_effort(&mut g, 1, guid(1), &more);
        assert_eq!(c.lost, 0, "2 is 64 below 66: still in the window");
        let (c, _) = feed_best_effort(&mut g, 1, guid(1), &[67]);
        assert_eq!(c.lost, 1, "2 left the window");
        // Later than the window: carried, not counted again (below the window a number
        // may as well be a restarted writer's or a hostile one's: dropping it would be a
        // silent loss there, review B1; here the count of 2 is the documented false loss).
        let (c, carried) = feed_best_effort(&mut g, 1, guid(1), &[2]);
        assert_eq!((c.lost, carried), (0, vec![2]));
        // A jump past the window counts what it skipped at once, bounded work.
        let (c, _) = feed_best_effort(&mut g, 1, guid(1), &[67 + 1 + 100]);
        assert_eq!(c.lost, 100 - 64);
        let (c, _) = feed_best_effort(&mut g, 1, guid(1), &[67 + 1 + 100 + 64]);
        assert_eq!(c.lost, 64, "the 64 pending left; the 63 skipped now are");
    }

    /// What a best-effort reader still missed is counted lost when its writer is forgotten
    /// (or every writer is: no horus subscriber left), or when a route opened anew takes
    /// the writer; a number filled late is not.
    #[test]
    fn a_best_effort_gap_still_in_the_window_is_counted_when_the_writer_is_forgotten() {
        let mut g = SequenceGaps::default();
        feed_best_effort(&mut g, 1, guid(1), &[1, 4, 2, 10]);
        feed_best_effort(&mut g, 1, guid(2), &[1, 3]);
        let mut c = RouteCounters::default();
        g.forget_writers_except(&HashSet::from([format!("{:?}", guid(2))]), &mut c);
        assert_eq!(c.lost, 1 + 5, "3, 5 to 9 of writer 1");
        g.forget_all(&mut c);
        assert_eq!(c.lost, 1 + 5 + 1, "then 2 of writer 2");
        g.forget_all(&mut c);
        assert_eq!(c.lost, 7, "never twice");
        feed_best_effort(&mut g, 1, guid(3), &[1, 3]);
        let at = ReaderId {
            route: 2,
            reader: 2,
            reliable: false,
        };
        let (c, _) = feed_at(&mut g, at, guid(3), &[9]);
        assert_eq!(c.lost, 1, "2, missed by the closed route");
    }

    /// The reader found empty: what is still missing is counted lost at once, and a late
    /// arrival of it dropped (counted already), never carried.
    #[test]
    fn a_best_effort_gap_is_counted_when_the_reader_is_empty_and_a_later_arrival_dropped() {
        let mut g = SequenceGaps::default();
        let (mut c, _) = feed_best_effort(&mut g, 1, guid(1), &[1, 4]);
        g.settle(&mut c);
        assert_eq!(c.lost, 2, "2 and 3");
        g.settle(&mut c);
        assert_eq!(c.lost, 2, "never twice");
        let (c, carried) = feed_best_effort(&mut g, 1, guid(1), &[3, 5, 2, 6]);
        assert_eq!(
            (c.lost, carried),
            (0, vec![5, 6]),
            "3 and 2 counted: dropped"
        );
        // Taken once more (a writer restarted under its GUID): carried as before.
        let (c, carried) = feed_best_effort(&mut g, 1, guid(1), &[3]);
        assert_eq!((c.lost, carried), (0, vec![3]));
    }

    /// Review: writers numbering 1 then i64::MAX overflowed `lost` (a panic in a debug
    /// build, a wrap in release).
    #[test]
    fn huge_gaps_of_several_writers_do_not_overflow_lost() {
        for reliable in [true, false] {
            let mut g = SequenceGaps::default();
            let mut c = RouteCounters::default();
            let at = ReaderId {
                route: 1,
                reader: 1,
                reliable,
            };
            for w in 1..=3 {
                for s in [1, i64::MAX] {
                    g.is_replay(at, guid(w), SequenceNumber::new(s), &mut c);
                }
            }
            g.settle(&mut c);
            assert_eq!(c.lost, u64::MAX, "saturated");
        }
    }

    // Review B1 of the window (each failed with the late-past-the-window drop: carried
    // nothing and counted nothing).
    #[test]
    fn a_best_effort_writer_restarted_under_its_guid_is_carried() {
        let mut g = SequenceGaps::default();
        let first: Vec<i64> = (1..=100).collect();
        let (c, carried) = feed_best_effort(&mut g, 1, guid(1), &first);
        assert_eq!((c.lost, carried.len()), (0, 100));
        let (c, carried) = feed_best_effort(&mut g, 1, guid(1), &[1, 2, 3]);
        assert_eq!(carried, vec![1, 2, 3], "{c:?}");
        assert_eq!(c.lost, 0);
    }

    #[test]
    fn a_best_effort_number_far_below_the_highest_is_carried_not_dropped_uncounted() {
        let mut g = SequenceGaps::default();
        feed_best_effort(&mut g, 1, guid(1), &[1000]);
        let (c, carried) = feed_best_effort(&mut g, 1, guid(1), &[1]);
        assert_eq!(
            carried.len() as u64 + c.lost + c.replayed,
            1,
            "carried {carried:?}, {c:?}"
        );
    }

    #[test]
    fn a_late_sample_on_a_best_effort_route_opened_anew_is_carried_or_counted() {
        let mut g = SequenceGaps::default();
        feed_best_effort(&mut g, 1, guid(1), &[1, 2, 3]);
        let at = ReaderId {
            route: 2,
            reader: 2,
            reliable: false,
        };
        let (c, carried) = feed_at(&mut g, at, guid(1), &[200, 100]);
        assert_eq!(
            carried.len() as u64 + c.lost + c.replayed,
            2,
            "carried {carried:?}, {c:?}"
        );
    }
}
