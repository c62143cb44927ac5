use std::{
  cmp::max,
  collections::{btree_map, BTreeMap, BTreeSet, HashMap},
  iter,
  ops::Bound::{Excluded, Included},
  sync::{Arc, Mutex, Weak},
};

#[allow(unused_imports)]
use log::{debug, error, info, trace, warn};

use crate::{
  create_error_internal,
  dds::{
    qos::{
      policy::{History, ResourceLimits},
      QosPolicies,
    },
    typedesc::TypeDesc,
    CreateError, CreateResult,
  },
  horus_ack_window::TakenMarks,
  horus_read_pointer::{read_by_all, ReadPointer, ReadPointers},
  rtps::constant::{builtin_topic_names, MAX_WITHHELD_BYTES_PER_TOPIC},
  structure::{sequence_number::SequenceNumber, time::Timestamp},
  GUID,
};
use super::cache_change::CacheChange;

/// DDSCache contains all cacheChanges that are
/// received by this participant. It is for serving local Readers. Local
/// Writers each contain a HistoryBuffer to CacheChanges written by themselves.
///
/// Readers and Writers need separate caches, because the garbage collection
/// algorithms must be different. DDS spec 1.4 table at pp. 99-100 defines the
/// QoS History to be scoped over each Writer (individually), whereas History
/// for Readers is scoped over the entire Topic (or Instances in it). This leads
/// to situations where some sample would be garbage collected by a Reader's
/// History policy, but must be preserved by a Writer's History Policy.
///
/// Each topic that has been subscribed to
/// is contained in a separate TopicCache. One TopicCache contains
/// only CacheChanges of one serialized IDL datatype. -> all cache changes in
/// same TopicCache can be serialized/deserialized same way. Topic/TopicCache is
/// identified by its name, which must be unique in the whole Domain.
///
/// More specifically, the DDSCache stores handles (Arcs) to mutexes protecting
/// the actual TopicCaches. For a given topic, the Reader/Writer and
/// DataReader/DataWriter get a clone of the handle and
/// interact with the TopicCache through this handle.
#[derive(Debug, Default)]
pub struct DDSCache {
  topic_caches: HashMap<String, Arc<Mutex<TopicCache>>>,
}

impl DDSCache {
  pub fn new() -> Self {
    Self::default()
  }
  // Insert new topic if it does not exist.
  // If it exists already, update cache size limits.
  // Return a handle to the cache topic.
  // TODO: If we pick up a topic from Discovery, can someone DoS us by
  // sending super large limits in Topic QoS?
  pub(crate) fn add_new_topic(
    &mut self,
    topic_name: String,
    topic_data_type: TypeDesc,
    qos: &QosPolicies,
  ) -> Arc<Mutex<TopicCache>> {
    let topic_cache_handle = self
      .topic_caches
      .entry(topic_name.clone())
      .and_modify(|tc| tc.lock().unwrap().update_keep_limits(qos))
      .or_insert(Arc::new(Mutex::new(TopicCache::new(
        topic_name,
        topic_data_type,
        qos,
      ))));

    topic_cache_handle.clone()
  }

  pub(crate) fn get_existing_topic_cache(
    &self,
    topic_name: &str,
  ) -> CreateResult<Arc<Mutex<TopicCache>>> {
    // Return a clone of the pointer to the mutex on an existing topic cache
    match self.topic_caches.get(topic_name) {
      Some(tc) => Ok(tc.clone()),
      None => create_error_internal!("Topic cache for topic {topic_name} not found in DDS cache"),
    }
  }

  // TODO: Investigate why this is not used.
  // When do RTPS Topics die? Never?
  #[allow(dead_code)]
  pub fn remove_topic(&mut self, topic_name: &str) {
    if self.topic_caches.contains_key(topic_name) {
      self.topic_caches.remove(topic_name);
    }
  }

  pub fn garbage_collect(&mut self) {
    for tc in self.topic_caches.values_mut() {
      let mut tc = tc.lock().unwrap();
      if let Some((last_timestamp, _)) = tc.changes.iter().next_back() {
        if *last_timestamp > tc.changes_reallocated_up_to {
          tc.remove_changes_before(Timestamp::ZERO);
        }
      }
    }
  }
}

#[derive(Debug)]
pub(crate) struct TopicCache {
  topic_name: String,
  #[allow(dead_code)] // TODO: Which (future) feature needs this?
  topic_data_type: TypeDesc,
  #[allow(dead_code)]
  // TODO: The relevant data here is in min/max keep_samples. Is this still relevant?
  topic_qos: QosPolicies,
  min_keep_samples: History,
  max_keep_samples: i32, // from QoS, for quick, repeated access
  // TODO: Change this to Option<u32>, where None means "no limit".

  // The main content of the cache is in this map.
  // Timestamp is assumed to be unique id over all the CacheChanges. Uniqueness is
  // enforced on insert (see `add_change_internal`) by never issuing a key that is
  // not strictly greater than the previous one, so a coarse system clock that
  // returns the same instant for two back-to-back receives cannot collide.
  changes: BTreeMap<Timestamp, CacheChange>,

  // The underlying Bytes buffers are reallocated after some time (once for each) in
  // order to release the original receive buffer. The idea behind this is that if a CacheChange
  // persists in the TopicCaceh for some time, it should no longer hold onto the receive buffer,
  // so we can recycle the buffers. Otherwise, we (practically) leak memory.
  changes_reallocated_up_to: Timestamp,

  // The largest key ever inserted into `changes`. Used to keep the keys strictly
  // monotonic: `receive_timestamp` is `Timestamp::now()` sampled per incoming
  // message, but the system clock granularity can be coarser than the time it
  // takes to process several aggregated DATA submessages, so two distinct samples
  // may carry the same instant. We then bump the key by one tick (~0.233 ns) so it
  // stays unique. This cannot outrun real time: regaining a whole second of skew
  // would need 2^32 receives within it.
  last_added_instant: Timestamp,

  // sequence_numbers is an index to "changes" by GUID and SN
  sequence_numbers: BTreeMap<GUID, BTreeMap<SequenceNumber, Timestamp>>,

  // Keep track of how far we have "reliably" received samples from each Writer
  // This means that all data up to this point has either been received, or
  // we have been notified (GAP or HEARTBEAT) that is not available and never will.
  // Therefore, data before the marker SN can be handed off to a Reliable DataReader.
  // Initially, we consider the marker for each Writer (GUID) to be SequenceNumber::new(1)
  received_reliably_before: BTreeMap<GUID, SequenceNumber>,

  // HORUS PATCH (HORUS-PATCH.md item 11): whether a DATA repeating a (writer, sequence
  // number) this cache holds replaces the held change, to be read again, instead of being
  // dropped as a duplicate. True for the SPDP topic only (see `add_change_internal`).
  repeats_replace: bool,

  // HORUS PATCH (HORUS-PATCH.md item 18): the taken marks of this topic's readers with an
  // ack window (item 17): a sample of a writer with a window that its reader has not taken
  // is not evicted (see `remove_changes_before`).
  horus_windows: Vec<Weak<TakenMarks>>,

  // HORUS PATCH (HORUS-PATCH.md item 22): the read pointers of this topic's user
  // DataReaders: a sample every one of them has read is removed at garbage collection down
  // to the KEEP_LAST depth (see `remove_changes_before`).
  horus_read_pointers: ReadPointers,

