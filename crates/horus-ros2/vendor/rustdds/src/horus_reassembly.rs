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
//! - a stateful reader drops a DATA_FRAG from a user writer it has not matched (counted
//!   `unmatched_writer`) before it reaches the assembler: the completed sample would have been
//!   dropped anyway, as an unfragmented DATA from such a writer is;
//! - a DATA_FRAG that does not fit its sample (counted `malformed`) is refused by the
//!   fragment assembler: one announcing another fragment size or sample size than the
//!   sample's first fragment did, fragments past the sample's end, none, or fragment 0, a
//!   payload shorter than the fragments it claims, or (opening a sample) a fragment size of
//!   0 or larger than the sample.
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
  /// fragment size of 0 or larger than the sample.
  pub malformed: u64,
}

/// The refusals so far.
pub fn refusals() -> Refusals {
  Refusals {
    oversize: OVERSIZE.load(Ordering::Relaxed),
    over_budget: OVER_BUDGET.load(Ordering::Relaxed),
    unmatched_writer: UNMATCHED_WRITER.load(Ordering::Relaxed),
    too_many_fragments: TOO_MANY_FRAGMENTS.load(Ordering::Relaxed),
    malformed: MALFORMED.load(Ordering::Relaxed),
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
}

/// Counts a refused DATA_FRAG; logs the 1st, 2nd, 4th, 8th, … of each kind.
pub(crate) fn count(refusal: Refusal, what: impl FnOnce() -> String) {
  let counter = match refusal {
    Refusal::Oversize => &OVERSIZE,
    Refusal::OverBudget => &OVER_BUDGET,
    Refusal::UnmatchedWriter => &UNMATCHED_WRITER,
    Refusal::TooManyFragments => &TOO_MANY_FRAGMENTS,
    Refusal::Malformed => &MALFORMED,
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
  fn the_cost_counts_bitmap_and_overhead_and_saturates() {
    assert_eq!(cost(1000, 16), 1000 + 2 + BUFFER_OVERHEAD);
    assert_eq!(cost(usize::MAX, usize::MAX), usize::MAX);
  }
}
