//! What a hostile or broken DDS peer's DATA_FRAGs could not make the bridge allocate: the
//! vendored RustDDS (`vendor/rustdds`, `src/horus_reassembly.rs`, HORUS-PATCH.md) refuses
//! to reassemble a sample larger than its limit (64 MiB, or the bridge's
//! `max_message_bytes` when larger) or cut into more than one fragment under 256 bytes
//! (its fragment bitmap and missing-fragment scans grow with the fragments), keeps every
//! reader's samples in reassembly within a budget (4 × that limit), all the process's
//! readers' together within another (16 × that limit, 1 GiB by default, or
//! `BridgeConfig::max_reassembly_bytes`), and refuses a fragment that does not fit its
//! sample; it counts each DATA_FRAG it refuses. Discovery's built-in readers, which take
//! DATA_FRAGs from participants not yet discovered, reassemble samples up to 64 KiB and
//! hold at most 1 MiB each. A sample in reassembly that gets no fragment for 10 s is given
//! up on a timer (counted `expired`), one given up to make room for its writer's next
//! sample is counted `evicted`. The bridge reports those
//! counts in its status (`dds_fragments_refused`), beside the per-topic counters: the
//! fragments are refused before they belong to a sample, so to no topic.

use serde::{Deserialize, Serialize};

/// DATA_FRAG submessages refused before reassembly by this process's DDS participant,
/// since the process started.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct DdsFragmentRefusals {
    /// Announcing a sample larger than the reassembly limit.
    pub oversize: u64,
    /// Opening a reassembly its reader's budget had no room for.
    pub over_budget: u64,
    /// From a user writer the reader has not matched (its sample would be dropped anyway).
    pub unmatched_writer: u64,
    /// Announcing a sample in more than one fragment smaller than 256 bytes
    /// (`rustdds::horus_reassembly::MIN_FRAGMENT_SIZE`).
    pub too_many_fragments: u64,
    /// Not fitting its sample: another fragment or sample size than the sample's first
    /// fragment announced, a payload shorter than the fragments it claims, fragments past
    /// the sample's end (or none, or number 0), a fragment size of 0 or larger than the
    /// sample; or completing a sample shorter than its 4-byte encapsulation header.
    pub malformed: u64,
    /// Opening a reassembly the process's budget (every reader's samples together) had no
    /// room for.
    pub over_process_budget: u64,
    /// Samples (not DATA_FRAGs) given up incomplete after 10 s without a fragment
    /// (`rustdds::horus_reassembly::FRAGMENT_ASSEMBLY_TIMEOUT_SECS`), checked on a timer in
    /// every reader.
    pub expired: u64,
    /// Samples (not DATA_FRAGs) given up incomplete to make room for another sample of
    /// their writer (a reliable writer sends them again; a best-effort writer's are lost,
    /// and counted `lost` on their topic too, as a sequence gap).
    pub evicted: u64,
}

impl DdsFragmentRefusals {
    /// The counts now.
    pub fn now() -> DdsFragmentRefusals {
        let r = rustdds::horus_reassembly::refusals();
        DdsFragmentRefusals {
            oversize: r.oversize,
            over_budget: r.over_budget,
            unmatched_writer: r.unmatched_writer,
            too_many_fragments: r.too_many_fragments,
            malformed: r.malformed,
            over_process_budget: r.over_process_budget,
            expired: r.expired,
            evicted: r.evicted,
        }
    }

    /// Whether any DATA_FRAG was refused or any sample in reassembly given up.
    pub fn any(&self) -> bool {
        *self != DdsFragmentRefusals::default()
    }
}

/// Lets RustDDS reassemble samples as large as the bridge carries (`max_message_bytes`,
/// encapsulation header included, plus the up to 3 bytes of padding a writer may add),
/// where that is above its 64 MiB default; the limit is never lowered.
pub(crate) fn allow_samples_up_to(max_message_bytes: usize) {
    rustdds::horus_reassembly::raise_max_sample_size(max_message_bytes.saturating_add(3));
}

/// Sets how many bytes the process's DDS readers may hold in reassembly together (`None`:
/// RustDDS's default, 16 × its sample limit). Never 0: RustDDS reads a budget of 0 as its
/// default, so the type keeps a setting of 0 from silently meaning 1 GiB.
pub(crate) fn hold_in_reassembly_at_most(bytes: Option<std::num::NonZeroUsize>) {
    rustdds::horus_reassembly::set_budget_per_process(bytes.map_or(0, std::num::NonZeroUsize::get));
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What broke: `max_reassembly_bytes: Some(0)` silently meant RustDDS's default (1 GiB).
    /// Now the setting is a `NonZeroUsize` (0 cannot be written); a set budget is the
    /// process budget, and `None` the default.
    #[test]
    fn the_configured_reassembly_budget_is_the_process_budget_and_none_the_default() {
        let default = rustdds::horus_reassembly::budget_per_process();
        hold_in_reassembly_at_most(std::num::NonZeroUsize::new(123_456));
        assert_eq!(rustdds::horus_reassembly::budget_per_process(), 123_456);
        hold_in_reassembly_at_most(None);
        assert_eq!(rustdds::horus_reassembly::budget_per_process(), default);
        assert!(std::num::NonZeroUsize::new(0).is_none());
        assert!("0".parse::<std::num::NonZeroUsize>().is_err());
    }
}
