//! This bridge's DDS participant: one RustDDS `DomainParticipant` with one publisher and
//! one subscriber, and what it has discovered of the other participants' endpoints.

use rustdds::dds::CreateResult;
use rustdds::no_key::{DataReader, DataWriter};
use rustdds::{
    DomainParticipant, DomainParticipantBuilder, Publisher, QosPolicies, QosPolicyBuilder,
    RTPSEntity, Subscriber, Topic, TopicKind,
};

use crate::config::BridgeConfig;
use crate::discovery::{RemoteEndpoint, RemoteEndpoints};
use crate::raw::{PassThrough, WireCdr};

/// Why the DDS participant could not start.
#[derive(Debug, thiserror::Error)]
pub enum DdsStartError {
    /// RustDDS refused (sockets could not be bound, …).
    #[error("DDS participant for domain {domain}: {reason}")]
    Participant {
        /// The ROS 2 domain.
        domain: u16,
        /// RustDDS's reason.
        reason: String,
    },
}

/// The USER_DATA rmw gives an endpoint of a type with RIHS01 hash `type_hash`
/// (rmw_dds_common's `encode_type_hash_for_user_data_qos`: `typehash=RIHS01_<64 hex>;`, no
/// NUL), from which ROS 2 (Iron and later) reads the endpoint's type hash; `None` when
/// `type_hash` is not a RIHS01 hash (then, as rmw with an unset hash, nothing is announced).
pub(crate) fn type_hash_user_data(type_hash: &str) -> Option<Vec<u8>> {
    let hex = type_hash.strip_prefix("RIHS01_")?;
    (hex.len() == 64 && hex.bytes().all(|b| b.is_ascii_hexdigit()))
        .then(|| format!("typehash=RIHS01_{};", hex.to_ascii_lowercase()).into_bytes())
}

/// `qos` with the USER_DATA announcing `type_hash` (unchanged when it is not a RIHS01 hash).
fn with_type_hash(qos: QosPolicies, type_hash: &str) -> QosPolicies {
    match type_hash_user_data(type_hash) {
        Some(user_data) => qos.with_user_data(user_data),
        None => qos,
    }
}

/// The bridge's DDS participant.
///
/// The participant is declared last so that it drops after its publisher and subscriber.
pub struct Dds {
    publisher: Publisher,
    subscriber: Subscriber,
    participant: DomainParticipant,
}

impl Dds {
    /// Joins the domain of `config`.
    pub fn start(config: &BridgeConfig) -> Result<Dds, DdsStartError> {
        let err = |e: &dyn std::fmt::Debug| DdsStartError::Participant {
            domain: config.domain_id,
            reason: format!("{e:?}"),
        };
        let mut b = DomainParticipantBuilder::new(config.domain_id)
            .same_host_loopback(true)
            // As every ROS 2 participant (rmw_dds_common): ROS 2 lists the bridge's node in
            // this enclave.
            .user_data(config.enclave.participant_user_data());
        if config.localhost_only {
            b = b.with_only_networks([std::net::Ipv4Addr::LOCALHOST]);
        }
        crate::fragment_refusals::allow_samples_up_to(config.max_message_bytes);
        crate::fragment_refusals::hold_in_reassembly_at_most(config.max_reassembly_bytes);
        rustdds::horus_ack_window::set_held_bytes_per_reader(
            config
                .max_held_bytes_per_reader
                .map_or(0, std::num::NonZeroUsize::get),
        );
        let participant = b.build().map_err(|e| err(&e))?;
        let qos = QosPolicyBuilder::new().build();
        let publisher = participant.create_publisher(&qos).map_err(|e| err(&e))?;
        let subscriber = participant.create_subscriber(&qos).map_err(|e| err(&e))?;
        Ok(Dds {
            participant,
            publisher,
            subscriber,
        })
    }

    /// The RustDDS participant.
    pub fn participant(&self) -> &DomainParticipant {
        &self.participant
    }

