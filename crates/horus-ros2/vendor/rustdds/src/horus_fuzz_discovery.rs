//! HORUS PATCH (HORUS-PATCH.md): an entry point for horus's fuzz target `dds_discovery`
//! (fuzz/fuzz_targets/dds_discovery.rs), compiled only with the feature `horus-fuzz`. It
//! runs a discovery DATA's serialized payload (encapsulation header first, as a DATA
//! carries it) through what the built-in discovery readers do with it: the header through
//! `SerializedPayload::from_bytes`, then the parameter list (PL_CDR_LE or PL_CDR_BE, as the
//! header says) through every discovery decoder: SPDP participant data, SEDP
//! `DiscoveredWriterData`, `DiscoveredReaderData` and `DiscoveredTopicData`, and the keys of
//! a dispose (`Participant_GUID`, `Endpoint_GUID`). What decodes is then offered to a
//! `DiscoveryDB` (`update_participant`, `update_publication`, `update_subscription`,
//! `update_topic_data`, `participant_cleanup`), whose bounds
//! (`crate::horus_discovery_limits`) must hold.

use bytes::Bytes;

use crate::{
  dds::statusevents::sync_status_channel,
  discovery::{
    discovery_db::{DiscoveredVia, DiscoveryDB},
    sedp_messages::{
      DiscoveredReaderData, DiscoveredTopicData, DiscoveredWriterData, Endpoint_GUID,
    },
    spdp_participant_data::{Participant_GUID, SpdpDiscoveredParticipantData},
  },
  messages::submessages::elements::serialized_payload::SerializedPayload,
  serialization::pl_cdr_adapters::PlCdrDeserialize,
  structure::guid::GUID,
  RepresentationIdentifier,
};

/// What [`decode_discovery_payload`] made of a payload.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Decoded {
  /// Whether the encapsulation header was read and named a parameter list encoding.
  pub parameter_list: bool,
  /// Decoded as SPDP participant data.
  pub participant: bool,
  /// Decoded as an SEDP writer.
  pub writer: bool,
  /// Decoded as an SEDP reader.
  pub reader: bool,
  /// Decoded as SEDP topic data.
  pub topic: bool,
  /// Decoded as a dispose's participant or endpoint key.
  pub key: bool,
  /// The participants, remote endpoints and topic records the database kept afterwards.
  pub participants: usize,
  /// See `participants`.
  pub endpoints: usize,
  /// See `participants`.
  pub topic_records: usize,
}

/// Decodes `bytes` as every kind of discovery data and offers what decodes to a fresh
/// discovery database.
pub fn decode_discovery_payload(bytes: &[u8]) -> Decoded {
  let mut d = Decoded::default();
  let Ok(payload) = SerializedPayload::from_bytes(&Bytes::copy_from_slice(bytes)) else {
    return d;
  };
  let encoding = payload.representation_identifier;
  if encoding != RepresentationIdentifier::PL_CDR_LE
    && encoding != RepresentationIdentifier::PL_CDR_BE
  {
    return d;
  }
  d.parameter_list = true;
  let value = &payload.value[..];
  let participant = SpdpDiscoveredParticipantData::from_pl_cdr_bytes(value, encoding).ok();
  let writer = DiscoveredWriterData::from_pl_cdr_bytes(value, encoding).ok();
  let reader = DiscoveredReaderData::from_pl_cdr_bytes(value, encoding).ok();
  let topic = DiscoveredTopicData::from_pl_cdr_bytes(value, encoding).ok();
  d.key = Participant_GUID::from_pl_cdr_bytes(value, encoding).is_ok()
    | Endpoint_GUID::from_pl_cdr_bytes(value, encoding).is_ok();
  d.participant = participant.is_some();
  d.writer = writer.is_some();
  d.reader = reader.is_some();
  d.topic = topic.is_some();

  let (topic_sender, _topic_receiver) = std::sync::mpsc::sync_channel::<()>(4);
  let Ok((status_sender, _status_receiver)) = sync_status_channel(16) else {
    return d;
  };
  let mut db = DiscoveryDB::new(GUID::new_participant_guid(), topic_sender, status_sender);
  if let Some(p) = &participant {
    db.update_participant(p);
  }
  if let Some(w) = &writer {
    db.update_publication(w);
  }
  if let Some(r) = &reader {
    db.update_subscription(r);
  }
  if let Some(t) = &topic {
    db.update_topic_data(t, GUID::new_participant_guid(), DiscoveredVia::Topic);
  }
  db.participant_cleanup();
  (d.participants, d.endpoints, d.topic_records) = db.horus_sizes();
  d
}
