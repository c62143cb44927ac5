use std::{
  collections::{BTreeMap, BTreeSet, HashMap, VecDeque},
  ops::Bound,
};

#[allow(unused_imports)]
use log::{debug, error, info, warn};

use crate::{
  dds::{
    key::Keyed,
    qos::{policy, QosPolicies},
    readcondition::ReadCondition,
    sampleinfo::*,
    with_key::datasample::{DataSample, DeserializedCacheChange, Sample},
  },
  structure::{guid::GUID, sequence_number::SequenceNumber, time::Timestamp},
  with_key::WriteOptions,
};

// use std::num::Zero; unstable

// DataSampleCache is a structure local to DataReader and DataWriter. It acts as
// a buffer between e.g. RTPS Reader and the application-facing DataReader. It
// keeps track of what each DataReader has "read" or "taken".

// Data samples are here ordered and indexed by Timestamp, which must be a
// unique key. RTPS Timestamp has sub-nanosecond resolution, so it could be
// unique, provided that the source clock ticks frequently enough.
pub struct DataSampleCache<D: Keyed> {
  qos: QosPolicies,
  datasamples: BTreeMap<Timestamp, SampleWithMetaData<D>>, /* ordered storage for deserialized
                                                            * samples */
  pub(crate) instance_map: BTreeMap<D::K, InstanceMetaData>, // ordered storage for instances
  // HORUS PATCH (HORUS-PATCH.md): instance_map's size at which the instances holding no
  // sample are forgotten (was: never, one entry per key ever received: a flood of SPDP
  // announcements under new GUIDs grew it without end).
  prune_instances_at: usize,
  // HORUS PATCH (HORUS-PATCH.md, item 17): with an ack window, where each sample leaving
  // this cache (taken or evicted) is noted for the RTPS reader (horus_ack_window.rs).
  pub(crate) horus_taken: Option<std::sync::Arc<crate::horus_ack_window::TakenMarks>>,
  // HORUS PATCH (HORUS-PATCH.md, item 18): with an ack window, the samples each writer has
  // here (not taken), for the history kept per writer (`horus_windowed_history`).
  horus_held: BTreeMap<GUID, usize>,
  // HORUS PATCH (HORUS-PATCH.md, item 19): per writer, the samples this history evicted
  // unread before the application claimed the writer's count
  // (`horus_take_evicted_before_first_take`).
  horus_evicted_before_take: BTreeMap<GUID, HorusEvicted>,
}

// HORUS PATCH: the fewest instances at which those holding no sample are forgotten.
const PRUNE_INSTANCES_AT: usize = 16384;

/// HORUS PATCH (HORUS-PATCH.md, item 19): one writer's samples evicted unread from the
/// history before the application claimed its count.
#[derive(Clone, Copy, Debug, Default)]
struct HorusEvicted {
  before_first_take: u64,
  /// The application took the count (`horus_take_evicted_before_first_take`): from then on
  /// it counts the writer's losses itself (gaps in the sequence numbers it takes). Was: set
  /// by the cache's first take of the writer's samples, so evictions after a take the
  /// application did not account (a sample of a writer its scan had not accepted yet,
  /// dropped as refused) were counted by neither (review M1 of item 19).
  claimed: bool,
}

impl HorusEvicted {
  fn note_evicted(&mut self) {
    if !self.claimed {
      self.before_first_take += 1;
    }
  }
}

pub(crate) struct InstanceMetaData {
  instance_samples: BTreeSet<Timestamp>, // which samples belong to this instance
  instance_state: InstanceState,         // latest known alive/not_alive state for this instance
  latest_generation_available: NotAliveGenerationCounts, // in this instance
  last_generation_accessed: NotAliveGenerationCounts, // in this instance
}

struct SampleWithMetaData<D: Keyed> {
  // a snapshot of the instance-wide counts
  // at the time this sample was received.
  generation_counts: NotAliveGenerationCounts,
  writer_guid: GUID,               // who wrote this
  sequence_number: SequenceNumber, // as sent by the Writer
  write_options: WriteOptions,     // as stamped by Writer
  sample_has_been_read: bool,      // sample_state

  // the data sample (or key) itself is stored here
  sample: Sample<D, D::K>, // TODO: maybe this should be boxed for moving performance.
}

impl<D> SampleWithMetaData<D>
where
  D: Keyed,
{
  pub fn key(&self) -> D::K {
    match &self.sample {
      Sample::Value(d) => d.key(),
      Sample::Dispose(k) => k.clone(),
    }
  }
}

