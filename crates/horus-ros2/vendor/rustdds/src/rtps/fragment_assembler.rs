use std::{
  collections::{btree_map::Entry, BTreeMap},
  fmt, iter,
};

use bit_vec::BitVec;
use enumflags2::BitFlags;
use bytes::BytesMut;
#[allow(unused_imports)]
use log::{debug, error, info, trace, warn};

use crate::{
  dds::ddsdata::DDSData,
  horus_reassembly::{self, Refusal},
  messages::submessages::{
    elements::serialized_payload::SerializedPayload,
    submessages::{DATAFRAG_Flags, DataFrag},
  },
  structure::{
    cache_change::ChangeKind,
    sequence_number::{FragmentNumber, SequenceNumber},
    time::Timestamp,
  },
};

// This is for the assembly of a single object
struct AssemblyBuffer {
  buffer_bytes: BytesMut,
  fragment_count: usize,
  // HORUS PATCH: the sample's fragment size, from its first DATA_FRAG (was the assembler's,
  // from the first DATA_FRAG of any sample of the writer: a later sample in another size
  // was put together at the wrong offsets).
  fragment_size: u16,
  received_bitmap: BitVec,
  // HORUS PATCH: what this buffer is charged against its reader's reassembly budget
  // (horus_reassembly::cost).
  cost: usize,
  // HORUS PATCH (HORUS-PATCH.md, item 12): the same cost taken from the process's
  // reassembly budget, given back when this buffer is dropped.
  _process_charge: horus_reassembly::ProcessCharge,

  #[allow(dead_code)] // TODO: Purpose is to use this later for e.g.
  // garbage collection, in case some buffer is not completed within reasonable time.
  created_time: Timestamp,
  modified_time: Timestamp,
}

impl AssemblyBuffer {
  pub fn new(datafrag: &DataFrag) -> Option<Self> {
    let data_size: usize = datafrag.data_size.try_into().ok()?;
    let fragment_size: u16 = datafrag.fragment_size;
    debug!("new AssemblyBuffer data_size={data_size} frag_size={fragment_size}");

    if fragment_size == 0 || fragment_size as usize > data_size {
      error!("Cannot create AssemblyBuffer: fragment_size={fragment_size} data_size={data_size}");
      // HORUS PATCH: counted (was: only logged)
      horus_reassembly::count(Refusal::Malformed, || {
        format!("fragment size {fragment_size} for a sample of {data_size} bytes")
      });
      return None;
    }
    // HORUS PATCH (HORUS-PATCH.md): never allocate a remote-announced size past the limit.
    // Reader::admit_datafrag refuses (and counts) such a fragment before it gets here; this
    // keeps the allocation below bounded whoever calls.
    if data_size > horus_reassembly::max_sample_size() {
      error!("Cannot create AssemblyBuffer: data_size={data_size} over the limit");
      return None;
    }
    // HORUS PATCH: nor a bitmap of more fragments than the floor on fragment sizes allows.
    if horus_reassembly::too_many_fragments(data_size, fragment_size) {
      error!("Cannot create AssemblyBuffer: data_size={data_size} in fragments of {fragment_size}");
      return None;
    }

    let fragment_count = usize::from(datafrag.total_number_of_fragments());
    if fragment_count == 0 {
      error!("Cannot create AssemblyBuffer: zero fragment count");
      // HORUS PATCH: counted (was: only logged)
      horus_reassembly::count(Refusal::Malformed, || "a sample of 0 fragments".to_owned());
      return None;
    }
    // HORUS PATCH (HORUS-PATCH.md, item 12): the sample's room in the process's budget,
    // taken before its buffer is allocated. Reader::admit_datafrag checked (and counted)
    // that it fits; a reader of another participant may have taken the room since.
    let cost = horus_reassembly::cost(data_size, fragment_count);
    let Some(process_charge) = horus_reassembly::ProcessCharge::take(cost) else {
      horus_reassembly::count(Refusal::OverProcessBudget, || {
        format!(
          "a sample of {data_size} bytes: {} held in reassembly, process budget {}",
          horus_reassembly::held_in_process(),
          horus_reassembly::budget_per_process()
        )
      });
      return None;
    };

    let mut buffer_bytes = BytesMut::with_capacity(data_size);
    buffer_bytes.resize(data_size, 0);

    let now = Timestamp::now();

    Some(Self {
      buffer_bytes,
      fragment_count,
      fragment_size,
      received_bitmap: BitVec::from_elem(fragment_count, false),
      cost,
      _process_charge: process_charge,
      created_time: now,
      modified_time: now,
    })
  }

