//! HORUS PATCH (HORUS-PATCH.md): tests of `DiscoveryDB`'s bounds
//! (`crate::horus_discovery_limits`). The counters are process-wide and other tests run in
//! parallel, so the tests check that each counter grew by at least what they caused, and
//! the database's own sizes exactly.

use std::time::{Duration as StdDuration, Instant};

use super::*;
use crate::{
  dds::statusevents::sync_status_channel,
  horus_discovery_limits::{self as limits, refusals},
  structure::guid::EntityKind,
  test::test_data::{
    publication_builtin_topic_data, reader_proxy_data, spdp_participant_data,
    subscription_builtin_topic_data, writer_proxy_data,
  },
};

fn db() -> DiscoveryDB {
  let (topic_sender, _) = std::sync::mpsc::sync_channel::<()>(4);
  let (status_sender, _) = sync_status_channel(16).unwrap();
  DiscoveryDB::new(GUID::new_participant_guid(), topic_sender, status_sender)
}

/// The GUID prefix of test participant number `n`.
fn prefix(n: u32) -> GuidPrefix {
  let mut p = [0xf1, 0x00, 0xd5, 0xa5, 0, 0, 0, 0, 0, 0, 0, 0];
  p[8..].copy_from_slice(&n.to_be_bytes());
  GuidPrefix::new(&p)
}

/// An SPDP announcement of participant `n` with a lease of `lease_s` seconds.
fn participant(n: u32, lease_s: u64) -> SpdpDiscoveredParticipantData {
  let mut d = spdp_participant_data().unwrap();
  d.participant_guid = GUID::new(prefix(n), EntityId::PARTICIPANT);
  d.lease_duration = Some(Duration::from_std(StdDuration::from_secs(lease_s)));
  d
}

/// An SEDP announcement of writer number `n` of GUID prefix `p`, on topic `t{n}`.
fn writer(p: GuidPrefix, n: u32) -> DiscoveredWriterData {
  let guid = GUID::new(
    p,
    EntityId::new(
      [(n >> 16) as u8, (n >> 8) as u8, n as u8],
      EntityKind::WRITER_NO_KEY_USER_DEFINED,
    ),
  );
  let mut writer_proxy = writer_proxy_data().unwrap();
  writer_proxy.remote_writer_guid = guid;
  let mut publication_topic_data = publication_builtin_topic_data().unwrap();
  publication_topic_data.key = guid;
  publication_topic_data.topic_name = format!("t{n}");
  DiscoveredWriterData {
    last_updated: Instant::now(),
    writer_proxy,
    publication_topic_data,
    user_data: Vec::new(),
  }
}

/// An SEDP announcement of reader number `n` of GUID prefix `p`.
fn reader(p: GuidPrefix, n: u32) -> DiscoveredReaderData {
  let guid = GUID::new(
    p,
    EntityId::new(
      [(n >> 16) as u8, (n >> 8) as u8, n as u8],
      EntityKind::READER_NO_KEY_USER_DEFINED,
    ),
  );
  let mut reader_proxy = reader_proxy_data().unwrap();
  reader_proxy.remote_reader_guid = guid;
  // DiscoveryDB keys readers by reader_proxy's GUID.
  DiscoveredReaderData {
    reader_proxy,
    subscription_topic_data: subscription_builtin_topic_data().unwrap(),
    content_filter: None,
    user_data: Vec::new(),
  }
}

/// Makes participant `p` look silent for `silence`.
fn silent_for(db: &mut DiscoveryDB, p: GuidPrefix, silence: StdDuration) {
  db.participant_last_life_signs
    .insert(p, Instant::now().checked_sub(silence).unwrap());
  // Silence only grows in a real run: the search's bound no longer holds.
  db.no_eviction_before = None;
}

/// Makes the last eviction of `db` look long past.
fn eviction_interval_passed(db: &mut DiscoveryDB) {
  db.last_eviction = db
    .last_eviction
    .map(|t| t.checked_sub(limits::MIN_EVICTION_INTERVAL).unwrap());
}

