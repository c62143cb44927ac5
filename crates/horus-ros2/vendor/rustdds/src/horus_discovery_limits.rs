//! HORUS PATCH (crates/horus-ros2/vendor/rustdds/HORUS-PATCH.md): bounds on what other
//! participants' discovery announcements can make the discovery database keep, and counters
//! of what it refused.
//!
//! RustDDS 0.15.1 kept every participant an SPDP announcement named, for as long as the
//! lease it announced (up to 68 years), with proxies and send routes for each, and every
//! reader and writer an SEDP announcement named, whether its participant was known or not,
//! forever when it was not, plus a topic record per announcing endpoint: a peer sending
//! announcements under ever-new GUIDs grew the participant's memory and its periodic work
//! without end. Now `DiscoveryDB` keeps:
//!
//! - at most [`MAX_PARTICIPANTS`] participants (its own included). While full, a new one takes
//!   the place of the participant heard once only (its announcement never came again) and
//!   silent the longest, if that one has been silent for at least
//!   [`UNCONFIRMED_SILENCE_BEFORE_EVICTION`], else of the participant silent the longest if
//!   that one has been silent for at least [`SILENCE_BEFORE_EVICTION`] (counted
//!   `participants_evicted`; it is lost as on a lease timeout and rediscovered at its next
//!   announcement), at most one every [`MIN_EVICTION_INTERVAL`], else it is refused
//!   (counted `participants_refused`): a flood of
//!   one-shot announcements keeps out a participant that announces itself for
//!   [`UNCONFIRMED_SILENCE_BEFORE_EVICTION`] at most once it stops (half a minute if it
//!   announced each fake participant twice), and no flood evicts a live participant that
//!   announced itself twice, which announces itself more often;
//! - a participant's lease as announced, but at most [`MAX_LEASE_DURATION`] (counted
//!   `leases_clamped` when a participant is admitted with a longer one);
//! - at most [`MAX_ENDPOINTS_PER_PARTICIPANT`] remote readers and writers of one GUID
//!   prefix and [`MAX_REMOTE_ENDPOINTS`] in all (a new one past either is refused, counted
//!   `endpoints_refused`; an update of a known one never is);
//! - the endpoints of a GUID prefix no participant announced for
//!   [`ORPHAN_ENDPOINT_LIFETIME`] since the first of them came: forgotten then, as a
//!   participant's are on its lease's expiry (counted `endpoints_forgotten`);
//! - at most [`MAX_REMOTE_ENDPOINTS`] endpoints of lost participants kept for their
//!   rediscovery (upstream's "attic"): the endpoints of a participant lost while it is full
//!   are forgotten (counted `endpoints_forgotten`);
//! - at most [`MAX_TOPIC_RECORDS`] topic records (one per topic and announcing endpoint or
//!   topic writer): a new one past it is not recorded (counted `topics_refused`); matching
//!   readers and writers does not use them.
//!
//! - (item 16) a remote participant's or endpoint's USER_DATA only up to
//!   [`MAX_USER_DATA`] octets: a longer one is ignored (kept empty; counted
//!   `user_data_too_long`), and a malformed PID_USER_DATA (shorter than its CDR length
//!   says, or without one) is kept empty too and counted `user_data_malformed`.
//!
//! The counters are process-wide (every participant of the process together); a
//! rate-limited `warn!` (at the 1st, 2nd, 4th, 8th, … of each kind) says what was refused.

use std::{
  sync::atomic::{AtomicU64, Ordering},
  time::Duration,
};

#[allow(unused_imports)]
use log::warn;

/// The most participants one participant's discovery database knows, its own included: a
/// robot has dozens of ROS 2 processes (before ROS 2 Iron one participant per node, since
/// then one per process), a fleet on one domain a few hundred.
pub const MAX_PARTICIPANTS: usize = 1024;

/// The longest participant lease honoured: 300 s, the longest default of the DDS
/// implementations ROS 2 meets (Fast DDS 20 s, Cyclone DDS 10 s, RustDDS 60 s, RTI Connext
/// 100 s, OpenDDS 300 s). A participant silent for longer is lost as on its lease's expiry,
/// and found again at its next announcement.
pub const MAX_LEASE_DURATION: Duration = Duration::from_secs(300);

/// How long a participant must have been silent before a new one may take its place when
/// [`MAX_PARTICIPANTS`] are known: no shorter than any implementation's default announcement
/// period (Fast DDS 3 s, Cyclone DDS and RustDDS 10 s, RTI Connext and OpenDDS 30 s), so a
/// live participant is not given up for a newcomer (and if it were, its next announcement
/// would find it again, its endpoints restored), and short enough that a flood keeps out a
/// newcomer for half a minute at most once it stops.
pub const SILENCE_BEFORE_EVICTION: Duration = Duration::from_secs(30);

