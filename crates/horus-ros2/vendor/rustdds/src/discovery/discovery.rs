use std::{
  sync::{Arc, RwLock},
  time::Duration as StdDuration,
};

#[allow(unused_imports)]
use log::{debug, error, info, trace, warn};
use mio1::{Events, Poll, Token};
use pastey::paste; // token pasting macro

use crate::{
  dds::{
    participant::DomainParticipantWeak,
    qos::{
      policy::{
        Deadline, DestinationOrder, Durability, History, Liveliness, Ownership, Presentation,
        PresentationAccessScope, Reliability, ResourceLimits, TimeBasedFilter,
      },
      QosPolicies, QosPolicyBuilder,
    },
    readcondition::ReadCondition,
    result::{CreateError, CreateResult},
    statusevents::{DomainParticipantStatusEvent, LostReason, StatusChannelSender},
  },
  discovery::{
    discovery_db::{
      discovery_db_read, discovery_db_write, DiscoveredVia, DiscoveryDB, ParticipantUpdate,
    },
    sedp_messages::{
      DiscoveredReaderData, DiscoveredTopicData, DiscoveredWriterData, Endpoint_GUID,
      ParticipantMessageData, ParticipantMessageDataKind,
    },
    spdp_participant_data::{Participant_GUID, SpdpDiscoveredParticipantData},
  },
  polling::{
    new_shared_timer, timeout_until, LoopWaker, ReadyReceiver, SharedTimer, WakeReceiver,
    WakeSender,
  },
  rtps::constant::*,
  serialization::{pl_cdr_adapters::*, CDRDeserializerAdapter, CDRSerializerAdapter},
  structure::{
    duration::Duration,
    entity::RTPSEntity,
    guid::{EntityId, GuidPrefix, GUID},
    time::Timestamp,
  },
  with_key::{DataReader, DataWriter, Sample},
  DomainParticipant,
};
// This module implements the control logic of the Discovery process.
//
// The built-in discovery consists of
// Simple Participant Discovery Protocol (SPDP), (RTPS spec v2.5
// Section "8.5.3 The Simple Participant Discovery Protocol") and
// Simple Endpoint Discovery Protocol (SEDP) (RTPS spec v2.5
// Section "8.5.4 The Simple Endpoint Discovery Protocol")
//
// Notes:
//
// SPDP is periodically broadcast from each DomainParticipant to announce presence to others.
// It is essentially stateless and best-effort. It also announces built-in endpoints.
// See module spdp_participant_data for details.
//
// SEDP is Reliable transfer of user-defined endpoints (Readers, Writers and Topics).
// Many DDS implementations do not communicate Topics at all, and seem to work just fine.
//
// "Participant Message" protocol is NOT the same as SPDP. See RTPS spec v2.5 Section
// "8.4.13 Writer Liveliness Protocol". It can be used as liveliness (hearbeat)
// signalling of individual Writers.
//
// "Participant Stateless Message" and "Participant Volatile Message" only appear
// in Secure RTPS. Please see the RTPS Security specification for explanation.
#[cfg(feature = "security")]
use crate::{
  discovery::secure_discovery::SecureDiscovery,
  security::{security_plugins::SecurityPluginsHandle, types::*},
};
#[cfg(not(feature = "security"))]
use crate::no_security::*;

#[derive(Clone, Eq, PartialEq, Ord, PartialOrd, Hash)]
pub enum DiscoveryCommand {
  StopDiscovery,
  AddLocalWriter {
    guid: GUID,
  },
  AddLocalReader {
    guid: GUID,
  },
  AddTopic {
    topic_name: String,
  },
  RemoveLocalWriter {
    guid: GUID,
  },
  RemoveLocalReader {
    guid: GUID,
  },
  ManualAssertLiveliness,
  AssertTopicLiveliness {
    writer_guid: GUID,
    manual_assertion: bool,
  },

  #[cfg(feature = "security")]
  StartKeyExchangeWithRemoteParticipant {
    participant_guid_prefix: GuidPrefix,
  },

  #[cfg(feature = "security")]
  StartKeyExchangeWithRemoteEndpoint {
    local_endpoint_guid: GUID,
    remote_endpoint_guid: GUID,
  },
}

pub struct LivelinessState {
  last_auto_update: Timestamp,
  manual_participant_liveness_refresh_requested: bool,
}

impl LivelinessState {
  pub fn new() -> Self {
    Self {
      last_auto_update: Timestamp::now(),
      manual_participant_liveness_refresh_requested: false,
    }
  }
}

// TODO: Refactor this. Maybe the repeating groups of "topic", "reader",
// "writer", "timer" below could be abstracted to a common struct:

pub(super) type DataReaderPlCdr<D> = DataReader<D, PlCdrDeserializerAdapter<D>>;
pub(super) type DataWriterPlCdr<D> = DataWriter<D, PlCdrSerializerAdapter<D>>;

mod with_key {
  use serde::{de::DeserializeOwned, Serialize};

  use super::{DataReaderPlCdr, DataWriterPlCdr};
  use crate::{serialization::pl_cdr_adapters::*, Key, Keyed, Topic, TopicKind};

  pub const TOPIC_KIND: TopicKind = TopicKind::WithKey;

  pub(super) struct DiscoveryTopicPlCdr<D>
  where
    D: Keyed + PlCdrSerialize + PlCdrDeserialize,
    <D as Keyed>::K: Key + PlCdrSerialize + PlCdrDeserialize,
  {
    #[allow(dead_code)] // The topic may not be accessed after initialization
    pub topic: Topic,
    pub reader: DataReaderPlCdr<D>,
    pub writer: DataWriterPlCdr<D>,
  }

  pub(super) struct DiscoveryTopicCDR<D>
  where
    D: Keyed + Serialize + DeserializeOwned,
    <D as Keyed>::K: Key + Serialize + DeserializeOwned,
  {
    #[allow(dead_code)] // The topic may not be accessed after initialization
    pub topic: Topic,
    pub reader: crate::with_key::DataReaderCdr<D>,
    pub writer: crate::with_key::DataWriterCdr<D>,
  }
}

#[cfg(feature = "security")] // only used with security feature for now, this is to avoid warning
mod no_key {
  use serde::{de::DeserializeOwned, Serialize};

  use crate::{Topic, TopicKind};

  pub const TOPIC_KIND: TopicKind = TopicKind::NoKey;

  pub(super) struct DiscoveryTopicCDR<D>
  where
    D: Serialize + DeserializeOwned,
  {
    #[allow(dead_code)] // The topic may not be accessed after initialization
    pub topic: Topic,
    pub reader: crate::no_key::DataReader<D, crate::CDRDeserializerAdapter<D>>,
    pub writer: crate::no_key::DataWriter<D, crate::CDRSerializerAdapter<D>>,
  }
}

// Payload for the single shared discovery timer. Each variant identifies a
// periodic discovery task; the loop drains the timer and dispatches by variant.
#[derive(Clone, Copy, Debug)]
enum DiscoveryTimerEvent {
  // `reschedule` distinguishes the periodic SPDP announce (true, reschedules
  // itself at SPDP_PUBLISH_PERIOD) from a one-shot quick response to a newly
  // discovered participant (false, does not reschedule).
  SendParticipantInfo {
    reschedule: bool,
  },
  ParticipantCleanup,
  TopicCleanup,
  PublishParticipantMessage,
  #[cfg(feature = "security")]
  CachedSecureMessageResend,
}

// Enum indicating if secure discovery allows normal discovery to process
// something
#[derive(PartialEq)]
pub(crate) enum NormalDiscoveryPermission {
  Allow,
  #[cfg(feature = "security")] // Deny variant is never constructed if security feature is not on
  Deny,
}

pub(crate) struct Discovery {
  poll: Poll,
  domain_participant: DomainParticipantWeak,
  discovery_db: Arc<RwLock<DiscoveryDB>>,

  // Discovery started sender confirms to application thread that we are running
  discovery_started_sender: std::sync::mpsc::Sender<CreateResult<()>>,
  // notification sender goes to dp_event_loop thread
  discovery_updated_sender: WakeSender<DiscoveryNotificationType>,
  // Discovery gets commands from dp_event_loop from this channel
  discovery_command_receiver: WakeReceiver<DiscoveryCommand>,
  spdp_liveness_receiver: WakeReceiver<GuidPrefix>,
  /// Built-in reader sample tokens. One waker, so the token is the reason.
  discovery_samples: ReadyReceiver<Token>,
  waker: LoopWaker,

  liveliness_state: LivelinessState,

  participant_status_sender: StatusChannelSender<DomainParticipantStatusEvent>,

  // DDS Subscriber and Publisher for Discovery
  // ...but these are not actually used after initialization
  // discovery_subscriber: Subscriber,
  // discovery_publisher: Publisher,

  // Handling of "DCPSParticipant" topic. This is the mother of all topics
  // where participants announce their presence and built-in readers and writers.
  // and
  // timer to periodically announce our presence
  dcps_participant: with_key::DiscoveryTopicPlCdr<SpdpDiscoveredParticipantData>,

  // Topic "DCPSSubscription" - announcing and detecting Readers
  dcps_subscription: with_key::DiscoveryTopicPlCdr<DiscoveredReaderData>,

  // Topic "DCPSPublication" - announcing and detecting Writers
  dcps_publication: with_key::DiscoveryTopicPlCdr<DiscoveredWriterData>,

  // Topic "DCPSTopic" - announcing and detecting topics
  dcps_topic: with_key::DiscoveryTopicPlCdr<DiscoveredTopicData>,

  // DCPSParticipantMessage - used by participants to communicate liveness
  dcps_participant_message: with_key::DiscoveryTopicCDR<ParticipantMessageData>,

  // One timer shared by all periodic discovery tasks (replaces the former
  // per-topic timers and the separate participant/topic cleanup and secure
  // resend timers), so discovery uses a single timer background thread.
  discovery_timer: SharedTimer<DiscoveryTimerEvent>,

  // If security is enabled, this field contains a SecureDiscovery struct, an appendix
  // which is used for Secure functionality
  security_opt: Option<SecureDiscovery>,

  // Following topics from DDS Security spec v1.1

  // DCPSParticipantSecure - 7.4.1.6 New DCPSParticipantSecure Builtin Topic
  #[cfg(feature = "security")]
  dcps_participant_secure: with_key::DiscoveryTopicPlCdr<ParticipantBuiltinTopicDataSecure>,

  // DCPSPublicationsSecure - 7.4.1.7 New DCPSPublicationsSecure Builtin Topic
  #[cfg(feature = "security")]
  dcps_publications_secure: with_key::DiscoveryTopicPlCdr<PublicationBuiltinTopicDataSecure>,

  // DCPSSubscriptionsSecure - 7.4.1.8 New DCPSSubscriptionsSecure Builtin Topic
  #[cfg(feature = "security")]
  dcps_subscriptions_secure: with_key::DiscoveryTopicPlCdr<SubscriptionBuiltinTopicDataSecure>,

  // DCPSParticipantMessageSecure - used by participants to communicate secure liveness
  // 7.4.2 New DCPSParticipantMessageSecure builtin Topic
  #[cfg(feature = "security")]
  dcps_participant_message_secure: with_key::DiscoveryTopicCDR<ParticipantMessageData>, /* CDR, not PL_CDR */

  // DCPSParticipantStatelessMessageSecure
  // 7.4.3 New DCPSParticipantStatelessMessage builtin Topic
  #[cfg(feature = "security")]
  dcps_participant_stateless_message: no_key::DiscoveryTopicCDR<ParticipantStatelessMessage>,

  // DCPSParticipantVolatileMessageSecure
  // 7.4.4 New DCPSParticipantVolatileMessageSecure builtin Topic
  #[cfg(feature = "security")]
  dcps_participant_volatile_message_secure:
    no_key::DiscoveryTopicCDR<ParticipantVolatileMessageSecure>, // CDR?

  // Remote participants to which we have already sent an unsolicited "quick" SPDP
  // response while they were still being authenticated. Used to avoid sending a
  // quick response more than once per remote during the (pre-authentication)
  // discovery phase. See `spdp_receive`.
  #[cfg(feature = "security")]
  spdp_quick_response_sent: std::collections::HashSet<GuidPrefix>,
}

impl Discovery {
  const PARTICIPANT_CLEANUP_PERIOD: StdDuration = StdDuration::from_secs(2);
  const TOPIC_CLEANUP_PERIOD: StdDuration = StdDuration::from_secs(60); // timer for cleaning up inactive topics
  const SPDP_PUBLISH_PERIOD: StdDuration = StdDuration::from_secs(10);
  const CHECK_PARTICIPANT_MESSAGES: StdDuration = StdDuration::from_secs(1);
  // HORUS PATCH: how many SPDP samples spdp_receive takes at once.
  const SPDP_TAKE_BATCH: usize = 1024;
  #[cfg(feature = "security")]
  const CACHED_SECURE_DISCOVERY_MESSAGE_RESEND_PERIOD: StdDuration = StdDuration::from_secs(1);