  /// Returns `false` if the fragment run is invalid or out of bounds.
  pub fn insert_frags(&mut self, datafrag: &DataFrag) -> bool {
    // TODO: Sanity checks? E.g. datafrag.fragment_size == frag_size
    // Or is this even guaranteed? Can Writer vary fragment size?
    // Answer: Writer must guarantee constant fragment size per SequenceNumber.
    // So yes, it is guaranteed. RTPS spec v2.5 Section 8.4.14.1.1 "How to select
    // the fragment size" even says that the frag size is fixed per-writer.

    // HORUS PATCH (HORUS-PATCH.md): the fragment size of this sample's first DATA_FRAG, and
    // a DATA_FRAG announcing another one (or another sample size) is refused: its offsets
    // and fragment numbers would not be this buffer's.
    if datafrag.fragment_size != self.fragment_size
      || datafrag.data_size as usize != self.buffer_bytes.len()
    {
      error!(
        "insert_frags: fragment_size={} data_size={} but the sample's first fragment said {} and {}",
        datafrag.fragment_size,
        datafrag.data_size,
        self.fragment_size,
        self.buffer_bytes.len()
      );
      return false;
    }
    let frag_size = usize::from(self.fragment_size);
    let frags_in_submessage = usize::from(datafrag.fragments_in_submessage);
    if frags_in_submessage == 0 {
      error!("insert_frags: fragments_in_submessage is zero");
      return false;
    }
    let fragment_starting_num: usize = match u32::from(datafrag.fragment_starting_num).try_into() {
      Ok(n) if n >= 1 => n,
      _ => {
        error!(
          "insert_frags: invalid fragment_starting_num {:?}",
          datafrag.fragment_starting_num
        );
        return false;
      }
    };
    let start_frag_from_0 = fragment_starting_num - 1;
    if start_frag_from_0 + frags_in_submessage > self.fragment_count {
      error!(
        "insert_frags: fragment span out of bounds: start={fragment_starting_num} \
         count={frags_in_submessage} total={}",
        self.fragment_count
      );
      return false;
    }

    debug!(
      "insert_frags: datafrag.writer_sn = {:?}, frag_size = {:?}, datafrag.fragment_size = {:?}, \
       datafrag.fragment_starting_num = {:?}, datafrag.fragments_in_submessage = {:?}, \
       datafrag.data_size = {:?}",
      datafrag.writer_sn,
      frag_size,
      datafrag.fragment_size,
      datafrag.fragment_starting_num,
      datafrag.fragments_in_submessage,
      datafrag.data_size
    );

    // unwrap: u32 should fit into usize
    let from_byte = start_frag_from_0 * frag_size;

    // Last fragment might be smaller than fragment size
    // Copy reported number of fragments, or as much data as there is, whichever
    // ends first.
    // And clamp to assembly buffer length to avoid buffer overrun.
    let to_before_byte = std::cmp::min(
      from_byte
        + std::cmp::min(
          frags_in_submessage * frag_size,
          datafrag.serialized_payload.len(),
        ),
      self.buffer_bytes.len(),
    );
    if from_byte > to_before_byte {
      error!(
        "insert_frags: invalid byte range from_byte={from_byte} to_before_byte={to_before_byte}"
      );
      return false;
    }
    let payload_size = to_before_byte - from_byte;

    // sanity check data size
    // Last fragment may be smaller than frags_in_submessage * frag_size
    // HORUS PATCH (HORUS-PATCH.md): a payload shorter than the fragments it claims (up to the
    // sample's end) is refused; it was logged and its fragments marked received, so the
    // sample completed with zeros where the missing bytes belonged.
    let claimed_bytes = std::cmp::min(
      frags_in_submessage * frag_size,
      self.buffer_bytes.len().saturating_sub(from_byte),
    );
    if datafrag.serialized_payload.len() < claimed_bytes {
      error!(
        "Received DATAFRAG too small. fragment_starting_num={} out of fragment_count={}, \
         frags_in_submessage={}, frag_size={} but payload length = {}. Original data_size={}",
        fragment_starting_num,
        self.fragment_count,
        frags_in_submessage,
        frag_size,
        datafrag.serialized_payload.len(),
        datafrag.data_size,
      );
      return false;
    }

    debug!("insert_frags: from_byte = {from_byte:?}, to_before_byte = {to_before_byte:?}");

    debug!(
      "insert_frags: dataFrag.serializedPayload.len = {:?}",
      datafrag.serialized_payload.len()
    );

    self.buffer_bytes.as_mut()[from_byte..to_before_byte]
      .copy_from_slice(&datafrag.serialized_payload[..payload_size]);

    for f in 0..frags_in_submessage {
      self.received_bitmap.set(start_frag_from_0 + f, true);
    }
    self.modified_time = Timestamp::now();
    true
  }

