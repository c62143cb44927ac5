//! This bridge's DDS participant: one RustDDS `DomainParticipant` with one publisher and
//! one subscriber, and what it has discovered of the other participants' endpoints.

use rustdds::dds::CreateResult;
use rustdds::no_key::{DataReader, DataWriter};
use rustdds::{
    DomainParticipant, DomainParticipantBuilder, Publisher, QosPolicies, QosPolicyBuilder,
    RTPSEntity, Subscriber, TopicKind,
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
        let mut b = DomainParticipantBuilder::new(config.domain_id).same_host_loopback(true);
        if config.localhost_only {
            b = b.with_only_networks([std::net::Ipv4Addr::LOCALHOST]);
        }
        crate::fragment_refusals::allow_samples_up_to(config.max_message_bytes);
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
    /// `qos` for the topic and the reader.
    pub(crate) fn raw_reader(
        &self,
        topic: &str,
        ty: &str,
        qos: QosPolicies,
    ) -> CreateResult<DataReader<WireCdr, PassThrough>> {
        let t = self.participant.create_topic(
            topic.to_owned(),
            ty.to_owned(),
            &qos,
            TopicKind::NoKey,
        )?;
        self.subscriber
            .create_datareader_no_key::<WireCdr, PassThrough>(&t, Some(qos))
    }

    /// A writer of raw CDR samples on DDS topic `topic` of DDS type `ty` (no key), with
    /// `qos` for the topic and the writer.
    pub(crate) fn raw_writer(
        &self,
        topic: &str,
        ty: &str,
        qos: QosPolicies,
    ) -> CreateResult<DataWriter<WireCdr, PassThrough>> {
        let t = self.participant.create_topic(
            topic.to_owned(),
            ty.to_owned(),
            &qos,
            TopicKind::NoKey,
        )?;
        self.publisher
            .create_datawriter_no_key::<WireCdr, PassThrough>(&t, Some(qos))
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
