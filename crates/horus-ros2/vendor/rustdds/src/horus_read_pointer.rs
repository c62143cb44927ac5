//! HORUS PATCH (HORUS-PATCH.md, item 22): what a user DataReader has read out of its
//! participant's topic cache, so that the cache lets go of samples every such reader of
//! the topic has read.
//!
//! Upstream, a topic cache keeps the last `max_keep_samples` of its topic (at least 64, or
//! the readers' KEEP_LAST depth if larger) whether or not they have been read, until newer
//! samples push them out: with 1 MiB samples that is 64 MiB per topic for as long as the
//! topic lives, 4 GiB with samples of the reassembly limit (64 MiB). With a read pointer
//! per user DataReader the cache also removes, at its garbage collection, the oldest
//! samples that every registered reader has read, down to the readers' KEEP_LAST depth
//! (`TopicCache::remove_changes_before`). A sample some reader has not read stays as
//! before (up to `max_keep_samples`), so nothing a reader would have read is taken from
//! it, and what a DataReader's own KEEP_LAST history evicts unread is counted there as
//! before (item 19).
//!
//! A DataReader reads a topic cache in one of two ways (`TopicCache::get_changes_in_range`),
//! and its pointer follows the same rule: a best-effort reader reads by receive time (every
//! change received up to its latest read one); a reliable reader per writer by sequence
//! number (every change of that writer up to its last read one: it may read a writer's
//! older change after another writer's newer one, so a time alone would not do).

use std::{
  collections::BTreeMap,
  sync::{Arc, Mutex, Weak},
};

use crate::structure::{guid::GUID, sequence_number::SequenceNumber, time::Timestamp};

/// One DataReader's read pointer into its topic cache.
#[derive(Debug)]
pub(crate) struct ReadPointer {
  reliable: bool,
  read: Mutex<Read>,
}

#[derive(Debug, Default)]
struct Read {
  /// Best effort: the latest receive time read.
  latest: Option<Timestamp>,
  /// Reliable: per writer, the highest sequence number read.
  by_writer: BTreeMap<GUID, SequenceNumber>,
}

impl ReadPointer {
  /// The pointer of a DataReader that reads reliably (`reliable`) or best effort; nothing
  /// read yet.
  pub(crate) fn new(reliable: bool) -> Arc<ReadPointer> {
    Arc::new(ReadPointer {
      reliable,
      read: Mutex::new(Read::default()),
    })
  }

  /// The DataReader read (took, or skipped as undecodable) the change received at `at`
  /// from `writer` with sequence number `sn`: what it reads next starts after it.
  pub(crate) fn note(&self, at: Timestamp, writer: GUID, sn: SequenceNumber) {
    let mut r = self.read.lock().unwrap_or_else(|p| p.into_inner());
    if self.reliable {
      let e = r.by_writer.entry(writer).or_insert(sn);
      *e = (*e).max(sn);
    } else {
      r.latest = Some(r.latest.map_or(at, |l| l.max(at)));
    }
  }

  /// Whether the DataReader will not read the change received at `at` from `writer` with
  /// sequence number `sn`: it has read past it.
  pub(crate) fn has_read(&self, at: Timestamp, writer: GUID, sn: SequenceNumber) -> bool {
    let r = self.read.lock().unwrap_or_else(|p| p.into_inner());
    if self.reliable {
      r.by_writer.get(&writer).is_some_and(|last| sn <= *last)
    } else {
      r.latest.is_some_and(|latest| at <= latest)
    }
  }

  /// Forgets the writers for which `keep` is false (a reliable reader's map would grow
  /// with every writer it ever read from; the cache forgets those it holds no change of).
  /// A forgotten writer's changes count as not read: kept, as upstream keeps them, until
  /// the reader reads one of them again.
  pub(crate) fn retain_writers(&self, keep: impl Fn(&GUID) -> bool) {
    let mut r = self.read.lock().unwrap_or_else(|p| p.into_inner());
    if self.reliable {
      r.by_writer.retain(|w, _| keep(w));
    }
  }

  /// The writers a reliable reader's pointer remembers (0 for a best-effort one).
  pub(crate) fn writers(&self) -> usize {
    self
      .read
      .lock()
      .unwrap_or_else(|p| p.into_inner())
      .by_writer
      .len()
  }
}