impl<D> DataSampleCache<D>
where
  D: Keyed,
{
  pub fn new(qos: QosPolicies) -> Self {
    Self {
      qos,
      datasamples: BTreeMap::new(),
      instance_map: BTreeMap::new(),
      prune_instances_at: PRUNE_INSTANCES_AT,
      horus_taken: None,          // HORUS PATCH (item 17)
      horus_held: BTreeMap::new(), // HORUS PATCH (item 18)
      horus_evicted_before_take: BTreeMap::new(), // HORUS PATCH (item 19)
    }
  }

  pub(crate) fn fill_from_deserialized_cache_change(
    &mut self,
    deserialized_cc: DeserializedCacheChange<D>,
  ) {
    // TODO list.

    self.add_sample(
      deserialized_cc.sample,
      deserialized_cc.writer_guid,
      deserialized_cc.sequence_number,
      deserialized_cc.receive_instant,
      deserialized_cc.write_options,
    );
  }

  fn add_sample(
    &mut self,
    new_sample: Sample<D, D::K>,
    writer_guid: GUID,
    sequence_number: SequenceNumber,
    receive_timestamp: Timestamp,
    write_options: WriteOptions,
  ) {
    // Samples are keyed, and KEEP_LAST evicts, in the order they are added here,
    // not by raw receive time. A Reliable reader hands over samples in
    // sequence-number order, but a repaired sample is received after newer ones
    // that waited for it; keyed by receive time, the newest sample would look
    // oldest and be evicted first. Keys must also be unique.
    let mut receive_timestamp = receive_timestamp;
    if let Some((&latest, _)) = self.datasamples.last_key_value() {
      if receive_timestamp <= latest {
        receive_timestamp = Timestamp::from_ticks(latest.to_ticks().wrapping_add(1));
      }
    }

    let instance_key = match &new_sample {
      Sample::Value(d) => d.key(),
      Sample::Dispose(k) => k.clone(),
    };

    let new_instance_state = match new_sample {
      Sample::Value(_) => InstanceState::Alive,
      Sample::Dispose(_) => InstanceState::NotAliveDisposed,
    };

    // find or create metadata record
    let instance_metadata = if let Some(imd) = self.instance_map.get_mut(&instance_key) {
      imd
    } else {
      // not found, create new one.
      let imd = InstanceMetaData {
        instance_samples: BTreeSet::new(),
        instance_state: new_instance_state,
        latest_generation_available: NotAliveGenerationCounts::zero(), /* this is new instance,
                                                                        * so start from zero */
        last_generation_accessed: NotAliveGenerationCounts::sub_zero(), // never accessed
      };
      // HORUS PATCH: past prune_instances_at, the instances holding no sample are forgotten
      // (a later sample of one is a new instance), and the next pruning is when the
      // instances have doubled, so that each costs O(1) amortized.
      if self.instance_map.len() >= self.prune_instances_at {
        // (A take leaves the taken samples' timestamps in instance_samples.)
        let datasamples = &self.datasamples;
        self.instance_map.retain(|_, imd| {
          imd
            .instance_samples
            .retain(|ts| datasamples.contains_key(ts));
          !imd.instance_samples.is_empty()
        });
        self.prune_instances_at = PRUNE_INSTANCES_AT.max(2 * self.instance_map.len());
      }
      self.instance_map.insert(instance_key.clone(), imd);
      self
        .instance_map
        .get_mut(&instance_key)
        // must succeed, since this was just inserted
        .unwrap()
    };

    // update instance metadata
    instance_metadata.instance_samples.insert(receive_timestamp);

    match (instance_metadata.instance_state, new_instance_state) {
      (InstanceState::Alive, _) => (), // was Alive, does not change counts

      (InstanceState::NotAliveDisposed, InstanceState::Alive) =>
      // born again
      {
        instance_metadata
          .latest_generation_available
          .disposed_generation_count += 1;
      }

      (InstanceState::NotAliveDisposed, _) => (), // you can only die once

      (InstanceState::NotAliveNoWriters, InstanceState::Alive) =>
      // born again
      {
        instance_metadata
          .latest_generation_available
          .no_writers_generation_count += 1;
      }

      (InstanceState::NotAliveNoWriters, _) => (), // you can only die once
    }
    instance_metadata.instance_state = new_instance_state;

    // insert new_sample to main table
    self
      .datasamples
      .insert(
        receive_timestamp,
        SampleWithMetaData {
          generation_counts: instance_metadata.latest_generation_available,
          writer_guid,
          sequence_number,
          write_options,
          sample_has_been_read: false,
          sample: new_sample,
        },
      )
      .map_or_else(
        // None: ok
        || (),
        // Some: key was there already! Should be unreachable after the probe above,
        // but log rather than panic if the uniqueness invariant is ever broken.
        |_already_existed| {
          error!(
            "Overwrote datasample with duplicate key {receive_timestamp:?}. This is a bug: \
             receive timestamps are supposed to be unique."
          );
        },
      );

    // HORUS PATCH (HORUS-PATCH.md, item 18): with an ack window, the history is kept per
    // writer (horus_windowed_history), not per instance: the KEEP_LAST below evicted
    // samples of one writer to make room for another's, although each was within its own
    // window.
    if let Some(taken) = self.horus_taken.clone() {
      *self.horus_held.entry(writer_guid).or_default() += 1;
      self.horus_windowed_history(&taken, writer_guid, &instance_key);
      return;
    }

    // garbage collect
    let sample_keep_history_limit: Option<i32> = match self.qos.history() {
      Some(policy::History::KeepAll) => None, // no limit
      Some(policy::History::KeepLast { depth }) => Some(depth),
      None => Some(1), // default history policy
    };
    let sample_keep_resource_limit = if let Some(policy::ResourceLimits {
      max_samples: _,
      max_instances: _,
      max_samples_per_instance,
    }) = self.qos.resource_limits
    {
      Some(max_samples_per_instance)
    } else {
      None
    };

    if let Some(instance_keep_count) = sample_keep_history_limit.or(sample_keep_resource_limit) {
      let remove_count = instance_metadata.instance_samples.len() as i32 - instance_keep_count;
      if remove_count > 0 {
        let keys_to_remove: Vec<_> = instance_metadata
          .instance_samples
          .iter()
          .take(remove_count as usize)
          .copied()
          .collect();
        for k in keys_to_remove {
          instance_metadata.instance_samples.remove(&k);
          // HORUS PATCH (item 17): an evicted sample has left the reader too.
          if let Some(gone) = self.datasamples.remove(&k) {
            if let Some(taken) = &self.horus_taken {
              taken.note(gone.writer_guid, gone.sequence_number);
            }
            if !gone.sample_has_been_read {
              Self::horus_note_evicted(&mut self.horus_evicted_before_take, gone.writer_guid);
            }
          }
        }
      }
    }

    // TODO: Implement other resource_limit settings than max_instances_per
    // sample, i.e.
  }

  /// HORUS PATCH (HORUS-PATCH.md, item 18): the history of a cache whose reader has an ack
  /// window, after `writer`'s sample of instance `instance_key` was added. The ack window
  /// lets each writer have at most `window` samples here that were not taken; KEEP_LAST
  /// `depth` (the same number, as horus-ros2 asks for) per instance, shared by all writers,
  /// evicted samples of one writer for another's when several writers each filled their
  /// window while nothing was taken: lost, although the window was there to keep them.
  /// Here each writer keeps up to `max(depth, window)` samples (so nothing within its
  /// window is evicted), and the cache at most that many times its writers with a window
  /// plus one (for the samples of writers that left before theirs were taken): bounded by
  /// what discovery lets match. KEEP_ALL (no depth and no resource limit) evicts
  /// nothing, as before. Evicted samples leave the reader (noted as taken).
  fn horus_windowed_history(
    &mut self,
    taken: &crate::horus_ack_window::TakenMarks,
    writer: GUID,
    instance_key: &D::K,
  ) {
    let keep = match self.qos.history() {
      Some(policy::History::KeepAll) => None,
      Some(policy::History::KeepLast { depth }) => Some(depth),
      None => Some(1),
    }
    .or(self.qos.resource_limits.map(|r| r.max_samples_per_instance));
    if let Some(keep) = keep {
      let per_writer = std::cmp::max(usize::try_from(keep).unwrap_or(0), taken.window()).max(1);
      // This writer over its share: its oldest goes (only past its window).
      while self.horus_held.get(&writer).is_some_and(|n| *n > per_writer) {
        let oldest = self
          .datasamples
          .iter()
          .find(|(_, s)| s.writer_guid == writer)
          .map(|(ts, _)| *ts);
        match oldest {
          Some(ts) => self.horus_evict(ts, taken),
          None => break,
        }
      }
      // The whole cache over its bound: the oldest sample of a writer that left (no
      // window any more) goes first, and only when there is none the oldest of all. Was:
      // the oldest of all, so a live writer's acknowledged sample, inside its window, went
      // while samples of departed writers stayed (found in review).
      let total = per_writer.saturating_mul(taken.writers() + 1);
      if self.datasamples.len() > total {
        let live = taken.marks();
        while self.datasamples.len() > total {
          let oldest = self
            .datasamples
            .iter()
            .find(|(_, s)| !live.contains_key(&s.writer_guid))
            .or_else(|| self.datasamples.first_key_value())
            .map(|(ts, _)| *ts);
          match oldest {
            Some(ts) => self.horus_evict(ts, taken),
            None => break,
          }
        }
      }
    }
    // A take leaves the taken samples' timestamps in instance_samples (the KEEP_LAST
    // eviction dropped them): dropped here when they outnumber the samples held.
    if let Some(imd) = self.instance_map.get_mut(instance_key) {
      if imd.instance_samples.len() > 2 * self.datasamples.len() + 64 {
        let datasamples = &self.datasamples;
        imd
          .instance_samples
          .retain(|ts| datasamples.contains_key(ts));
      }
    }
  }

  /// HORUS PATCH (item 18): sample `ts` evicted from a cache whose reader has an ack window.
  fn horus_evict(&mut self, ts: Timestamp, taken: &crate::horus_ack_window::TakenMarks) {
    let Some(gone) = self.datasamples.remove(&ts) else {
      return;
    };
    if let Some(imd) = self.instance_map.get_mut(&gone.key()) {
      imd.instance_samples.remove(&ts);
    }
    self.horus_left(gone.writer_guid);
    taken.note(gone.writer_guid, gone.sequence_number);
    if !gone.sample_has_been_read {
      Self::horus_note_evicted(&mut self.horus_evicted_before_take, gone.writer_guid);
    }
  }

  /// HORUS PATCH (HORUS-PATCH.md, item 19): a sample of `writer` was evicted unread,
  /// counted while nothing of the writer was taken (a reader counting loss from gaps
  /// between the sequence numbers it takes sees no gap below its first one). At most
  /// `PRUNE_INSTANCES_AT` writers are remembered; the application forgets the writers that
  /// are gone (`horus_retain_evicted_counts`). While the map is full a new writer's
  /// evictions are not counted (an undercount, only with more writers than that on one
  /// reader). Was: a full map forgot the claimed writers, live ones too, whose later
  /// evictions were then counted again once the application claimed them anew (review).
  fn horus_note_evicted(map: &mut BTreeMap<GUID, HorusEvicted>, writer: GUID) {
    if map.len() < PRUNE_INSTANCES_AT || map.contains_key(&writer) {
      map.entry(writer).or_default().note_evicted();
    }
  }

  /// HORUS PATCH (HORUS-PATCH.md, item 19): forgets the eviction counts of the writers
  /// `keep` says no (gone, or no longer followed by the application), so that the map is
  /// bounded by the writers that exist. A writer forgotten and seen again is counted
  /// afresh until claimed again.
  pub fn horus_retain_evicted_counts(&mut self, mut keep: impl FnMut(&GUID) -> bool) {
    // `keep` decides alone: the application keeps the writers that still exist, accepted
    // or not yet (review B4 of the first version, which kept only accepted ones), and drops
    // the gone ones whatever their state (keeping every unclaimed count let gone writers
    // fill the map for good, after which no new writer's evictions were counted: review).
    self.horus_evicted_before_take.retain(|g, _| keep(g));
  }

  /// HORUS PATCH (HORUS-PATCH.md, item 19): how many samples of `writer` this history
  /// evicted unread before this call, counted out and claimed at once: the writer's later
  /// evictions are not counted (the caller counts them from then on, as gaps in the
  /// sequence numbers it takes), so a second call says 0. The caller calls it when it
  /// accounts the first sample of `writer` it takes and keeps (not at a take it drops
  /// uncounted by gaps: evictions after that would be counted by neither). A writer's
  /// samples that arrive in order (always on a reliable reader) are taken and evicted
  /// oldest first, so when the call follows the take of sample S these are exactly the
  /// ones below S that were not taken; a best-effort sample overtaken on the way by a
  /// newer one may be among them although it is above it.
  pub fn horus_take_evicted_before_first_take(&mut self, writer: GUID) -> u64 {
    let map = &mut self.horus_evicted_before_take;
    if !map.contains_key(&writer) && map.len() >= PRUNE_INSTANCES_AT {
      // Full: the claim is kept at the cost of a writer not claimed yet (its count
      // forgotten: an undercount), never of a claimed one (a count twice).
      let unclaimed = map.iter().find(|(_, e)| !e.claimed).map(|(g, _)| *g);
      match unclaimed {
        Some(g) => {
          map.remove(&g);
        }
        None => return 0,
      }
    }
    let e = map.entry(writer).or_default();
    e.claimed = true;
    std::mem::take(&mut e.before_first_take)
  }

  /// HORUS PATCH (item 18): a sample of `writer` left a cache whose reader has an ack
  /// window.
  fn horus_left(&mut self, writer: GUID) {
    if let std::collections::btree_map::Entry::Occupied(mut held) = self.horus_held.entry(writer)
    {
      *held.get_mut() -= 1;
      if *held.get() == 0 {
        held.remove();
      }
    }
  }

  // Helper for select_keys and select_instance_keys
  //
  // Selection is in timestamp order. If there are samples that have been received
  // out-of-order, then those need to be sorted. Note that there may be
  // SequenceNumbers from several writers. We need to keep SequenceNumbers
  // ordered per writer, but there are no other ordering guarantees. (TODO: What
  // about Presentation QoS?)
  //
  // The sorting is somewhat wasted effort
  fn sort_by_sequence_number(&self, keys: &mut [(Timestamp, D::K)]) {
    // We `.unwrap()` below, because this is supposed to be called only from
    // select_*_for_Access-metohds, who take the timestamp keys from the
    // same map.

    // Most commonly we gat only 0 or 1 keys, so skip sorting in that scenario.
    if keys.len() > 1 {
      keys.sort_by_cached_key(|(ts, _k)| self.datasamples.get(ts).unwrap().sequence_number);
    }
  }

  // Calling select_(instance)_keys_for access does not constitute access, i.e.
  // it does not change any state of the cache.
  // Samples are marked read or viewed only when "read" or "take" methods (below)
  // are called.
  pub fn select_keys_for_access(&self, rc: ReadCondition) -> Vec<(Timestamp, D::K)> {
    let mut keys: Vec<(Timestamp, D::K)> = self
      .datasamples
      .iter()
      .filter_map(|(ts, dsm)| {
        let key = dsm.key();
        // Instance meta wouldn't be cleaned with samples belongs to it.
        let instance_meta = self.instance_map.get(&key).unwrap();
        if self.sample_selector(&rc, instance_meta, dsm) {
          Some((*ts, key))
        } else {
          None
        }
      })
      .collect();
    self.sort_by_sequence_number(&mut keys);
    keys
  }

  pub fn select_instance_keys_for_access(
    &self,
    instance: &D::K,
    rc: ReadCondition,
  ) -> Vec<(Timestamp, D::K)> {
    match self.instance_map.get(instance) {
      None => Vec::new(),
      Some(imd) => {
        let mut keys: Vec<(Timestamp, D::K)> = imd
          .instance_samples
          .iter()
          .filter_map(|ts| {
            if let Some(ds) = self.datasamples.get(ts) {
              if self.sample_selector(&rc, imd, ds) {
                Some((*ts, instance.clone()))
              } else {
                None
              }
            } else {
              None
            }
          })
          .collect();
        self.sort_by_sequence_number(&mut keys);
        keys
      }
    }
  }

  // select helper
  fn sample_selector(
    &self,
    rc: &ReadCondition,
    imd: &InstanceMetaData,
    d: &SampleWithMetaData<D>,
  ) -> bool {
    // check sample state
    (*rc.sample_state_mask() == SampleState::any()
      || rc.sample_state_mask()
          .contains( if d.sample_has_been_read { SampleState::Read } else {SampleState::NotRead} ) )
    &&
    // check view state
    (*rc.view_state_mask() == ViewState::any()
      ||
      { let sample_gen = d.generation_counts.total();
        let last_accessed = imd.last_generation_accessed.total();
        let is_new = sample_gen > last_accessed;
        rc.view_state_mask()
          .contains( if is_new { ViewState::New} else { ViewState::NotNew }  )
      }
    )
    &&
    // check instance state
    (*rc.instance_state_mask() == InstanceState::any()
      || rc.instance_state_mask()
          .contains( imd.instance_state )
    )
  }

  fn make_sample_info(
    dswm: &SampleWithMetaData<D>,
    imd: &InstanceMetaData,
    sample_rank: usize,
    mrs_generations: i32,
    mrsic_generations: i32,
  ) -> SampleInfo {
    SampleInfo {
      sample_state: if dswm.sample_has_been_read {
        SampleState::Read
      } else {
        SampleState::NotRead
      },
      view_state: if dswm.generation_counts.total() > imd.last_generation_accessed.total() {
        ViewState::New
      } else {
        ViewState::NotNew
      },
      instance_state: imd.instance_state,
      generation_counts: dswm.generation_counts,
      sample_rank: sample_rank as i32, // how many samples follow this one
      generation_rank: mrsic_generations - dswm.generation_counts.total(),
      absolute_generation_rank: mrs_generations - dswm.generation_counts.total(),
      write_options: dswm.write_options.clone(),
      publication_handle: dswm.writer_guid,
      sequence_number: dswm.sequence_number,
    }
  }

  fn record_instance_generation_viewed(
    instance_generations: &mut HashMap<D::K, NotAliveGenerationCounts>,
    accessed_generations: NotAliveGenerationCounts,
    instance_key: &D::K,
  ) {
    instance_generations
      .entry(instance_key.clone())
      .and_modify(|old_gens| {
        if accessed_generations.total() > old_gens.total() {
          *old_gens = accessed_generations;
        }
      })
      .or_insert(accessed_generations);
  }

  fn mark_instances_viewed(
    &mut self,
    instance_generations: &HashMap<D::K, NotAliveGenerationCounts>,
  ) {
    for (inst, gen) in instance_generations {
      if let Some(imd) = self.instance_map.get_mut(inst) {
        imd.last_generation_accessed = *gen;
      } else {
        panic!(
          "RustDDS internal bug: instance disappeared from cache between selection and access"
        );
      }
    }
  }

  // read methods perform actual read or take. They must be called with key
  // vectors obtained from select_*_for_access -methods above, or their
  // subvectors.
  //
  // There are two versions of both read and take: Return DataSample<D> (incl.
  // metadata) and "bare" versions without metadata.
  //
  // Panics: `keys` must only contain (Timestamp,Key)-pairs that were immediately
  // before this call obtained by select_*_for_access functions. This function
  // will blindly assume that the given keys and timestamps are present in the
  // cache. Function will panic if somthign is not found.
  pub(in crate::dds::with_key) fn read_by_keys(
    &mut self,
    keys: &[(Timestamp, D::K)],
  ) -> Vec<DataSample<&D>> {
    let len = keys.len();
    let mut result = Vec::with_capacity(len);

    if len == 0 {
      return result;
    }

    let mut instance_generations: HashMap<D::K, NotAliveGenerationCounts> = HashMap::new();
    let mrsic_total = self
      .instance_map
      // Keys are guaranteed to be nonempty, because of the length check above.
      .get(&keys.last().unwrap().1)
      .unwrap()
      .latest_generation_available
      .total();
    let mrs_total = self
      .datasamples
      .iter()
      .next_back()
      .unwrap()
      .1
      .generation_counts
      .total();
    let mut sample_infos = VecDeque::with_capacity(len);
    // construct SampleInfos and record read/viewed
    for (index, (ts, key)) in keys.iter().enumerate() {
      let dswm = self.datasamples.get_mut(ts).unwrap();
      let imd = self.instance_map.get(key).unwrap();

      let sample_info = Self::make_sample_info(dswm, imd, len - index - 1, mrs_total, mrsic_total);
      dswm.sample_has_been_read = true; // mark as read
      Self::record_instance_generation_viewed(
        &mut instance_generations,
        dswm.generation_counts,
        key,
      );
      sample_infos.push_back(sample_info);
    }

    // mark instances viewed
    self.mark_instances_viewed(&instance_generations);

    // We need to do SampleInfo construction and final result construction as
    // separate passes. This is because SampleInfo construction needs to mark
    // items as read and generations as viewed, i.e. needs mutable reference to
    // data_samples. Result construction (in read, not take) needs to hand out
    // multiple references into data_samples, therefore it needs immutable
    // access, not mutable.

    // construct results
    for (ts, _key) in keys.iter() {
      let sample_info = sample_infos.pop_front().unwrap();
      let sample: &Sample<D, D::K> = &self.datasamples.get(ts).unwrap().sample;
      result.push(DataSample::new(
        sample_info,
        result_ok_as_ref_err_clone(sample),
      ));
    }

    result
  }

  // Panics: `keys` must only contain (Timestamp,Key)-pairs that were immediately
  // before this call obtained by select_*_for_access functions. This function
  // will blindly assume that the given keys and timestamps are present in the
  // cache. Function will panic if somthign is not found.
  pub(in crate::dds::with_key) fn take_by_keys(
    &mut self,
    keys: &[(Timestamp, D::K)],
  ) -> Vec<DataSample<D>> {
    let len = keys.len();
    let mut result = Vec::with_capacity(len);

    if len == 0 {
      return result;
    }

    let mut instance_generations: HashMap<D::K, NotAliveGenerationCounts> = HashMap::new();
    let mrsic_total = self
      .instance_map
      .get(&keys.last().unwrap().1)
      .unwrap()
      .latest_generation_available
      .total();
    let mrs_total = self
      .datasamples
      .iter()
      .next_back()
      .unwrap()
      .1
      .generation_counts
      .total();
    // collect result
    for (index, (ts, key)) in keys.iter().enumerate() {
      let dswm = self.datasamples.remove(ts).unwrap();
      if let Some(taken) = &self.horus_taken {
        taken.note(dswm.writer_guid, dswm.sequence_number); // HORUS PATCH (item 17)
      }
      if self.horus_taken.is_some() {
        self.horus_left(dswm.writer_guid); // HORUS PATCH (item 18)
      }
      let imd = self.instance_map.get(key).unwrap();
      let sample_info = Self::make_sample_info(&dswm, imd, len - index - 1, mrs_total, mrsic_total);
      // dwsm.sample_has_been_read = true; // no need to mark read, as the dswm is
      // about to be destroyed
      Self::record_instance_generation_viewed(
        &mut instance_generations,
        dswm.generation_counts,
        key,
      );
      result.push(DataSample::new(sample_info, dswm.sample));
    }

    self.mark_instances_viewed(&instance_generations);
    result
  }

  // Panics: `keys` must only contain (Timestamp,Key)-pairs that were immediately
  // before this call obtained by select_*_for_access functions. This function
  // will blindly assume that the given keys and timestamps are present in the
  // cache. Function will panic if somthign is not found.
  pub(in crate::dds::with_key) fn read_bare_by_keys(
    &mut self,
    keys: &[(Timestamp, D::K)],
  ) -> Vec<Sample<&D, D::K>> {
    let len = keys.len();
    let mut result = Vec::with_capacity(len);

    if len == 0 {
      return result;
    }

    let mut instance_generations: HashMap<D::K, NotAliveGenerationCounts> = HashMap::new();

    // construct SampleInfos and record read/viewed
    for (ts, key) in keys.iter() {
      let dswm = self.datasamples.get_mut(ts).unwrap();
      dswm.sample_has_been_read = true; // mark as read
      Self::record_instance_generation_viewed(
        &mut instance_generations,
        dswm.generation_counts,
        key,
      );
    }

    self.mark_instances_viewed(&instance_generations);

    // We need to do SampleInfo construction and final result construction as
    // separate passes. See reason in read function above.

    // construct results
    for (ts, _key) in keys.iter() {
      result.push(result_ok_as_ref_err_clone(
        &self.datasamples.get(ts).unwrap().sample,
      ));
    }
    result
  }

  //
  // Panics: `keys` must only contain (Timestamp,Key)-pairs that were immediately
  // before this call obtained by select_*_for_access functions. This function
  // will blindly assume that the given keys and timestamps are present in the
  // cache. Function will panic if somthign is not found.
  pub(in crate::dds::with_key) fn take_bare_by_keys(
    &mut self,
    keys: &[(Timestamp, D::K)],
  ) -> Vec<Sample<D, D::K>> {
    let len = keys.len();
    let mut result = Vec::with_capacity(len);

    if len == 0 {
      return result;
    }

    let mut instance_generations: HashMap<D::K, NotAliveGenerationCounts> = HashMap::new();

    for (ts, key) in keys.iter() {
      let dswm = self.datasamples.remove(ts).unwrap();
      if let Some(taken) = &self.horus_taken {
        taken.note(dswm.writer_guid, dswm.sequence_number); // HORUS PATCH (item 17)
      }
      if self.horus_taken.is_some() {
        self.horus_left(dswm.writer_guid); // HORUS PATCH (item 18)
      }
      // dwsm.sample_has_been_read = true; // no need to mark read, as the dswm is
      // about to be destroyed
      Self::record_instance_generation_viewed(
        &mut instance_generations,
        dswm.generation_counts,
        key,
      );
      result.push(dswm.sample);
    }

    self.mark_instances_viewed(&instance_generations);
    result
  }

  pub(in crate::dds::with_key) fn next_key(&self, key: &D::K) -> Option<D::K> {
    self
      .instance_map
      .range((Bound::Excluded(key), Bound::Unbounded))
      .map(|(k, _)| k.clone())
      .next()
  }
}