  #[allow(clippy::too_many_arguments)]
  pub fn new(
    domain_participant: DomainParticipantWeak,
    discovery_db: Arc<RwLock<DiscoveryDB>>,
    discovery_started_sender: std::sync::mpsc::Sender<CreateResult<()>>,
    discovery_updated_sender: WakeSender<DiscoveryNotificationType>,
    discovery_command_receiver: WakeReceiver<DiscoveryCommand>,
    spdp_liveness_receiver: WakeReceiver<GuidPrefix>,
    participant_status_sender: StatusChannelSender<DomainParticipantStatusEvent>,
    security_plugins_opt: Option<SecurityPluginsHandle>,
    waker: LoopWaker,
    discovery_samples: ReadyReceiver<Token>,
  ) -> CreateResult<Self> {
    // helper macro to handle initialization failures.
    macro_rules! try_construct {
      ($constructor:expr, $msg:literal) => {
        match $constructor {
          Ok(r) => r,
          Err(e) => {
            error!("{} {:?}", $msg, e);
            discovery_started_sender
              .send(Err(CreateError::OutOfResources {
                reason: $msg.to_string(),
              }))
              .unwrap_or(()); // We are trying to quit. If send fails, just ignore it.
            return Err(CreateError::OutOfResources {
              reason: $msg.to_string(),
            });
          }
        }
      };
    }

    let poll = try_construct!(Poll::new(), "Failed to allocate discovery poll.");
    let discovery_subscriber_qos = Self::builtin_subscriber_qos();
    let discovery_publisher_qos = Self::builtin_publisher_qos();

    // Create DDS Publisher and Subscriber for Discovery.
    // These are needed to create DataWriter and DataReader objects
    let discovery_subscriber = try_construct!(
      domain_participant.create_subscriber(&discovery_subscriber_qos),
      "Unable to create Discovery Subscriber."
    );
    let discovery_publisher = try_construct!(
      domain_participant.create_publisher(&discovery_publisher_qos),
      "Unable to create Discovery Publisher."
    );

    macro_rules! construct_topic_and_poll {
      ( $repr:ident, $has_key:ident,
        $topic_name:expr, $topic_type_name:expr, $message_type:ty,
        $endpoint_qos_opt:expr,
        $reader_qos_opt:expr,
        $stateless_RTPS:expr,
        $reader_entity_id:expr, $reader_token:expr,
        $writer_entity_id:expr,
        $timeout_and_timer_token_opt:expr, ) => {{
        let endpoint_qos_opt_bind = $endpoint_qos_opt;
        let topic_qos_ref = if let Some(qos) = endpoint_qos_opt_bind.as_ref() {
          qos
        } else {
          &discovery_subscriber_qos
        };

        let publisher_qos: QosPolicies = if let Some(qos) = endpoint_qos_opt_bind.as_ref() {
          qos.clone()
        } else {
          discovery_publisher_qos.clone()
        };

        let topic = try_construct!(
          domain_participant.create_topic(
            $topic_name.to_string(),
            $topic_type_name.to_string(),
            topic_qos_ref,
            $has_key::TOPIC_KIND,
          ),
          "Unable to create discovery topic."
        );
        paste! {
          let reader = try_construct!(
            discovery_subscriber
            . [< create_datareader_with_entity_id_ $has_key >]
              ::<$message_type, [<$repr DeserializerAdapter>] <$message_type>>(
              &topic,
              $reader_entity_id,
              $reader_qos_opt.or_else(|| endpoint_qos_opt_bind.clone()),
              $stateless_RTPS,
            ),
            "Unable to create discovery DataReader."
          );

          let writer = try_construct!(
              discovery_publisher.[< create_datawriter_with_entity_id_ $has_key >]
                ::<$message_type, [<$repr SerializerAdapter>] <$message_type>>(
                $writer_entity_id,
                &topic,
                Some(publisher_qos),
                $stateless_RTPS,
              ),
            "Unable to create discovery DataWriter."
          );
        }
        // The reader's data notifications wake this poll through `discovery_samples`
        // (the reader was created with this token). mio 1.2 cannot register the
        // mio-0.6 sample channel.
        let _ = $reader_token;

        // Per-topic timers are gone; all periodic discovery tasks now share one
        // timer registered under DISCOVERY_TIMER_TOKEN. The former timer token
        // argument is no longer used here.
        let _: Option<mio1::Token> = $timeout_and_timer_token_opt;
        paste! { $has_key ::[<DiscoveryTopic $repr>] { topic, reader, writer } }
      }}; // macro
    }

    // Participant
    let dcps_participant = construct_topic_and_poll!(
      PlCdr,
      with_key,
      builtin_topic_names::DCPS_PARTICIPANT,
      builtin_topic_type_names::DCPS_PARTICIPANT,
      SpdpDiscoveredParticipantData,
      Some(Self::create_spdp_participant_qos()),
      None,  // Reader QoS: as above
      false, // Regular stateful RTPS Reader & Writer
      EntityId::SPDP_BUILTIN_PARTICIPANT_READER,
      DISCOVERY_PARTICIPANT_DATA_TOKEN,
      EntityId::SPDP_BUILTIN_PARTICIPANT_WRITER,
      Some(DISCOVERY_SEND_PARTICIPANT_INFO_TOKEN),
    );

    // Subscriptions: What are the Readers on the network and what are they
    // subscribing to?
    let dcps_subscription = construct_topic_and_poll!(
      PlCdr,
      with_key,
      builtin_topic_names::DCPS_SUBSCRIPTION,
      builtin_topic_type_names::DCPS_SUBSCRIPTION,
      DiscoveredReaderData,
      None,                                  // QoS
      Some(Self::builtin_sedp_reader_qos()), // Reader QoS
      false,                                 // Regular stateful RTPS Reader & Writer
      EntityId::SEDP_BUILTIN_SUBSCRIPTIONS_READER,
      DISCOVERY_READER_DATA_TOKEN,
      EntityId::SEDP_BUILTIN_SUBSCRIPTIONS_WRITER,
      None, // No timer
    );

    // Publication : Who are the Writers here and elsewhere
    let dcps_publication = construct_topic_and_poll!(
      PlCdr,
      with_key,
      builtin_topic_names::DCPS_PUBLICATION,
      builtin_topic_type_names::DCPS_PUBLICATION,
      DiscoveredWriterData,
      None,                                  // QoS,
      Some(Self::builtin_sedp_reader_qos()), // Reader QoS
      false,                                 // Regular stateful RTPS Reader & Writer
      EntityId::SEDP_BUILTIN_PUBLICATIONS_READER,
      DISCOVERY_WRITER_DATA_TOKEN,
      EntityId::SEDP_BUILTIN_PUBLICATIONS_WRITER,
      None, // No timer
    );

    // Topic topic (not a typo)
    let dcps_topic = construct_topic_and_poll!(
      PlCdr,
      with_key,
      builtin_topic_names::DCPS_TOPIC,
      builtin_topic_type_names::DCPS_TOPIC,
      DiscoveredTopicData,
      None,                                  // QoS,
      Some(Self::builtin_sedp_reader_qos()), // Reader QoS
      false,                                 // Regular stateful RTPS Reader & Writer
      EntityId::SEDP_BUILTIN_TOPIC_READER,
      DISCOVERY_TOPIC_DATA_TOKEN,
      EntityId::SEDP_BUILTIN_TOPIC_WRITER,
      None, // No timer
    );

    // Participant Message Data 8.4.13
    let dcps_participant_message = construct_topic_and_poll!(
      CDR,
      with_key,
      builtin_topic_names::DCPS_PARTICIPANT_MESSAGE,
      builtin_topic_type_names::DCPS_PARTICIPANT_MESSAGE,
      ParticipantMessageData,
      Some(Self::PARTICIPANT_MESSAGE_QOS),
      None,  // Reader QoS: as above
      false, // Regular stateful RTPS Reader & Writer
      EntityId::P2P_BUILTIN_PARTICIPANT_MESSAGE_READER,
      DISCOVERY_PARTICIPANT_MESSAGE_TOKEN,
      EntityId::P2P_BUILTIN_PARTICIPANT_MESSAGE_WRITER,
      Some(DISCOVERY_PARTICIPANT_MESSAGE_TIMER_TOKEN),
    );

    // DDS Security

    // Participant
    #[cfg(feature = "security")]
    let dcps_participant_secure = construct_topic_and_poll!(
      PlCdr,
      with_key,
      builtin_topic_names::DCPS_PARTICIPANT_SECURE,
      builtin_topic_type_names::DCPS_PARTICIPANT_SECURE,
      ParticipantBuiltinTopicDataSecure,
      None,  // QoS
      None,  // Reader QoS: as above
      false, // Regular stateful RTPS Reader & Writer
      EntityId::SPDP_RELIABLE_BUILTIN_PARTICIPANT_SECURE_READER,
      SECURE_DISCOVERY_PARTICIPANT_DATA_TOKEN,
      EntityId::SPDP_RELIABLE_BUILTIN_PARTICIPANT_SECURE_WRITER,
      None, // No timer. Periodic sending is done simultaneously with the non-secure topic
    );

    // Subscriptions: What are the Readers on the network and what are they
    // subscribing to?
    #[cfg(feature = "security")]
    let dcps_subscriptions_secure = construct_topic_and_poll!(
      PlCdr,
      with_key,
      builtin_topic_names::DCPS_SUBSCRIPTIONS_SECURE,
      builtin_topic_type_names::DCPS_SUBSCRIPTIONS_SECURE,
      SubscriptionBuiltinTopicDataSecure,
      None,                                  // QoS
      Some(Self::builtin_sedp_reader_qos()), // Reader QoS
      false,                                 // Regular stateful RTPS Reader & Writer
      EntityId::SEDP_BUILTIN_SUBSCRIPTIONS_SECURE_READER,
      SECURE_DISCOVERY_READER_DATA_TOKEN,
      EntityId::SEDP_BUILTIN_SUBSCRIPTIONS_SECURE_WRITER,
      None, // No timer
    );

    // Publication : Who are the Writers here and elsewhere
    #[cfg(feature = "security")]
    let dcps_publications_secure = construct_topic_and_poll!(
      PlCdr,
      with_key,
      builtin_topic_names::DCPS_PUBLICATIONS_SECURE,
      builtin_topic_type_names::DCPS_PUBLICATIONS_SECURE,
      PublicationBuiltinTopicDataSecure,
      None,                                  // QoS
      Some(Self::builtin_sedp_reader_qos()), // Reader QoS
      false,                                 // Regular stateful RTPS Reader & Writer
      EntityId::SEDP_BUILTIN_PUBLICATIONS_SECURE_READER,
      SECURE_DISCOVERY_WRITER_DATA_TOKEN,
      EntityId::SEDP_BUILTIN_PUBLICATIONS_SECURE_WRITER,
      None, // No timer
    );

    // p2p Participant message secure
    #[cfg(feature = "security")]
    let dcps_participant_message_secure = construct_topic_and_poll!(
      CDR,
      with_key,
      builtin_topic_names::DCPS_PARTICIPANT_MESSAGE_SECURE,
      builtin_topic_type_names::DCPS_PARTICIPANT_MESSAGE_SECURE,
      ParticipantMessageData, // actually reuse the non-secure data type
      None,                   // QoS
      None,                   // Reader QoS: as above
      false,                  // Regular stateful RTPS Reader & Writer
      EntityId::P2P_BUILTIN_PARTICIPANT_MESSAGE_SECURE_READER,
      P2P_SECURE_DISCOVERY_PARTICIPANT_MESSAGE_TOKEN,
      EntityId::P2P_BUILTIN_PARTICIPANT_MESSAGE_SECURE_WRITER,
      None, // No timer. Periodic sending is done simultaneously with the non-secure topic
    );
    // p2p Participant stateless message, used for authentication and Diffie-Hellman
    // key exchange
    #[cfg(feature = "security")]
    let dcps_participant_stateless_message = construct_topic_and_poll!(
      CDR,
      no_key,
      builtin_topic_names::DCPS_PARTICIPANT_STATELESS_MESSAGE,
      builtin_topic_type_names::DCPS_PARTICIPANT_STATELESS_MESSAGE,
      ParticipantStatelessMessage,
      Some(Self::create_participant_stateless_message_qos()),
      None, // Reader QoS: as above
      true, // Important: STATELESS RTPS Reader & Writer (see Security spec. section 7.4.3)
      EntityId::P2P_BUILTIN_PARTICIPANT_STATELESS_READER,
      P2P_PARTICIPANT_STATELESS_MESSAGE_TOKEN,
      EntityId::P2P_BUILTIN_PARTICIPANT_STATELESS_WRITER,
      None, // No timer
    );

    // p2p Participant volatile message secure, used for key exchange
    // Used for distributing symmetric (AES) crypto keys
    #[cfg(feature = "security")]
    let dcps_participant_volatile_message_secure = construct_topic_and_poll!(
      CDR,
      no_key,
      builtin_topic_names::DCPS_PARTICIPANT_VOLATILE_MESSAGE_SECURE,
      builtin_topic_type_names::DCPS_PARTICIPANT_VOLATILE_MESSAGE_SECURE,
      ParticipantVolatileMessageSecure,
      Some(Self::create_participant_volatile_message_secure_qos()),
      None,  // Reader QoS: as above
      false, // Regular stateful RTPS Reader & Writer
      EntityId::P2P_BUILTIN_PARTICIPANT_VOLATILE_SECURE_READER,
      P2P_BUILTIN_PARTICIPANT_VOLATILE_SECURE_TOKEN,
      EntityId::P2P_BUILTIN_PARTICIPANT_VOLATILE_SECURE_WRITER,
      None, // No timer.
    );

    // The single shared timer for the discovery loop. Register it once and seed
    // all periodic tasks. The SPDP-publish and participant-message tasks are
    // seeded with a short initial delay (matching the previous behaviour of
    // their per-topic timers) so the first announcements go out quickly.
    let discovery_timer = new_shared_timer::<DiscoveryTimerEvent>();
    {
      let mut t = discovery_timer.borrow_mut();
      t.set_timeout(
        StdDuration::from_millis(100),
        DiscoveryTimerEvent::SendParticipantInfo { reschedule: true },
      );
      t.set_timeout(
        Self::PARTICIPANT_CLEANUP_PERIOD,
        DiscoveryTimerEvent::ParticipantCleanup,
      );
      t.set_timeout(
        Self::TOPIC_CLEANUP_PERIOD,
        DiscoveryTimerEvent::TopicCleanup,
      );
      t.set_timeout(
        StdDuration::from_millis(100),
        DiscoveryTimerEvent::PublishParticipantMessage,
      );
      #[cfg(feature = "security")]
      t.set_timeout(
        Self::CACHED_SECURE_DISCOVERY_MESSAGE_RESEND_PERIOD,
        DiscoveryTimerEvent::CachedSecureMessageResend,
      );
    }

    #[cfg(not(feature = "security"))]
    let security_opt = security_plugins_opt.and(None); // = None, but avoid warning.

    #[cfg(feature = "security")]
    let security_opt = if let Some(plugins_handle) = security_plugins_opt {
      // Plugins is Some so security is enabled. Initialize SecureDiscovery
      let security = try_construct!(
        SecureDiscovery::new(&domain_participant, &discovery_db, plugins_handle),
        "Could not initialize Secure Discovery."
      );
      Some(security)
    } else {
      None // no security configured
    };

    Ok(Self {
      poll,
      domain_participant,
      discovery_db,
      discovery_started_sender,
      discovery_updated_sender,
      discovery_command_receiver,
      spdp_liveness_receiver,
      discovery_samples,
      waker,
      participant_status_sender,

      liveliness_state: LivelinessState::new(),

      // discovery_subscriber,
      // discovery_publisher,
      dcps_participant, // SPDP
      dcps_subscription,
      dcps_publication, // SEDP
      dcps_topic,
      dcps_participant_message, // liveliness messages

      discovery_timer,

      security_opt,
      #[cfg(feature = "security")]
      dcps_participant_secure,
      #[cfg(feature = "security")]
      dcps_publications_secure,
      #[cfg(feature = "security")]
      dcps_subscriptions_secure,
      #[cfg(feature = "security")]
      dcps_participant_message_secure,
      #[cfg(feature = "security")]
      dcps_participant_stateless_message,
      #[cfg(feature = "security")]
      dcps_participant_volatile_message_secure,
      #[cfg(feature = "security")]
      spdp_quick_response_sent: std::collections::HashSet::new(),
    })
  }

