//! HORUS PATCH (crates/horus-ros2/vendor/rustdds/HORUS-PATCH.md): bounds on what a remote
//! writer's DATA_FRAGs can make a reader allocate, and counters of the fragments refused.
//!
//! A DATA_FRAG announces the size of the whole sample (`sampleSize`, a `u32` from the wire)
//! and the reader's fragment assembler allocates that size, zero-filled, when the first
//! fragment of a sequence number arrives: one UDP datagram could make it allocate up to
//! 4 GiB, and up to 128 incomplete samples per writer were kept. Now:
//!
//! - a sample larger than [`max_sample_size`] (default [`DEFAULT_MAX_SAMPLE_SIZE`], 64 MiB;
//!   raised, never lowered, by [`raise_max_sample_size`]) is not reassembled: its fragments
//!   are dropped and counted `oversize`;
//! - all the samples a reader has in reassembly (every writer's together) are charged their
//!   announced size plus their fragment bitmap plus [`BUFFER_OVERHEAD`]; a new one that would
//!   take the total past [`budget_per_reader`] (4 × the maximum sample size, 256 MiB by
//!   default) first evicts what upstream's `MAX_ASSEMBLY_BUFFERS` rule would evict from that
//!   writer (a reliable reader: its samples after this one, which the writer sends again; a
//!   best-effort one: its other samples, lost anyway), and if that is not enough it is
//!   refused and counted `over_budget`;
//! - a sample cut into more than one fragment smaller than [`MIN_FRAGMENT_SIZE`] (256 bytes)
//!   is not reassembled (counted `too_many_fragments`): its fragment bitmap, and the scans
//!   of it that list the missing fragments at each HEARTBEAT (NACK_FRAG), grow with the
//!   number of fragments, so a 64 MiB sample in 1-byte fragments would cost 64 M bits and
//!   a 64 M-step scan per sample and HEARTBEAT. With the floor, a sample has at most
//!   `max_sample_size / 256` fragments (262144 at 64 MiB) and one reader's samples in
//!   reassembly at most `budget_per_reader / 256` (1 M) together;
//! - all the samples of the whole process in reassembly (every reader of every participant
//!   together) are charged the same cost against [`budget_per_process`] (16 × the maximum
//!   sample size, 1 GiB by default; [`set_budget_per_process`] sets another): a peer that
//!   matches many readers (one per topic) can no longer hold a reader's budget in each. A
//!   sample that does not fit takes the room of what its writer's assembler may give up (as
//!   for the reader's budget), else it is refused and counted `over_process_budget`. Each
//!   sample's charge is taken before its buffer is allocated and given back when the buffer
//!   goes (completed, evicted, timed out, or its reader dropped);
//! - a stateful reader drops a DATA_FRAG from a user writer it has not matched (counted
//!   `unmatched_writer`) before it reaches the assembler: the completed sample would have been
//!   dropped anyway, as an unfragmented DATA from such a writer is;
//! - a DATA_FRAG that does not fit its sample (counted `malformed`) is refused by the
//!   fragment assembler: one announcing another fragment size or sample size than the
//!   sample's first fragment did, fragments past the sample's end, none, or fragment 0, a
//!   payload shorter than the fragments it claims, or (opening a sample) a fragment size of
//!   0 or larger than the sample; and a sample completed shorter than its 4-byte
//!   encapsulation header (dropped: it has no serialized payload header to parse).
//!
//! - (item 15) built-in (discovery) readers, which take DATA_FRAGs from participants not
//!   yet discovered, reassemble at most [`BUILTIN_MAX_SAMPLE_SIZE`] per sample and hold at
//!   most [`BUILTIN_BUDGET_PER_READER`]; a sample that gets no fragment for
//!   [`FRAGMENT_ASSEMBLY_TIMEOUT_SECS`] is given up on its reader's timer (counted
//!   `expired`), and one given up to make room for another is counted `evicted` (eviction
//!   happens only when it makes enough room).
//!
//! The counters are process-wide (every participant of the process together) and count
//! DATA_FRAG submessages, not samples; a rate-limited `warn!` (at the 1st, 2nd, 4th, 8th, …
//! of each kind) says what was refused.

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

#[allow(unused_imports)]
use log::warn;

/// The largest sample reassembled from DATA_FRAGs unless [`raise_max_sample_size`] raised
/// it: 64 MiB, room for an uncompressed 4K RGBA image (33 MiB) or a dense point cloud.
pub const DEFAULT_MAX_SAMPLE_SIZE: usize = 64 << 20;