  // HORUS PATCH (HORUS-PATCH.md item 22, found in review): the (writer, sequence number)
  // of changes removed while readers were registered, with their receive time (key),
  // while upstream would still hold them (changes + these <= max_keep_samples): a repeat
  // of one (a retransmit, a writer's history sent to another reader of the topic) goes
  // back under its first key, where upstream held it: the readers that read it do not
  // read it again (a best-effort reader reads by key), a reader made since reads it.
  horus_released: BTreeMap<(GUID, SequenceNumber), Timestamp>,
  horus_released_at: BTreeMap<Timestamp, (GUID, SequenceNumber)>,

  // HORUS PATCH (HORUS-PATCH.md item 23): user writers gone whose samples are still here:
  // their marker stays past those samples, so reliable readers read them, until the last
  // one goes.
  horus_departed: BTreeSet<GUID>,
}

impl TopicCache {
  pub fn new(topic_name: String, topic_data_type: TypeDesc, topic_qos: &QosPolicies) -> Self {
    let repeats_replace = topic_name == builtin_topic_names::DCPS_PARTICIPANT;
    let mut new_self = Self {
      topic_name,
      topic_data_type,
      topic_qos: topic_qos.clone(),
      min_keep_samples: History::KeepLast { depth: 1 }, /* dummy value, next call will overwrite
                                                         * this */
      max_keep_samples: 1, // dummy value, next call will overwrite this
      changes: BTreeMap::new(),
      changes_reallocated_up_to: Timestamp::ZERO,
      last_added_instant: Timestamp::ZERO,
      sequence_numbers: BTreeMap::new(),
      received_reliably_before: BTreeMap::new(),
      // HORUS PATCH (item 11): an SPDP announcement is the participant's state, not a
      // change in a stream: each one is to be read.
      repeats_replace,
      horus_windows: Vec::new(),                    // HORUS PATCH (item 18)
      horus_read_pointers: ReadPointers::default(), // HORUS PATCH (item 22)
      horus_released: BTreeMap::new(),              // HORUS PATCH (item 22)
      horus_released_at: BTreeMap::new(),           // HORUS PATCH (item 22)
      horus_departed: BTreeSet::new(),              // HORUS PATCH (item 23)
    };

    new_self.update_keep_limits(topic_qos);

    new_self
  }

  pub fn update_keep_limits(&mut self, qos: &QosPolicies) {
    let min_keep_samples = qos
      .history()
      // default history setting from DDS spec v1.4 Section 2.2.3 "Supported QoS",
      // Table at p.99
      .unwrap_or(History::KeepLast { depth: 1 });

    // Look up some Topic-specific resource limit
    // and remove earliest samples until we are within limit.
    // This prevents cache from growing indefinitely.
    let max_keep_samples = qos
      .resource_limits()
      .unwrap_or(ResourceLimits {
        // This is some default limits out of the hat, if there was no QoS specification.
        // The purpose of these limits is to prevent excessive memory usage.
        max_samples: 64,
        max_instances: 64,
        max_samples_per_instance: 64,
      })
      .max_samples;
    // TODO: We cannot currently keep track of instance counts, because TopicCache
    // or DDSCache below do not know about instances.

    // If a definite minimum is specified, increase resource limit to at least that.
    let max_keep_samples = match min_keep_samples {
      History::KeepLast { depth: n } if n > max_keep_samples => n,
      _ => max_keep_samples,
    };

    // actual update. This is will only ever increase cache size.
    self.min_keep_samples = max(min_keep_samples, self.min_keep_samples);
    self.max_keep_samples = max(max_keep_samples, self.max_keep_samples);
  }

  // Returns true if the "reliably_received_before"-marker was actually moved
  // forward and false if not. The marker never moves backwards: the cache may
  // have given up on a missing sample that the Reader is still waiting for.
  pub fn mark_reliably_received_before(&mut self, writer: GUID, sn: SequenceNumber) -> bool {
    self.horus_departed.remove(&writer); // HORUS PATCH (item 23): it is back
    let prev_sn = self.reliable_before(writer);
    // The entry must exist even at the initial value: withheld samples are
    // protected only for Writers that have one.
    let marker = self.received_reliably_before.entry(writer).or_default();
    *marker = max(*marker, sn);
    self.advance_marker_over_present(writer);
    prev_sn < self.reliable_before(writer)
  }

  // Samples present without a break right at the marker have nothing missing
  // before them, so move the marker past them. This matters after giving up on
  // a missing sample, when the Reader still reports it as missing.
  fn advance_marker_over_present(&mut self, writer: GUID) {
    let Some(marker) = self.received_reliably_before.get_mut(&writer) else {
      return;
    };
    if let Some(sn_map) = self.sequence_numbers.get(&writer) {
      for sn in sn_map.range(*marker..).map(|(sn, _)| *sn) {
        if sn != *marker {
          break;
        }
        *marker = sn.plus_1();
      }
    }
  }

  // The Writer is gone, so samples it never completed are no longer awaited.
  // HORUS PATCH (HORUS-PATCH.md item 23): what is here of a user writer stays readable
  // (nothing missing below it will come now): the marker moves past its last sample here
  // and goes with that sample. Was: the marker removed, so `reliable_before` fell back to
  // the first sequence number and a reliable reader read none of what it had not read
  // yet: a burst from a writer that then left, sitting unread while the application did
  // not take, was lost, counted by nothing. Discovery's built-in writers as upstream.
  pub fn forget_reliable_writer(&mut self, writer: GUID) {
    if !writer.entity_id.entity_kind.is_user_defined() {
      self.received_reliably_before.remove(&writer);
      return;
    }
    match self
      .sequence_numbers
      .get(&writer)
      .and_then(|sns| sns.keys().next_back())
    {
      Some(last) => {
        self.received_reliably_before.insert(writer, last.plus_1());
        self.horus_departed.insert(writer);
      }
      None => {
        self.received_reliably_before.remove(&writer);
        self.horus_departed.remove(&writer);
      }
    }
  }

  // The oldest change that a Reliable DataReader cannot yet take, because an
  // earlier sample from the same Writer is still missing: its receive timestamp,
  // Writer and SequenceNumber.
  fn oldest_withheld_change(&self) -> Option<(Timestamp, GUID, SequenceNumber)> {
    self
      .received_reliably_before
      .iter()
      .filter_map(|(writer, marker)| {
        self
          .sequence_numbers
          .get(writer)?
          .range(marker..)
          .next()
          .map(|(sn, ts)| (*ts, *writer, *sn))
      })
      .min()
  }

  // Payload bytes retained from the oldest withheld change onwards.
  fn withheld_bytes(&self, from: Timestamp) -> usize {
    self
      .changes
      .range(from..)
      .map(|(_, cc)| cc.data_value.payload_size())
      .sum()
  }

  // Over MAX_WITHHELD_BYTES_PER_TOPIC, give up on missing samples, oldest first,
  // and hand over the samples after them. Returns true if anything was given up.
  fn give_up_withheld_over_limit(&mut self) -> bool {
    // Under the sample count limit nothing is retained just for being withheld.
    if self.changes.len() <= self.max_keep_samples as usize {
      return false;
    }
    let mut gave_up = false;
    while let Some((oldest, writer, first_present)) = self.oldest_withheld_change() {
      if self.withheld_bytes(oldest) <= MAX_WITHHELD_BYTES_PER_TOPIC {
        break;
      }
      debug!(
        "Topic {:?}: giving up on samples from {:?} missing before {:?}",
        self.topic_name, writer, first_present
      );
      self.received_reliably_before.insert(writer, first_present);
      self.advance_marker_over_present(writer);
      gave_up = true;
    }
    gave_up
  }