  pub fn discovery_event_loop(&mut self) {
    if let Err(e) = self.waker.install(&self.poll, LOOP_WAKE_TOKEN) {
      error!("Discovery failed to install waker: {e}");
      return;
    }
    self.initialize_participant();

    // Send out info about user (=non-built-in) Writers and Readers that we have.
    // We are just initializing local participant, so likely there are none yet,
    // but better make sure.
    // TODO: Check if there can acually be any. If not, then this code is
    // unnecessary.
    let db = discovery_db_read(&self.discovery_db);
    for reader in db.get_all_local_topic_readers() {
      self.sedp_publish_single_user_reader(reader);
    }
    for writer in db.get_all_local_topic_writers() {
      self.sedp_publish_single_user_writer(writer);
    }
    drop(db);

    if self.discovery_started_sender.send(Ok(())).is_err() {
      error!("Discovery start notification send failed: main thread receiver dropped");
      return;
    }
    // If this triggers, then discovery_started channel has been
    // closed, which likely means the receiver (app thread) has paniced also.
    // They will wait for up to 10 sec for us to send this handshake.

    let mut events = Events::with_capacity(32);
    loop {
      let poll_timeout = timeout_until(
        self.discovery_timer.borrow().next_deadline(),
        std::time::Duration::from_millis(5000),
      );
      match self.poll.poll(&mut events, Some(poll_timeout)) {
        Ok(_) => (),
        Err(e) => {
          error!("Failed in waiting of poll in discovery. {e:?}");
          return;
        }
      }
      if events.is_empty() {
        debug!("Discovery event loop idling.");
      }

      // The waker token only means "drain". Commands, liveness and reader-sample
      // tokens are queued; deadlines are read from the timer. Handling the
      // command and liveness tokens every iteration is cheap when the queues
      // are empty, and it also catches anything enqueued before the waker
      // was installed.
      let mut tokens = vec![
        DISCOVERY_COMMAND_TOKEN,
        SPDP_LIVENESS_TOKEN,
        DISCOVERY_TIMER_TOKEN,
      ];
      tokens.extend(self.discovery_samples.drain_unique());
      for token in tokens {
        match token {
          DISCOVERY_COMMAND_TOKEN => {
            while let Ok(command) = self.discovery_command_receiver.try_recv() {
              match command {
                DiscoveryCommand::StopDiscovery => {
                  info!("Stopping Discovery");
                  self.on_participant_shutting_down();
                  info!("Stopped Discovery");
                  return; // terminate event loop
                }
                DiscoveryCommand::AddLocalWriter { guid } => {
                  self.add_local_writer(guid);
                }
                DiscoveryCommand::AddLocalReader { guid } => {
                  self.add_local_reader(guid);
                }
                DiscoveryCommand::AddTopic { topic_name } => {
                  self.sedp_publish_topic(&topic_name);
                }
                DiscoveryCommand::RemoveLocalWriter { guid } => {
                  if guid == self.dcps_publication.writer.guid() {
                    continue;
                  }
                  self.send_endpoint_dispose_message(guid);
                  discovery_db_write(&self.discovery_db).remove_local_topic_writer(guid);
                }
                DiscoveryCommand::RemoveLocalReader { guid } => {
                  if guid == self.dcps_subscription.writer.guid() {
                    continue;
                  }
                  self.send_endpoint_dispose_message(guid);
                  discovery_db_write(&self.discovery_db).remove_local_topic_reader(guid);
                }
                DiscoveryCommand::ManualAssertLiveliness => {
                  self
                    .liveliness_state
                    .manual_participant_liveness_refresh_requested = true;
                }
                DiscoveryCommand::AssertTopicLiveliness {
                  writer_guid,
                  manual_assertion,
                } => {
                  self.send_discovery_notification(
                    DiscoveryNotificationType::AssertTopicLiveliness {
                      writer_guid,
                      manual_assertion,
                    },
                  );
                }
                #[cfg(feature = "security")]
                DiscoveryCommand::StartKeyExchangeWithRemoteParticipant {
                  participant_guid_prefix,
                } => {
                  if let Some(security) = self.security_opt.as_mut() {
                    security.start_key_exchange_with_remote_participant(
                      participant_guid_prefix,
                      &self.dcps_participant_volatile_message_secure.writer,
                      &self.discovery_db,
                    );
                  }
                }
                #[cfg(feature = "security")]
                DiscoveryCommand::StartKeyExchangeWithRemoteEndpoint {
                  local_endpoint_guid,
                  remote_endpoint_guid,
                } => {
                  if let Some(security) = self.security_opt.as_mut() {
                    security.start_key_exchange_with_remote_endpoint(
                      local_endpoint_guid,
                      remote_endpoint_guid,
                      &self.dcps_participant_volatile_message_secure.writer,
                      &self.discovery_db,
                    );
                  }
                }
              };
            }
          }

          DISCOVERY_PARTICIPANT_DATA_TOKEN => {
            debug!("triggered participant reader");
            self.spdp_receive();
          }

          DISCOVERY_TIMER_TOKEN => {
            // Drain all expired timeouts under a single borrow, then dispatch
            // (handlers re-borrow the timer to reschedule).
            let expired: Vec<DiscoveryTimerEvent> = {
              let mut timer = self.discovery_timer.borrow_mut();
              let mut v = Vec::new();
              while let Some(e) = timer.poll() {
                v.push(e);
              }
              v
            };
            for timer_event in expired {
              match timer_event {
                DiscoveryTimerEvent::SendParticipantInfo { reschedule } => {
                  if let Some(dp) = self.domain_participant.clone().upgrade() {
                    self.spdp_publish(&dp);
                  } else {
                    error!("DomainParticipant doesn't exist anymore, exiting Discovery.");
                    return;
                  };
                  // Only the periodic announce reschedules itself; the one-shot
                  // quick response does not.
                  if reschedule {
                    self.discovery_timer.borrow_mut().set_timeout(
                      Self::SPDP_PUBLISH_PERIOD,
                      DiscoveryTimerEvent::SendParticipantInfo { reschedule: true },
                    );
                  }
                }
                DiscoveryTimerEvent::ParticipantCleanup => {
                  self.participant_cleanup();
                  self.discovery_timer.borrow_mut().set_timeout(
                    Self::PARTICIPANT_CLEANUP_PERIOD,
                    DiscoveryTimerEvent::ParticipantCleanup,
                  );
                }
                DiscoveryTimerEvent::TopicCleanup => {
                  self.topic_cleanup();
                  self.discovery_timer.borrow_mut().set_timeout(
                    Self::TOPIC_CLEANUP_PERIOD,
                    DiscoveryTimerEvent::TopicCleanup,
                  );
                }
                DiscoveryTimerEvent::PublishParticipantMessage => {
                  self.publish_participant_message();
                  self.discovery_timer.borrow_mut().set_timeout(
                    Self::CHECK_PARTICIPANT_MESSAGES,
                    DiscoveryTimerEvent::PublishParticipantMessage,
                  );
                }
                #[cfg(feature = "security")]
                DiscoveryTimerEvent::CachedSecureMessageResend => {
                  self.on_secure_discovery_message_resend_triggered();
                  self.discovery_timer.borrow_mut().set_timeout(
                    Self::CACHED_SECURE_DISCOVERY_MESSAGE_RESEND_PERIOD,
                    DiscoveryTimerEvent::CachedSecureMessageResend,
                  );
                }
              }
            }
          }
          DISCOVERY_READER_DATA_TOKEN => {
            self.sedp_receive_subscription(None);
          }
          DISCOVERY_WRITER_DATA_TOKEN => {
            self.sedp_receive_publication(None);
          }
          DISCOVERY_TOPIC_DATA_TOKEN => {
            self.sedp_receive_topic_data(None);
          }
          DISCOVERY_PARTICIPANT_MESSAGE_TOKEN | P2P_SECURE_DISCOVERY_PARTICIPANT_MESSAGE_TOKEN => {
            self.receive_participant_message();
          }
          SPDP_LIVENESS_TOKEN => {
            while let Ok(guid_prefix) = self.spdp_liveness_receiver.try_recv() {
              discovery_db_write(&self.discovery_db).participant_is_alive(guid_prefix);
            }
          }
          P2P_PARTICIPANT_STATELESS_MESSAGE_TOKEN => {
            #[cfg(feature = "security")]
            self.receive_participant_stateless_message();
          }
          P2P_BUILTIN_PARTICIPANT_VOLATILE_SECURE_TOKEN => {
            #[cfg(feature = "security")]
            self.receive_participant_volatile_message();
          }
          SECURE_DISCOVERY_PARTICIPANT_DATA_TOKEN => {
            #[cfg(feature = "security")]
            self.secure_spdp_receive();
          }
          SECURE_DISCOVERY_READER_DATA_TOKEN => {
            #[cfg(feature = "security")]
            self.secure_sedp_receive_subscription(None);
          }
          SECURE_DISCOVERY_WRITER_DATA_TOKEN => {
            #[cfg(feature = "security")]
            self.secure_sedp_receive_publication(None);
          }

          other_token => {
            error!("discovery event loop got token: {other_token:?}");
          }
        } // match
      } // for
    } // loop
  } // fn

