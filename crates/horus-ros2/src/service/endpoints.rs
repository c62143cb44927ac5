//! The DDS reader and writer of one side of a service, with the QoS rmw gives services
//! (reliable, volatile, keep last), and the request identity rmw_fastrtps correlates
//! replies with.
//!
//! rmw_fastrtps (ROS 2's default middleware) maps a call onto the two topics as the DDS-RPC
//! "enhanced" mapping: the payload is the bare request or reply, and the identity travels
//! in the RTPS inline QoS `related_sample_identity` (PID 0x800f). A client writes its
//! request with related_sample_identity = (its reply reader's GUID, sequence unknown); a
//! server answers with related_sample_identity = (that GUID, the request's DATA sequence
//! number), or (the request writer's GUID, sequence number) when the request carried none.
//! A client takes, from the reply topic every server writes to, only the replies naming its
//! reader (or request writer) and one of its sequence numbers.

use rustdds::no_key::{DataReader, DataWriter};
use rustdds::policy::{Durability, History, Reliability};
use rustdds::rpc::SampleIdentity;
use rustdds::{QosPolicies, QosPolicyBuilder, SampleInfo, SequenceNumber};

use super::error::ServiceOpenError;
use crate::dds::Dds;
use crate::raw::{PassThrough, WireCdr};

/// Requests or replies a reader keeps until the bridge takes them.
const DEPTH: i32 = 64;

/// How long a write may wait for room in the writer's history before it fails (counted).
const MAX_BLOCKING_MS: i64 = 100;

/// rmw's service QoS (`rmw_qos_profile_services_default`: reliable, volatile, keep last).
fn qos() -> QosPolicies {
    QosPolicyBuilder::new()
        .reliability(Reliability::Reliable {
            max_blocking_time: rustdds::Duration::from_millis(MAX_BLOCKING_MS),
        })
        .durability(Durability::Volatile)
        .history(History::KeepLast { depth: DEPTH })
        .build()
}

/// A DDS reader on `topic` of `ty` (RIHS01 hash `hash`).
pub(crate) fn reader(
    dds: &Dds,
    topic: &str,
    (ty, hash): (&str, &str),
) -> Result<DataReader<WireCdr, PassThrough>, ServiceOpenError> {
    dds.raw_reader(topic, ty, hash, qos())
        .map_err(|e| ServiceOpenError::dds(topic, e))
}

/// A DDS writer on `topic` of `ty` (RIHS01 hash `hash`).
pub(crate) fn writer(
    dds: &Dds,
    topic: &str,
    (ty, hash): (&str, &str),
) -> Result<DataWriter<WireCdr, PassThrough>, ServiceOpenError> {
    dds.raw_writer(topic, ty, hash, qos())
        .map_err(|e| ServiceOpenError::dds(topic, e))
}

/// The identity of a request as a server answers it: the related sample identity the
/// client sent (its sequence number filled from the DATA when the client left it unknown),
/// or the request's own identity when it sent none.
pub(crate) fn request_identity(info: &SampleInfo) -> SampleIdentity {
    let own = info.sample_identity();
    match info.related_sample_identity() {
        Some(mut id) => {
            if id.sequence_number == SequenceNumber::UNKNOWN {
                id.sequence_number = own.sequence_number;
            }
            id
        }
        None => own,
    }
}