/// The smallest fragment size (DATA_FRAG's `fragmentSize`) a sample of more than one
/// fragment may use: 256 bytes, RustDDS's own writer's fragment size (0.15.1,
/// `rtps::constant::FRAGMENT_SIZE`), the smallest of the DDS implementations ROS 2 meets
/// (Cyclone DDS: 1344 by default; Fast DDS: up to ~64000, its transport's message size;
/// RTI Connext: its transport's message size). A sample that fits in one fragment may
/// announce any fragment size.
pub const MIN_FRAGMENT_SIZE: usize = 256;

/// How many maximum-size samples one reader may have in reassembly at once, all writers
/// together.
pub const BUDGET_IN_MAX_SAMPLES: usize = 4;

/// How many maximum-size samples the whole process may have in reassembly at once, every
/// reader of every participant together, unless [`set_budget_per_process`] set a budget.
pub const PROCESS_BUDGET_IN_MAX_SAMPLES: usize = 16;

/// HORUS PATCH (HORUS-PATCH.md, item 15): the largest sample a built-in (discovery) reader
/// reassembles: 64 KiB. SPDP and SEDP samples are a few KiB (a ROS 2 node's participant
/// data with its enclave USER_DATA is under 1 KiB, an endpoint's under 2 KiB with its type
/// information), and a remote USER_DATA is kept only up to 4 KiB (item 16); 64 KiB is what
/// one UDP datagram can carry, so anything a peer would send unfragmented over a large-MTU
/// transport still fits. Built-in readers take DATA_FRAGs from participants not yet
/// discovered (they are how participants are discovered), so their share of the process's
/// budget must stay small: over this they are refused and counted `oversize`.
pub const BUILTIN_MAX_SAMPLE_SIZE: usize = 64 << 10;

/// HORUS PATCH (item 15): the bytes one built-in reader may hold in reassembly, every
/// writer's samples together: 16 × [`BUILTIN_MAX_SAMPLE_SIZE`] (1 MiB), room for 16
/// participants' fragmented discovery samples at once.
pub const BUILTIN_BUDGET_PER_READER: usize = 16 * BUILTIN_MAX_SAMPLE_SIZE;

/// HORUS PATCH (item 15): a partially received sample that got no fragment for this long is
/// given up (its buffer dropped, its budget given back, counted [`Refusals::expired`]),
/// whether or not its reader receives anything else: each reader with samples in
/// reassembly checks them on a timer every [`FRAGMENT_GC_PERIOD`].
pub const FRAGMENT_ASSEMBLY_TIMEOUT_SECS: u64 = 10;

/// HORUS PATCH (item 15): how often a reader with samples in reassembly looks for expired
/// ones; a stale sample is given up between [`FRAGMENT_ASSEMBLY_TIMEOUT_SECS`] and that
/// plus this after its last fragment.
pub const FRAGMENT_GC_PERIOD: std::time::Duration = std::time::Duration::from_secs(2);

/// What a sample in reassembly is charged beyond its bytes and its fragment bitmap (its
/// buffer's bookkeeping), so that many tiny announced samples are bounded too.
pub const BUFFER_OVERHEAD: usize = 256;

// Relaxed everywhere below: each atomic is a value on its own (a limit read when a
// reassembly opens, a counter read for reporting); nothing else is published through them.
static MAX_SAMPLE_SIZE: AtomicUsize = AtomicUsize::new(DEFAULT_MAX_SAMPLE_SIZE);
static OVERSIZE: AtomicU64 = AtomicU64::new(0);
static OVER_BUDGET: AtomicU64 = AtomicU64::new(0);
static UNMATCHED_WRITER: AtomicU64 = AtomicU64::new(0);
static TOO_MANY_FRAGMENTS: AtomicU64 = AtomicU64::new(0);
static MALFORMED: AtomicU64 = AtomicU64::new(0);
static OVER_PROCESS_BUDGET: AtomicU64 = AtomicU64::new(0);
static EXPIRED: AtomicU64 = AtomicU64::new(0);
static EVICTED: AtomicU64 = AtomicU64::new(0);
// The budget [`set_budget_per_process`] set; 0: the default (PROCESS_BUDGET_IN_MAX_SAMPLES ×
// max_sample_size).
static PROCESS_BUDGET: AtomicUsize = AtomicUsize::new(0);
// What the process's samples in reassembly are charged now (the sum of the live
// [`ProcessCharge`]s). Only changed by read-modify-write operations, which act on one
// modification order whatever their ordering: a `fetch_update` that checks the bound and
// adds cannot interleave with another, so the sum never passes the budget it checked.
static PROCESS_HELD: AtomicUsize = AtomicUsize::new(0);