/// The read pointers of a topic cache's registered readers (dropped readers' weak
/// references are pruned as new ones register and at each collection).
#[derive(Debug, Default)]
pub(crate) struct ReadPointers {
  readers: Vec<Weak<ReadPointer>>,
}

impl ReadPointers {
  /// Registers a reader's pointer.
  pub(crate) fn register(&mut self, pointer: &Arc<ReadPointer>) {
    self.readers.retain(|w| w.strong_count() > 0);
    self.readers.push(Arc::downgrade(pointer));
  }

  /// The live readers' pointers now; empty when no reader registered or all are gone
  /// (then no change counts as read by all).
  pub(crate) fn live(&mut self) -> Vec<Arc<ReadPointer>> {
    self.readers.retain(|w| w.strong_count() > 0);
    self.readers.iter().filter_map(Weak::upgrade).collect()
  }
}

/// Whether every one of `pointers` (at least one) has read the change received at `at`
/// from `writer` with sequence number `sn`.
pub(crate) fn read_by_all(
  pointers: &[Arc<ReadPointer>],
  at: Timestamp,
  writer: GUID,
  sn: SequenceNumber,
) -> bool {
  !pointers.is_empty() && pointers.iter().all(|p| p.has_read(at, writer, sn))
}

#[cfg(test)]
mod tests {
  use super::*;
  use crate::structure::guid::{EntityId, GuidPrefix};

  fn writer(n: u8) -> GUID {
    GUID::new(GuidPrefix::new(&[n; 12]), EntityId::UNKNOWN)
  }

  fn at(ms: i64) -> Timestamp {
    Timestamp::ZERO + crate::Duration::from_millis(ms)
  }

  #[test]
  fn a_best_effort_pointer_has_read_everything_received_up_to_its_latest() {
    let p = ReadPointer::new(false);
    assert!(!p.has_read(at(1), writer(1), SequenceNumber::new(1)));
    p.note(at(5), writer(1), SequenceNumber::new(3));
    assert!(p.has_read(at(1), writer(2), SequenceNumber::new(9)));
    assert!(p.has_read(at(5), writer(1), SequenceNumber::new(3)));
    assert!(!p.has_read(at(6), writer(1), SequenceNumber::new(4)));
  }

  #[test]
  fn a_reliable_pointer_reads_per_writer_not_by_time() {
    let p = ReadPointer::new(true);
    p.note(at(9), writer(1), SequenceNumber::new(4));
    // Another writer's older change is not read because a newer one of writer 1 was.
    assert!(!p.has_read(at(2), writer(2), SequenceNumber::new(1)));
    assert!(p.has_read(at(2), writer(1), SequenceNumber::new(3)));
    assert!(!p.has_read(at(10), writer(1), SequenceNumber::new(5)));
    p.retain_writers(|w| *w != writer(1));
    assert!(!p.has_read(at(2), writer(1), SequenceNumber::new(3)));
  }

  #[test]
  fn read_by_all_needs_every_live_reader_and_at_least_one() {
    let (a, b) = (ReadPointer::new(false), ReadPointer::new(false));
    let mut ps = ReadPointers::default();
    assert!(!read_by_all(
      &ps.live(),
      at(1),
      writer(1),
      SequenceNumber::new(1)
    ));
    ps.register(&a);
    ps.register(&b);
    a.note(at(3), writer(1), SequenceNumber::new(3));
    assert!(!read_by_all(
      &ps.live(),
      at(1),
      writer(1),
      SequenceNumber::new(1)
    ));
    b.note(at(2), writer(1), SequenceNumber::new(2));
    assert!(read_by_all(
      &ps.live(),
      at(1),
      writer(1),
      SequenceNumber::new(1)
    ));
    assert!(!read_by_all(
      &ps.live(),
      at(3),
      writer(1),
      SequenceNumber::new(3)
    ));
    drop(b);
    assert!(read_by_all(
      &ps.live(),
      at(3),
      writer(1),
      SequenceNumber::new(3)
    ));
    drop(a);
    assert!(ps.live().is_empty());
  }
}