  pub fn is_complete(&self) -> bool {
    self.received_bitmap.all() // return if all are received
  }
}

// Upper bound on the number of concurrent (incomplete) reassembly buffers kept
// per writer. Fragments belonging to one sample normally arrive back-to-back,
// so only a handful of samples are ever mid-reassembly at once; this cap is far
// above that. Its purpose is to bound memory when samples never complete, e.g.
// under best-effort overload where fragments are dropped: without it, one
// incomplete `AssemblyBuffer` (a full sample-sized allocation) accrues per lost
// sample and is only reclaimed by a 10 s idle timeout, growing to gigabytes.
// When exceeded we evict the oldest (lowest sequence number) buffer, which
// under best effort is lost anyway and under reliable will be re-requested.
const MAX_ASSEMBLY_BUFFERS: usize = 128;

// Assembles fragments from a single (remote) Writer
// So there is only one sequence of SNs
pub(crate) struct FragmentAssembler {
  // HORUS PATCH: no `fragment_size` here; each AssemblyBuffer keeps its sample's.
  assembly_buffers: BTreeMap<SequenceNumber, AssemblyBuffer>,
  // Whether the owning reader is Reliable. This decides which buffer to drop
  // when `MAX_ASSEMBLY_BUFFERS` is exceeded (see `new_datafrag`).
  reliable: bool,
  // HORUS PATCH: the sum of `assembly_buffers`' costs, kept by every insert and removal.
  reserved: usize,
}

impl fmt::Debug for FragmentAssembler {
  fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
    f.debug_struct("FragmentAssembler - fields omitted")
      // insert field printing here, if you really need it.
      .finish()
  }
}

impl FragmentAssembler {
  pub fn new(reliable: bool) -> Self {
    debug!("new FragmentAssembler. reliable = {reliable}");
    Self {
      assembly_buffers: BTreeMap::new(),
      reliable,
      reserved: 0,
    }
  }

  // HORUS PATCH (HORUS-PATCH.md): what this writer's incomplete samples are charged
  // against the reader's reassembly budget.
  pub fn reserved(&self) -> usize {
    self.reserved
  }

  // HORUS PATCH: whether no sample of this writer is in reassembly.
  pub fn is_empty(&self) -> bool {
    self.assembly_buffers.is_empty()
  }

  // HORUS PATCH: frees one incomplete sample to make room for a new reassembly of `sn`,
  // choosing as the `MAX_ASSEMBLY_BUFFERS` rule below does: a reliable reader gives up
  // its highest sequence number above `sn` (the writer sends it again once the reader
  // catches up), a best-effort one its lowest other than `sn` (lost anyway). Returns
  // whether one was freed.
  // Counted `evicted` (item 15).
  pub fn evict_one_for(&mut self, sn: SequenceNumber) -> bool {
    let victim = if self.reliable {
      self.assembly_buffers.keys().next_back().filter(|s| **s > sn)
    } else {
      self.assembly_buffers.keys().find(|s| **s != sn)
    };
    let Some(victim) = victim.copied() else {
      return false;
    };
    if let Some(ab) = self.assembly_buffers.remove(&victim) {
      self.reserved -= ab.cost;
      horus_reassembly::count_evicted();
    }
    true
  }

  // HORUS PATCH (HORUS-PATCH.md, item 15): the bytes `evict_one_for(sn)` could free in all,
  // called until it frees nothing more (a reliable reader: its samples after `sn`; a
  // best-effort one: its samples other than `sn`), so that a reader evicts only when that
  // makes enough room.
  pub fn evictable_for(&self, sn: SequenceNumber) -> usize {
    self
      .assembly_buffers
      .iter()
      .filter(|(s, _)| if self.reliable { **s > sn } else { **s != sn })
      .map(|(_, ab)| ab.cost)
      .sum()
  }