  // Initialize our own participant data into the Discovery DB.
  // That causes ReaderProxies and WriterProxies to be constructed and
  // and we also get our own local readers and writers connected, both
  // built-in and user-defined.
  // If we did not do this, the Readers and Writers in this participant could not
  // find each other.
  fn initialize_participant(&self) {
    let dp = if let Some(dp) = self.domain_participant.clone().upgrade() {
      dp
    } else {
      error!("Cannot get actual DomainParticipant in initialize_participant! Giving up.");
      return;
    };

    let participant_data = SpdpDiscoveredParticipantData::from_local_participant(
      &dp,
      &self.security_opt,
      Duration::INFINITE,
    );

    // Initialize our own participant data into the Discovery DB, so we can talk to
    // ourself.
    discovery_db_write(&self.discovery_db).update_participant(&participant_data);

    // This will read the participant from Discovery DB and construct
    // ReaderProxy and WriterProxy objects for built-in Readers and Writers
    self.send_discovery_notification(DiscoveryNotificationType::ParticipantUpdated {
      guid_prefix: dp.guid().prefix,
    });
  }

  pub fn spdp_receive(&mut self) {
    loop {
      // HORUS PATCH: the samples taken in batches of SPDP_TAKE_BATCH (was: one at a time
      // with take_next_sample, each take selecting and sorting every unread sample: a
      // flood's backlog of N announcements took N^2 / 2 steps to drain).
      let batch = match self
        .dcps_participant
        .reader
        .take(Self::SPDP_TAKE_BATCH, ReadCondition::not_read())
      {
        Ok(batch) if batch.is_empty() => {
          trace!("spdp_receive: no more data");
          return;
        }
        Ok(batch) => batch,
        Err(e) => {
          error!(" !!! spdp_receive: {e:?}");
          return;
        }
      };
      for ds in batch {
        debug!("spdp_receive read {:?}", ds);
        {
          #[cfg(not(feature = "security"))]
          let permission = NormalDiscoveryPermission::Allow;

          #[cfg(feature = "security")]
          let permission = if let Some(security) = self.security_opt.as_mut() {
            // Security is enabled. Do a secure read, potentially starting the
            // authentication protocol. The return value tells if normal Discovery is
            // allowed to process the message.
            security.participant_read(
              &ds,
              &self.discovery_db,
              &self.discovery_updated_sender,
              &self.dcps_participant_stateless_message.writer,
            )
          } else {
            // No security configured, always allowed
            NormalDiscoveryPermission::Allow
          };

          if permission == NormalDiscoveryPermission::Allow {
            match ds.value {
              Sample::Value(participant_data) => {
                debug!("spdp_receive discovered {:?}", participant_data);
                self.process_discovered_participant_data(&participant_data);
              }
              // Sample::Dispose means that DomainParticipant was disposed
              Sample::Dispose(participant_guid) => {
                self.process_participant_dispose(participant_guid.0.prefix);
              }
            }
          } else {
            // Speed up *secure* discovery.
            //
            // While the remote is still being authenticated, `participant_read`
            // returns a permission other than `Allow`, which skips
            // `process_discovered_participant_data` above — and with it the normal
            // "quick SPDP response" optimization. Without that, the remote would
            // only learn about us on our next *periodic* SPDP (SPDP_PUBLISH_PERIOD),
            // delaying the authentication handshake by up to a full period. Send an
            // unsolicited one-shot quick SPDP response now (at most once per remote).
            // We only re-announce our own public SPDP data, so this discloses nothing
            // extra.
            #[cfg(feature = "security")]
            if let Sample::Value(participant_data) = &ds.value {
              let remote_prefix = participant_data.participant_guid.prefix;
              if remote_prefix != self.domain_participant.guid().prefix
                && self.spdp_quick_response_sent.insert(remote_prefix)
              {
                self.discovery_timer.borrow_mut().set_timeout(
                  StdDuration::from_millis(10),
                  DiscoveryTimerEvent::SendParticipantInfo { reschedule: false },
                );
              }
            }
          }
        }
      }
    } // loop
  }

  fn process_discovered_participant_data(
    &mut self,
    participant_data: &SpdpDiscoveredParticipantData,
  ) {
    // HORUS PATCH: a refused participant is not reported or matched; the one whose place a
    // new one took is reported lost.
    let update = discovery_db_write(&self.discovery_db).update_participant(participant_data);
    let was_new = match update {
      ParticipantUpdate::Refused => return,
      ParticipantUpdate::Known => false,
      ParticipantUpdate::New { evicted } => {
        if let Some((guid_prefix, reason)) = evicted {
          self.send_discovery_notification(DiscoveryNotificationType::ParticipantLost {
            guid_prefix,
          });
          self.send_participant_status(DomainParticipantStatusEvent::ParticipantLost {
            id: guid_prefix,
            reason,
          });
        }
        true
      }
    };
    let guid_prefix = participant_data.participant_guid.prefix;

    // Send notification to dp_event_loop. It will update local reader/writer
    // proxies as the SpdpDiscoveredParticipantData contains a bitmap of the
    // available built-in endpoints.
    self.send_discovery_notification(DiscoveryNotificationType::ParticipantUpdated { guid_prefix });

    if was_new {
      // Inform DDS Applications
      self.send_participant_status(DomainParticipantStatusEvent::ParticipantDiscovered {
        dpd: participant_data.into(),
      });

      // Send a quick response to make discovery faster.
      //
      // RTPS spec v2.5 Section "8.5.3.1 General Approach" [to SPDP] says
      // "Implementations can minimize any start-up delays by sending an additional
      // SPDPdiscoveredParticipantData in response to receiving this data-object from
      // a previously unknown Participant, but this behavior is optional."
      //
      // But not to reply to self, because we know that we exist.
      // TODO: Maybe add some rate-limiting to this to avoid packet storms.
      if guid_prefix != self.domain_participant.guid().prefix {
        // One-shot quick SPDP response on the shared timer (does not reschedule).
        self.discovery_timer.borrow_mut().set_timeout(
          StdDuration::from_millis(10),
          DiscoveryTimerEvent::SendParticipantInfo { reschedule: false },
        );
      }

      // This may be a rediscovery of a previously seen participant that
      // was temporarily lost due to network outage. Process the SEDP samples
      // (topics, readers, writers) that are already pending in our discovery
      // readers, so that we know what it has. Reading takes the samples out of
      // the readers, so this processes the pending samples of all participants,
      // not only those of this one.
      debug!("Participant rediscovery start");
      self.sedp_receive_topic_data(Some(guid_prefix));
      self.sedp_receive_subscription(Some(guid_prefix));
      self.sedp_receive_publication(Some(guid_prefix));
      debug!("Participant rediscovery finished");
    }
  }

  fn process_participant_dispose(&mut self, participant_guidp: GuidPrefix) {
    discovery_db_write(&self.discovery_db).remove_participant(participant_guidp, true); // true = actively removed
    self.send_discovery_notification(DiscoveryNotificationType::ParticipantLost {
      guid_prefix: participant_guidp,
    });
    self.send_participant_status(DomainParticipantStatusEvent::ParticipantLost {
      id: participant_guidp,
      reason: LostReason::Disposed,
    });
    #[cfg(feature = "security")]
    self.spdp_quick_response_sent.remove(&participant_guidp);
  }

  fn send_endpoint_dispose_message(&self, endpoint_guid: GUID) {
    let is_writer = endpoint_guid.entity_id.entity_kind.is_writer();
    if is_writer {
      self
        .dcps_publication
        .writer
        .dispose(&Endpoint_GUID(endpoint_guid), None)
        .unwrap_or_else(|e| error!("Disposing local Writer: {e:?}"));
      #[cfg(feature = "security")]
      self
        .dcps_publications_secure
        .writer
        .dispose(&Endpoint_GUID(endpoint_guid), None)
        .unwrap_or_else(|e| error!("Disposing local Writer: {e:?}"));
    } else {
      // is reader
      self
        .dcps_subscription
        .writer
        .dispose(&Endpoint_GUID(endpoint_guid), None)
        .unwrap_or_else(|e| error!("Disposing local Reader: {e:?}"));
      #[cfg(feature = "security")]
      self
        .dcps_subscriptions_secure
        .writer
        .dispose(&Endpoint_GUID(endpoint_guid), None)
        .unwrap_or_else(|e| error!("Disposing local Reader: {e:?}"));
    }
  }

  fn on_participant_shutting_down(&mut self) {
    let db = discovery_db_read(&self.discovery_db);

    for reader in db.get_all_local_topic_readers() {
      self.send_endpoint_dispose_message(reader.reader_proxy.remote_reader_guid);
    }

    for writer in db.get_all_local_topic_writers() {
      self.send_endpoint_dispose_message(writer.writer_proxy.remote_writer_guid);
    }

    self
      .dcps_participant
      .writer
      .dispose(&Participant_GUID(self.domain_participant.guid()), None)
      .unwrap_or(());
    #[cfg(feature = "security")]
    self
      .dcps_participant_secure
      .writer
      .dispose(&Participant_GUID(self.domain_participant.guid()), None)
      .unwrap_or(());
  }

  // Check if there are messages about new Readers
  pub fn sedp_receive_subscription(&mut self, read_history: Option<GuidPrefix>) {
    let drds: Vec<Sample<DiscoveredReaderData, GUID>> =
      match self.dcps_subscription.reader.into_iterator() {
        Ok(ds) => ds
          .map(|d| d.map_dispose(|g| g.0)) // map_dispose removes Endpoint_GUID wrapper around GUID
          // into_iterator() took these samples out of the reader, so all of them
          // must be processed, also when a participant was specified. A sample
          // skipped here would be lost for good.
          .inspect(|d| {
            let reader_guid = match d {
              Sample::Value(drd) => drd.reader_proxy.remote_reader_guid,
              Sample::Dispose(guid) => *guid,
            };
            match read_history {
              Some(participant) if participant != reader_guid.prefix => {
                debug!("Rediscovery of {participant:?} processes pending reader {reader_guid:?}");
              }
              _ => (),
            }
          })
          .collect(),
        Err(e) => {
          error!("sedp_receive_subscription: {e:?}");
          return;
        }
      };

    for d in drds {
      #[cfg(not(feature = "security"))]
      let permission = NormalDiscoveryPermission::Allow;

      #[cfg(feature = "security")]
      let permission = if let Some(security) = self.security_opt.as_mut() {
        // Security is enabled. Do a secure read
        security.check_nonsecure_subscription_read(&d, &self.discovery_db)
      } else {
        // No security configured, always allowed
        NormalDiscoveryPermission::Allow
      };

      if permission == NormalDiscoveryPermission::Allow {
        match d {
          Sample::Value(d) => {
            trace!("sedp_receive_subscription - {d:?}");
            // HORUS PATCH: a refused reader is not reported or matched.
            let Some(drd) = discovery_db_write(&self.discovery_db).update_subscription(&d) else {
              continue;
            };
            debug!(
              "sedp_receive_subscription - send_discovery_notification ReaderUpdated  {:?}",
              drd
            );
            self.send_discovery_notification(DiscoveryNotificationType::ReaderUpdated {
              discovered_reader_data: drd,
            });
            if read_history == Some(d.reader_proxy.remote_reader_guid.prefix) {
              info!(
                "Rediscovered reader {:?} topic={:?}",
                d.reader_proxy.remote_reader_guid,
                d.subscription_topic_data.topic_name()
              );
            }
          }
          Sample::Dispose(reader_key) => {
            info!("Dispose Reader {reader_key:?}");
            discovery_db_write(&self.discovery_db).remove_topic_reader(reader_key);
            self.send_discovery_notification(DiscoveryNotificationType::ReaderLost {
              reader_guid: reader_key,
            });
            self.send_participant_status(DomainParticipantStatusEvent::ReaderLost {
              guid: reader_key,
              reason: LostReason::Disposed,
            });
          }
        }
      }
    } // loop
  }

  pub fn sedp_receive_publication(&mut self, read_history: Option<GuidPrefix>) {
    let dwds: Vec<Sample<DiscoveredWriterData, GUID>> =
      match self.dcps_publication.reader.into_iterator() {
        // a lot of cloning here, but we must copy the data out of the
        // reader before we can use self again, as .read() returns references to within
        // a reader and thus self
        Ok(ds) => ds
          .map(|d| d.map_dispose(|g| g.0)) // map_dispose removes Endpoint_GUID wrapper around GUID
          // into_iterator() took these samples out of the reader, so all of them
          // must be processed, also when a participant was specified. A sample
          // skipped here would be lost for good.
          .inspect(|d| {
            let writer_guid = match d {
              Sample::Value(dwd) => dwd.writer_proxy.remote_writer_guid,
              Sample::Dispose(guid) => *guid,
            };
            match read_history {
              Some(participant) if participant != writer_guid.prefix => {
                debug!("Rediscovery of {participant:?} processes pending writer {writer_guid:?}");
              }
              _ => (),
            }
          })
          .collect(),
        Err(e) => {
          error!("sedp_receive_publication: {e:?}");
          return;
        }
      };

    for d in dwds {
      #[cfg(not(feature = "security"))]
      let permission = NormalDiscoveryPermission::Allow;

      #[cfg(feature = "security")]
      let permission = if let Some(security) = self.security_opt.as_mut() {
        // Security is enabled. Do a secure read
        security.check_nonsecure_publication_read(&d, &self.discovery_db)
      } else {
        // No security configured, always allowed
        NormalDiscoveryPermission::Allow
      };

      if permission == NormalDiscoveryPermission::Allow {
        match d {
          Sample::Value(dwd) => {
            trace!("sedp_receive_publication discovered {:?}", dwd);
            // HORUS PATCH: a refused writer is not reported or matched.
            let Some(discovered_writer_data) =
              discovery_db_write(&self.discovery_db).update_publication(&dwd)
            else {
              continue;
            };
            self.send_discovery_notification(DiscoveryNotificationType::WriterUpdated {
              discovered_writer_data,
            });
            debug!("Discovered Writer {:?}", dwd);
          }
          Sample::Dispose(writer_key) => {
            discovery_db_write(&self.discovery_db).remove_topic_writer(writer_key);
            self.send_discovery_notification(DiscoveryNotificationType::WriterLost {
              writer_guid: writer_key,
            });
            self.send_participant_status(DomainParticipantStatusEvent::WriterLost {
              guid: writer_key,
              reason: LostReason::Disposed,
            });

            debug!("Disposed Writer {writer_key:?}");
          }
        }
      }
    } // loop
  }