/// How long a participant heard once only (its SPDP announcement never came again) must have
/// been silent before a new one may take its place when [`MAX_PARTICIPANTS`] are known.
/// Every implementation announces a new participant more than once within a second or two:
/// Fast DDS 5 times 100 ms apart, RTI Connext 5 times 1 s apart, and Cyclone DDS, OpenDDS
/// and RustDDS answer a participant they discover (this one, which announces itself to
/// every newcomer it admits) with their announcement; a fake participant of a flood is
/// heard once. Were a live participant given up, its next announcement would find it
/// again.
pub const UNCONFIRMED_SILENCE_BEFORE_EVICTION: Duration = Duration::from_secs(5);

/// The shortest time between two participants given up for newcomers while
/// [`MAX_PARTICIPANTS`] are known: at most 10 a second. Admitting a participant costs
/// proxies for its builtin endpoints and an announcement of this one to every known
/// participant's locators (about 2 ms of CPU per admission in a debug build with every
/// place taken); a flood of one-shot participants would otherwise have every announcement
/// admitted as soon as the places it took before are silent long enough.
pub const MIN_EVICTION_INTERVAL: Duration = Duration::from_millis(100);

/// The most remote readers and writers of one GUID prefix (one participant): a ROS 2 node
/// has about 15 for its parameter services, `rosout` and `parameter_events`, plus its
/// topics', services' and actions'; a process with 100 composed nodes of 20 each needs 2000.
pub const MAX_ENDPOINTS_PER_PARTICIPANT: usize = 4096;

/// The most remote readers and writers known, every participant's together; as many again
/// may wait for their lost participant's rediscovery.
pub const MAX_REMOTE_ENDPOINTS: usize = 16384;

/// How long the endpoints of a GUID prefix no participant announced are kept: RustDDS's
/// default participant lease (an SEDP announcement may arrive before its participant's).
pub const ORPHAN_ENDPOINT_LIFETIME: Duration = Duration::from_secs(60);

/// The most topic records (one per topic and announcing endpoint or topic writer).
pub const MAX_TOPIC_RECORDS: usize = 2 * MAX_REMOTE_ENDPOINTS;

/// The longest remote USER_DATA (a participant's or a reader's or writer's, in octets) kept:
/// 4 KiB. ROS 2 puts `enclave=<enclave>;` in a participant's (rmw_dds_common; an enclave
/// is a short path) and `typehash=RIHS01_<64 hex>;` in an endpoint's, under 300 octets
/// both. Unbounded, a peer could make discovery keep up to a datagram (64 KiB) per
/// participant (× [`MAX_PARTICIPANTS`]) and per endpoint (× [`MAX_REMOTE_ENDPOINTS`]).
pub const MAX_USER_DATA: usize = 4096;

// Relaxed everywhere below: each counter is a value on its own, read for reporting;
// nothing else is published through them.
static PARTICIPANTS_REFUSED: AtomicU64 = AtomicU64::new(0);
static PARTICIPANTS_EVICTED: AtomicU64 = AtomicU64::new(0);
static LEASES_CLAMPED: AtomicU64 = AtomicU64::new(0);
static ENDPOINTS_REFUSED: AtomicU64 = AtomicU64::new(0);
static ENDPOINTS_FORGOTTEN: AtomicU64 = AtomicU64::new(0);
static TOPICS_REFUSED: AtomicU64 = AtomicU64::new(0);
static USER_DATA_TOO_LONG: AtomicU64 = AtomicU64::new(0);
static USER_DATA_MALFORMED: AtomicU64 = AtomicU64::new(0);