// helper function
// somewhat like result.as_ref() , but one-sided only
pub(crate) fn result_ok_as_ref_err_clone<T, E: Clone>(r: &Sample<T, E>) -> Sample<&T, E> {
  match *r {
    Sample::Value(ref x) => Sample::Value(x),
    Sample::Dispose(ref x) => Sample::Dispose(x.clone()),
  }
}

#[cfg(test)]
mod tests {
  // use super::*;
  // use crate::{
  //   structure::{time::Timestamp},
  // };
  // use crate::dds::ddsdata::DDSData;
  // use crate::dds::traits::key::Keyed;
  // use crate::test::random_data::*;

  #[test]
  fn dsc_empty_qos() {
    /*
    let qos = QosPolicies::qos_none();
    let mut datasample_cache = DataSampleCache::<RandomData>::new(qos);

    let timestamp = Timestamp::now();
    let data = RandomData {
      a: 4,
      b: "Fobar".to_string(),
    };

    let org_ddsdata = DDSData::from(&data, Some(timestamp));

    let key = data.key().clone();
    datasample_cache.add_sample(Ok(data.clone()), GUID::GUID_UNKNOWN, timestamp, None);
    //datasample_cache.add_datasample(datasample).unwrap();

    let samples = datasample_cache.read_by_keys(&[(timestamp, key)]);
    assert_eq!(samples.len(), 1);
    match &samples.get(0).unwrap().value() {
      Ok(huh) => {
        let ddssample = DDSData::from(huh, Some(timestamp));
        assert_eq!(org_ddsdata, ddssample);
      }
      _ => (),
    }
    */
  }
}

