//! HORUS PATCH (HORUS-PATCH.md, item 24): what a reliable writer announced to a reader
//! with an ack window (item 17) and the reader never accepted, counted when the writer
//! leaves.
//!
//! The window withholds a writer's DATA beyond it (dropped unacknowledged, requested again
//! once it fits). A writer that leaves while held back never sends those samples again:
//! they were published and reach nothing. The RTPS reader knows them, from the writer's
//! last HEARTBEAT (its last sequence number) and the DATA it withheld, until it forgets the
//! writer's proxy; then it records them here ([`DepartedWriters::left`]): every sequence
//! number the writer announced above the highest one the reader accepted (received and
//! put in its cache, which the application takes: anything missing at or below that shows
//! to the application as a gap in the writer's sequence numbers, so it is not counted
//! here too). A writer of which the reader accepted nothing is not recorded: what it
//! announced may be history written before the reader matched (a volatile writer
//! declares it not available only when the reader asks for it), no loss. The application
//! claims the count ([`DepartedWriters::claim`]) for the writers it carries, above the
//! last sequence number it took or counted of each; the others' counts are dropped.
//!
//! Never a false loss: a writer that matches again under the same GUID
//! ([`DepartedWriters::rematched`]) before the count was claimed drops it (it may send
//! those samples again); after, what was claimed lost is not taken again from it (the
//! reader's new proxy of it marks those sequence numbers not available), and a second
//! departure counts only above what was counted before.

use std::{cmp::max, collections::BTreeMap};

use crate::structure::{guid::GUID, sequence_number::SequenceNumber};

/// How many departed writers a reader remembers: those with a count not claimed yet, and
/// those whose claimed count keeps them from being taken again should they come back. Past
/// it a writer with nothing pending is forgotten (should it come back, what was counted
/// lost of it may be carried as well); with every place holding a pending count, a new
/// departure is not counted (an undercount, only with more writers than this leaving a
/// reader between two claims).
pub(crate) const MAX_DEPARTED_WRITERS: usize = 16384;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Departed {
  /// Counted and not claimed yet: the sequence numbers above the first, up to the second.
  pending: Option<(SequenceNumber, SequenceNumber)>,
  /// The highest sequence number claimed (0: none).
  claimed_upto: SequenceNumber,
}

impl Default for Departed {
  fn default() -> Self {
    // Not derived: SequenceNumber's default is 1.
    Self {
      pending: None,
      claimed_upto: SequenceNumber::zero(),
    }
  }
}

/// Per writer that left a reader with an ack window, what it announced and the reader never
/// accepted (module docs).
#[derive(Debug, Default)]
pub(crate) struct DepartedWriters {
  writers: BTreeMap<GUID, Departed>,
}

impl DepartedWriters {
  /// `writer` left (its proxy is forgotten): it announced sequence numbers up to
  /// `announced` (HEARTBEAT or DATA), and the reader accepted none of it above `accepted`.
  /// Returns how many are recorded (none at or below what an earlier departure counted).
  pub(crate) fn left(
    &mut self,
    writer: GUID,
    accepted: SequenceNumber,
    announced: SequenceNumber,
  ) -> u64 {
    let prior = self.writers.get(&writer).copied().unwrap_or_default();
    // A writer leaves again only after it matched again, which drops what was pending
    // (`rematched`); a pending range still there is kept out all the same (an undercount
    // rather than a double count).
    let pending_upto = prior
      .pending
      .map_or(SequenceNumber::zero(), |(_, upto)| upto);
    let from = max(accepted, max(prior.claimed_upto, pending_upto));
    if announced <= from {
      return 0;
    }
    if !self.writers.contains_key(&writer) && self.writers.len() >= MAX_DEPARTED_WRITERS {
      let idle = self
        .writers
        .iter()
        .find(|(_, d)| d.pending.is_none())
        .map(|(g, _)| *g);
      match idle {
        Some(g) => {
          self.writers.remove(&g);
        }
        None => return 0,
      }
    }
    let d = self.writers.entry(writer).or_default();
    d.pending = Some((from, announced));
    count(from, announced)
  }

  /// Claims what is pending, for each writer `floor` gives a number: those above it (the
  /// highest of the writer's sequence numbers the application took, or counted lost
  /// otherwise: its own knowledge may reach higher than this reader's, e.g. a reader that
  /// replaced another), summed and from then on not taken again from the writer. The
  /// writers `floor` gives none have their counts dropped (not this application's loss:
  /// it does not carry them). `floor` is also given the highest sequence number recorded
  /// of the writer: when it gives a number, every sequence number of the writer up to
  /// that one is from then on taken or counted lost (review 148: the application moves
  /// its own position there, so that a writer back under its GUID, whose claimed numbers
  /// this reader marks not available, shows it no gap that would count them again).
  pub(crate) fn claim(
    &mut self,
    mut floor: impl FnMut(&GUID, SequenceNumber) -> Option<SequenceNumber>,
  ) -> u64 {
    let mut total = 0u64;
    self.writers.retain(|g, d| {
      if let Some((from, upto)) = d.pending.take() {
        if let Some(f) = floor(g, upto) {
          total = total.saturating_add(count(max(from, max(f, d.claimed_upto)), upto));
          d.claimed_upto = max(d.claimed_upto, upto);
        }
      }
      d.claimed_upto > SequenceNumber::zero()
    });
    total
  }