  // Returns completed DDSData, when complete, and disposes the assembly buffer.
  pub fn new_datafrag(
    &mut self,
    datafrag: &DataFrag,
    flags: BitFlags<DATAFRAG_Flags>,
  ) -> Option<DDSData> {
    let writer_sn = datafrag.writer_sn;

    let sn = datafrag.writer_sn;
    match self.assembly_buffers.entry(sn) {
      Entry::Vacant(v) => {
        let Some(buf) = AssemblyBuffer::new(datafrag) else {
          error!("new_datafrag: failed to create AssemblyBuffer for {sn:?}");
          return None;
        };
        self.reserved += buf.cost; // HORUS PATCH
        v.insert(buf);
      }
      Entry::Occupied(_) => {}
    }

    let Some(assembly_buffer) = self.assembly_buffers.get_mut(&sn) else {
      error!("new_datafrag: AssemblyBuffer missing for {sn:?}");
      return None;
    };

    if !assembly_buffer.insert_frags(datafrag) {
      error!("new_datafrag: rejected invalid DATAFRAG for {sn:?}");
      // HORUS PATCH (HORUS-PATCH.md): counted (was: only logged); why: insert_frags' error
      horus_reassembly::count(Refusal::Malformed, || {
        format!(
          "{sn:?}: fragments {}+{} of size {} announcing {} bytes, {} bytes of payload, \
           not fitting the sample",
          u32::from(datafrag.fragment_starting_num),
          datafrag.fragments_in_submessage,
          datafrag.fragment_size,
          datafrag.data_size,
          datafrag.serialized_payload.len()
        )
      });
      return None;
    }

    if assembly_buffer.is_complete() {
      debug!("new_datafrag: COMPLETED FRAGMENT");
      if let Some(assembly_buffer) = self.assembly_buffers.remove(&writer_sn) {
        self.reserved -= assembly_buffer.cost; // HORUS PATCH
        // Return what we have assembled.
        let sample_size = assembly_buffer.buffer_bytes.len();
        let serialized_data_or_key =
          SerializedPayload::from_bytes(&assembly_buffer.buffer_bytes.freeze()).map_or_else(
            |e| {
              error!("Deserializing SerializedPayload from DATAFRAG: {:?}", e);
              // HORUS PATCH (HORUS-PATCH.md, item 13): counted (was: only logged): a
              // sample shorter than its 4-byte encapsulation header (one fragment of
              // 1 to 3 bytes, the only way a sample can be), dropped.
              horus_reassembly::count(Refusal::Malformed, || {
                format!(
                  "{sn:?}: a completed sample of {sample_size} bytes has no encapsulation \
                   header"
                )
              });
              None
            },
            Some,
          )?;
        let dds_data = if flags.contains(DATAFRAG_Flags::Key) {
          DDSData::new_disposed_by_key(ChangeKind::NotAliveDisposed, serialized_data_or_key)
        } else {
          // it is data
          DDSData::new(serialized_data_or_key)
        };
        Some(dds_data) // completed data from fragments
      } else {
        error!("Assembly buffer mysteriously lost");
        None
      }
    } else {
      debug!("new_dataFrag: FRAGMENT NOT COMPLETED YET");
      // Bound memory: never keep more than MAX_ASSEMBLY_BUFFERS incomplete
      // reassemblies.
      //
      // Which one to evict depends on reliability:
      //  * Reliable: the reader delivers strictly in order, so it must complete the
      //    LOWEST sequence number first; that buffer is exactly the one blocking
      //    progress. Dropping it would livelock, because a writer that bursts many
      //    large samples ahead (e.g. Connext) would make the reader perpetually evict
      //    the very sample it is waiting for. So evict the HIGHEST (newest) sequence
      //    number instead; the writer keeps unacked samples in its history and
      //    re-sends them once we catch up.
      //  * Best effort: there is no retransmission, so a low incomplete buffer is
      //    lost anyway. Evict the OLDEST (lowest SN) to free room for newer samples
      //    that may still complete.
      while self.assembly_buffers.len() > MAX_ASSEMBLY_BUFFERS {
        let evicted = if self.reliable {
          self.assembly_buffers.pop_last()
        } else {
          self.assembly_buffers.pop_first()
        };
        let Some((_, evicted)) = evicted else {
          break;
        };
        self.reserved -= evicted.cost; // HORUS PATCH
        horus_reassembly::count_evicted(); // HORUS PATCH (item 15)
      }
      None
    }
  }

  // HORUS PATCH (item 15): returns how many samples were given up (the caller counts
  // them `expired`).
  pub fn garbage_collect_before(&mut self, expire_before: Timestamp) -> usize {
    let reserved = &mut self.reserved; // HORUS PATCH
    let mut dropped = 0; // HORUS PATCH
    self.assembly_buffers.retain(|sn, ab| {
      let retain = ab.modified_time >= expire_before;
      if !retain {
        info!("AssemblyBuffer dropping {sn:?}");
        *reserved -= ab.cost; // HORUS PATCH
        dropped += 1; // HORUS PATCH
      }
      retain
    });
    dropped
  }

  // pub fn partially_received_sequence_numbers_iterator(&self) -> Box<dyn
  // Iterator<Item=SequenceNumber>> {   // Since we should only know about SNs
  // via DATAFRAG messages   // and AssemblyBuffers are removed immediately on
  // completion,   // the list should be just the list of current
  // AssemblyBuffers   self.assembly_buffers.keys()
  // }