  // TODO: Try to remember why the read_history parameter below was introduced
  // in the first place. Git history should help here.
  // Likely it is something to do with an unreliable network and
  // DomainParticipants timing out and then coming back. The read_history was
  // supposed to help in recovering from that.
  pub fn sedp_receive_topic_data(&mut self, _read_history: Option<GuidPrefix>) {
    let ts: Vec<Sample<(DiscoveredTopicData, GUID), GUID>> = match self
      .dcps_topic
      .reader
      .take(usize::MAX, ReadCondition::any())
    {
      Ok(ds) => ds
        .iter()
        .map(|d| {
          d.value
            .clone()
            .map_value(|o| (o, d.sample_info.writer_guid()))
            .map_dispose(|g| g.0)
        })
        .collect(),
      Err(e) => {
        error!("sedp_receive_topic_data: {e:?}");
        return;
      }
    };

    for t in ts {
      #[cfg(not(feature = "security"))]
      let permission = NormalDiscoveryPermission::Allow;

      #[cfg(feature = "security")]
      let permission = if let Some(security) = self.security_opt.as_mut() {
        // Security is enabled. Do a secure read
        security.check_topic_read(&t, &self.discovery_db)
      } else {
        // No security configured, always allowed
        NormalDiscoveryPermission::Allow
      };

      if permission == NormalDiscoveryPermission::Allow {
        match t {
          Sample::Value((topic_data, writer)) => {
            debug!("sedp_receive_topic_data discovered {:?}", topic_data);
            discovery_db_write(&self.discovery_db).update_topic_data(
              &topic_data,
              writer,
              DiscoveredVia::Topic,
            );
            // Now check if we know any readers of writers to this topic. The topic QoS
            // could cause these to became viable matches against local
            // writers/readers. This is because at least RTI Connext sends QoS
            // policies on a Topic, and then (apparently) assumes that its
            // readers/writers inherit those policies unless specified otherwise.

            // Note that additional security checks are not needed here, since if a
            // reader/writer is in our DiscoveryDB, it has already passed the security
            // checks.
            let writers = discovery_db_read(&self.discovery_db)
              .writers_on_topic_and_participant(topic_data.topic_name(), writer.prefix);
            debug!("writers {:?}", writers);
            for discovered_writer_data in writers {
              self.send_discovery_notification(DiscoveryNotificationType::WriterUpdated {
                discovered_writer_data,
              });
            }

            let readers = discovery_db_read(&self.discovery_db)
              .readers_on_topic_and_participant(topic_data.topic_name(), writer.prefix);
            for discovered_reader_data in readers {
              self.send_discovery_notification(DiscoveryNotificationType::ReaderUpdated {
                discovered_reader_data,
              });
            }
          }
          // Sample::Dispose means disposed
          Sample::Dispose(key) => {
            warn!("not implemented - Topic was disposed: {:?}", key);
          }
        }
      }
    } // loop
  }

  // These messages are for updating participant liveliness
  // The protocol distinguishes between automatic (by DDS library)
  // and manual (by by application, via DDS API call) liveness
  pub fn receive_participant_message(&mut self) {
    // First read from nonsecure reader
    let mut samples = match self
      .dcps_participant_message
      .reader
      .take(usize::MAX, ReadCondition::any())
    {
      Ok(nonsecure_samples) => nonsecure_samples,
      Err(e) => {
        error!("receive_participant_message: {e:?}");
        return;
      }
    };

    // Then from secure reader if needed
    #[cfg(not(feature = "security"))]
    let mut secure_samples = vec![];
    #[cfg(feature = "security")]
    let mut secure_samples = match self
      .dcps_participant_message_secure
      .reader
      .take(usize::MAX, ReadCondition::any())
    {
      Ok(secure_samples) => secure_samples,
      Err(e) => {
        error!("Secure receive_participant_message: {e:?}");
        return;
      }
    };

    samples.append(&mut secure_samples);

    let msgs = samples
      .into_iter()
      .filter_map(|p| p.value().clone().value());

    let mut db = discovery_db_write(&self.discovery_db);
    for msg in msgs {
      db.update_lease_duration(&msg);
    }
  }

  fn spdp_publish(&self, local_dp: &DomainParticipant) {
    // setting 5 times the duration so lease doesn't break if update fails once or
    // twice
    let data = SpdpDiscoveredParticipantData::from_local_participant(
      local_dp,
      &self.security_opt,
      5.0 * Duration::from(Self::SPDP_PUBLISH_PERIOD),
    );

    #[cfg(feature = "security")]
    if let Some(security) = self.security_opt.as_ref() {
      security.secure_spdp_publish(&self.dcps_participant_secure.writer, data.clone());
    }

    self
      .dcps_participant
      .writer
      .write(data, None)
      .unwrap_or_else(|e| {
        error!("Discovery: Publishing to DCPS participant topic failed: {e:?}");
      });
  }

  pub fn publish_participant_message(&mut self) {
    // Inspect if we need to send liveness messages
    // See 8.4.13.5 "Implementing Writer Liveliness Protocol .." in the RPTS spec

    // Dig out the smallest lease duration for writers with Automatic liveliness QoS
    let writer_livelinesses: Vec<Liveliness> = discovery_db_read(&self.discovery_db)
      .get_all_local_topic_writers()
      .filter_map(|p| p.publication_topic_data.liveliness)
      .collect();

    let min_automatic_lease_duration_opt = writer_livelinesses
      .iter()
      .filter_map(|liveliness| match liveliness {
        Liveliness::Automatic { lease_duration } => Some(*lease_duration),
        _other => None,
      })
      .min();

    let timenow = Timestamp::now();

    let mut messages_to_be_sent: Vec<ParticipantMessageData> = vec![];

    // Send Automatic liveness update if needed
    if let Some(min_auto_duration) = min_automatic_lease_duration_opt {
      let time_since_last_auto_update =
        timenow.duration_since(self.liveliness_state.last_auto_update);
      trace!(
        "time_since_last_auto_update: {time_since_last_auto_update:?}, min_auto_duration \
         {min_auto_duration:?}"
      );

      // We choose to send a new liveliness message if longer than half of the min
      // auto duration has elapsed since last message
      if time_since_last_auto_update > min_auto_duration / 2 {
        let msg = ParticipantMessageData {
          guid: self.domain_participant.guid_prefix(),
          kind: ParticipantMessageDataKind::AUTOMATIC_LIVELINESS_UPDATE,
          data: Vec::new(),
        };
        messages_to_be_sent.push(msg);
      }
    }

    // Send ManualByParticipant liveliness update if someone has requested us to do
    // so.
    // Note: According to the RTPS spec (8.7.2.2.3 LIVELINESS) the interval at which
    // we check if we need to send a manual liveness update should depend on the
    // lease durations of writers with ManualByParticipant liveness QoS.
    // Now we just check this at the same interval as with Automatic liveness.
    // So TODO if needed: comply with the spec.
    if self
      .liveliness_state
      .manual_participant_liveness_refresh_requested
    {
      let msg = ParticipantMessageData {
        guid: self.domain_participant.guid_prefix(),
        kind: ParticipantMessageDataKind::MANUAL_LIVELINESS_UPDATE,
        data: Vec::new(),
      };
      messages_to_be_sent.push(msg);
    }

    for msg in messages_to_be_sent {
      let msg_kind = msg.kind;

      #[cfg(not(feature = "security"))]
      let write_result = self.dcps_participant_message.writer.write(msg, None);

      #[cfg(feature = "security")]
      let write_result = if let Some(security) = self.security_opt.as_ref() {
        security.write_liveness_message(
          &self.dcps_participant_message_secure.writer,
          &self.dcps_participant_message.writer,
          msg,
        )
      } else {
        // No security enabled
        self.dcps_participant_message.writer.write(msg, None)
      };

      match write_result {
        Ok(_) => {
          match msg_kind {
            ParticipantMessageDataKind::AUTOMATIC_LIVELINESS_UPDATE => {
              self.liveliness_state.last_auto_update = timenow;
            }
            ParticipantMessageDataKind::MANUAL_LIVELINESS_UPDATE => {
              // We delivered what was requested
              self
                .liveliness_state
                .manual_participant_liveness_refresh_requested = false;
            }
            _ => (),
          }
        }
        Err(e) => {
          error!("Failed to writer ParticipantMessageData. {e:?}");
        }
      }
    }
  }

  #[cfg(feature = "security")]
  fn receive_participant_stateless_message(&mut self) {
    if let Some(security) = self.security_opt.as_mut() {
      // Security enabled. Get messages from the stateless data reader & feed to
      // Secure Discovery.
      match self
        .dcps_participant_stateless_message
        .reader
        .into_iterator()
      {
        Ok(dr_iter) => {
          for msg in dr_iter {
            security.participant_stateless_message_read(
              &msg,
              &self.discovery_db,
              &self.discovery_updated_sender,
              &self.dcps_participant_stateless_message.writer,
            );
          }
        }
        Err(e) => {
          error!("receive_participant_stateless_message: {e:?}");
        }
      };
    }
  }

  #[cfg(feature = "security")]
  fn receive_participant_volatile_message(&mut self) {
    if let Some(security) = self.security_opt.as_mut() {
      // Security enabled. Get messages from the volatile message reader & feed to
      // Secure Discovery.
      match self
        .dcps_participant_volatile_message_secure
        .reader
        .into_iterator()
      {
        Ok(dr_iter) => {
          for msg in dr_iter {
            security.volatile_message_secure_read(&msg);
          }
        }
        Err(e) => {
          error!("receive_participant_volatile_message: {e:?}");
        }
      };
    }
  }

  #[cfg(feature = "security")]
  pub fn secure_spdp_receive(&mut self) {
    let sample_iter = match self.dcps_participant_secure.reader.into_iterator() {
      Ok(iter) => iter,
      Err(e) => {
        error!("secure_spdp_receive: {e:?}");
        return;
      }
    };

    for sample in sample_iter {
      let permission = if let Some(security) = self.security_opt.as_mut() {
        security.secure_participant_read(
          &sample,
          &self.discovery_db,
          &self.discovery_updated_sender,
        )
      } else {
        debug!("In secure_spdp_receive even though security not enabled?");
        return;
      };

      if permission == NormalDiscoveryPermission::Allow {
        match sample {
          Sample::Value(sec_data) => {
            let participant_data = sec_data.participant_data;
            self.process_discovered_participant_data(&participant_data);
          }
          // Sample::Dispose means that DomainParticipant was disposed
          Sample::Dispose(participant_guid) => {
            self.process_participant_dispose(participant_guid.0.prefix);
          }
        }
      }
    }
  }

  #[cfg(feature = "security")]
  pub fn secure_sedp_receive_subscription(&mut self, _read_history: Option<GuidPrefix>) {
    let sec_subs: Vec<Sample<SubscriptionBuiltinTopicDataSecure, GUID>> =
      match self.dcps_subscriptions_secure.reader.into_iterator() {
        // into_iterator() took these samples out of the reader, so all of them
        // must be processed.
        Ok(ds) => ds
          .map(|d| d.map_dispose(|g| g.0)) // map_dispose removes Endpoint_GUID wrapper around GUID
          .collect(),
        Err(e) => {
          error!("secure_sedp_receive_subscription: {e:?}");
          return;
        }
      };

    for sec_sub_sample in sec_subs {
      let permission = if let Some(security) = self.security_opt.as_mut() {
        security.check_secure_subscription_read(&sec_sub_sample, &self.discovery_db)
      } else {
        debug!("In secure_sedp_receive_subscription even though security not enabled?");
        return;
      };

      if permission == NormalDiscoveryPermission::Allow {
        match sec_sub_sample {
          Sample::Value(sec_sub) => {
            // Currently we use only the DiscoveredReaderData field, no DataTag
            let drd_from_topic = sec_sub.discovered_reader_data;
            // HORUS PATCH: a refused reader is not reported or matched.
            let Some(drd) =
              discovery_db_write(&self.discovery_db).update_subscription(&drd_from_topic)
            else {
              continue;
            };
            self.send_discovery_notification(DiscoveryNotificationType::ReaderUpdated {
              discovered_reader_data: drd,
            });
          }
          Sample::Dispose(reader_guid) => {
            info!("Secure Dispose Reader {reader_guid:?}");
            discovery_db_write(&self.discovery_db).remove_topic_reader(reader_guid);
            self.send_discovery_notification(DiscoveryNotificationType::ReaderLost { reader_guid });
            self.send_participant_status(DomainParticipantStatusEvent::ReaderLost {
              guid: reader_guid,
              reason: LostReason::Disposed,
            });
          }
        }
      }
    }
  }