  /// `writer` matched the reader again (same GUID): what was pending is dropped (it is
  /// back, and may send those samples again); returns the highest sequence number claimed
  /// of it, which the reader must not take again.
  pub(crate) fn rematched(&mut self, writer: GUID) -> Option<SequenceNumber> {
    let d = self.writers.get_mut(&writer)?;
    d.pending = None;
    let claimed = d.claimed_upto;
    if claimed == SequenceNumber::zero() {
      self.writers.remove(&writer);
      return None;
    }
    Some(claimed)
  }

  /// Whether nothing is remembered.
  #[cfg(test)]
  fn is_empty(&self) -> bool {
    self.writers.is_empty()
  }
}

/// How many sequence numbers lie above `from`, up to `upto`.
fn count(from: SequenceNumber, upto: SequenceNumber) -> u64 {
  u64::try_from(i64::from(upto).saturating_sub(i64::from(from))).unwrap_or(0)
}

#[cfg(test)]
mod tests {
  use super::*;
  use crate::structure::guid::{EntityId, EntityKind, GuidPrefix};

  fn writer(n: u8) -> GUID {
    GUID::new_with_prefix_and_id(
      GuidPrefix::new(&[n; 12]),
      EntityId::new([0, 0, 1], EntityKind::WRITER_NO_KEY_USER_DEFINED),
    )
  }
  fn sn(n: i64) -> SequenceNumber {
    SequenceNumber::new(n)
  }

  #[test]
  fn what_a_departed_writer_announced_above_what_was_accepted_is_counted_once() {
    let mut d = DepartedWriters::default();
    let (a, b) = (writer(1), writer(2));
    assert_eq!(d.left(a, sn(33), sn(100)), 67, "34..=100");
    assert_eq!(
      d.left(b, sn(10), sn(10)),
      0,
      "nothing withheld: nothing counted"
    );
    assert_eq!(d.claim(|_, _| Some(sn(0))), 67);
    assert_eq!(d.claim(|_, _| Some(sn(0))), 0, "claimed once");
    // a came back and left again with nothing new accepted: only what it announced since.
    assert_eq!(d.rematched(a), Some(sn(100)), "not taken again up to 100");
    assert_eq!(d.left(a, sn(0), sn(100)), 0, "counted already");
    assert_eq!(d.left(a, sn(100), sn(120)), 20);
    assert_eq!(d.claim(|_, _| Some(sn(0))), 20);
  }

  #[test]
  fn what_the_application_took_or_counted_above_the_readers_mark_is_not_counted_again() {
    let mut d = DepartedWriters::default();
    let a = writer(1);
    // This reader accepted up to 20 (it replaced another, which carried up to 40).
    assert_eq!(d.left(a, sn(20), sn(100)), 80);
    let mut upto = None;
    let claimed = d.claim(|_, u| {
      upto = Some(u);
      Some(sn(40))
    });
    assert_eq!(claimed, 60, "41..=100");
    assert_eq!(
      upto,
      Some(sn(100)),
      "the application is told up to where it is counted"
    );
    assert_eq!(d.rematched(a), Some(sn(100)));
  }

  #[test]
  fn a_writer_back_before_its_count_is_claimed_drops_it() {
    let mut d = DepartedWriters::default();
    let a = writer(1);
    assert_eq!(d.left(a, sn(16), sn(50)), 34);
    assert_eq!(
      d.rematched(a),
      None,
      "nothing claimed: it may send them again"
    );
    assert!(d.is_empty());
    assert_eq!(d.claim(|_, _| Some(sn(0))), 0);
  }

  #[test]
  fn a_writer_not_carried_has_its_count_dropped() {
    let mut d = DepartedWriters::default();
    let (a, b) = (writer(1), writer(2));
    d.left(a, sn(16), sn(50));
    d.left(b, sn(16), sn(30));
    assert_eq!(d.claim(|g, _| (*g == a).then_some(sn(0))), 34);
    assert_eq!(
      d.rematched(b),
      None,
      "b's count was dropped, nothing kept of it"
    );
  }

  #[test]
  fn departed_writers_stay_bounded() {
    let mut d = DepartedWriters::default();
    for i in 0..MAX_DEPARTED_WRITERS as u32 + 10 {
      let g = GUID::new_with_prefix_and_id(
        GuidPrefix::new(&[1; 12]),
        EntityId::new(
          [(i >> 16) as u8, (i >> 8) as u8, i as u8],
          EntityKind::WRITER_NO_KEY_USER_DEFINED,
        ),
      );
      d.left(g, sn(0), sn(1));
      if i % 1000 == 0 {
        d.claim(|_, _| Some(sn(0)));
      }
    }
    assert!(d.writers.len() <= MAX_DEPARTED_WRITERS);
  }
}