  pub fn is_partially_received(&self, sn: SequenceNumber) -> bool {
    self.assembly_buffers.contains_key(&sn)
    // assembly buffers map contains a key (SN) if and only if we have some
    // frags but not all
  }

  pub fn missing_frags_for(
    &self,
    seq: SequenceNumber,
  ) -> Box<dyn '_ + Iterator<Item = FragmentNumber>> {
    match self.assembly_buffers.get(&seq) {
      None => Box::new(iter::empty()),
      Some(ab) => {
        let iter = (0..ab.fragment_count)
          .filter(move |f| !ab.received_bitmap.get(*f).unwrap_or(true))
          .map(|f| FragmentNumber::new((f + 1).try_into().unwrap()));
        Box::new(iter)
      }
    }
  }
}

#[cfg(test)]
mod tests {
  use bytes::Bytes;

  use super::AssemblyBuffer;
  use crate::{
    messages::submessages::submessages::DataFrag, structure::sequence_number::FragmentNumber,
  };

  // Build a DATAFRAG submessage carrying the contiguous run of `k` fragments
  // starting at 1-based `start`, with the given payload bytes.
  fn datafrag(start: u32, k: u16, frag_size: u16, data_size: u32, payload: Vec<u8>) -> DataFrag {
    DataFrag {
      fragment_starting_num: FragmentNumber::new(start),
      fragments_in_submessage: k,
      fragment_size: frag_size,
      data_size,
      serialized_payload: Bytes::from(payload),
      ..Default::default()
    }
  }

  // A DATAFRAG that packs K > 1 fragments in one submessage must reassemble the
  // same bytes as one-fragment-per-submessage would. This exercises the
  // adaptive-packing writer path against the (unchanged) receiver.
  #[test]
  fn reassemble_multi_fragment_datafrag() {
    let frag_size = 1024u16;
    let data_size = 2600u32; // 3 fragments: 1024, 1024, 552
    let whole: Vec<u8> = (0..data_size as usize).map(|i| (i % 251) as u8).collect();

    // First submessage packs fragments 1 and 2 (K = 2, 2048 payload bytes).
    let first = datafrag(1, 2, frag_size, data_size, whole[0..2048].to_vec());
    let mut ab = AssemblyBuffer::new(&first).expect("valid first fragment");
    assert!(!ab.is_complete());
    assert!(ab.insert_frags(&first));
    assert!(!ab.is_complete(), "still missing the tail fragment");

    // Trailing submessage carries the shorter final fragment 3 (552 bytes).
    let tail = datafrag(3, 1, frag_size, data_size, whole[2048..2600].to_vec());
    assert!(ab.insert_frags(&tail));
    assert!(ab.is_complete(), "all fragments received");
    assert_eq!(
      &ab.buffer_bytes[..],
      &whole[..],
      "reassembled bytes must match the original sample"
    );
  }

  // A single DATAFRAG carrying the whole sample in one multi-fragment run.
  #[test]
  fn reassemble_single_submessage_all_fragments() {
    let frag_size = 512u16;
    let data_size = 1500u32; // 3 fragments: 512, 512, 476
    let whole: Vec<u8> = (0..data_size as usize).map(|i| (i % 97) as u8).collect();

    let all = datafrag(1, 3, frag_size, data_size, whole.clone());
    let mut ab = AssemblyBuffer::new(&all).expect("valid fragment set");
    assert!(ab.insert_frags(&all));
    assert!(ab.is_complete());
    assert_eq!(&ab.buffer_bytes[..], &whole[..]);
  }

  // Malformed span (starting at last fragment but claiming multiple fragments)
  // must not panic and must not falsely complete reassembly.
  #[test]
  fn reject_fragment_span_beyond_total() {
    let frag_size = 256u16;
    let data_size = 512u32; // 2 fragments total
    let bad = datafrag(2, 2, frag_size, data_size, vec![0u8; 256]);
    let mut ab = AssemblyBuffer::new(&bad).expect("buffer for valid data_size");
    assert!(!ab.insert_frags(&bad));
    assert!(!ab.is_complete());
  }

  // HORUS PATCH (HORUS-PATCH.md): an announced sample over the limit gets no buffer.
  #[test]
  fn assembly_buffer_refuses_a_sample_over_the_limit() {
    let huge = datafrag(1, 1, 1024, 3 << 30, vec![0u8; 1024]);
    assert!(AssemblyBuffer::new(&huge).is_none());
  }