    /// The publisher every bridge writer belongs to.
    pub fn publisher(&self) -> &Publisher {
        &self.publisher
    }

    /// The subscriber every bridge reader belongs to.
    pub fn subscriber(&self) -> &Subscriber {
        &self.subscriber
    }

    /// A reader of raw CDR samples on DDS topic `topic` of DDS type `ty` (no key), with
    /// `qos` for the topic and the reader; it announces `type_hash` as rmw does
    /// ([`type_hash_user_data`]).
    pub(crate) fn raw_reader(
        &self,
        topic: &str,
        ty: &str,
        type_hash: &str,
        qos: QosPolicies,
    ) -> CreateResult<DataReader<WireCdr, PassThrough>> {
        let t = self.no_key_topic(topic, ty, &qos)?;
        let qos = with_type_hash(qos, type_hash);
        self.subscriber
            .create_datareader_no_key::<WireCdr, PassThrough>(&t, Some(qos))
    }

    /// A writer of raw CDR samples on DDS topic `topic` of DDS type `ty` (no key), with
    /// `qos` for the topic and the writer; it announces `type_hash` as rmw does
    /// ([`type_hash_user_data`]).
    pub(crate) fn raw_writer(
        &self,
        topic: &str,
        ty: &str,
        type_hash: &str,
        qos: QosPolicies,
    ) -> CreateResult<DataWriter<WireCdr, PassThrough>> {
        let t = self.no_key_topic(topic, ty, &qos)?;
        let qos = with_type_hash(qos, type_hash);
        self.publisher
            .create_datawriter_no_key::<WireCdr, PassThrough>(&t, Some(qos))
    }

    /// DDS topic `topic` of DDS type `ty`, without key, with `qos`: what a raw reader or
    /// writer is made on.
    fn no_key_topic(&self, topic: &str, ty: &str, qos: &QosPolicies) -> CreateResult<Topic> {
        self.participant
            .create_topic(topic.to_owned(), ty.to_owned(), qos, TopicKind::NoKey)
    }

    /// The endpoints other participants announce (ours left out).
    pub fn remote_endpoints(&self) -> RemoteEndpoints {
        let me = self.participant.guid().prefix;
        let readers = self
            .participant
            .discovered_readers()
            .into_iter()
            .filter(|r| r.reader_proxy.remote_reader_guid.prefix != me)
            .map(|r| RemoteEndpoint::of_reader(&r))
            .collect();
        let writers = self
            .participant
            .discovered_writers()
            .into_iter()
            .filter(|w| w.writer_proxy.remote_writer_guid.prefix != me)
            .map(|w| RemoteEndpoint::of_writer(&w))
            .collect();
        RemoteEndpoints { readers, writers }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::discovery::type_hash_of_user_data;

    #[test]
    fn a_rihs01_hash_is_announced_as_rmw_encodes_it() {
        let hex = "0123456789abcdef".repeat(4);
        let want = format!("typehash=RIHS01_{hex};").into_bytes();
        assert_eq!(
            type_hash_user_data(&format!("RIHS01_{hex}")),
            Some(want.clone())
        );
        // rosidl prints lowercase hex; a hash given in uppercase is announced so too.
        let upper = format!("RIHS01_{}", hex.to_ascii_uppercase());
        assert_eq!(type_hash_user_data(&upper), Some(want));
        assert_eq!(
            type_hash_of_user_data(&type_hash_user_data(&upper).unwrap()),
            Some(format!("RIHS01_{hex}"))
        );
    }

    #[test]
    fn what_is_not_a_rihs01_hash_is_not_announced() {
        for bad in [
            "",
            "RIHS01_",
            "RIHS01_abc",
            "RIHS02_0123",
            "x;typehash=RIHS01_",
        ] {
            assert_eq!(type_hash_user_data(bad), None, "{bad}");
        }
        let semi = format!("RIHS01_{};x", "a".repeat(64));
        assert_eq!(type_hash_user_data(&semi), None);
    }
}