/// The largest sample (serialized payload bytes, as DATA_FRAG's `sampleSize`) reassembled.
pub fn max_sample_size() -> usize {
  MAX_SAMPLE_SIZE.load(Ordering::Relaxed)
}

/// Raises [`max_sample_size`] to `bytes` if it is lower (an application carrying larger
/// samples); never lowers it, so that two users in one process both get what they need.
pub fn raise_max_sample_size(bytes: usize) {
  MAX_SAMPLE_SIZE.fetch_max(bytes, Ordering::Relaxed);
}

/// The bytes one reader may hold in reassembly, every writer's samples together.
pub fn budget_per_reader() -> usize {
  max_sample_size().saturating_mul(BUDGET_IN_MAX_SAMPLES)
}

/// The bytes the whole process may hold in reassembly, every reader's samples together:
/// what [`set_budget_per_process`] set, else [`PROCESS_BUDGET_IN_MAX_SAMPLES`] ×
/// [`max_sample_size`] (1 GiB by default).
pub fn budget_per_process() -> usize {
  match PROCESS_BUDGET.load(Ordering::Relaxed) {
    0 => max_sample_size().saturating_mul(PROCESS_BUDGET_IN_MAX_SAMPLES),
    set => set,
  }
}

/// Sets [`budget_per_process`] to `bytes` (0: back to the default). A budget under
/// [`max_sample_size`] refuses the largest samples whatever else is in reassembly. Samples
/// already in reassembly keep their room; new ones are admitted while the total stays within
/// the new budget.
pub fn set_budget_per_process(bytes: usize) {
  PROCESS_BUDGET.store(bytes, Ordering::Relaxed);
}

/// What the process's samples in reassembly are charged now (bytes, every reader together).
pub fn held_in_process() -> usize {
  PROCESS_HELD.load(Ordering::Relaxed)
}

/// Whether a new reassembly charged `cost` fits [`budget_per_process`] now (a check before
/// evicting; [`ProcessCharge::take`] decides).
pub(crate) fn process_has_room_for(cost: usize) -> bool {
  process_has_room_after_freeing(cost, 0)
}

/// HORUS PATCH (item 15): whether a new reassembly charged `cost` would fit
/// [`budget_per_process`] once `freed` bytes of what is held now were given back.
pub(crate) fn process_has_room_after_freeing(cost: usize, freed: usize) -> bool {
  held_in_process()
    .saturating_sub(freed)
    .saturating_add(cost)
    <= budget_per_process()
}

/// A sample's share of [`budget_per_process`], held by its assembly buffer and given back
/// when the buffer is dropped (completed, evicted, collected, or its reader gone).
#[derive(Debug)]
pub(crate) struct ProcessCharge {
  held: &'static AtomicUsize,
  bytes: usize,
}

impl ProcessCharge {
  /// Takes `cost` bytes of the process's budget, or `None` (nothing taken) when the total
  /// would pass it.
  pub(crate) fn take(cost: usize) -> Option<ProcessCharge> {
    ProcessCharge::take_from(&PROCESS_HELD, cost, budget_per_process())
  }

  /// Takes `cost` bytes from `held` if the total stays within `budget`.
  fn take_from(held: &'static AtomicUsize, cost: usize, budget: usize) -> Option<ProcessCharge> {
    // Relaxed: see PROCESS_HELD; the check and the add are one atomic step.
    held
      .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |now| {
        now.checked_add(cost).filter(|total| *total <= budget)
      })
      .ok()
      .map(|_| ProcessCharge { held, bytes: cost })
  }
}

impl Drop for ProcessCharge {
  fn drop(&mut self) {
    // Relaxed: see PROCESS_HELD. Never below zero: exactly what `take_from` added.
    self.held.fetch_sub(self.bytes, Ordering::Relaxed);
  }
}