  // HORUS PATCH (item 15): what broke: a reader evicted its writer's samples to make room
  // in the process budget even when that could not make enough (other readers held it), so
  // the new sample was refused anyway and the evicted ones lost. `evictable_for` is the room
  // all evictions for a sample can make, checked before evicting anything.
  #[test]
  fn evictable_room_is_what_evictions_for_a_sample_can_free() {
    use enumflags2::BitFlags;

    use super::FragmentAssembler;
    use crate::{
      horus_reassembly::cost, messages::submessages::submessages::DATAFRAG_Flags,
      structure::sequence_number::SequenceNumber,
    };

    let flags = BitFlags::<DATAFRAG_Flags>::empty();
    let frag = |sn: i64| DataFrag {
      writer_sn: SequenceNumber::new(sn),
      ..datafrag(1, 1, 512, 1024, vec![0u8; 512])
    };
    for reliable in [true, false] {
      let mut fa = FragmentAssembler::new(reliable);
      for sn in [2, 4, 6] {
        assert!(fa.new_datafrag(&frag(sn), flags).is_none());
      }
      let one = cost(1024, 2);
      // Reliable: only later samples; best effort: all others.
      let (for_1, for_4) = if reliable { (3 * one, one) } else { (3 * one, 2 * one) };
      assert_eq!(fa.evictable_for(SequenceNumber::new(1)), for_1);
      assert_eq!(fa.evictable_for(SequenceNumber::new(4)), for_4);
      let before = crate::horus_reassembly::refusals().evicted;
      let mut freed = 0;
      while fa.evict_one_for(SequenceNumber::new(4)) {
        freed += 1;
      }
      assert_eq!(freed * one, for_4);
      assert!(crate::horus_reassembly::refusals().evicted >= before + freed as u64, "counted");
      assert_eq!(fa.evictable_for(SequenceNumber::new(4)), 0);
    }
  }

  // HORUS PATCH (item 15): an expired sample is reported to the caller, which counts it.
  #[test]
  fn garbage_collection_says_how_many_samples_expired() {
    use enumflags2::BitFlags;

    use super::FragmentAssembler;
    use crate::{
      messages::submessages::submessages::DATAFRAG_Flags,
      structure::{duration::Duration, sequence_number::SequenceNumber, time::Timestamp},
    };

    let flags = BitFlags::<DATAFRAG_Flags>::empty();
    let mut fa = FragmentAssembler::new(true);
    for sn in 1..=3 {
      let f = DataFrag {
        writer_sn: SequenceNumber::new(sn),
        ..datafrag(1, 1, 512, 1024, vec![0u8; 512])
      };
      assert!(fa.new_datafrag(&f, flags).is_none());
    }
    assert_eq!(fa.garbage_collect_before(Timestamp::now() - Duration::from_secs(10)), 0);
    assert_eq!(fa.garbage_collect_before(Timestamp::now() + Duration::from_secs(1)), 3);
    assert!(fa.is_empty());
    assert_eq!(fa.reserved(), 0);
  }

  // HORUS PATCH: `reserved` follows every buffer opened, completed and evicted.
  #[test]
  fn reserved_bytes_follow_open_complete_and_evict() {
    use enumflags2::BitFlags;

    use super::FragmentAssembler;
    use crate::{
      horus_reassembly::cost, messages::submessages::submessages::DATAFRAG_Flags,
      structure::sequence_number::SequenceNumber,
    };

    let flags = BitFlags::<DATAFRAG_Flags>::empty();
    let frag = |sn: i64, start: u32| DataFrag {
      writer_sn: SequenceNumber::new(sn),
      ..datafrag(start, 1, 512, 1024, vec![0u8; 512])
    };
    for reliable in [true, false] {
      let mut fa = FragmentAssembler::new(reliable);
      for sn in 1..=3 {
        assert!(fa.new_datafrag(&frag(sn, 1), flags).is_none());
      }
      assert_eq!(fa.reserved(), 3 * cost(1024, 2));
      // SN 2 completes: its buffer is released.
      let _ = fa.new_datafrag(&frag(2, 2), flags);
      assert_eq!(fa.reserved(), 2 * cost(1024, 2));
      // Reliable gives up only a later SN (3, for 1); best effort any other (1, for 3).
      let for_sn = if reliable { 1 } else { 3 };
      assert!(fa.evict_one_for(SequenceNumber::new(for_sn)));
      assert_eq!(fa.reserved(), cost(1024, 2));
      assert_eq!(fa.evict_one_for(SequenceNumber::new(for_sn)), false);
      fa.garbage_collect_before(crate::structure::time::Timestamp::now() + crate::structure::duration::Duration::from_secs(1));
      assert_eq!(fa.reserved(), 0);
      assert!(fa.is_empty());
    }
  }

  #[test]
  fn fragment_assembler_rejects_span_beyond_total() {
    use enumflags2::BitFlags;

    use super::FragmentAssembler;
    use crate::messages::submessages::submessages::DATAFRAG_Flags;

    let frag_size = 256u16;
    let data_size = 512u32;
    let bad = datafrag(2, 2, frag_size, data_size, vec![0u8; 256]);
    let mut fa = FragmentAssembler::new(true);
    assert!(fa
      .new_datafrag(&bad, BitFlags::<DATAFRAG_Flags>::empty())
      .is_none());
  }