  #[cfg(feature = "security")]
  pub fn secure_sedp_receive_publication(&mut self, _read_history: Option<GuidPrefix>) {
    let sec_pubs: Vec<Sample<PublicationBuiltinTopicDataSecure, GUID>> =
      match self.dcps_publications_secure.reader.into_iterator() {
        // into_iterator() took these samples out of the reader, so all of them
        // must be processed.
        Ok(ds) => ds
          .map(|d| d.map_dispose(|g| g.0)) // map_dispose removes Endpoint_GUID wrapper around GUID
          .collect(),
        Err(e) => {
          error!("secure_sedp_receive_publication: {e:?}");
          return;
        }
      };

    for sec_pub_sample in sec_pubs {
      let permission = if let Some(security) = self.security_opt.as_mut() {
        security.check_secure_publication_read(&sec_pub_sample, &self.discovery_db)
      } else {
        debug!("In secure_sedp_receive_publication even though security not enabled?");
        return;
      };

      if permission == NormalDiscoveryPermission::Allow {
        match sec_pub_sample {
          Sample::Value(se_pub) => {
            // Currently we use only the DiscoveredWriterData field, no DataTag
            let dwd_from_topic = se_pub.discovered_writer_data;
            // HORUS PATCH: a refused writer is not reported or matched.
            let Some(dwd) =
              discovery_db_write(&self.discovery_db).update_publication(&dwd_from_topic)
            else {
              continue;
            };
            self.send_discovery_notification(DiscoveryNotificationType::WriterUpdated {
              discovered_writer_data: dwd,
            });
          }
          Sample::Dispose(writer_guid) => {
            info!("Secure Dispose Writer {writer_guid:?}");
            discovery_db_write(&self.discovery_db).remove_topic_writer(writer_guid);
            self.send_discovery_notification(DiscoveryNotificationType::WriterLost { writer_guid });
            self.send_participant_status(DomainParticipantStatusEvent::WriterLost {
              guid: writer_guid,
              reason: LostReason::Disposed,
            });
          }
        }
      }
    }
  }

  #[cfg(feature = "security")]
  fn on_secure_discovery_message_resend_triggered(&mut self) {
    if let Some(security) = self.security_opt.as_mut() {
      // Security is enabled
      security.resend_cached_secure_discovery_messages(
        &self.dcps_participant_stateless_message.writer,
        &self.dcps_participant_volatile_message_secure.writer,
      );
      // Note: the resend timer is rescheduled by the shared-timer dispatch loop
      // after this method returns, so we must not reschedule it here.
    }
  }

  pub fn participant_cleanup(&self) {
    let removed = discovery_db_write(&self.discovery_db).participant_cleanup();
    for (guid_prefix, reason) in removed {
      debug!("participant cleanup - timeout for {guid_prefix:?}");
      self.send_discovery_notification(DiscoveryNotificationType::ParticipantLost { guid_prefix });
      self.send_participant_status(DomainParticipantStatusEvent::ParticipantLost {
        id: guid_prefix,
        reason,
      });
    }
  }

  pub fn topic_cleanup(&self) {
    discovery_db_write(&self.discovery_db).topic_cleanup();
  }

  fn sedp_publish_single_user_reader(&self, reader_data: &DiscoveredReaderData) {
    if !reader_data
      .reader_proxy
      .remote_reader_guid
      .entity_id
      .kind()
      .is_user_defined()
    {
      // Only readers of user-defined topics are published to discovery
      return;
    }

    #[cfg(not(feature = "security"))]
    let do_nonsecure_write = true;

    #[cfg(feature = "security")]
    let do_nonsecure_write = if let Some(security) = self.security_opt.as_ref() {
      security.sedp_publish_single_reader(
        &self.dcps_subscription.writer,
        &self.dcps_subscriptions_secure.writer,
        reader_data,
      );
      false
    } else {
      true // No security configured
    };

    if do_nonsecure_write {
      match self
        .dcps_subscription
        .writer
        .write(reader_data.clone(), None)
      {
        Ok(()) => {
          debug!(
            "Published DCPSSubscription data on topic {}, reader guid {:?}, data {:?}",
            reader_data.subscription_topic_data.topic_name(),
            reader_data.reader_proxy.remote_reader_guid,
            reader_data,
          );
        }
        Err(e) => {
          error!(
            "Failed to publish DCPSSubscription data on topic {}, reader guid {:?}. Error: {e}",
            reader_data.subscription_topic_data.topic_name(),
            reader_data.reader_proxy.remote_reader_guid
          );
          // TODO: try again later?
        }
      }
    }
  }

  fn add_local_writer(&self, guid: GUID) {
    // Get writer data from db
    let db = discovery_db_read(&self.discovery_db);
    let writer_data = match db.get_local_topic_writer(guid) {
      Some(d) => d,
      None => {
        warn!("Did not find a local writer {guid:?}");
        return;
      }
    };

    // Publish it to SEDP (if needed)
    self.sedp_publish_single_user_writer(writer_data);

    // Send the ReaderUpdated notification on any existing readers on the writer's
    // topic This will result in matching the endpoints if possible
    let existing_readers = db.readers_on_topic(writer_data.publication_topic_data.topic_name());
    for reader in existing_readers {
      self.send_discovery_notification(DiscoveryNotificationType::ReaderUpdated {
        discovered_reader_data: reader.clone(),
      });
    }
  }

  fn add_local_reader(&self, guid: GUID) {
    // Get reader data from db
    let db = discovery_db_read(&self.discovery_db);
    let reader_data = match db.get_local_topic_reader(guid) {
      Some(d) => d,
      None => {
        warn!("Did not find a local reader {guid:?}");
        return;
      }
    };

    // Publish it to SEDP (if needed)
    self.sedp_publish_single_user_reader(reader_data);

    // Send the WriterUpdated notification on any existing writers on the readers's
    // topic This will result in matching the endpoints if possible
    let existing_writers = db.writers_on_topic(reader_data.subscription_topic_data.topic_name());
    for writer in existing_writers {
      self.send_discovery_notification(DiscoveryNotificationType::WriterUpdated {
        discovered_writer_data: writer.clone(),
      });
    }
  }

  fn sedp_publish_single_user_writer(&self, writer_data: &DiscoveredWriterData) {
    if !writer_data
      .writer_proxy
      .remote_writer_guid
      .entity_id
      .kind()
      .is_user_defined()
    {
      // Only writers of user-defined topics are published to discovery
      return;
    }

    #[cfg(not(feature = "security"))]
    let do_nonsecure_write = true;

    #[cfg(feature = "security")]
    let do_nonsecure_write = if let Some(security) = self.security_opt.as_ref() {
      security.sedp_publish_single_writer(
        &self.dcps_publication.writer,
        &self.dcps_publications_secure.writer,
        writer_data,
      );
      false
    } else {
      true // No security configured
    };

    if do_nonsecure_write {
      match self
        .dcps_publication
        .writer
        .write(writer_data.clone(), None)
      {
        Ok(()) => {
          debug!(
            "Published DCPSPublication data on topic {}, writer guid {:?}",
            writer_data.publication_topic_data.topic_name(),
            writer_data.writer_proxy.remote_writer_guid
          );
        }
        Err(e) => {
          error!(
            "Failed to publish DCPSPublication data on topic {}, writer guid {:?}. Error: {e}",
            writer_data.publication_topic_data.topic_name(),
            writer_data.writer_proxy.remote_writer_guid
          );
          // TODO: try again later?
        }
      }
    }
  }

  pub fn sedp_publish_topic(&self, topic_name: &str) {
    let db = discovery_db_read(&self.discovery_db);
    // We might have multiple topics with the same name (but different Qos etc..),
    // and the following call gets just one of them. Should we publish all of
    // them or is this enough?
    let topic_data = match db.get_topic(topic_name) {
      Some(data) => data,
      None => {
        warn!("Did not find topic data with topic name {topic_name}");
        return;
      }
    };

    // Only user-defined topics are published to discovery
    let is_user_defined = !topic_data.topic_name().starts_with("DCPS");
    if !is_user_defined {
      return;
    }

    match self.dcps_topic.writer.write(topic_data.clone(), None) {
      Ok(()) => {
        debug!("Published topic {topic_name} to DCPSTopic");
      }
      Err(e) => {
        error!("Failed to publish topic {topic_name} to DCPSTopic: {e}");
        // TODO: try again later?
      }
    }
  }

  pub const fn builtin_subscriber_qos_builder() -> QosPolicyBuilder {
    // The Subscriber QoS is specified in DDS Spec v1.4 Section
    // "2.2.5 Built-in Topics"
    QosPolicyBuilder::new()
      .durability(Durability::TransientLocal)
      .presentation(Presentation {
        access_scope: PresentationAccessScope::Topic,
        coherent_access: false,
        ordered_access: false,
      })
      .deadline(Deadline(Duration::INFINITE))
      .ownership(Ownership::Shared)
      .liveliness(Liveliness::Automatic {
        lease_duration: Duration::INFINITE,
      })
      .time_based_filter(TimeBasedFilter {
        minimum_separation: Duration::ZERO,
      })
      .reliability(Reliability::Reliable {
        max_blocking_time: Duration::from_std(StdDuration::from_millis(100)),
      })
      .destination_order(DestinationOrder::ByReceptionTimestamp)
      // Spec gives History KeepLast depth = 1, but we
      // use somewhat higher to avoid losing data at the receiver in case
      // it comes in bursts and there is some delay in Discovery processing.
      .history(History::KeepLast { depth: 4 })
    // Spec says all resource limits should be "LENGTH_UNLIMITED", but that may
    // lead to memory exhaustion. The built-in SEDP readers get finite limits
    // (see builtin_sedp_reader_qos); the other built-in readers keep the
    // DDSCache default.
  }

  pub const fn builtin_subscriber_qos() -> QosPolicies {
    Self::builtin_subscriber_qos_builder().build()
  }

  // ResourceLimits of the built-in SEDP DataReaders.
  //
  // Without ResourceLimits, the DDSCache keeps at most 64 samples of a topic,
  // counted over all remote writers. Its garbage collection removes the oldest
  // samples above the limit, read or not. A reliable DataReader reads each
  // remote writer's samples in sequence number order, so an SEDP sample that
  // arrives while an earlier one is being repaired waits in the cache. Once 64
  // newer SEDP samples arrive, it may be removed unread. The RTPS Reader has
  // already acknowledged it, so the endpoint it announces stays undiscovered.
  //
  // The cache holds samples up to the limit whether or not they have been
  // read. 4096 lets a waiting sample outlast 4096 newer announcements instead
  // of 64; at a few hundred bytes per sample, a full cache takes a few MiB per
  // SEDP topic and DomainParticipant. RustDDS does not enforce max_instances,
  // and the DataReader keeps History depth samples per instance, so all three
  // limits are kept consistent.
  const SEDP_READER_RESOURCE_LIMITS: ResourceLimits = ResourceLimits {
    max_samples: 4096,
    max_instances: 4096,
    max_samples_per_instance: 4096,
  };

  // QoS of the built-in SEDP DataReaders (DCPSPublication,
  // DCPSSubscription, DCPSTopic, and secure publication/subscription).
  // Their Topics and DataWriters keep the built-in QoS without ResourceLimits.
  pub(crate) const fn builtin_sedp_reader_qos() -> QosPolicies {
    Self::builtin_subscriber_qos_builder()
      .resource_limits(Self::SEDP_READER_RESOURCE_LIMITS)
      .build()
  }

  pub const fn builtin_publisher_qos() -> QosPolicies {
    // TODO: Check if this definition is correct (spec?)
    // Problem: DDS spec v1.4 Section 2.2.5 gives Subscriber QoS policies,
    // but does not mention publisher QoS for built-in topics.
    //
    //
    QosPolicyBuilder::new()
      .durability(Durability::TransientLocal)
      .presentation(Presentation {
        access_scope: PresentationAccessScope::Topic,
        coherent_access: false,
        ordered_access: false,
      })
      .deadline(Deadline(Duration::INFINITE))
      .ownership(Ownership::Shared)
      .liveliness(Liveliness::Automatic {
        lease_duration: Duration::INFINITE,
      })
      .time_based_filter(TimeBasedFilter {
        minimum_separation: Duration::ZERO,
      })
      .reliability(Reliability::Reliable {
        max_blocking_time: Duration::from_std(StdDuration::from_millis(100)),
      })
      .destination_order(DestinationOrder::ByReceptionTimestamp)
      // History must be different from Subscriber side, because otherwise
      // only the latest created Reder/Writer/Topic will be buffered and the older
      // ones forgotten.
      .history(History::KeepAll)
      // .resource_limits(ResourceLimits { // TODO: Maybe lower limits would suffice?
      //   max_instances: std::i32::MAX,
      //   max_samples: std::i32::MAX,
      //   max_samples_per_instance: std::i32::MAX,
      // })
      .build()
  }