// HORUS PATCH (HORUS-PATCH.md, item 18): the history of a cache whose reader has an ack
// window.
#[cfg(test)]
mod horus_windowed_history_tests {
  use std::sync::Arc;

  use super::*;
  use crate::{
    horus_ack_window::TakenMarks,
    structure::guid::{EntityId, EntityKind, GuidPrefix},
  };

  #[derive(Clone, Debug, PartialEq)]
  struct Msg(i64);

  impl Keyed for Msg {
    type K = ();
    fn key(&self) {}
  }

  fn writer(n: u8) -> GUID {
    GUID::new_with_prefix_and_id(
      GuidPrefix::new(&[n; 12]),
      EntityId::new([0, 0, 1], EntityKind::WRITER_NO_KEY_USER_DEFINED),
    )
  }

  /// A cache as horus-ros2 makes it for a `Block` topic of depth `depth`: KEEP_LAST
  /// `depth`, an ack window of `depth`; `writers` are matched (each has a window).
  fn windowed_cache(depth: u32, writers: &[GUID]) -> (DataSampleCache<Msg>, Arc<TakenMarks>) {
    let qos = crate::QosPolicyBuilder::new()
      .history(policy::History::KeepLast {
        depth: depth as i32,
      })
      .build();
    let marks = Arc::new(TakenMarks::with_window(depth));
    for w in writers {
      marks.track(*w);
    }
    let mut cache = DataSampleCache::new(qos);
    cache.horus_taken = Some(Arc::clone(&marks));
    (cache, marks)
  }

