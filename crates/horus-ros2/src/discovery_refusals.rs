//! What a flood of DDS discovery announcements could not make the bridge keep: the vendored
//! RustDDS (`vendor/rustdds`, `src/horus_discovery_limits.rs`, HORUS-PATCH.md) knows at most
//! 1024 participants (a new one takes the place of one heard once and silent for 5 s, or of
//! one silent for 30 s, at most one each 100 ms, else is refused),
//! honours a participant's lease for at most 300 s, keeps at most 4096 remote readers and
//! writers per participant and 16384 in all, forgets the endpoints of a GUID prefix no
//! participant announced within 60 s, keeps at most 32768 topic records, and keeps a remote
//! participant's or endpoint's USER_DATA only up to 4 KiB (a longer or malformed one is kept
//! empty); it counts each refusal. The bridge reports those counts in its status (`dds_discovery_refused`): they
//! belong to no topic.

use serde::{Deserialize, Serialize};

/// Discovery announcements refused (or what they announced given up) by this process's DDS
/// participant, since the process started.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct DdsDiscoveryRefusals {
    /// New participants refused: 1024 known, none silent for 30 s (nor heard once and silent
    /// for 5 s), or one given up less than 100 ms before.
    pub participants_refused: u64,
    /// Participants silent for 30 s (or heard once and silent for 5 s) given up for a new
    /// one while 1024 were known.
    pub participants_evicted: u64,
    /// Participants admitted with a lease over 300 s (honoured for 300 s).
    pub leases_clamped: u64,
    /// New remote readers and writers refused: 4096 of their participant, or 16384 in all,
    /// known.
    pub endpoints_refused: u64,
    /// Remote readers and writers forgotten: no participant announced their GUID prefix
    /// within 60 s, or their participant was lost while 16384 lost ones were kept for
    /// rediscovery.
    pub endpoints_forgotten: u64,
    /// Topic records not kept (32768 were).
    pub topics_refused: u64,
    /// Participant or endpoint announcements whose USER_DATA was over 4 KiB (ignored: kept
    /// empty; ROS 2's are under 300 bytes). Counted at each announcement.
    pub user_data_too_long: u64,
    /// Participant or endpoint announcements whose PID_USER_DATA was malformed (kept
    /// empty). Counted at each announcement.
    pub user_data_malformed: u64,
}

impl DdsDiscoveryRefusals {
    /// The counts now.
    pub fn now() -> DdsDiscoveryRefusals {
        let r = rustdds::horus_discovery_limits::refusals();
        DdsDiscoveryRefusals {
            participants_refused: r.participants_refused,
            participants_evicted: r.participants_evicted,
            leases_clamped: r.leases_clamped,
            endpoints_refused: r.endpoints_refused,
            endpoints_forgotten: r.endpoints_forgotten,
            topics_refused: r.topics_refused,
            user_data_too_long: r.user_data_too_long,
            user_data_malformed: r.user_data_malformed,
        }
    }

    /// Whether anything was refused or given up.
    pub fn any(&self) -> bool {
        *self != DdsDiscoveryRefusals::default()
    }
}

#[cfg(test)]
mod tests {
    use rustdds::horus_discovery_limits as limits;

    /// The numbers the documentation above gives are the vendored crate's.
    #[test]
    fn the_documented_limits_are_rustdds_limits() {
        assert_eq!(limits::MAX_PARTICIPANTS, 1024);
        assert_eq!(limits::SILENCE_BEFORE_EVICTION.as_secs(), 30);
        assert_eq!(limits::UNCONFIRMED_SILENCE_BEFORE_EVICTION.as_secs(), 5);
        assert_eq!(limits::MIN_EVICTION_INTERVAL.as_millis(), 100);
        assert_eq!(limits::MAX_LEASE_DURATION.as_secs(), 300);
        assert_eq!(limits::MAX_ENDPOINTS_PER_PARTICIPANT, 4096);
        assert_eq!(limits::MAX_REMOTE_ENDPOINTS, 16384);
        assert_eq!(limits::ORPHAN_ENDPOINT_LIFETIME.as_secs(), 60);
        assert_eq!(limits::MAX_TOPIC_RECORDS, 32768);
        assert_eq!(limits::MAX_USER_DATA, 4096);
    }
}