  /// HORUS PATCH (HORUS-PATCH.md item 22): a user DataReader of this topic reads it with
  /// `pointer`: from now on, until the reader is dropped, a sample is removed early (below
  /// `max_keep_samples`, down to the KEEP_LAST depth) only once it has read it too.
  pub(crate) fn horus_register_read_pointer(&mut self, pointer: &Arc<ReadPointer>) {
    self.horus_read_pointers.register(pointer);
  }

  /// HORUS PATCH (HORUS-PATCH.md item 18): a reader of this topic has an ack window, with
  /// `taken` its marks: from now on, until its marks are dropped, a sample of one of its
  /// writers above that writer's mark (not taken yet) stays in this cache.
  pub(crate) fn horus_keep_untaken(&mut self, taken: &Arc<TakenMarks>) {
    self.horus_windows.retain(|w| w.strong_count() > 0);
    self.horus_windows.push(Arc::downgrade(taken));
  }

  /// HORUS PATCH (item 18): the samples the readers with an ack window may still take
  /// and have acknowledged: per reader and writer with a window, the writer's samples
  /// above the reader's taken mark up to its window's limit, at most a window of them (the
  /// highest: those below came from another reader of the topic, before this one's
  /// window). So at most (readers with a window) x (their writers) x (window) samples,
  /// whatever a reader takes: one that takes nothing keeps its first window, not more.
  /// Was: every sample above the lowest taken mark of all the readers, so a second reader
  /// that took nothing (horus-ros2's new reader waiting for its route to take it) kept
  /// every sample of the topic, without bound (found in review).
  fn horus_protected(&mut self) -> BTreeSet<Timestamp> {
    let mut protected = BTreeSet::new();
    let sequence_numbers = &self.sequence_numbers;
    self.horus_windows.retain(|w| match w.upgrade() {
      Some(taken) => {
        let window = max(taken.window(), 1);
        for (writer, mark) in taken.windows() {
          if mark.limit <= mark.taken {
            continue;
          }
          if let Some(sns) = sequence_numbers.get(&writer) {
            protected.extend(
              sns
                .range((Excluded(mark.taken), Included(mark.limit)))
                .rev()
                .take(window)
                .map(|(_, ts)| *ts),
            );
          }
        }
        true
      }
      None => false,
    });
    protected
  }

  pub fn get_change(&self, instant: &Timestamp) -> Option<&CacheChange> {
    self.changes.get(instant)
  }

  pub fn add_change(&mut self, instant: &Timestamp, cache_change: CacheChange) {
    self
      .add_change_internal(instant, cache_change)
      .map(|cc_back| {
        warn!(
          "DDSCache insert failed topic={:?} cache_change={:?}",
          self.topic_name, cc_back
        );
      });
  }

  fn add_change_internal(
    &mut self,
    instant: &Timestamp,
    cache_change: CacheChange,
  ) -> Option<CacheChange> {
    // First, do garbage collection.
    // But not at every insert, just to save time and effort.
    // Some heuristic to decide if we should collect now.
    // let payload_size = max(1, cache_change.data_value.payload_size());
    let semi_random_number = i64::from(cache_change.sequence_number) as usize;
    // Garbage collect more often when samples are large, so the cache does not
    // balloon between collections for big (e.g. fragmented) payloads:
    //   payload <= 1 KiB   : GC every 64 samples (cheap amortization)
    //   1 KiB < p <= 64 KiB: GC every 8 samples
    //   payload > 64 KiB    : GC on every sample
    let payload_size = cache_change.data_value.payload_size();
    let modulus = if payload_size <= 1024 {
      64
    } else if payload_size <= 65536 {
      8
    } else {
      1
    };
    let gc_triggered = modulus <= 1 || semi_random_number.is_multiple_of(modulus);
    if gc_triggered {
      debug!("Garbage collecting topic {}", self.topic_name);
      self.remove_changes_before(Timestamp::ZERO);
      // remove limit is so low that it has no effect.
      // We actually only remove to keep cache size between min and max limits.
    }

    // Now to the actual adding business.
    // HORUS PATCH (HORUS-PATCH.md item 11): in the SPDP topic a repeated sequence number
    // replaces the change held under it, and the repeat is added as new below, so the
    // SPDP DataReader (best effort: it reads by receive time) reads it. Fast DDS
    // re-announces its participant (every 3 s) under the sequence number of its first
    // announcement: 0.15.1 dropped every repeat while the first stayed in this cache, so
    // discovery read a participant once only. One it had refused then (all
    // MAX_PARTICIPANTS places taken by a flood) was never discovered: the flood stopped,
    // so nothing newer pushed its announcement out of the cache.
    if self.repeats_replace {
      if let Some(old) = self
        .find_by_sn(&cache_change)
        .and_then(|old_instant| self.changes.remove(&old_instant))
      {
        self.remove_sn(&old);
      }
    }
    let released = self
      .horus_released
      .get(&(cache_change.writer_guid, cache_change.sequence_number))
      .copied()
      .filter(|key| !self.changes.contains_key(key));
    if let Some(key) = released {
      // HORUS PATCH (item 22, found in review): released while readers were registered:
      // back under its first key, behind what they have read.
      self.horus_released_at.remove(&key);
      self
        .horus_released
        .remove(&(cache_change.writer_guid, cache_change.sequence_number));
      let mut cache_change = cache_change;
      if key <= self.changes_reallocated_up_to {
        cache_change.reallocate();
      }
      self.insert_sn(key, &cache_change);
      self.changes.insert(key, cache_change)
    } else if let Some(old_instant) = self.find_by_sn(&cache_change) {
      // Got duplicate DATA for a SN that we already have. It should be discarded.
      trace!(
        "add_change: discarding duplicate {:?} from {:?}. old timestamp = {:?}, new = {:?}",
        cache_change.sequence_number,
        cache_change.writer_guid,
        old_instant,
        instant,
      );
      // We are keeping this quiet, because e.g. FastDDS Discoery keeps sending the
      // same SequenceNumber in periodic updates.
      None
    } else {
      // This is a new (to us) SequenceNumber, this is the default processing path.
      // Ensure a strictly monotonic (hence unique) key: if the clock did not
      // advance since the previous insert (coarse clock vs. back-to-back receives),
      // bump by one tick so distinct samples never share a key. Keys stay ordered,
      // so time-range reads and GC are unaffected.
      let key = if *instant > self.last_added_instant {
        *instant
      } else {
        Timestamp::from_ticks(self.last_added_instant.to_ticks().wrapping_add(1))
      };
      self.last_added_instant = key;

      self.insert_sn(key, &cache_change);
      self.changes.insert(key, cache_change).inspect(|old_cc| {
        // Should be unreachable now that keys are strictly monotonic, but keep the
        // guard rather than silently overwriting if the invariant is ever broken.
        error!("DDSHistoryCache already contained element with key {key:?} !!!");
        self.remove_sn(old_cc);
      })
    }
  }

  fn find_by_sn(&self, cc: &CacheChange) -> Option<Timestamp> {
    self
      .sequence_numbers
      .get(&cc.writer_guid)
      .and_then(|snm| snm.get(&cc.sequence_number))
      .copied()
  }

  fn insert_sn(&mut self, instant: Timestamp, cc: &CacheChange) {
    self
      .sequence_numbers
      .entry(cc.writer_guid)
      .or_default()
      .insert(cc.sequence_number, instant);
  }