  fn add(cache: &mut DataSampleCache<Msg>, writer: GUID, sn: i64) {
    cache.add_sample(
      Sample::Value(Msg(sn)),
      writer,
      SequenceNumber::new(sn),
      Timestamp::now(),
      WriteOptions::default(),
    );
  }

  /// Each writer's samples held, in order.
  fn held(cache: &DataSampleCache<Msg>, writer: GUID) -> Vec<i64> {
    cache
      .datasamples
      .values()
      .filter(|s| s.writer_guid == writer)
      .map(|s| i64::from(s.sequence_number))
      .collect()
  }

  #[test]
  fn two_writers_each_filling_its_window_while_nothing_is_taken_lose_nothing() {
    let (a, b) = (writer(1), writer(2));
    let (mut cache, marks) = windowed_cache(4, &[a, b]);
    // Interleaved, as two writers' samples reach the reader: 8 samples, KEEP_LAST 4.
    for sn in 1..=4 {
      add(&mut cache, a, sn);
      add(&mut cache, b, sn);
    }
    // Without the patch, KEEP_LAST 4 of the one instance evicted a's and b's 1 and 2
    // (noted as taken: the bridge counted them lost).
    assert_eq!(held(&cache, a), vec![1, 2, 3, 4]);
    assert_eq!(held(&cache, b), vec![1, 2, 3, 4]);
    assert_eq!(
      marks.marks().into_values().collect::<Vec<_>>(),
      vec![SequenceNumber::zero(); 2],
      "nothing left the reader"
    );
    // All taken, in order per writer.
    let keys = cache.select_keys_for_access(ReadCondition::any());
    let taken: Vec<i64> = cache
      .take_bare_by_keys(&keys)
      .into_iter()
      .map(|s| match s {
        Sample::Value(Msg(n)) => n,
        Sample::Dispose(()) => -1,
      })
      .collect();
    assert_eq!(taken.len(), 8);
    assert_eq!(marks.marks().into_values().collect::<Vec<_>>(), vec![SequenceNumber::new(4); 2]);
    assert!(cache.horus_held.is_empty(), "every sample counted out");
  }