/// Whether a sample of `sample_size` bytes announced in fragments of `fragment_size` bytes
/// is cut too fine to be reassembled: more than one fragment, each smaller than
/// [`MIN_FRAGMENT_SIZE`] (a zero fragment size included).
pub(crate) fn too_many_fragments(sample_size: usize, fragment_size: u16) -> bool {
  usize::from(fragment_size) < MIN_FRAGMENT_SIZE && sample_size > usize::from(fragment_size)
}

/// What a reassembly of `sample_size` bytes in `fragments` fragments is charged.
pub(crate) fn cost(sample_size: usize, fragments: usize) -> usize {
  sample_size
    .saturating_add(fragments.div_ceil(8))
    .saturating_add(BUFFER_OVERHEAD)
}

/// DATA_FRAG submessages refused since the process started (all participants).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Refusals {
  /// Announcing a sample larger than [`max_sample_size`].
  pub oversize: u64,
  /// Opening a reassembly the reader's [`budget_per_reader`] had no room for.
  pub over_budget: u64,
  /// From a user writer the (stateful) reader has not matched.
  pub unmatched_writer: u64,
  /// Announcing a sample in more than one fragment smaller than [`MIN_FRAGMENT_SIZE`].
  pub too_many_fragments: u64,
  /// Not fitting its sample: another fragment or sample size than the sample's first
  /// fragment, a span past the sample's end, a payload shorter than it claims, or a
  /// fragment size of 0 or larger than the sample; or completing a sample shorter than its
  /// 4-byte encapsulation header.
  pub malformed: u64,
  /// Opening a reassembly the process's [`budget_per_process`] had no room for.
  pub over_process_budget: u64,
  /// Samples (not DATA_FRAGs) given up incomplete because no fragment of theirs came for
  /// [`FRAGMENT_ASSEMBLY_TIMEOUT_SECS`] (HORUS PATCH item 15).
  pub expired: u64,
  /// Samples (not DATA_FRAGs) given up incomplete to make room for another sample of
  /// their writer: by a reader's or the process's budget, or past 128 samples of one writer
  /// in reassembly (a reliable reader gives up later ones, which the writer sends again; a
  /// best-effort one earlier ones, lost) (HORUS PATCH item 15).
  pub evicted: u64,
}

/// The refusals so far.
pub fn refusals() -> Refusals {
  Refusals {
    oversize: OVERSIZE.load(Ordering::Relaxed),
    over_budget: OVER_BUDGET.load(Ordering::Relaxed),
    unmatched_writer: UNMATCHED_WRITER.load(Ordering::Relaxed),
    too_many_fragments: TOO_MANY_FRAGMENTS.load(Ordering::Relaxed),
    malformed: MALFORMED.load(Ordering::Relaxed),
    over_process_budget: OVER_PROCESS_BUDGET.load(Ordering::Relaxed),
    expired: EXPIRED.load(Ordering::Relaxed),
    evicted: EVICTED.load(Ordering::Relaxed),
  }
}

/// HORUS PATCH (item 15): counts `n` samples given up after the fragment timeout.
pub(crate) fn count_expired(n: usize) {
  if n > 0 {
    let before = EXPIRED.fetch_add(n as u64, Ordering::Relaxed);
    let total = before + n as u64;
    // At the first, and whenever the total passes a power of two.
    if before == 0 || before.leading_zeros() != total.leading_zeros() {
      warn!("{n} incomplete sample(s) given up after {FRAGMENT_ASSEMBLY_TIMEOUT_SECS} s without a fragment ({total} so far)");
    }
  }
}

/// HORUS PATCH (item 15): counts one sample given up to make room for another.
pub(crate) fn count_evicted() {
  let n = EVICTED.fetch_add(1, Ordering::Relaxed) + 1;
  if n.is_power_of_two() {
    warn!("incomplete sample given up to make room for another ({n} so far)");
  }
}

/// Why a DATA_FRAG was refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Refusal {
  Oversize,
  OverBudget,
  UnmatchedWriter,
  TooManyFragments,
  Malformed,
  OverProcessBudget,
}

/// Counts a refused DATA_FRAG; logs the 1st, 2nd, 4th, 8th, … of each kind.
pub(crate) fn count(refusal: Refusal, what: impl FnOnce() -> String) {
  let counter = match refusal {
    Refusal::Oversize => &OVERSIZE,
    Refusal::OverBudget => &OVER_BUDGET,
    Refusal::UnmatchedWriter => &UNMATCHED_WRITER,
    Refusal::TooManyFragments => &TOO_MANY_FRAGMENTS,
    Refusal::Malformed => &MALFORMED,
    Refusal::OverProcessBudget => &OVER_PROCESS_BUDGET,
  };
  let n = counter.fetch_add(1, Ordering::Relaxed) + 1;
  if n.is_power_of_two() {
    warn!("DATA_FRAG refused ({refusal:?}, {n} so far): {}", what());
  }
}