  // HORUS PATCH (HORUS-PATCH.md): what a DATA_FRAG's header can claim, each refused without
  // a panic and without allocating what it announces.
  #[test]
  fn malformed_fragment_headers_are_refused_without_panic_or_allocation() {
    use crate::horus_reassembly::MIN_FRAGMENT_SIZE;

    // No buffer: a zero fragment size, a fragment larger than the sample, a 64 MiB sample
    // in 1-byte fragments (64 M fragments: a 64 M-bit bitmap), or in fragments one byte
    // under the floor.
    assert!(AssemblyBuffer::new(&datafrag(1, 1, 0, 1000, vec![0; 4])).is_none());
    assert!(AssemblyBuffer::new(&datafrag(1, 1, 1001, 1000, vec![0; 1000])).is_none());
    assert!(AssemblyBuffer::new(&datafrag(1, 1, 1, 64 << 20, vec![0; 1])).is_none());
    let under = (MIN_FRAGMENT_SIZE - 1) as u16;
    assert!(AssemblyBuffer::new(&datafrag(1, 1, under, 64 << 20, vec![0; 255])).is_none());
    // A sample that fits in one fragment may use any size; RustDDS's 256 B is admitted.
    assert!(AssemblyBuffer::new(&datafrag(1, 1, 3, 3, vec![0; 3])).is_some());
    assert!(AssemblyBuffer::new(&datafrag(1, 1, 256, 64 << 20, vec![0; 256])).is_some());

    // A 4-fragment sample of 1000 bytes in 256-byte fragments.
    let fresh = || AssemblyBuffer::new(&datafrag(1, 1, 256, 1000, vec![0; 256])).unwrap();
    let refused = |d: DataFrag| {
      let mut ab = fresh();
      let ok = ab.insert_frags(&d);
      assert!(!ab.is_complete());
      ok
    };
    // Fragment number 0, past the last fragment, far past it (u32::MAX).
    assert!(!refused(datafrag(0, 1, 256, 1000, vec![0; 256])));
    assert!(!refused(datafrag(5, 1, 256, 1000, vec![0; 256])));
    assert!(!refused(datafrag(u32::MAX, 1, 256, 1000, vec![0; 256])));
    // No fragment in the submessage; more fragments than the sample has after the start
    // (u16::MAX × 256 bytes, far past the datagram).
    assert!(!refused(datafrag(1, 0, 256, 1000, vec![0; 256])));
    assert!(!refused(datafrag(2, u16::MAX, 256, 1000, vec![0; 256])));
    // A payload shorter than the fragments it claims (was: marked received, the sample
    // completed with zeros), also for the shorter last fragment.
    assert!(!refused(datafrag(1, 4, 256, 1000, vec![7; 999])));
    assert!(!refused(datafrag(4, 1, 256, 1000, vec![7; 231])));
    // Another fragment size or sample size for the same sample.
    assert!(!refused(datafrag(2, 1, 512, 1000, vec![0; 512])));
    assert!(!refused(datafrag(2, 1, 256, 1001, vec![0; 256])));
    // The same runs, well formed, complete it.
    let mut ab = fresh();
    assert!(ab.insert_frags(&datafrag(1, 3, 256, 1000, vec![1; 768])));
    assert!(ab.insert_frags(&datafrag(4, 1, 256, 1000, vec![2; 232])));
    assert!(ab.is_complete());
  }