  #[test]
  fn a_writer_past_its_window_loses_its_own_oldest_not_anothers() {
    let (a, b) = (writer(1), writer(2));
    let (mut cache, marks) = windowed_cache(3, &[a, b]);
    for sn in 1..=3 {
      add(&mut cache, b, sn);
    }
    // a sends 5 (a reader without the window would have admitted them): its 1 and 2 go.
    for sn in 1..=5 {
      add(&mut cache, a, sn);
    }
    assert_eq!(held(&cache, a), vec![3, 4, 5]);
    assert_eq!(held(&cache, b), vec![1, 2, 3]);
    assert_eq!(marks.marks()[&a], SequenceNumber::new(2), "a's evicted left the reader");
    assert_eq!(marks.marks()[&b], SequenceNumber::zero());
  }

  #[test]
  fn the_cache_stays_bounded_by_its_writers_windows() {
    let a = writer(1);
    let (mut cache, _marks) = windowed_cache(2, &[a]);
    // Writers that left (no window any more) while their samples were held: the cache
    // keeps (writers with a window + 1) windows, the oldest evicted first.
    for n in 10..20 {
      add(&mut cache, writer(n), 1);
      add(&mut cache, writer(n), 2);
    }
    assert_eq!(cache.datasamples.len(), 4);
    assert_eq!(held(&cache, writer(19)), vec![1, 2]);
    assert_eq!(held(&cache, writer(18)), vec![1, 2]);
    // Taken samples' timestamps do not pile up in the instance.
    for sn in 1..=1000 {
      add(&mut cache, a, sn);
      let keys = cache.select_keys_for_access(ReadCondition::any());
      cache.take_bare_by_keys(&keys);
    }
    assert!(cache.instance_map[&()].instance_samples.len() <= 2 * 64 + 1);
  }