#[test]
fn a_flood_of_new_participants_stops_at_the_cap_and_is_counted() {
  let before = refusals();
  let mut db = db();
  let extra = 10;
  for n in 0..(limits::MAX_PARTICIPANTS as u32 + extra) {
    db.update_participant(&participant(n, i32::MAX as u64));
  }
  assert_eq!(db.participant_proxies.len(), limits::MAX_PARTICIPANTS);
  assert_eq!(
    db.participant_last_life_signs.len(),
    limits::MAX_PARTICIPANTS
  );
  let after = refusals();
  assert!(after.participants_refused >= before.participants_refused + u64::from(extra));
  assert!(after.leases_clamped >= before.leases_clamped + limits::MAX_PARTICIPANTS as u64);
  // A known participant's announcement is still taken while full.
  assert!(matches!(
    db.update_participant(&participant(0, 20)),
    ParticipantUpdate::Known
  ));
}

#[test]
fn a_silent_participant_gives_its_place_to_a_new_one_when_full() {
  let before = refusals();
  let mut db = db();
  // Each heard twice (item 11: one heard once gives its place up sooner).
  for n in (0..limits::MAX_PARTICIPANTS as u32).chain(0..limits::MAX_PARTICIPANTS as u32) {
    db.update_participant(&participant(n, 20));
  }
  // Its endpoints wait in the attic for its rediscovery.
  db.update_publication(&writer(prefix(5), 1)).unwrap();
  silent_for(
    &mut db,
    prefix(5),
    limits::SILENCE_BEFORE_EVICTION - StdDuration::from_secs(1),
  );
  assert!(matches!(
    db.update_participant(&participant(100_000, 20)),
    ParticipantUpdate::Refused
  ));
  silent_for(&mut db, prefix(5), limits::SILENCE_BEFORE_EVICTION);
  match db.update_participant(&participant(100_001, 20)) {
    ParticipantUpdate::New {
      evicted: Some((p, _)),
    } => assert_eq!(p, prefix(5)),
    other => panic!("{other:?}"),
  }
  assert_eq!(db.participant_proxies.len(), limits::MAX_PARTICIPANTS);
  assert!(db.find_participant_proxy(prefix(5)).is_none());
  assert!(db.find_participant_proxy(prefix(100_001)).is_some());
  assert_eq!(db.external_topic_writers_attic.len(), 1);
  let after = refusals();
  assert!(after.participants_evicted > before.participants_evicted);
  assert!(after.participants_refused > before.participants_refused);
}

/// HORUS PATCH item 11: a participant of a flood is heard once; while every place is
/// taken, one heard once gives its place to a newcomer after
/// `UNCONFIRMED_SILENCE_BEFORE_EVICTION` (was: only after `SILENCE_BEFORE_EVICTION` like
/// any other, which kept a real node out for half a minute after a flood), the longest
/// silent first; one heard twice does not.
#[test]
fn a_participant_heard_once_gives_its_place_after_a_shorter_silence() {
  let before = refusals();
  let mut db = db();
  let cap = limits::MAX_PARTICIPANTS as u32;
  for n in 0..cap {
    db.update_participant(&participant(n, 20));
  }
  // Participant 7 announces itself again: no longer heard once.
  db.update_participant(&participant(7, 20));
  let short = limits::UNCONFIRMED_SILENCE_BEFORE_EVICTION;
  for n in [5, 6] {
    silent_for(&mut db, prefix(n), short - StdDuration::from_secs(1));
  }
  silent_for(&mut db, prefix(7), 2 * short);
  assert!(matches!(
    db.update_participant(&participant(100_000, 20)),
    ParticipantUpdate::Refused
  ));
  silent_for(&mut db, prefix(5), short);
  silent_for(&mut db, prefix(6), short + StdDuration::from_secs(1));
  for expected in [6, 5] {
    match db.update_participant(&participant(100_001 + expected, 20)) {
      ParticipantUpdate::New {
        evicted: Some((p, _)),
      } => assert_eq!(p, prefix(expected)),
      other => panic!("{other:?}"),
    }
    eviction_interval_passed(&mut db);
  }
  assert!(matches!(
    db.update_participant(&participant(100_010, 20)),
    ParticipantUpdate::Refused
  ));
  assert!(db.find_participant_proxy(prefix(7)).is_some());
  assert_eq!(db.participant_proxies.len(), limits::MAX_PARTICIPANTS);
  assert!(db.participants_heard_once.len() < limits::MAX_PARTICIPANTS);
  // The newcomers are heard once in their turn; the evicted ones are forgotten.
  assert!(db.participants_heard_once.contains(&prefix(100_006)));
  assert!(!db.participants_heard_once.contains(&prefix(5)));
  let after = refusals();
  assert!(after.participants_evicted >= before.participants_evicted + 2);
  assert!(after.participants_refused >= before.participants_refused + 2);
}