  // HORUS PATCH (HORUS-PATCH.md): what broke: a DATA_FRAG refused for not fitting its
  // sample was only logged; now each is counted `malformed` with the other refusals
  // (process-wide: other tests may add to it meanwhile, hence at least).
  #[test]
  fn fragments_not_fitting_their_sample_are_counted_malformed() {
    use enumflags2::BitFlags;

    use super::FragmentAssembler;
    use crate::{
      horus_reassembly::refusals, messages::submessages::submessages::DATAFRAG_Flags,
      structure::sequence_number::SequenceNumber,
    };

    let flags = BitFlags::<DATAFRAG_Flags>::empty();
    let of = |sn: i64, d: DataFrag| DataFrag {
      writer_sn: SequenceNumber::new(sn),
      ..d
    };
    let mut fa = FragmentAssembler::new(true);
    let before = refusals().malformed;
    // Sample 1: 1000 bytes in 256-byte fragments, its first fragment well formed.
    assert!(fa
      .new_datafrag(&of(1, datafrag(1, 1, 256, 1000, vec![1; 256])), flags)
      .is_none());
    let bad = [
      datafrag(2, 1, 512, 1000, vec![0; 512]), // another fragment size
      datafrag(2, 1, 256, 1001, vec![0; 256]), // another sample size
      datafrag(2, 2, 256, 1000, vec![0; 300]), // a payload shorter than claimed
      datafrag(4, 2, 256, 1000, vec![0; 512]), // past the sample's end
      datafrag(0, 1, 256, 1000, vec![0; 256]), // fragment 0
      datafrag(2, 0, 256, 1000, vec![0; 256]), // no fragment
    ];
    let n_bad = bad.len() as u64;
    for d in bad {
      assert!(fa.new_datafrag(&of(1, d), flags).is_none());
    }
    // Sample 2 opened by a fragment larger than the sample.
    assert!(fa
      .new_datafrag(&of(2, datafrag(1, 1, 512, 500, vec![0; 500])), flags)
      .is_none());
    assert!(refusals().malformed - before >= n_bad + 1);
    // Sample 1 still completes from well-formed fragments.
    assert!(fa
      .new_datafrag(&of(1, datafrag(2, 2, 256, 1000, vec![2; 512])), flags)
      .is_none());
    let mut last = vec![0, 1, 0, 0];
    last.resize(232, 3);
    assert!(fa
      .new_datafrag(&of(1, datafrag(4, 1, 256, 1000, last)), flags)
      .is_some());
  }

  // HORUS PATCH (HORUS-PATCH.md, item 13): what broke: a sample completed from its
  // DATA_FRAGs whose serialized payload is shorter than its encapsulation header was
  // dropped with only a log line; now counted `malformed` (process-wide: other tests may
  // add to it meanwhile, hence at least).
  #[test]
  fn a_completed_fragmented_sample_without_an_encapsulation_header_is_counted_malformed() {
    use enumflags2::BitFlags;

    use super::FragmentAssembler;
    use crate::{
      horus_reassembly::refusals, messages::submessages::submessages::DATAFRAG_Flags,
      structure::sequence_number::SequenceNumber,
    };

    let flags = BitFlags::<DATAFRAG_Flags>::empty();
    let mut fa = FragmentAssembler::new(true);
    for size in 1..=3u16 {
      let before = refusals().malformed;
      let d = DataFrag {
        writer_sn: SequenceNumber::new(i64::from(size)),
        ..datafrag(1, 1, size, u32::from(size), vec![0; usize::from(size)])
      };
      assert!(fa.new_datafrag(&d, flags).is_none(), "{size} bytes");
      assert!(refusals().malformed > before, "{size} bytes not counted");
      assert!(fa.is_empty() && fa.reserved() == 0, "its buffer released");
    }
    // Four bytes are a header and an empty body: delivered.
    let d = DataFrag {
      writer_sn: SequenceNumber::new(4),
      ..datafrag(1, 1, 4, 4, vec![0, 1, 0, 0])
    };
    assert!(fa.new_datafrag(&d, flags).is_some());
  }

  // HORUS PATCH: the assembler took its fragment size from the first DATA_FRAG of any of
  // the writer's samples; a later sample in another size was put together at the wrong
  // offsets (never completing, or completing with wrong bytes) while the first was open.
  #[test]
  fn a_writers_sample_in_another_fragment_size_reassembles_while_an_earlier_one_is_open() {
    use enumflags2::BitFlags;

    use super::FragmentAssembler;
    use crate::{
      messages::submessages::submessages::DATAFRAG_Flags,
      structure::sequence_number::SequenceNumber,
    };

    let flags = BitFlags::<DATAFRAG_Flags>::empty();
    let mut fa = FragmentAssembler::new(true);
    let open = DataFrag {
      writer_sn: SequenceNumber::new(1),
      ..datafrag(1, 1, 512, 4096, vec![0; 512])
    };
    assert!(fa.new_datafrag(&open, flags).is_none());
    // SN 2: 3000 bytes in 1024-byte fragments, an encapsulation header (CDR_LE) first.
    let mut whole: Vec<u8> = (0..3000).map(|i| (i % 251) as u8).collect();
    whole[..4].copy_from_slice(&[0, 1, 0, 0]);
    let mut done = None;
    for (start, range) in [(1u32, 0..1024), (2, 1024..2048), (3, 2048..3000)] {
      let d = DataFrag {
        writer_sn: SequenceNumber::new(2),
        ..datafrag(start, 1, 1024, 3000, whole[range].to_vec())
      };
      done = fa.new_datafrag(&d, flags);
    }
    let done = done.expect("SN 2 completes");
    assert_eq!(&done.data()[..], &whole[4..]);
  }
}