  /// Found in review: the whole-cache bound evicted the oldest sample of all, a live
  /// writer's inside its window, while samples of writers that had left stayed.
  #[test]
  fn the_whole_cache_bound_evicts_departed_writers_samples_before_a_live_writers_window() {
    let (a, b, x, y) = (writer(1), writer(2), writer(8), writer(9));
    let (mut cache, marks) = windowed_cache(2, &[a, b, x, y]);
    add(&mut cache, b, 1); // b's first, inside its window, the oldest in the cache
    add(&mut cache, x, 1);
    add(&mut cache, x, 2);
    add(&mut cache, y, 1);
    add(&mut cache, y, 2);
    // x and y leave (their RTPS reader forgets them) while the application is stalled.
    let mut win = crate::horus_ack_window::AckWindow::new(2, Arc::clone(&marks));
    win.forget(x);
    win.forget(y);
    assert_eq!(marks.writers(), 2);
    // a fills its window: the cache (2 x (2 writers + 1) = 6) is over its bound by one.
    add(&mut cache, a, 1);
    add(&mut cache, a, 2);
    // Without the fix b's 1 went (noted as taken: lost).
    assert_eq!(held(&cache, b), vec![1], "b's sample inside its window kept");
    assert_eq!(held(&cache, a), vec![1, 2]);
    assert_eq!(held(&cache, x), vec![2], "the departed writers' oldest went instead");
    assert_eq!(held(&cache, y), vec![1, 2]);
    assert_eq!(marks.marks()[&b], SequenceNumber::zero(), "nothing of b left the reader");
  }

  /// Takes the oldest sample held; its sequence number.
  fn take_one(cache: &mut DataSampleCache<Msg>) -> Option<i64> {
    let keys = cache.select_keys_for_access(ReadCondition::any());
    let first = *keys.first()?;
    match cache.take_bare_by_keys(&[first]).pop()? {
      Sample::Value(Msg(n)) => Some(n),
      Sample::Dispose(()) => None,
    }
  }

  /// HORUS PATCH (item 19): a KEEP_LAST history evicting a writer's first samples before
  /// anything of it was taken counts them (nothing else can: the taker's first sequence
  /// number shows no gap below it); evictions after a take are not counted (they show
  /// as gaps), nor samples read before they were evicted.
  #[test]
  fn samples_evicted_before_a_writers_first_take_are_counted_and_only_those() {
    let (a, b) = (writer(1), writer(2));
    let qos = crate::QosPolicyBuilder::new()
      .history(policy::History::KeepLast { depth: 4 })
      .build();
    let mut cache: DataSampleCache<Msg> = DataSampleCache::new(qos);
    // a bursts 10 into a history of 4 before anything is taken: 1 to 6 evicted.
    for sn in 1..=10 {
      add(&mut cache, a, sn);
    }
    assert_eq!(take_one(&mut cache), Some(7));
    assert_eq!(cache.horus_take_evicted_before_first_take(a), 6);
    assert_eq!(cache.horus_take_evicted_before_first_take(a), 0, "counted out once");
    // Evicted after a's first take (a gap after 7 for the taker): not counted.
    for sn in 11..=14 {
      add(&mut cache, a, sn);
    }
    assert!(take_one(&mut cache) > Some(8), "some evicted after the take");
    assert_eq!(cache.horus_take_evicted_before_first_take(a), 0, "none after the take");
    // b's samples evicted by a's (one instance): counted for b; b's read ones are not.
    add(&mut cache, b, 1);
    let _ = cache.read_bare_by_keys(&cache.select_keys_for_access(ReadCondition::any()));
    add(&mut cache, b, 2);
    for sn in 13..=16 {
      add(&mut cache, a, sn);
    }
    assert_eq!(cache.horus_take_evicted_before_first_take(b), 1, "b's 2 (its 1 was read)");
    assert_eq!(cache.horus_take_evicted_before_first_take(writer(3)), 0);
  }