  pub fn get_changes_in_range_best_effort<'a>(
    &'a self,
    start_instant: Timestamp,
    end_instant: Timestamp,
  ) -> ChangesInRangeBestEffort<'a, impl FnMut(BestEffortMap<'a>) -> ChangesItem<'a>> {
    // Sanity check
    let start_instant = if start_instant <= end_instant {
      // sane case
      start_instant
    } else {
      // insane case
      error!(
        "get_changes_in_range_best_effort: Did my clock jump backwards? start={start_instant:?} \
         end={end_instant:?}"
      );
      end_instant
    };

    // Get result as tree range
    self
      .changes
      .range((Excluded(start_instant), Included(end_instant)))
      .map(|(i, c)| (*i, c))
  }

  pub fn get_changes_in_range_reliable<'a, 'b>(
    &'a self,
    last_read_sn: &'b BTreeMap<GUID, SequenceNumber>,
  ) -> ChangesInRangeReliable<
    'a,
    impl FnMut(ReliableFlat<'a>) -> ReliableFlatItem<'a> + use<'a, 'b>,
    impl FnMut(ReliableMap<'a>) -> Option<ChangesItem<'a>>,
  > {
    self
      .sequence_numbers
      .iter()
      .flat_map(|(guid, sn_map)| {
        let lower_bound_exc = last_read_sn
          .get(guid)
          .cloned()
          .unwrap_or(SequenceNumber::zero());
        let upper_bound_exc = self.reliable_before(*guid);
        // make sure lower < upper, so that `.range()` does not panic.
        let upper_bound_exc = max(upper_bound_exc, lower_bound_exc.plus_1());
        sn_map.range((Excluded(lower_bound_exc), Excluded(upper_bound_exc)))
      }) // we get iterator of Timestamp
      .filter_map(|(_sn, t)| self.get_change(t).map(|cc| (*t, cc)))
  }

  pub fn get_changes_in_range<'a>(
    &'a self,
    reliable: bool,
    latest_instant: Timestamp,
    last_read_sn: &'a BTreeMap<GUID, SequenceNumber>,
  ) -> impl Iterator<Item = (Timestamp, &'a CacheChange)> {
    if reliable {
      ChangesInRange::Reliable(self.get_changes_in_range_reliable(last_read_sn))
    } else {
      ChangesInRange::BestEffort(
        self.get_changes_in_range_best_effort(latest_instant, Timestamp::now()),
      )
    }
  }
  fn reliable_before(&self, writer: GUID) -> SequenceNumber {
    self
      .received_reliably_before
      .get(&writer)
      .cloned()
      .unwrap_or(SequenceNumber::default())
    // Sequence numbering starts at default(), so anything before that is always
    // received reliably, since no such samples exist.
  }

  fn remove_sn(&mut self, cc: &CacheChange) {
    let mut emptied = false;

    self.sequence_numbers.entry(cc.writer_guid).and_modify(|s| {
      s.remove(&cc.sequence_number);
      emptied = s.is_empty();
    });
    if emptied {
      self.sequence_numbers.remove(&cc.writer_guid);
      if self.horus_departed.remove(&cc.writer_guid) {
        self.received_reliably_before.remove(&cc.writer_guid);
      }
    }
  }

  /// Garbarge collection:
  ///
  /// Remove changes before given Timestamp, but keep at least
  /// `self.min_keep_samples`.
  ///
  /// If we are over `self.max_keep_samples`, then remove the oldest samples
  /// until `max_keep_samples` is reached, regardless of `remove_before`.
  pub fn remove_changes_before(&mut self, remove_before: Timestamp) {
    // TODO: Currently, TopicCache does not know about Keys is Samples/CacheChanges,
    // because they are opaque binary blobs at this point. Therefore, we cannot
    // distinguish between instances, so cannot observe max instance counts.
    // We have to do just with min/max sample counts.

    let sample_count = self.changes.len();

    // We must remove at least enough to stay within max limit,
    // must_remove_count = sample_count - max_keep_samples
    let must_remove_count = sample_count.saturating_sub(self.max_keep_samples as usize);
    // Saturating sub takes care that this does not underflow below zero.

    let may_remove_count = match self.min_keep_samples {
      // We are erquested to KeepAll, so do not remove more than absolutely required.
      History::KeepAll => must_remove_count,

      // We are requested to keep some depth, so we may remove up to that.
      History::KeepLast { depth } => max(
        sample_count.saturating_sub(depth as usize),
        must_remove_count,
      ),
    };

    // Samples withheld from a Reliable DataReader have not been delivered yet, so
    // they are kept even beyond `max_keep_samples`. They are released once the
    // missing sample is repaired, or declared irrelevant by GAP or HEARTBEAT, or
    // when they exceed MAX_WITHHELD_BYTES_PER_TOPIC and we give up on the missing
    // sample. Samples released by giving up are not evicted in the same pass, so
    // the Reader gets a chance to take them.
    if !self.give_up_withheld_over_limit() {
      let oldest_withheld = self.oldest_withheld_change().map(|(ts, _, _)| ts);
      // HORUS PATCH (HORUS-PATCH.md item 22): the oldest samples every registered user
      // DataReader has read may go too, down to the KEEP_LAST depth (`may_remove_count`):
      // upstream kept `max_keep_samples` (at least 64) of them, read or not, until newer
      // ones pushed them out. None without a registered reader (discovery's topics).
      let readers = self.horus_read_pointers.live();

      let oldest_timestamp_to_retain_opt: Option<Timestamp> = self
        .changes
        .iter()
        .enumerate()
        .skip_while(|(i, (ts, cc))|
          // Skip samples to be removed. Force "must" count, and then remove until
          // either limit timestamp or "may" count stops us
          oldest_withheld.is_none_or(|w| **ts < w)
          && (*i < must_remove_count
          || (**ts < remove_before && *i < may_remove_count)
          || (*i < may_remove_count
            && read_by_all(&readers, **ts, cc.writer_guid, cc.sequence_number))))
        .map(|(_, (ts, _))| ts) // un-enumerate
        .next() // the next element would be the first to retain
        .copied();

      // In case `.next()` is `None`, then we just decided to to discard everything,
      // or, as a special case, the cache was empty to begin with, but the end
      // result is the same.

      let to_retain = if let Some(split_key) = oldest_timestamp_to_retain_opt {
        // split_off: Returns everything after the given key, including the key.
        self.changes.split_off(&split_key)
      } else {
        BTreeMap::new()
      };

      let to_remove = std::mem::replace(&mut self.changes, to_retain);

      // HORUS PATCH (HORUS-PATCH.md item 18): a sample inside the window of a reader with
      // an ack window, not taken yet, stays (`horus_protected`: a window per reader and
      // writer at most). Was: evicted past `max_keep_samples` (at least 64, or the depth)
      // of all writers together: several writers each filling its window while the
      // reader's application took nothing lost samples the reader had acknowledged. The
      // samples kept this way are not counted against the limit: besides them, at most
      // `max_keep_samples` stay.
      let protected = if to_remove.is_empty() || self.horus_windows.is_empty() {
        BTreeSet::new()
      } else {
        self.horus_protected()
      };
      // update also SequenceNumber map
      for (ts, r) in to_remove {
        if protected.contains(&ts) {
          self.changes.insert(ts, r);
        } else {
          if !readers.is_empty() {
            // HORUS PATCH (item 22, found in review): remembered while upstream would
            // still hold it.
            let id = (r.writer_guid, r.sequence_number);
            self.horus_released.insert(id, ts);
            self.horus_released_at.insert(ts, id);
          }
          self.remove_sn(&r);
        }
      }
      let room = (self.max_keep_samples.max(0) as usize).saturating_sub(self.changes.len());
      while self.horus_released_at.len() > room {
        if let Some((_, id)) = self.horus_released_at.pop_first() {
          self.horus_released.remove(&id);
        }
      }
      // HORUS PATCH (item 22): a reliable reader's pointer forgets the writers this cache
      // holds no sample of (it would otherwise remember every writer it ever read).
      for p in &readers {
        if p.writers() > self.sequence_numbers.len() {
          p.retain_writers(|w| self.sequence_numbers.contains_key(w));
        }
      }
    }

    // Now, reallocate old cache changes
    let reallocate_timeout = crate::Duration::from_secs(5);
    let now = Timestamp::now();

    // Take max to avoid crash if clock jumps backward.
    let reallocate_limit = max(now - reallocate_timeout, self.changes_reallocated_up_to);

    self
      .changes
      .range_mut((
        Excluded(self.changes_reallocated_up_to),
        Included(reallocate_limit),
      ))
      .for_each(|(_, cc)| cc.reallocate());

    self.changes_reallocated_up_to = reallocate_limit;
  }

  pub fn topic_name(&self) -> String {
    self.topic_name.clone()
  }

  #[cfg(test)]
  pub(crate) fn max_keep_samples(&self) -> i32 {
    self.max_keep_samples
  }
}