/// What discovery refused or gave up since the process started (all participants).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Refusals {
  /// SPDP announcements of a new participant refused: [`MAX_PARTICIPANTS`] known, none
  /// silent for [`SILENCE_BEFORE_EVICTION`] (or heard once and silent for
  /// [`UNCONFIRMED_SILENCE_BEFORE_EVICTION`]), or one given up less than
  /// [`MIN_EVICTION_INTERVAL`] before.
  pub participants_refused: u64,
  /// Participants given up, silent for [`SILENCE_BEFORE_EVICTION`] (or heard once and
  /// silent for [`UNCONFIRMED_SILENCE_BEFORE_EVICTION`]), for a new one while
  /// [`MAX_PARTICIPANTS`] were known.
  pub participants_evicted: u64,
  /// Participants admitted with a lease longer than [`MAX_LEASE_DURATION`] (kept for that).
  pub leases_clamped: u64,
  /// SEDP announcements of a new reader or writer refused: its participant had
  /// [`MAX_ENDPOINTS_PER_PARTICIPANT`], or [`MAX_REMOTE_ENDPOINTS`] were known.
  pub endpoints_refused: u64,
  /// Remote readers and writers forgotten: of a GUID prefix no participant announced within
  /// [`ORPHAN_ENDPOINT_LIFETIME`], or of a participant lost while [`MAX_REMOTE_ENDPOINTS`]
  /// lost ones were kept for rediscovery.
  pub endpoints_forgotten: u64,
  /// Topic records not kept: [`MAX_TOPIC_RECORDS`] were.
  pub topics_refused: u64,
  /// SPDP or SEDP announcements whose USER_DATA was longer than [`MAX_USER_DATA`]
  /// (ignored: kept empty). Counted at each announcement.
  pub user_data_too_long: u64,
  /// SPDP or SEDP announcements whose PID_USER_DATA was malformed (shorter than its CDR
  /// length says, or without one; kept empty). Counted at each announcement.
  pub user_data_malformed: u64,
}

/// The refusals so far.
pub fn refusals() -> Refusals {
  Refusals {
    participants_refused: PARTICIPANTS_REFUSED.load(Ordering::Relaxed),
    participants_evicted: PARTICIPANTS_EVICTED.load(Ordering::Relaxed),
    leases_clamped: LEASES_CLAMPED.load(Ordering::Relaxed),
    endpoints_refused: ENDPOINTS_REFUSED.load(Ordering::Relaxed),
    endpoints_forgotten: ENDPOINTS_FORGOTTEN.load(Ordering::Relaxed),
    topics_refused: TOPICS_REFUSED.load(Ordering::Relaxed),
    user_data_too_long: USER_DATA_TOO_LONG.load(Ordering::Relaxed),
    user_data_malformed: USER_DATA_MALFORMED.load(Ordering::Relaxed),
  }
}

/// HORUS PATCH (item 16): the USER_DATA octets kept of a remote announcement's
/// PID_USER_DATA parameter `value` (a CDR `sequence<octet>` in `ctx`'s byte order): its
/// octets when well-formed and at most [`MAX_USER_DATA`]; else none, counted
/// `user_data_too_long` or `user_data_malformed`. `what` says whose (for the log).
pub(crate) fn remote_user_data(
  value: &[u8],
  ctx: speedy::Endianness,
  what: impl FnOnce() -> String,
) -> Vec<u8> {
  match crate::dds::qos::policy::UserData::try_octets_of_parameter_value(value, ctx) {
    Some(octets) if octets.len() <= MAX_USER_DATA => octets.to_vec(),
    Some(octets) => {
      let n = octets.len();
      count(Refusal::UserDataTooLong, 1, || {
        format!("{}: USER_DATA of {n} octets ignored (over {MAX_USER_DATA})", what())
      });
      Vec::new()
    }
    None => {
      let n = value.len();
      count(Refusal::UserDataMalformed, 1, || {
        format!("{}: malformed PID_USER_DATA of {n} bytes ignored", what())
      });
      Vec::new()
    }
  }
}

/// What discovery refused or gave up.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Refusal {
  ParticipantRefused,
  ParticipantEvicted,
  LeaseClamped,
  EndpointRefused,
  EndpointForgotten,
  TopicRefused,
  UserDataTooLong,
  UserDataMalformed,
}

/// Counts `n` of `refusal`; logs when the count passes a power of two.
pub(crate) fn count(refusal: Refusal, n: u64, what: impl FnOnce() -> String) {
  if n == 0 {
    return;
  }
  let counter = match refusal {
    Refusal::ParticipantRefused => &PARTICIPANTS_REFUSED,
    Refusal::ParticipantEvicted => &PARTICIPANTS_EVICTED,
    Refusal::LeaseClamped => &LEASES_CLAMPED,
    Refusal::EndpointRefused => &ENDPOINTS_REFUSED,
    Refusal::EndpointForgotten => &ENDPOINTS_FORGOTTEN,
    Refusal::TopicRefused => &TOPICS_REFUSED,
    Refusal::UserDataTooLong => &USER_DATA_TOO_LONG,
    Refusal::UserDataMalformed => &USER_DATA_MALFORMED,
  };
  let before = counter.fetch_add(n, Ordering::Relaxed);
  let after = before + n;
  // A power of two in (before, after]: the highest bit of `after` is above `before`'s.
  if after.is_power_of_two() || (after.ilog2() > before.max(1).ilog2()) {
    warn!("discovery: {refusal:?} ({after} so far): {}", what());
  }
}