  /// HORUS PATCH (item 19, review M1): a take the application drops without accounting
  /// the writer (its scan had not accepted it yet) does not end the count: a burst after
  /// it, evicted before the sample the application keeps, is counted when it claims the
  /// count. Was: the first take ended it (here 0 instead of 5: 2 to 6 counted by neither).
  #[test]
  fn evictions_after_a_take_the_application_did_not_claim_are_still_counted() {
    let a = writer(1);
    let qos = crate::QosPolicyBuilder::new()
      .history(policy::History::KeepLast { depth: 4 })
      .build();
    let mut cache: DataSampleCache<Msg> = DataSampleCache::new(qos);
    add(&mut cache, a, 1);
    assert_eq!(take_one(&mut cache), Some(1), "taken and dropped, count not claimed");
    for sn in 2..=10 {
      add(&mut cache, a, sn);
    }
    assert_eq!(take_one(&mut cache), Some(7));
    assert_eq!(cache.horus_take_evicted_before_first_take(a), 5, "2 to 6");
    // Claimed: later evictions are the application's gaps, not counted here.
    for sn in 11..=20 {
      add(&mut cache, a, sn);
    }
    assert_eq!(cache.horus_take_evicted_before_first_take(a), 0);
    // A writer claimed before any sample of it arrived counts nothing either.
    let b = writer(2);
    assert_eq!(cache.horus_take_evicted_before_first_take(b), 0);
    for sn in 1..=10 {
      add(&mut cache, b, sn);
    }
    assert_eq!(cache.horus_take_evicted_before_first_take(b), 0);
  }

  /// HORUS PATCH (item 19): the same in a history kept per writer (item 18): a writer past
  /// its window before its first take has its own oldest evicted, counted.
  #[test]
  fn a_windowed_history_counts_a_writers_evictions_before_its_first_take() {
    let (a, b) = (writer(1), writer(2));
    let (mut cache, _marks) = windowed_cache(3, &[a, b]);
    for sn in 1..=5 {
      add(&mut cache, a, sn);
    }
    add(&mut cache, b, 1);
    assert_eq!(cache.horus_take_evicted_before_first_take(a), 2);
    assert_eq!(cache.horus_take_evicted_before_first_take(b), 0);
  }

  /// HORUS PATCH (item 19): a full map of writers does not forget a claimed one (its later
  /// evictions are the application's gaps): was, it forgot every claimed writer, and one
  /// claimed again counted its evictions a second time (review). Forgetting is the
  /// application's (`horus_retain_evicted_counts`).
  #[test]
  fn a_claimed_writer_is_not_forgotten_when_the_map_of_writers_is_full() {
    let a = writer(1);
    let qos = crate::QosPolicyBuilder::new()
      .history(policy::History::KeepLast { depth: 4 })
      .build();
    let mut cache: DataSampleCache<Msg> = DataSampleCache::new(qos);
    add(&mut cache, a, 1);
    assert_eq!(take_one(&mut cache), Some(1));
    assert_eq!(
      cache.horus_take_evicted_before_first_take(a),
      0,
      "claimed at its first take"
    );
    let other = |i: usize| {
      let b = (i as u32 + 1000).to_be_bytes();
      GUID::new_with_prefix_and_id(
        GuidPrefix::new(&[b[0], b[1], b[2], b[3], 9, 9, 9, 9, 9, 9, 9, 9]),
        EntityId::new([0, 0, 1], EntityKind::WRITER_NO_KEY_USER_DEFINED),
      )
    };
    for i in 0..PRUNE_INSTANCES_AT {
      cache.horus_take_evicted_before_first_take(other(i));
    }
    for sn in 2..=10 {
      add(&mut cache, a, sn);
    }
    assert_eq!(take_one(&mut cache), Some(7));
    assert_eq!(
      cache.horus_take_evicted_before_first_take(a),
      0,
      "a was claimed: 2 to 6 are the application's gap, not counted here too"
    );
    // The application forgets the writers that are gone: then a new one is counted.
    cache.horus_retain_evicted_counts(|g| *g == a);
    let c = writer(3);
    for sn in 1..=6 {
      add(&mut cache, c, sn);
    }
    // One instance of depth 4: a's 8 to 10 and c's 1 and 2 evicted; a's not counted.
    assert_eq!(cache.horus_take_evicted_before_first_take(c), 2);
  }

  /// HORUS PATCH (item 19): the writers the application forgets are dropped whatever
  /// their state, so that gone writers' counts do not fill the bounded map for good (a
  /// version that kept every unclaimed count did: then no new writer's evictions were
  /// counted; found in review). Which writers to keep (those that exist, accepted or not
  /// yet) is the application's: horus-ros2 passes every writer its scan saw.
  #[test]
  fn gone_writers_counts_do_not_fill_the_map_for_good() {
    let a = writer(1);
    let qos = crate::QosPolicyBuilder::new()
      .history(policy::History::KeepLast { depth: 4 })
      .build();
    let mut cache: DataSampleCache<Msg> = DataSampleCache::new(qos);
    let other = |i: usize| {
      let b = (i as u32 + 1000).to_be_bytes();
      GUID::new_with_prefix_and_id(
        GuidPrefix::new(&[b[0], b[1], b[2], b[3], 9, 9, 9, 9, 9, 9, 9, 9]),
        EntityId::new([0, 0, 1], EntityKind::WRITER_NO_KEY_USER_DEFINED),
      )
    };
    for i in 0..PRUNE_INSTANCES_AT + 4 {
      add(&mut cache, other(i), 1);
    }
    // Those writers are gone (refused for another type, say): forgotten.
    cache.horus_retain_evicted_counts(|g| *g == a);
    while take_one(&mut cache).is_some() {}
    let c = writer(3);
    for sn in 1..=6 {
      add(&mut cache, c, sn);
    }
    assert_eq!(
      cache.horus_take_evicted_before_first_take(c),
      2,
      "c's 1 and 2 evicted"
    );
    // A writer kept by the application keeps its unclaimed count.
    let b = writer(2);
    for sn in 1..=6 {
      add(&mut cache, b, sn);
    }
    cache.horus_retain_evicted_counts(|g| *g == b);
    assert_eq!(cache.horus_take_evicted_before_first_take(b), 2);
  }
}