type ChangesInRangeBestEffort<'a, F> = iter::Map<btree_map::Range<'a, Timestamp, CacheChange>, F>;
type ChangesInRangeReliable<'a, F1, F2> = iter::FilterMap<
  iter::FlatMap<
    btree_map::Iter<'a, GUID, BTreeMap<SequenceNumber, Timestamp>>,
    btree_map::Range<'a, SequenceNumber, Timestamp>,
    F1,
  >,
  F2,
>;

// type definitions for iterators
type BestEffortMap<'a> = (&'a Timestamp, &'a CacheChange);

type ReliableMap<'a> = (&'a SequenceNumber, &'a Timestamp);
type ReliableFlat<'a> = (&'a GUID, &'a BTreeMap<SequenceNumber, Timestamp>);
type ReliableFlatItem<'a> = btree_map::Range<'a, SequenceNumber, Timestamp>;

type ChangesItem<'a> = (Timestamp, &'a CacheChange);

pub(crate) enum ChangesInRange<'a, F, F1, F2> {
  BestEffort(ChangesInRangeBestEffort<'a, F>),
  Reliable(ChangesInRangeReliable<'a, F1, F2>),
}

impl<'a, F, F1, F2> Iterator for ChangesInRange<'a, F, F1, F2>
where
  F: FnMut(BestEffortMap<'a>) -> ChangesItem<'a>,
  F1: FnMut(ReliableFlat<'a>) -> ReliableFlatItem<'a>,
  F2: FnMut(ReliableMap<'a>) -> Option<ChangesItem<'a>>,
{
  type Item = ChangesItem<'a>;

  fn next(&mut self) -> Option<Self::Item> {
    match self {
      Self::Reliable(r) => r.next(),
      Self::BestEffort(b) => b.next(),
    }
  }
}

// -----------------------------------------------------------------------
// -----------------------------------------------------------------------
// -----------------------------------------------------------------------

#[cfg(test)]
mod tests {
  use std::{
    collections::BTreeMap,
    sync::{Arc, RwLock},
    thread,
  };

  use super::{DDSCache, TopicCache};
  use crate::horus_read_pointer::ReadPointer;
  use crate::{
    dds::{
      ddsdata::DDSData,
      qos::{policy::History, QosPolicies, QosPolicyBuilder},
      typedesc::TypeDesc,
      with_key::datawriter::WriteOptions,
    },
    discovery::discovery::Discovery,
    messages::submessages::elements::serialized_payload::SerializedPayload,
    structure::{
      cache_change::CacheChange,
      guid::{EntityId, EntityKind, GuidPrefix, GUID},
      sequence_number::SequenceNumber,
      time::Timestamp,
    },
    RepresentationIdentifier,
  };

  // A reliable DataReader reads each remote writer's samples in sequence
  // number order. Sample 2 waits while sample 1 is repaired; collection must
  // not evict it before that repair arrives.
  fn read_after_repair(reader_qos: &QosPolicies) -> Vec<SequenceNumber> {
    let sample = |writer, sn| {
      CacheChange::new(
        writer,
        SequenceNumber::new(sn),
        WriteOptions::default(),
        DDSData::new(SerializedPayload::default()),
      )
    };
    let sedp_writer = |prefix| {
      GUID::new(
        GuidPrefix::new(&[prefix; 12]),
        EntityId::SEDP_BUILTIN_PUBLICATIONS_WRITER,
      )
    };

    let mut topic_cache = TopicCache::new(
      "DCPSPublication".to_string(),
      TypeDesc::new("DiscoveredWriterData".to_string()),
      &Discovery::builtin_subscriber_qos(),
    );
    topic_cache.update_keep_limits(reader_qos);

    let waiting = sedp_writer(1);
    topic_cache.add_change(&Timestamp::now(), sample(waiting, 2));

    let mut last_read_sn = BTreeMap::new();
    for prefix in 2..66 {
      let other = sedp_writer(prefix);
      topic_cache.add_change(&Timestamp::now(), sample(other, 1));
      topic_cache.mark_reliably_received_before(other, SequenceNumber::new(2));
      last_read_sn.insert(other, SequenceNumber::new(1));
    }

    topic_cache.remove_changes_before(Timestamp::ZERO);
    topic_cache.add_change(&Timestamp::now(), sample(waiting, 1));
    topic_cache.mark_reliably_received_before(waiting, SequenceNumber::new(3));

    topic_cache
      .get_changes_in_range_reliable(&last_read_sn)
      .filter(|(_, cc)| cc.writer_guid == waiting)
      .map(|(_, cc)| cc.sequence_number)
      .collect()
  }

  #[test]
  fn sedp_reader_limits_keep_sample_waiting_for_repair() {
    assert_eq!(
      read_after_repair(&Discovery::builtin_subscriber_qos()),
      [SequenceNumber::new(1)]
    );
    assert_eq!(
      read_after_repair(&Discovery::builtin_sedp_reader_qos()),
      [SequenceNumber::new(1), SequenceNumber::new(2)]
    );
  }

  fn keep_all_topic_cache() -> TopicCache {
    TopicCache::new(
      "Square".to_string(),
      TypeDesc::new("ShapeType".to_string()),
      &QosPolicyBuilder::new().history(History::KeepAll).build(),
    )
  }

  fn other_user_writer() -> GUID {
    GUID::new(
      GuidPrefix::new(&[6; 12]),
      EntityId::new([0, 0, 2], EntityKind::WRITER_NO_KEY_USER_DEFINED),
    )
  }

  fn user_writer() -> GUID {
    GUID::new(
      GuidPrefix::new(&[7; 12]),
      EntityId::new([0, 0, 1], EntityKind::WRITER_WITH_KEY_USER_DEFINED),
    )
  }

  // Adds a sample like a Reliable Reader that is still missing sample 1.
  fn add_after_missing_first(topic_cache: &mut TopicCache, writer: GUID, sn: i64, size: usize) {
    topic_cache.add_change(
      &Timestamp::now(),
      CacheChange::new(
        writer,
        SequenceNumber::new(sn),
        WriteOptions::default(),
        DDSData::new(SerializedPayload::new(
          RepresentationIdentifier::CDR_LE,
          vec![0; size],
        )),
      ),
    );
    topic_cache.mark_reliably_received_before(writer, SequenceNumber::new(1));
  }

  // HORUS PATCH (item 22): a KEEP_LAST 4 user topic's cache and `n` samples of 1 KiB from
  // `writer`, sequence numbers 1..=n, received 1 ms apart.
  fn keep_last_4_with(n: i64, writer: GUID) -> (TopicCache, Vec<Timestamp>) {
    let mut tc = TopicCache::new(
      "rt/cloud".to_string(),
      TypeDesc::new("sensor_msgs::msg::dds_::PointCloud2_".to_string()),
      &QosPolicyBuilder::new()
        .history(History::KeepLast { depth: 4 })
        .build(),
    );
    let t0 = Timestamp::now();
    let mut at = Vec::new();
    for sn in 1..=n {
      let ts = t0 + crate::Duration::from_millis(sn);
      tc.add_change(
        &ts,
        CacheChange::new(
          writer,
          SequenceNumber::new(sn),
          WriteOptions::default(),
          DDSData::new(SerializedPayload::new(
            RepresentationIdentifier::CDR_LE,
            vec![0; 1024],
          )),
        ),
      );
      at.push(ts);
    }
    (tc, at)
  }

  /// What broke: a topic cache kept the last 64 samples (`max_keep_samples`) of a topic
  /// whether or not its readers had read them; with 1 MiB samples, 64 MiB per topic held
  /// for as long as the topic lived (a bridge reading a 1 MiB stream from ROS 2 grew by
  /// ~72 MiB). Now the samples every registered reader has read go down to the depth.
  #[test]
  fn samples_every_registered_reader_has_read_go_down_to_the_depth() {
    let writer = user_writer();
    let (mut tc, at) = keep_last_4_with(40, writer);
    let (best_effort, reliable) = (ReadPointer::new(false), ReadPointer::new(true));
    tc.horus_register_read_pointer(&best_effort);
    tc.horus_register_read_pointer(&reliable);
    // Nothing read: nothing goes below the 64 kept.
    tc.remove_changes_before(Timestamp::ZERO);
    assert_eq!(tc.changes.len(), 40);
    // One reader read up to 30, the other up to 20: the first 20 may go, but 4 at least
    // stay (the depth); read ones beyond it go.
    best_effort.note(at[29], writer, SequenceNumber::new(30));
    reliable.note(at[19], writer, SequenceNumber::new(20));
    tc.remove_changes_before(Timestamp::ZERO);
    assert_eq!(tc.changes.len(), 20, "21..=40 stay");
    reliable.note(at[39], writer, SequenceNumber::new(40));
    best_effort.note(at[39], writer, SequenceNumber::new(40));
    tc.remove_changes_before(Timestamp::ZERO);
    assert_eq!(tc.changes.len(), 4, "the depth stays");
    assert_eq!(
      tc.changes
        .values()
        .map(|cc| cc.sequence_number)
        .collect::<Vec<_>>(),
      (37..=40).map(SequenceNumber::new).collect::<Vec<_>>()
    );
  }

  /// A reader that registers later and has read nothing keeps everything it may read (up
  /// to the 64); readers that are dropped no longer count; a reliable reader's pointer
  /// forgets writers the cache no longer holds a sample of.
  #[test]
  fn an_unread_reader_keeps_the_samples_and_a_dropped_one_no_longer_counts() {
    let writer = user_writer();
    let (mut tc, at) = keep_last_4_with(10, writer);
    let first = ReadPointer::new(true);
    tc.horus_register_read_pointer(&first);
    first.note(at[9], writer, SequenceNumber::new(10));
    let late = ReadPointer::new(false);
    tc.horus_register_read_pointer(&late);
    tc.remove_changes_before(Timestamp::ZERO);
    assert_eq!(tc.changes.len(), 10, "the late reader has read none");
    drop(late);
    tc.remove_changes_before(Timestamp::ZERO);
    assert_eq!(tc.changes.len(), 4);
    // Another writer the first reader read, whose samples are all gone: forgotten.
    let gone = GUID::new(
      GuidPrefix::new(&[8; 12]),
      EntityId::new([0, 0, 2], EntityKind::WRITER_WITH_KEY_USER_DEFINED),
    );
    first.note(at[0], gone, SequenceNumber::new(1));
    assert_eq!(first.writers(), 2);
    tc.remove_changes_before(Timestamp::ZERO);
    assert_eq!(first.writers(), 1);
  }

  /// HORUS PATCH (item 22), found in review: a sample every reader has read, removed
  /// below upstream's 64, that arrives again (a retransmit or a writer's history sent to another RTPS reader of the
  /// topic in this participant, e.g. the reader swapped in by horus-ros2) is no longer
  /// dropped as a duplicate: it is added anew, under a new receive time, and a best-effort
  /// DataReader that had read it reads it a second time. Upstream keeps it (64 kept) and
  /// drops the repeat.
  #[test]
  fn a_read_sample_that_arrives_again_is_not_read_again_by_a_best_effort_reader() {
    let writer = user_writer();
    let (mut tc, _) = keep_last_4_with(10, writer);
    let best_effort = ReadPointer::new(false);
    tc.horus_register_read_pointer(&best_effort);
    // The best-effort DataReader reads all 10, as try_take_one_with does.
    let mut latest = Timestamp::ZERO;
    let read: Vec<(Timestamp, GUID, SequenceNumber)> = tc
      .get_changes_in_range_best_effort(latest, Timestamp::now() + crate::Duration::from_secs(1))
      .map(|(ts, cc)| (ts, cc.writer_guid, cc.sequence_number))
      .collect();
    assert_eq!(read.len(), 10);
    for (ts, w, sn) in read {
      best_effort.note(ts, w, sn);
      latest = latest.max(ts);
    }
    tc.remove_changes_before(Timestamp::ZERO);
    // Sample 3 arrives again.
    tc.add_change(
      &(Timestamp::now() + crate::Duration::from_secs(1)),
      CacheChange::new(
        writer,
        SequenceNumber::new(3),
        WriteOptions::default(),
        DDSData::new(SerializedPayload::new(
          RepresentationIdentifier::CDR_LE,
          vec![0; 1024],
        )),
      ),
    );
    let again: Vec<SequenceNumber> = tc
      .get_changes_in_range_best_effort(latest, Timestamp::now() + crate::Duration::from_secs(2))
      .map(|(_, cc)| cc.sequence_number)
      .collect();
    assert_eq!(again, Vec::<SequenceNumber>::new(), "read a second time");
    // A reader made after it was released still reads it.
    let late: Vec<SequenceNumber> = tc
      .get_changes_in_range_best_effort(
        Timestamp::ZERO,
        Timestamp::now() + crate::Duration::from_secs(2),
      )
      .map(|(_, cc)| cc.sequence_number)
      .collect();
    assert_eq!(late, [3, 7, 8, 9, 10].map(SequenceNumber::new));
  }

  /// HORUS PATCH (item 23), found in review (upstream's): a reliable DataReader could not
  /// read what it had not read yet of a writer once that writer was unmatched
  /// (`forget_reliable_writer` dropped its marker, and `reliable_before` fell back to 1):
  /// 0 of 3 read. The marker goes once the writer's last sample does.
  #[test]
  fn unread_samples_of_a_departed_writer_stay_readable_by_a_reliable_reader() {
    let writer = user_writer();
    let (mut tc, _) = keep_last_4_with(3, writer);
    tc.mark_reliably_received_before(writer, SequenceNumber::new(4));
    tc.forget_reliable_writer(writer);
    let n = tc.get_changes_in_range_reliable(&BTreeMap::new()).count();
    assert_eq!(n, 3);
    // Once all three are gone (read by a registered reader, then past the depth), so is
    // the marker: a writer of that GUID starting again is read from its first.
    let reader = ReadPointer::new(true);
    tc.horus_register_read_pointer(&reader);
    reader.note(Timestamp::now(), writer, SequenceNumber::new(3));
    for sn in 1..=4 {
      tc.add_change(
        &(Timestamp::now() + crate::Duration::from_secs(1)),
        CacheChange::new(
          other_user_writer(),
          SequenceNumber::new(sn),
          WriteOptions::default(),
          DDSData::new(SerializedPayload::new(
            RepresentationIdentifier::CDR_LE,
            vec![0; 1024],
          )),
        ),
      );
    }
    reader.note(
      Timestamp::now() + crate::Duration::from_secs(2),
      other_user_writer(),
      SequenceNumber::new(4),
    );
    tc.remove_changes_before(Timestamp::ZERO);
    assert!(
      tc.sequence_numbers.get(&writer).is_none(),
      "all of the departed writer's gone"
    );
    assert!(
      !tc.received_reliably_before.contains_key(&writer),
      "and its marker"
    );
  }

  /// A departed built-in (discovery) writer's marker goes at once, as upstream.
  #[test]
  fn a_departed_discovery_writers_marker_goes_at_once() {
    let writer = GUID::new(
      GuidPrefix::new(&[9; 12]),
      EntityId::SEDP_BUILTIN_PUBLICATIONS_WRITER,
    );
    let (mut tc, _) = keep_last_4_with(3, writer);
    tc.mark_reliably_received_before(writer, SequenceNumber::new(4));
    tc.forget_reliable_writer(writer);
    assert_eq!(
      tc.get_changes_in_range_reliable(&BTreeMap::new()).count(),
      0
    );
  }

  #[test]
  fn reliably_received_marker_does_not_move_backwards() {
    let mut topic_cache = keep_all_topic_cache();
    let writer = user_writer();
    assert!(topic_cache.mark_reliably_received_before(writer, SequenceNumber::new(10)));
    assert!(!topic_cache.mark_reliably_received_before(writer, SequenceNumber::new(5)));
    assert_eq!(topic_cache.reliable_before(writer), SequenceNumber::new(10));
  }

  // E.g. Fast DDS sends its first HEARTBEAT 3 s after matching, so a late joiner
  // waits that long for the samples before its first one.
  #[test]
  fn small_withheld_samples_are_kept() {
    let mut topic_cache = keep_all_topic_cache();
    let writer = user_writer();
    for sn in 2..=91 {
      add_after_missing_first(&mut topic_cache, writer, sn, 100);
    }
    topic_cache.remove_changes_before(Timestamp::ZERO);
    assert_eq!(topic_cache.changes.len(), 90);
    assert_eq!(topic_cache.reliable_before(writer), SequenceNumber::new(1));
  }

  #[test]
  fn large_withheld_samples_are_given_up_and_handed_over() {
    let mut topic_cache = keep_all_topic_cache();
    let writer = user_writer();
    let size = 256 * 1024;
    let max_keep = topic_cache.max_keep_samples as i64;

    // Up to the sample count limit, everything is kept anyway.
    for sn in 2..=max_keep + 1 {
      add_after_missing_first(&mut topic_cache, writer, sn, size);
    }
    assert_eq!(topic_cache.reliable_before(writer), SequenceNumber::new(1));

    // Beyond it, over MAX_WITHHELD_BYTES_PER_TOPIC, the next collection gives up
    // on sample 1 and hands over everything after it, without evicting it in the
    // same pass.
    add_after_missing_first(&mut topic_cache, writer, max_keep + 2, size);
    assert_eq!(topic_cache.reliable_before(writer), SequenceNumber::new(1));
    topic_cache.remove_changes_before(Timestamp::ZERO);
    assert_eq!(
      topic_cache.reliable_before(writer),
      SequenceNumber::new(max_keep + 3)
    );
    let handed_over: Vec<_> = topic_cache
      .get_changes_in_range_reliable(&BTreeMap::new())
      .map(|(_, cc)| i64::from(cc.sequence_number))
      .collect();
    assert_eq!(handed_over, (2..=max_keep + 2).collect::<Vec<_>>());

    // Later samples are handed over as they arrive, and the cache stays bounded.
    for sn in max_keep + 3..=200 {
      add_after_missing_first(&mut topic_cache, writer, sn, size);
    }
    assert_eq!(
      topic_cache.reliable_before(writer),
      SequenceNumber::new(201)
    );
    assert!(topic_cache.changes.len() <= topic_cache.max_keep_samples as usize + 1);
  }

  #[test]
  fn create_dds_cache_and_topic_cache() {
    // Create DDS cache
    let dds_cache = Arc::new(RwLock::new(DDSCache::new()));
    // Set a topic name and some QoS policies
    let topic_name = String::from("ImJustATopic");
    let qos = QosPolicies::qos_none();

    // Add the new topic to DDS cache
    let topic_cache_handle = dds_cache.write().unwrap().add_new_topic(
      topic_name,
      TypeDesc::new("IDontKnowIfThisIsNecessary".to_string()),
      &qos,
    );

    // Create a cache change and add it to the topic cache
    let change1 = CacheChange::new(
      GUID::GUID_UNKNOWN,
      SequenceNumber::new(1),
      WriteOptions::default(),
      DDSData::new(SerializedPayload::default()),
    );
    topic_cache_handle
      .lock()
      .unwrap()
      .add_change(&crate::Timestamp::now(), change1);

    let topic_cache_handle2 = topic_cache_handle.clone();
    thread::spawn(move || {
      // Create two new cache changes and add them to topic cache
      let change2 = CacheChange::new(
        GUID::GUID_UNKNOWN,
        SequenceNumber::new(2),
        WriteOptions::default(),
        DDSData::new(SerializedPayload::default()),
      );
      let change3 = CacheChange::new(
        GUID::GUID_UNKNOWN,
        SequenceNumber::new(3),
        WriteOptions::default(),
        DDSData::new(SerializedPayload::default()),
      );

      topic_cache_handle2
        .lock()
        .unwrap()
        .add_change(&crate::Timestamp::now(), change2);
      topic_cache_handle2
        .lock()
        .unwrap()
        .add_change(&crate::Timestamp::now(), change3);
    })
    .join()
    .unwrap();

    // Verify that there are 3 cache changes in the topic cache
    assert_eq!(
      topic_cache_handle
        .lock()
        .unwrap()
        .get_changes_in_range_best_effort(
          crate::Timestamp::now() - crate::Duration::from_secs(23),
          crate::Timestamp::now()
        )
        .count(),
      3
    );
  }

  // HORUS PATCH (HORUS-PATCH.md item 11): Fast DDS repeats its SPDP announcement under the
  // sequence number of its first; the SPDP reader (best effort, reading by receive time)
  // must read each repeat, where another topic's cache drops it as a duplicate.
  #[test]
  fn a_repeated_spdp_announcement_is_read_again_not_dropped_as_a_duplicate() {
    let spdp_writer = GUID::new(
      GuidPrefix::new(&[9; 12]),
      EntityId::SPDP_BUILTIN_PARTICIPANT_WRITER,
    );
    let announcement = || {
      CacheChange::new(
        spdp_writer,
        SequenceNumber::new(1),
        WriteOptions::default(),
        DDSData::new(SerializedPayload::default()),
      )
    };
    let spdp_topic = crate::rtps::constant::builtin_topic_names::DCPS_PARTICIPANT;
    for (topic, read_again) in [(spdp_topic, true), ("DCPSPublication", false)] {
      let mut topic_cache = TopicCache::new(
        topic.to_string(),
        TypeDesc::new("SpdpDiscoveredParticipantData".to_string()),
        &Discovery::create_spdp_participant_qos(),
      );
      let first = Timestamp::now();
      let repeat = Timestamp::from_ticks(first.to_ticks() + 1000);
      topic_cache.add_change(&first, announcement());
      // The reader has read the first announcement.
      topic_cache.add_change(&repeat, announcement());
      let unread = topic_cache
        .get_changes_in_range_best_effort(first, repeat)
        .count();
      assert_eq!(unread, usize::from(read_again), "{topic}");
      assert_eq!(topic_cache.changes.len(), 1, "{topic}");
      assert_eq!(
        topic_cache.sequence_numbers[&spdp_writer].len(),
        1,
        "{topic}"
      );
    }
  }

  // HORUS PATCH (HORUS-PATCH.md item 18): with a reader's ack window, samples it has not
  // taken are not evicted, however many writers each filled its window.
  #[test]
  fn samples_a_reader_with_an_ack_window_has_not_taken_are_not_evicted() {
    let qos = QosPolicyBuilder::new()
      .history(History::KeepLast { depth: 16 })
      .build();
    let mut topic_cache = TopicCache::new(
      "bp".to_string(),
      TypeDesc::new("std_msgs::msg::dds_::UInt8MultiArray_".to_string()),
      &qos,
    );
    let max_keep = topic_cache.max_keep_samples as i64;
    let marks = std::sync::Arc::new(crate::horus_ack_window::TakenMarks::with_window(40));
    topic_cache.horus_keep_untaken(&marks);
    let writer = |n: u8| {
      GUID::new(
        GuidPrefix::new(&[n; 12]),
        EntityId::new([0, 0, 1], EntityKind::WRITER_NO_KEY_USER_DEFINED),
      )
    };
    let (a, b) = (writer(1), writer(2));
    marks.track(a);
    marks.track(b);
    // Each writer's window admitted its 1..=40 (the RTPS reader's limits).
    marks.set_limit(a, SequenceNumber::new(40));
    marks.set_limit(b, SequenceNumber::new(40));
    let add = |topic_cache: &mut TopicCache, w: GUID, sn: i64| {
      topic_cache.add_change(
        &Timestamp::now(),
        CacheChange::new(
          w,
          SequenceNumber::new(sn),
          WriteOptions::default(),
          DDSData::new(SerializedPayload::new(
            RepresentationIdentifier::CDR_LE,
            vec![0; 8],
          )),
        ),
      );
      topic_cache.mark_reliably_received_before(w, SequenceNumber::new(sn + 1));
    };
    // Two writers, 40 each (their windows), nothing taken: 80 over the limit (64).
    for sn in 1..=40 {
      add(&mut topic_cache, a, sn);
      add(&mut topic_cache, b, sn);
    }
    topic_cache.remove_changes_before(Timestamp::ZERO);
    // Without the patch the oldest 16 were evicted, never read by the reader.
    assert_eq!(topic_cache.changes.len(), 80, "limit {max_keep}");
    let all: Vec<_> = topic_cache
      .get_changes_in_range_reliable(&BTreeMap::new())
      .map(|(_, cc)| (cc.writer_guid, i64::from(cc.sequence_number)))
      .collect();
    assert_eq!(all.len(), 80);
    // a's 40 taken: they may go (down to the limit); b's still kept.
    for sn in 1..=40 {
      marks.note(a, SequenceNumber::new(sn));
    }
    topic_cache.remove_changes_before(Timestamp::ZERO);
    let count = |topic_cache: &TopicCache, w: GUID| {
      topic_cache
        .changes
        .values()
        .filter(|cc| cc.writer_guid == w)
        .count() as i64
    };
    assert_eq!(count(&topic_cache, b), 40, "b's untaken samples all kept");
    // The 16 oldest were a's and b's 1..=8: a's went; b's, kept, count apart.
    assert_eq!(count(&topic_cache, a), 32);
    // The reader gone (its marks dropped): the cache is as without a window.
    drop(marks);
    add(&mut topic_cache, a, 41);
    topic_cache.remove_changes_before(Timestamp::ZERO);
    assert_eq!(topic_cache.changes.len() as i64, max_keep);
    assert!(topic_cache.horus_windows.is_empty());
  }

  // HORUS PATCH (HORUS-PATCH.md item 18), found in review: two readers with an ack window
  // on one topic (horus-ros2's old and new reader while its route has not yet taken the new
  // one), one of them taking nothing. It kept every sample the other one admitted: the
  // topic cache grew without bound. Now it keeps its own window, no more.
  #[test]
  fn a_second_windowed_reader_that_takes_nothing_keeps_its_window_not_every_sample() {
    let qos = QosPolicyBuilder::new()
      .history(History::KeepLast { depth: 16 })
      .build();
    let mut tc = TopicCache::new(
      "bp".to_string(),
      TypeDesc::new("std_msgs::msg::dds_::UInt8MultiArray_".to_string()),
      &qos,
    );
    let max_keep = tc.max_keep_samples as usize;
    let old = std::sync::Arc::new(crate::horus_ack_window::TakenMarks::with_window(16));
    let new = std::sync::Arc::new(crate::horus_ack_window::TakenMarks::with_window(16));
    tc.horus_keep_untaken(&old);
    tc.horus_keep_untaken(&new);
    let a = GUID::new(
      GuidPrefix::new(&[1; 12]),
      EntityId::new([0, 0, 1], EntityKind::WRITER_NO_KEY_USER_DEFINED),
    );
    old.track(a);
    new.track(a);
    // The new reader's window admitted 1..=16, and it takes nothing.
    new.set_limit(a, SequenceNumber::new(16));
    for sn in 1..=5000i64 {
      // The old reader's window reaches 16 past what it took.
      old.set_limit(a, SequenceNumber::new(sn + 15));
      tc.add_change(
        &Timestamp::now(),
        CacheChange::new(
          a,
          SequenceNumber::new(sn),
          WriteOptions::default(),
          DDSData::new(SerializedPayload::new(
            RepresentationIdentifier::CDR_LE,
            vec![0; 8],
          )),
        ),
      );
      tc.mark_reliably_received_before(a, SequenceNumber::new(sn + 1));
      old.note(a, SequenceNumber::new(sn)); // the old reader takes each at once
    }
    tc.remove_changes_before(Timestamp::ZERO);
    // Without the fix all 5000 stayed.
    assert_eq!(tc.changes.len(), max_keep + 16, "the limit and the new reader's window");
    let kept: Vec<i64> = tc
      .changes
      .values()
      .map(|cc| i64::from(cc.sequence_number))
      .collect();
    assert_eq!(kept[..16], (1..=16).collect::<Vec<_>>(), "the new reader's window kept");
    assert_eq!(kept[16..], (5000 - max_keep as i64 + 1..=5000).collect::<Vec<_>>());
    // A reader whose window is not refreshed yet (no limit) keeps nothing.
    let late = std::sync::Arc::new(crate::horus_ack_window::TakenMarks::with_window(16));
    tc.horus_keep_untaken(&late);
    late.track(a);
    drop(new);
    tc.remove_changes_before(Timestamp::ZERO);
    assert_eq!(tc.changes.len(), max_keep);
  }
}