  // This is (partially) gven in DDS Spec v1.4 Section 8.5.3.3.1
  // SPDPbuiltinParticipantWriter Table 8.79 - Attributes of the RTPS
  // StatelessWriter used by the SPDP at least that is is BestEffort.
  pub const fn create_spdp_participant_qos() -> QosPolicies {
    Self::builtin_subscriber_qos_builder()
      .reliability(Reliability::BestEffort)
      // Use depth=8 to avoid losing data when we receive notifications
      // faster than we can process.
      .history(History::KeepLast { depth: 8 })
      .build()
  }

  // Note: Topics "participant" and "participant message" are differet things.
  pub(crate) const PARTICIPANT_MESSAGE_QOS: QosPolicies = Self::builtin_subscriber_qos_builder()
    .reliability(Reliability::Reliable {
      max_blocking_time: Duration::from_millis(10),
    })
    .history(History::KeepLast { depth: 1 })
    .build();

  // Note RTPS 2.3 / 2.5 spec Section
  // "8.4.13.3 BuiltinParticipantMessageWriter and
  // BuiltinParticipantMessageReader QoS":
  // "BuiltinParticipantMessageWriter shall use reliability.kind =
  // RELIABLE_RELIABILITY_QOS."
  //
  // But the reader side can use either Realiability setting.
  // SPDPdiscoveredParticipantData may indicate over the wire that
  // their reader for these messages is BestEffort, via builtinEndpointQos,
  // which writers must notice. This allows them to not expect ACKNACKs from
  // BestEffort Reader and avoid stalling.

  // TODO: Check if the following built-in QoS policies should also be based on
  // builtin_subscriber_qos_builder rather than empty QoS policy. The change
  // requires interop testing with differet DDSs, including security.

  #[cfg(feature = "security")]
  pub const fn create_participant_stateless_message_qos() -> QosPolicies {
    // See section 7.4.3 "New DCPSParticipantStatelessMessage builtin Topic" of the
    // Security spec
    QosPolicyBuilder::new()
      .reliability(Reliability::BestEffort) // Important!
      .history(History::KeepLast { depth: 1 })
      .build()
  }

  #[cfg(feature = "security")]
  pub const fn create_participant_volatile_message_secure_qos() -> QosPolicies {
    // See Table 18 – Non-default Qos policies for
    // BuiltinParticipantVolatileMessageSecureWriter of the Security spec
    //
    // Base this on builtin_subscriber_qos_builder() (like the other built-in
    // QoS) so that the fabricated remote writer proxy carries the same
    // presentation/deadline/ownership/etc. policies as the locally created
    // volatile reader (whose effective QoS inherits them from the built-in
    // Subscriber). Using an empty QosPolicyBuilder here left presentation unset
    // on the proxy while the reader required PresentationAccessScope::Topic,
    // causing a spurious QoS incompatibility that prevented the volatile
    // endpoints from matching and blocked all secure key exchange.
    Self::builtin_subscriber_qos_builder()
      .reliability(Reliability::Reliable {
        max_blocking_time: Duration::from_std(StdDuration::from_millis(100)),
      })
      .history(History::KeepAll)
      .durability(Durability::Volatile)
      .build()
  }

  fn send_discovery_notification(&self, dntype: DiscoveryNotificationType) {
    match self.discovery_updated_sender.send(dntype) {
      Ok(_) => (),
      Err(e) => error!("Failed to send DiscoveryNotification {e:?}"),
    }
  }

  fn send_participant_status(&self, event: DomainParticipantStatusEvent) {
    self
      .participant_status_sender
      .try_send(event)
      .unwrap_or_else(|e| error!("Cannot report participant status: {e:?}"));
  }
}

// -----------------------------------------------------------------------
// -----------------------------------------------------------------------
// -----------------------------------------------------------------------
// -----------------------------------------------------------------------

#[cfg(test)]
mod tests {
  use std::net::SocketAddr;

  use chrono::Utc;
  use speedy::{Endianness, Writable};

  use super::*;
  use crate::{
    dds::{adapters::no_key::DeserializerAdapter, ddsdata::DDSData},
    discovery::sedp_messages::TopicBuiltinTopicData,
    messages::submessages::submessages::{InterpreterSubmessage, WriterSubmessage},
    network::{constant::*, udp_listener::UDPListener, udp_sender::UDPSender},
    rtps::submessage::*,
    structure::cache_change::ChangeKind,
    test::{
      shape_type::ShapeType,
      test_data::{
        create_cdr_pl_rtps_data_message, spdp_participant_msg_mod, spdp_publication_msg,
        spdp_subscription_msg,
      },
      test_domain::test_domain_id,
    },
    RepresentationIdentifier, SerializedPayload,
  };

  #[test]
  fn sedp_topic_caches_get_sedp_reader_limits() {
    let participant = DomainParticipant::new(test_domain_id(47)).expect("participant creation");
    let dds_cache = participant.dds_cache();
    let max_samples = |topic: &str| {
      dds_cache
        .read()
        .unwrap()
        .get_existing_topic_cache(topic)
        .unwrap()
        .lock()
        .unwrap()
        .max_keep_samples()
    };

    for topic in [
      builtin_topic_names::DCPS_PUBLICATION,
      builtin_topic_names::DCPS_SUBSCRIPTION,
      builtin_topic_names::DCPS_TOPIC,
    ] {
      assert_eq!(max_samples(topic), 4096, "{topic} cache limit");
    }
    #[cfg(feature = "security")]
    for topic in [
      builtin_topic_names::DCPS_PUBLICATIONS_SECURE,
      builtin_topic_names::DCPS_SUBSCRIPTIONS_SECURE,
    ] {
      assert_eq!(max_samples(topic), 4096, "{topic} cache limit");
    }
    assert_eq!(
      max_samples(builtin_topic_names::DCPS_PARTICIPANT),
      64,
      "SPDP keeps the default cache limit"
    );
  }

  #[test]
  fn discovery_participant_data_test() {
    let mut poll = mio1::Poll::new().unwrap();
    let listener_port = spdp_well_known_unicast_port(test_domain_id(12), 0);

    let mut udp_listener =
      UDPListener::new_unicast("127.0.0.1", listener_port).expect("udp listener creation");
    poll
      .registry()
      .register(
        udp_listener.mio_socket(),
        mio1::Token(0),
        mio1::Interest::READABLE,
      )
      .unwrap();

    // sending participant data to discovery
    let udp_sender = UDPSender::new_with_random_port().expect("failed to create UDPSender");
    let addresses = vec![SocketAddr::new("127.0.0.1".parse().unwrap(), listener_port)];

    let tdata = spdp_participant_msg_mod(11000);
    let msg_data = tdata
      .write_to_vec_with_ctx(Endianness::LittleEndian)
      .expect("Failed to write msg data");

    udp_sender.send_to_all(&msg_data, &addresses);

    let mut events = mio1::Events::with_capacity(10);
    poll
      .poll(&mut events, Some(StdDuration::from_secs(1)))
      .unwrap();

    let _data2 = udp_listener.get_message();
    // TODO: we should have received our own participants info decoding the
    // actual message might be good idea
  }

  #[test]
  fn discovery_reader_data_test() {
    use crate::{
      serialization::pl_cdr_adapters::PlCdrSerialize, structure::locator::Locator, TopicKind,
    };

    let participant = DomainParticipant::new(test_domain_id(0)).expect("participant creation");

    let topic = participant
      .create_topic(
        "Square".to_string(),
        "ShapeType".to_string(),
        &QosPolicies::qos_none(),
        TopicKind::WithKey,
      )
      .unwrap();

    let publisher = participant
      .create_publisher(&QosPolicies::qos_none())
      .unwrap();
    let _writer = publisher
      .create_datawriter_cdr::<ShapeType>(&topic, None)
      .unwrap();

    let subscriber = participant
      .create_subscriber(&QosPolicies::qos_none())
      .unwrap();
    let _reader =
      subscriber.create_datareader::<ShapeType, CDRDeserializerAdapter<ShapeType>>(&topic, None);

    let mut poll = mio1::Poll::new().unwrap();
    let listener_port = spdp_well_known_unicast_port(test_domain_id(14), 0);

    let mut udp_listener = UDPListener::new_unicast("127.0.0.1", listener_port).unwrap();
    poll
      .registry()
      .register(
        udp_listener.mio_socket(),
        mio1::Token(0),
        mio1::Interest::READABLE,
      )
      .unwrap();

    let udp_sender: UDPSender =
      UDPSender::new_with_random_port().expect("failed to create UDPSender");
    let addresses: Vec<SocketAddr> =
      vec![SocketAddr::new("127.0.0.1".parse().unwrap(), listener_port)];

    let mut tdata: crate::rtps::Message = spdp_subscription_msg();
    let mut data: bytes::Bytes;
    for submsg in &mut tdata.submessages {
      match &mut submsg.body {
        SubmessageBody::Writer(WriterSubmessage::Data(d, _)) => {
          let mut drd: DiscoveredReaderData = PlCdrDeserializerAdapter::from_bytes(
            &d.unwrap_serialized_payload_value(),
            RepresentationIdentifier::PL_CDR_LE,
          )
          .unwrap();
          drd.reader_proxy.unicast_locator_list.clear();
          drd
            .reader_proxy
            .unicast_locator_list
            .push(Locator::from(SocketAddr::new(
              "127.0.0.1".parse().unwrap(),
              11001,
            )));
          drd.reader_proxy.multicast_locator_list.clear();

          data = drd
            .to_pl_cdr_bytes(RepresentationIdentifier::PL_CDR_LE)
            .unwrap();
          d.update_serialized_payload_value(data.clone());
        }
        SubmessageBody::Interpreter(_) => (),
        _ => continue,
      }
    }

    let msg_data: Vec<u8> = tdata
      .write_to_vec_with_ctx(Endianness::LittleEndian)
      .expect("Failed to write msg data");

    udp_sender.send_to_all(&msg_data, &addresses);

    let mut events = mio1::Events::with_capacity(10);
    poll
      .poll(&mut events, Some(StdDuration::from_secs(1)))
      .unwrap();

    let _data2: Vec<u8> = udp_listener.get_message();
  }

  #[test]
  fn discovery_writer_data_test() {
    use crate::TopicKind;
    let participant =
      DomainParticipant::new(test_domain_id(0)).expect("Failed to create participant");

    let topic = participant
      .create_topic(
        "Square".to_string(),
        "ShapeType".to_string(),
        &QosPolicies::qos_none(),
        TopicKind::WithKey,
      )
      .unwrap();

    let publisher = participant
      .create_publisher(&QosPolicies::qos_none())
      .unwrap();
    let _writer = publisher
      .create_datawriter_cdr::<ShapeType>(&topic, None)
      .unwrap();

    let subscriber = participant
      .create_subscriber(&QosPolicies::qos_none())
      .unwrap();
    let _reader =
      subscriber.create_datareader::<ShapeType, CDRDeserializerAdapter<ShapeType>>(&topic, None);

    let mut poll = mio1::Poll::new().unwrap();
    let mut udp_listener = UDPListener::new_unicast("127.0.0.1", 0).unwrap();
    poll
      .registry()
      .register(
        udp_listener.mio_socket(),
        mio1::Token(0),
        mio1::Interest::READABLE,
      )
      .unwrap();

    let udp_sender = UDPSender::new_with_random_port().expect("failed to create UDPSender");
    let addresses = vec![SocketAddr::new(
      "127.0.0.1".parse().unwrap(),
      spdp_well_known_unicast_port(test_domain_id(15), 0),
    )];

    let mut tdata = spdp_publication_msg();
    for submsg in &mut tdata.submessages {
      match &mut submsg.body {
        SubmessageBody::Interpreter(v) => match v {
          InterpreterSubmessage::InfoDestination(dst, _flags) => {
            dst.guid_prefix = participant.guid_prefix();
          }
          _ => continue,
        },
        SubmessageBody::Writer(_) => (),
        SubmessageBody::Reader(_) => (),
        #[cfg(feature = "security")]
        SubmessageBody::Security(_) => (),
      }
    }

    let par_msg_data = spdp_participant_msg_mod(udp_listener.port())
      .write_to_vec_with_ctx(Endianness::LittleEndian)
      .expect("Failed to write participant data.");

    let msg_data = tdata
      .write_to_vec_with_ctx(Endianness::LittleEndian)
      .expect("Failed to write msg data");

    udp_sender.send_to_all(&par_msg_data, &addresses);
    udp_sender.send_to_all(&msg_data, &addresses);

    let mut events = Events::with_capacity(10);
    poll
      .poll(&mut events, Some(StdDuration::from_secs(1)))
      .unwrap();

    for _ in udp_listener.messages_bounded(usize::MAX) {
      info!("Message received");
    }
  }