/// HORUS PATCH item 11: each admission while full costs proxies and an announcement to
/// every known participant; at most one place is given up per `MIN_EVICTION_INTERVAL`,
/// the other newcomers refused and counted.
#[test]
fn places_are_given_up_at_most_once_per_interval() {
  let before = refusals();
  let mut db = db();
  let cap = limits::MAX_PARTICIPANTS as u32;
  for n in 0..cap {
    db.update_participant(&participant(n, 20));
  }
  for n in 0..4 {
    silent_for(&mut db, prefix(n), limits::SILENCE_BEFORE_EVICTION);
  }
  assert!(matches!(
    db.update_participant(&participant(100_000, 20)),
    ParticipantUpdate::New { evicted: Some(_) }
  ));
  assert!(matches!(
    db.update_participant(&participant(100_001, 20)),
    ParticipantUpdate::Refused
  ));
  eviction_interval_passed(&mut db);
  assert!(matches!(
    db.update_participant(&participant(100_002, 20)),
    ParticipantUpdate::New { evicted: Some(_) }
  ));
  assert_eq!(db.participant_proxies.len(), limits::MAX_PARTICIPANTS);
  let after = refusals();
  assert!(after.participants_evicted >= before.participants_evicted + 2);
  assert!(after.participants_refused > before.participants_refused);
}

#[test]
fn a_lease_of_68_years_is_honoured_for_300_s_at_most() {
  let mut db = db();
  db.update_participant(&participant(1, i32::MAX as u64));
  db.update_participant(&participant(2, 20));
  silent_for(
    &mut db,
    prefix(1),
    limits::MAX_LEASE_DURATION - StdDuration::from_secs(1),
  );
  assert!(db
    .participant_cleanup()
    .iter()
    .all(|(p, _)| *p != prefix(1)));
  silent_for(
    &mut db,
    prefix(1),
    limits::MAX_LEASE_DURATION + StdDuration::from_secs(1),
  );
  let lost = db.participant_cleanup();
  assert!(lost.iter().any(|(p, _)| *p == prefix(1)), "{lost:?}");
  assert!(db.find_participant_proxy(prefix(1)).is_none());
}

#[test]
fn endpoints_past_the_per_participant_cap_are_refused_and_counted() {
  let before = refusals();
  let mut db = db();
  db.update_participant(&participant(1, 20));
  let cap = limits::MAX_ENDPOINTS_PER_PARTICIPANT as u32;
  for n in 0..cap / 2 {
    assert!(db.update_publication(&writer(prefix(1), n)).is_some());
    assert!(db.update_subscription(&reader(prefix(1), n)).is_some());
  }
  assert!(db.update_publication(&writer(prefix(1), cap)).is_none());
  assert!(db.update_subscription(&reader(prefix(1), cap)).is_none());
  // An update of a known endpoint is not refused; another participant's endpoint is not.
  assert!(db.update_publication(&writer(prefix(1), 0)).is_some());
  assert!(db.update_publication(&writer(prefix(2), 0)).is_some());
  assert_eq!(
    db.external_topic_writers.len() + db.external_topic_readers.len(),
    cap as usize + 1
  );
  assert!(refusals().endpoints_refused >= before.endpoints_refused + 2);
}