#[cfg(test)]
mod tests {
  use super::*;

  #[test]
  fn the_limit_is_raised_never_lowered() {
    let before = max_sample_size();
    raise_max_sample_size(1);
    assert_eq!(max_sample_size(), before);
    assert!(budget_per_reader() >= BUDGET_IN_MAX_SAMPLES * DEFAULT_MAX_SAMPLE_SIZE);
  }

  #[test]
  fn fragments_under_the_floor_are_too_many_unless_the_sample_is_one_fragment() {
    // 64 MiB in 1-byte fragments: 64 M fragments.
    assert!(too_many_fragments(64 << 20, 1));
    assert!(too_many_fragments(64 << 20, 255));
    assert!(too_many_fragments(1000, 0));
    // RustDDS (256), Cyclone DDS (1344), Fast DDS (~64000) fragment sizes.
    for fragment in [256u16, 1344, 64000, u16::MAX] {
      assert!(!too_many_fragments(64 << 20, fragment), "{fragment}");
    }
    // A sample that fits in one fragment may use any fragment size.
    assert!(!too_many_fragments(100, 100));
    assert!(!too_many_fragments(1, 1));
    // The most fragments a sample at the limit can have.
    assert_eq!(DEFAULT_MAX_SAMPLE_SIZE.div_ceil(MIN_FRAGMENT_SIZE), 262_144);
  }

  #[test]
  fn the_process_budget_defaults_to_a_multiple_of_the_sample_limit() {
    assert!(budget_per_process() >= PROCESS_BUDGET_IN_MAX_SAMPLES * DEFAULT_MAX_SAMPLE_SIZE);
    assert!(budget_per_process() >= budget_per_reader());
  }

  #[test]
  fn a_process_charge_over_the_budget_is_refused_and_a_dropped_one_gives_its_room_back() {
    static HELD: AtomicUsize = AtomicUsize::new(0);
    let a = ProcessCharge::take_from(&HELD, 600, 1000).expect("fits");
    assert!(ProcessCharge::take_from(&HELD, 401, 1000).is_none());
    assert_eq!(HELD.load(Ordering::Relaxed), 600, "a refusal takes nothing");
    let b = ProcessCharge::take_from(&HELD, 400, 1000).expect("fits exactly");
    assert!(ProcessCharge::take_from(&HELD, 1, 1000).is_none());
    drop(a);
    assert_eq!(HELD.load(Ordering::Relaxed), 400);
    assert!(ProcessCharge::take_from(&HELD, usize::MAX, usize::MAX).is_none(), "no overflow");
    drop(b);
    assert_eq!(HELD.load(Ordering::Relaxed), 0);
  }

  #[test]
  fn readers_on_many_threads_never_hold_more_than_the_process_budget() {
    static HELD: AtomicUsize = AtomicUsize::new(0);
    const BUDGET: usize = 10_000;
    let peak = std::sync::Arc::new(AtomicUsize::new(0));
    let threads: Vec<_> = (0..8)
      .map(|t| {
        let peak = peak.clone();
        std::thread::spawn(move || {
          let mut mine = Vec::new();
          for i in 0..2000 {
            if let Some(c) = ProcessCharge::take_from(&HELD, 700 + t * 13 + i % 7, BUDGET) {
              mine.push(c);
            }
            peak.fetch_max(HELD.load(Ordering::Relaxed), Ordering::Relaxed);
            if i % 3 == 0 {
              mine.pop();
            }
          }
        })
      })
      .collect();
    for t in threads {
      t.join().unwrap();
    }
    assert!(peak.load(Ordering::Relaxed) <= BUDGET);
    assert_eq!(HELD.load(Ordering::Relaxed), 0, "every charge given back");
  }

  #[test]
  fn the_cost_counts_bitmap_and_overhead_and_saturates() {
    assert_eq!(cost(1000, 16), 1000 + 2 + BUFFER_OVERHEAD);
    assert_eq!(cost(usize::MAX, usize::MAX), usize::MAX);
  }
}