  #[test]
  fn discovery_topic_data_test() {
    let _participant = DomainParticipant::new(test_domain_id(0));

    let topic_data = DiscoveredTopicData::new(
      Utc::now(),
      TopicBuiltinTopicData {
        key: None,
        name: String::from("Square"),
        type_name: String::from("ShapeType"),
        durability: None,
        deadline: None,
        latency_budget: None,
        liveliness: None,
        reliability: None,
        lifespan: None,
        destination_order: None,
        presentation: None,
        history: None,
        resource_limits: None,
        ownership: None,
      },
    );

    let rtps_message = create_cdr_pl_rtps_data_message(
      &topic_data,
      EntityId::SEDP_BUILTIN_TOPIC_READER,
      EntityId::SEDP_BUILTIN_TOPIC_WRITER,
    );

    let udp_sender = UDPSender::new_with_random_port().expect("failed to create UDPSender");
    let addresses = vec![SocketAddr::new(
      "127.0.0.1".parse().unwrap(),
      spdp_well_known_unicast_port(test_domain_id(16), 0),
    )];

    let rr = rtps_message
      .write_to_vec_with_ctx(Endianness::LittleEndian)
      .unwrap();

    udp_sender.send_to_all(&rr, &addresses);
  }

  // Stores sample sn of an SEDP writer in a built-in reader's topic cache as the
  // RTPS Reader does for reliably received DATA, but without notifying the
  // DataReader. The sample stays pending until Discovery reads that DataReader
  // for some other reason.
  fn add_pending_sedp_sample(
    participant: &DomainParticipant,
    topic_name: &str,
    writer_guid: GUID,
    sn: i64,
    data: DDSData,
  ) {
    use crate::{
      structure::{cache_change::CacheChange, sequence_number::SequenceNumber},
      WriteOptions,
    };

    let topic_cache = participant
      .dds_cache()
      .read()
      .unwrap()
      .get_existing_topic_cache(topic_name)
      .unwrap();
    let mut topic_cache = topic_cache.lock().unwrap();
    let sn = SequenceNumber::new(sn);
    topic_cache.add_change(
      &Timestamp::now(),
      CacheChange::new(writer_guid, sn, WriteOptions::default(), data),
    );
    topic_cache.mark_reliably_received_before(writer_guid, sn.plus_1());
  }

  // SEDP sample announcing an endpoint
  fn sedp_value(endpoint_data: &impl PlCdrSerialize) -> DDSData {
    DDSData::new(SerializedPayload::new_from_bytes(
      RepresentationIdentifier::PL_CDR_LE,
      endpoint_data
        .to_pl_cdr_bytes(RepresentationIdentifier::PL_CDR_LE)
        .unwrap(),
    ))
  }

  // SEDP sample disposing an endpoint
  fn sedp_dispose(endpoint: GUID) -> DDSData {
    DDSData::new_disposed_by_key(
      ChangeKind::NotAliveDisposed,
      SerializedPayload::new_from_bytes(
        RepresentationIdentifier::PL_CDR_LE,
        Endpoint_GUID(endpoint)
          .to_pl_cdr_bytes(RepresentationIdentifier::PL_CDR_LE)
          .unwrap(),
      ),
    )
  }

  // When Discovery sees a participant for the first time, it reads the SEDP
  // readers again for that participant ("rediscovery"). SEDP samples of other
  // participants that are pending at that moment must not be lost: reading takes
  // them out of the reader, and the reliable SEDP writer will not send them
  // again.
  #[test]
  fn rediscovery_keeps_pending_sedp_samples_of_other_participants() {
    use crate::{
      dds::statusevents::{DataReaderStatus, DataWriterStatus},
      discovery::sedp_messages::{
        PublicationBuiltinTopicData, ReaderProxy, SubscriptionBuiltinTopicData, WriterProxy,
      },
      structure::guid::EntityKind,
      StatusEvented, TopicKind,
    };

    // Status events reported so far by the observer and its local endpoints
    #[derive(Default)]
    struct Reported {
      writer: Vec<DataWriterStatus>,
      reader: Vec<DataReaderStatus>,
      participant: Vec<DomainParticipantStatusEvent>,
    }
    impl Reported {
      fn publication_matched(&self, remote_reader: GUID, current_change: i32) -> bool {
        self.writer.iter().any(|s| {
          matches!(s, DataWriterStatus::PublicationMatched { reader, current, .. }
            if *reader == remote_reader && current.count_change() == current_change)
        })
      }
      fn subscription_matched(&self, remote_writer: GUID, current_change: i32) -> bool {
        self.reader.iter().any(|s| {
          matches!(s, DataReaderStatus::SubscriptionMatched { writer, current, .. }
            if *writer == remote_writer && current.count_change() == current_change)
        })
      }
      fn disposed(&self, endpoint: GUID) -> bool {
        self.participant.iter().any(|e| {
          matches!(e,
            DomainParticipantStatusEvent::ReaderLost { guid, reason: LostReason::Disposed }
            | DomainParticipantStatusEvent::WriterLost { guid, reason: LostReason::Disposed }
            if *guid == endpoint)
        })
      }
    }

    const DOMAIN_ID: u16 = 47; // not used by other tests
    const TOPIC: &str = "pending";

    let observer = DomainParticipant::new(DOMAIN_ID).expect("participant creation");
    let observer_status = observer.status_listener();

    // Readers and writers of some other participant, on the topic of the
    // observer's local endpoints
    let other = GuidPrefix::new(b"otherpartcpt");
    let endpoint = |key, kind| GUID::new(other, EntityId::new([0, 0, key], kind));
    let reader_guid = endpoint(1, EntityKind::READER_WITH_KEY_USER_DEFINED);
    let writer_guid = endpoint(2, EntityKind::WRITER_WITH_KEY_USER_DEFINED);
    let disposed_reader_guid = endpoint(3, EntityKind::READER_WITH_KEY_USER_DEFINED);
    let disposed_writer_guid = endpoint(4, EntityKind::WRITER_WITH_KEY_USER_DEFINED);
    let reader_data = |guid| DiscoveredReaderData {
      reader_proxy: ReaderProxy::new(guid, false, vec![], vec![]),
      subscription_topic_data: SubscriptionBuiltinTopicData::new(
        guid,
        None,
        TOPIC.to_string(),
        "ShapeType".to_string(),
        &QosPolicies::qos_none(),
        None,
      ),
      content_filter: None,
      user_data: Vec::new(),
    };
    let writer_data = |guid| DiscoveredWriterData {
      last_updated: std::time::Instant::now(),
      writer_proxy: WriterProxy::new(guid, vec![], vec![]),
      publication_topic_data: PublicationBuiltinTopicData::new(
        guid,
        None,
        TOPIC.to_string(),
        "ShapeType".to_string(),
        None,
      ),
      user_data: Vec::new(),
    };
    let subscriptions_writer = GUID::new(other, EntityId::SEDP_BUILTIN_SUBSCRIPTIONS_WRITER);
    let publications_writer = GUID::new(other, EntityId::SEDP_BUILTIN_PUBLICATIONS_WRITER);

    // A reader and a writer that the observer knows and matches before the
    // new participant appears. Their dispose is pending below.
    add_pending_sedp_sample(
      &observer,
      builtin_topic_names::DCPS_SUBSCRIPTION,
      subscriptions_writer,
      1,
      sedp_value(&reader_data(disposed_reader_guid)),
    );
    add_pending_sedp_sample(
      &observer,
      builtin_topic_names::DCPS_PUBLICATION,
      publications_writer,
      1,
      sedp_value(&writer_data(disposed_writer_guid)),
    );
    // The observer's own SEDP announcements of its local endpoints come back
    // through its SEDP readers. That wakes Discovery, which then processes the
    // two samples above as well.
    let topic = observer
      .create_topic(
        TOPIC.to_string(),
        "ShapeType".to_string(),
        &QosPolicies::qos_none(),
        TopicKind::WithKey,
      )
      .unwrap();
    let publisher = observer.create_publisher(&QosPolicies::qos_none()).unwrap();
    let local_writer = publisher
      .create_datawriter_cdr::<ShapeType>(&topic, None)
      .unwrap();
    let subscriber = observer
      .create_subscriber(&QosPolicies::qos_none())
      .unwrap();
    let local_reader = subscriber
      .create_datareader_cdr::<ShapeType>(&topic, None)
      .unwrap();

    let reader_known = |guid| {
      observer
        .discovered_readers()
        .iter()
        .any(|d| d.reader_proxy.remote_reader_guid == guid)
    };
    let writer_known = |guid| {
      observer
        .discovered_writers()
        .iter()
        .any(|d| d.writer_proxy.remote_writer_guid == guid)
    };
    let mut reported = Reported::default();
    // Polls the condition, collecting status events, until it holds or the
    // timeout expires
    let mut wait_until = |timeout: StdDuration, condition: &dyn Fn(&Reported) -> bool| {
      let deadline = std::time::Instant::now() + timeout;
      loop {
        reported
          .writer
          .extend(std::iter::from_fn(|| local_writer.try_recv_status()));
        reported
          .reader
          .extend(std::iter::from_fn(|| local_reader.try_recv_status()));
        reported
          .participant
          .extend(std::iter::from_fn(|| observer_status.try_recv_status()));
        if condition(&reported) || std::time::Instant::now() >= deadline {
          return condition(&reported);
        }
        std::thread::sleep(StdDuration::from_millis(20));
      }
    };
    // Once the observer's own endpoints are in its DiscoveryDB, its own
    // announcements have been processed, and nothing else wakes its SEDP
    // readers until the new participant appears.
    assert!(
      wait_until(StdDuration::from_secs(10), &|r| {
        reader_known(local_reader.guid())
          && writer_known(local_writer.guid())
          && r.publication_matched(disposed_reader_guid, 1)
          && r.subscription_matched(disposed_writer_guid, 1)
      }),
      "the observer did not match its local endpoints with the other participant's endpoints"
    );

    // A new reader and writer, and the dispose of the ones above, received by
    // the observer's SEDP readers but not yet processed by its Discovery.
    add_pending_sedp_sample(
      &observer,
      builtin_topic_names::DCPS_SUBSCRIPTION,
      subscriptions_writer,
      2,
      sedp_value(&reader_data(reader_guid)),
    );
    add_pending_sedp_sample(
      &observer,
      builtin_topic_names::DCPS_SUBSCRIPTION,
      subscriptions_writer,
      3,
      sedp_dispose(disposed_reader_guid),
    );
    add_pending_sedp_sample(
      &observer,
      builtin_topic_names::DCPS_PUBLICATION,
      publications_writer,
      2,
      sedp_value(&writer_data(writer_guid)),
    );
    add_pending_sedp_sample(
      &observer,
      builtin_topic_names::DCPS_PUBLICATION,
      publications_writer,
      3,
      sedp_dispose(disposed_writer_guid),
    );

    // A new participant appears. The observer's Discovery processes its SPDP
    // sample while the SEDP samples above are still pending.
    let newcomer = DomainParticipant::new(DOMAIN_ID).expect("participant creation");

    let observer_db = observer.discovery_db();
    assert!(
      wait_until(StdDuration::from_secs(10), &|_| {
        discovery_db_read(&observer_db)
          .find_participant_proxy(newcomer.guid_prefix())
          .is_some()
      }),
      "the observer did not discover the new participant"
    );
    wait_until(StdDuration::from_secs(2), &|r| {
      reader_known(reader_guid)
        && writer_known(writer_guid)
        && !reader_known(disposed_reader_guid)
        && !writer_known(disposed_writer_guid)
        && r.publication_matched(reader_guid, 1)
        && r.subscription_matched(writer_guid, 1)
        && r.publication_matched(disposed_reader_guid, -1)
        && r.subscription_matched(disposed_writer_guid, -1)
        && r.disposed(disposed_reader_guid)
        && r.disposed(disposed_writer_guid)
    });
    assert!(
      reader_known(reader_guid) && writer_known(writer_guid),
      "the pending SEDP samples were dropped when the new participant was discovered"
    );
    assert!(
      !reader_known(disposed_reader_guid) && !writer_known(disposed_writer_guid),
      "the pending SEDP disposes were dropped when the new participant was discovered"
    );
    assert!(
      reported.publication_matched(reader_guid, 1) && reported.subscription_matched(writer_guid, 1),
      "the local endpoints were not matched with the pending reader and writer"
    );
    assert!(
      reported.publication_matched(disposed_reader_guid, -1)
        && reported.subscription_matched(disposed_writer_guid, -1),
      "the local endpoints are still matched with the disposed reader and writer"
    );
    assert!(
      reported.disposed(disposed_reader_guid) && reported.disposed(disposed_writer_guid),
      "the disposed reader and writer were not reported lost"
    );
  }
}