#[test]
fn endpoints_past_the_total_cap_are_refused() {
  let mut db = db();
  let per = limits::MAX_ENDPOINTS_PER_PARTICIPANT as u32;
  let total = limits::MAX_REMOTE_ENDPOINTS as u32;
  for n in 0..total {
    db.update_participant(&participant(n / per, 20));
    assert!(db
      .update_publication(&writer(prefix(n / per), n % per))
      .is_some());
  }
  db.update_participant(&participant(total, 20));
  assert!(db.update_publication(&writer(prefix(total), 0)).is_none());
  assert_eq!(db.external_topic_writers.len(), total as usize);
}

#[test]
fn endpoints_of_a_prefix_no_participant_announced_are_forgotten_after_their_lifetime() {
  let before = refusals();
  let mut db = db();
  // Endpoints whose participant comes later are its own then, and kept.
  db.update_publication(&writer(prefix(1), 0)).unwrap();
  db.update_participant(&participant(1, 20));
  for n in 0..3 {
    db.update_publication(&writer(prefix(2), n)).unwrap();
  }
  db.update_subscription(&reader(prefix(2), 0)).unwrap();
  assert!(db.participant_cleanup().is_empty());
  let old = Instant::now()
    .checked_sub(limits::ORPHAN_ENDPOINT_LIFETIME + StdDuration::from_secs(1))
    .unwrap();
  for t in db.orphan_prefixes.values_mut() {
    *t = old;
  }
  let lost = db.participant_cleanup();
  assert_eq!(lost.len(), 1, "{lost:?}");
  assert_eq!(lost[0].0, prefix(2));
  assert_eq!(db.external_topic_writers.len(), 1);
  assert!(db.external_topic_readers.is_empty());
  assert!(db.orphan_prefixes.is_empty());
  assert!(refusals().endpoints_forgotten >= before.endpoints_forgotten + 4);
}

#[test]
fn endpoints_of_lost_participants_beyond_the_attic_cap_are_forgotten() {
  let before = refusals();
  let mut db = db();
  let per = limits::MAX_ENDPOINTS_PER_PARTICIPANT as u32;
  let participants = limits::MAX_REMOTE_ENDPOINTS as u32 / per;
  for p in 0..participants {
    db.update_participant(&participant(p, 1));
    for n in 0..per {
      db.update_publication(&writer(prefix(p), n)).unwrap();
    }
  }
  // All of them lost on their leases: the attic takes them all (exactly full).
  for p in 0..participants {
    silent_for(&mut db, prefix(p), StdDuration::from_secs(2));
  }
  assert_eq!(db.participant_cleanup().len(), participants as usize);
  assert_eq!(
    db.external_topic_writers_attic.len(),
    limits::MAX_REMOTE_ENDPOINTS
  );
  // One more lost: its endpoints are forgotten, not kept.
  db.update_participant(&participant(participants, 1));
  db.update_publication(&writer(prefix(participants), 0))
    .unwrap();
  silent_for(&mut db, prefix(participants), StdDuration::from_secs(2));
  assert_eq!(db.participant_cleanup().len(), 1);
  assert_eq!(
    db.external_topic_writers_attic.len(),
    limits::MAX_REMOTE_ENDPOINTS
  );
  assert!(db.external_topic_writers.is_empty());
  assert!(refusals().endpoints_forgotten > before.endpoints_forgotten);
}

#[test]
fn topic_records_past_the_cap_are_not_kept() {
  let before = refusals();
  let mut db = db();
  let updater = GUID::new(prefix(1), EntityId::SEDP_BUILTIN_TOPIC_WRITER);
  let mut dtd = DiscoveredTopicData::new(Utc::now(), crate::test::test_data::topic_data().unwrap());
  for n in 0..limits::MAX_TOPIC_RECORDS + 5 {
    dtd.topic_data.name = format!("t{n}");
    db.update_topic_data(&dtd, updater, DiscoveredVia::Topic);
  }
  assert_eq!(db.topics.len(), limits::MAX_TOPIC_RECORDS);
  assert_eq!(db.topic_records, limits::MAX_TOPIC_RECORDS);
  // The cleanup of topics without endpoints gives their places back.
  db.topic_cleanup();
  assert_eq!(db.topic_records, 0);
  assert!(db.topics.is_empty());
  assert!(refusals().topics_refused >= before.topics_refused + 5);
}
