use std::{
  collections::{BTreeMap, BTreeSet},
  fmt, iter,
  rc::Rc,
  sync::{Arc, Mutex, MutexGuard},
  task::Waker,
  time::{Duration as StdDuration, Instant},
};

use mio1::Token;
use log::{debug, error, info, trace, warn};
use enumflags2::BitFlags;
use speedy::Endianness;
#[cfg(feature = "security")]
use speedy::Writable;

use crate::{
  dds::{
    ddsdata::DDSData,
    qos::{policy, HasQoSPolicy, QosPolicies},
    statusevents::{
      CountWithChange, DataReaderStatus, DomainParticipantStatusEvent, StatusChannelSender,
    },
    with_key::{
      datawriter::{WriteOptions, WriteOptionsBuilder},
      simpledatareader::ReaderCommand,
    },
  },
  messages::{
    header::Header,
    protocol_id::ProtocolId,
    protocol_version::ProtocolVersion,
    submessages::{
      elements::{
        inline_qos::InlineQos, parameter_list::ParameterList, serialized_payload::SerializedPayload,
      },
      submessages::*,
    },
    vendor_id::VendorId,
  },
  horus_ack_window::{self, AckWindow}, // HORUS PATCH (item 17)
  horus_reassembly,                     // HORUS PATCH
  mio_source,
  network::udp_sender::UDPSender,
  polling::{ReadySender, SharedTimer, WakeReceiver},
  rtps::{
    fragment_assembler::FragmentAssembler, message_receiver::MessageReceiverState,
    rtps_writer_proxy::RtpsWriterProxy, timed_event::DpTimerEvent, Message,
  },
  structure::{
    cache_change::{CacheChange, ChangeKind},
    dds_cache::TopicCache,
    duration::Duration,
    entity::RTPSEntity,
    guid::{EntityId, GuidPrefix, GUID},
    locator::Locator,
    sequence_number::{FragmentNumber, FragmentNumberSet, SequenceNumber, SequenceNumberSet},
    time::Timestamp,
  },
};
#[cfg(feature = "security")]
use super::Submessage;
#[cfg(feature = "security")]
use crate::security::{security_plugins::SecurityPluginsHandle, SecurityResult};
#[cfg(not(feature = "security"))]
use crate::no_security::SecurityPluginsHandle;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum TimedEvent {
  DeadlineMissedCheck,
  // HORUS PATCH (HORUS-PATCH.md, item 9): answer a writer's HEARTBEAT that was deferred
  // while its sample's fragments were still arriving.
  HeartbeatResponse { writer_guid: GUID },
  // HORUS PATCH (HORUS-PATCH.md, item 15): look for partially received samples that got
  // no fragment for FRAGMENT_ASSEMBLY_TIMEOUT and give them up, whether or not this reader
  // receives anything else. Armed while the reader has samples in reassembly.
  FragmentGc,
  // HORUS PATCH (HORUS-PATCH.md, item 17): a reader with an ack window looks whether its
  // application has taken samples, and requests from the writers it held back what now
  // fits. Armed while a writer has sequence numbers beyond the window.
  HorusAckWindow,
}

// HORUS PATCH (HORUS-PATCH.md, item 9): how long a partially received sample counts as
// still arriving after its latest fragment, and so how long the answer to a HEARTBEAT that
// finds only that sample missing is deferred (Fast DDS readers' heartbeatResponseDelay,
// 5 ms). Fast DDS piggybacks a HEARTBEAT on nearly every DATA_FRAG datagram; answering each
// at once with a NACK_FRAG for fragments still in flight doubled the datagrams of a
// fragmented round trip without the writer resending anything.
const HEARTBEAT_RESPONSE_DELAY: StdDuration = StdDuration::from_millis(5);

// HORUS PATCH: a HEARTBEAT whose answer waits for a timer: the union of the
// writer's HEARTBEATs received meanwhile.
struct DeferredHeartbeat {
  first_sn: SequenceNumber,
  last_sn: SequenceNumber,
  // Every deferred HEARTBEAT had the final flag: answer only if something is missing.
  final_flag_set: bool,
  reply_locators: Vec<Locator>,
}

// Some pieces necessary to construct a reader.
// These can be sent between threads, whereas a Reader cannot.
pub(crate) struct ReaderIngredients {
  pub guid: GUID,
  pub notification_sender: crate::mio_source::NotificationSender,
  pub status_sender: StatusChannelSender<DataReaderStatus>,
  pub topic_name: String,
  pub(crate) topic_cache_handle: Arc<Mutex<TopicCache>>, /* A handle to the topic cache in DDS
                                                          * cache */
  pub(crate) like_stateless: bool, // Usually false (see like_stateless attribute of Reader)
  pub qos_policy: QosPolicies,
  pub data_reader_command_receiver: WakeReceiver<ReaderCommand>,
  pub(crate) data_reader_waker: Arc<Mutex<Option<Waker>>>,
  pub(crate) poll_event_sender: mio_source::PollEventSender,
  /// When this reader is a built-in discovery reader, cache changes also wake
  /// Discovery's mio 1.2 poll with the reader's discovery token.
  pub(crate) discovery_notify: Option<(ReadySender<mio1::Token>, mio1::Token)>,

  pub(crate) security_plugins: Option<SecurityPluginsHandle>,

  // HORUS PATCH (HORUS-PATCH.md, item 17): a reliable reader with an ack window: what its
  // DataReader's application has taken.
  pub(crate) horus_taken: Option<Arc<horus_ack_window::TakenMarks>>,
}

impl fmt::Debug for ReaderIngredients {
  // Need manual implementation, because channels cannot be Debug formatted.
  fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
    f.debug_struct("Reader")
      .field("my_guid", &self.guid)
      .field("topic_name", &self.topic_name)
      .field("qos_policy", &self.qos_policy)
      .finish()
  }
}

pub(crate) struct Reader {
  // Should the instant be sent?
  notification_sender: crate::mio_source::NotificationSender,
  status_sender: StatusChannelSender<DataReaderStatus>,
  udp_sender: Rc<UDPSender>,

  // By default, this reader is a StatefulReader (see RTPS spec section 8.4.12)
  // If like_stateless is true, then the reader mimics the behavior of a StatelessReader
  // This means for example that the reader does not keep track of matched remote writers.
  // This behavior is needed only for a single built-in discovery topic of Secure DDS
  // (topic DCPSParticipantStatelessMessage)
  like_stateless: bool,
  // Reliability Qos. Note that a StatelessReader cannot be Reliable (RTPS Spec: Section 8.4.11.2)
  reliability: policy::Reliability,
  // Reader stores a pointer to a mutex on the topic cache
  topic_cache: Arc<Mutex<TopicCache>>,

  #[cfg(test)]
  seqnum_instant_map: BTreeMap<SequenceNumber, Timestamp>,

  topic_name: String,
  qos_policy: QosPolicies,

  my_guid: GUID,

  heartbeat_response_delay: StdDuration,

  // TODO: Implement (use) this
  #[allow(dead_code)]
  heartbeat_suppression_duration: StdDuration,

  received_heartbeat_count: i32,

  fragment_assemblers: BTreeMap<GUID, FragmentAssembler>,
  // HORUS PATCH (HORUS-PATCH.md): the sum of `fragment_assemblers`' reserved bytes (what
  // every incomplete sample is charged), bounded by horus_reassembly::budget_per_reader.
  reassembly_bytes: usize,
  // HORUS PATCH: per matched writer (reliable stateful reader), the sequence
  // number of the latest DATA_FRAG taken by the assembler and when it came.
  latest_fragment: BTreeMap<GUID, (SequenceNumber, Instant)>,
  // HORUS PATCH: writers whose HEARTBEAT answer is deferred (a timer is armed).
  deferred_heartbeats: BTreeMap<GUID, DeferredHeartbeat>,
  last_fragment_garbage_collect: Timestamp,
  // HORUS PATCH (item 15): a TimedEvent::FragmentGc is pending for this reader.
  fragment_gc_armed: bool,
  // HORUS PATCH (item 17): reader-side flow control (QosPolicies::with_horus_ack_window).
  ack_window: Option<AckWindow>,
  matched_writers: BTreeMap<GUID, RtpsWriterProxy>,
  writer_match_count_total: i32, // total count, never decreases

  requested_deadline_missed_count: i32,
  offered_incompatible_qos_count: i32,

  pub(crate) timed_event_timer: SharedTimer<DpTimerEvent>,
  pub(crate) data_reader_command_receiver: WakeReceiver<ReaderCommand>,
  data_reader_waker: Arc<Mutex<Option<Waker>>>,
  poll_event_sender: mio_source::PollEventSender,
  discovery_notify: Option<(ReadySender<mio1::Token>, mio1::Token)>,

  participant_status_sender: StatusChannelSender<DomainParticipantStatusEvent>,

  #[allow(dead_code)] // to avoid warning if no security feature
  security_plugins: Option<SecurityPluginsHandle>,
}

// If we are assembling a fragment, but it does not receive any updates
// for this time, the AssemblyBuffer is just dropped.
// HORUS PATCH (item 15): horus_reassembly's, which documents it.
const FRAGMENT_ASSEMBLY_TIMEOUT: Duration =
  Duration::from_secs(horus_reassembly::FRAGMENT_ASSEMBLY_TIMEOUT_SECS as i32);
// minimum interval (max frequency) of AssemblyBuffer GC
const MIN_FRAGMENT_GC_INTERVAL: Duration = Duration::from_secs(2);

impl Reader {
  pub(crate) fn new(
    i: ReaderIngredients,
    udp_sender: Rc<UDPSender>,
    timed_event_timer: SharedTimer<DpTimerEvent>,
    participant_status_sender: StatusChannelSender<DomainParticipantStatusEvent>,
  ) -> Self {
    // HORUS PATCH (item 17)
    let ack_window = i.horus_taken.map(|taken| {
      // HORUS PATCH (item 18): what the application has not taken stays in the topic cache.
      i.topic_cache_handle
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .horus_keep_untaken(&taken);
      AckWindow::new(i.qos_policy.horus_ack_window().unwrap_or(1), taken)
    });
    // Verify that the topic cache corresponds to the topic of the Reader
    let topic_cache_name = i.topic_cache_handle.lock().unwrap().topic_name();
    if i.topic_name != topic_cache_name {
      panic!(
        "RustDDS internal bug: topic name {} and topic cache name {} differ when creating a Reader",
        i.topic_name, topic_cache_name
      );
    }

    // If reader should be stateless, only BestEffort QoS is supported
    if i.like_stateless && i.qos_policy.is_reliable() {
      panic!("RustDDS internal bug: attempted to create a stateless Reader with Reliable QoS");
    }

    Self {
      notification_sender: i.notification_sender,
      status_sender: i.status_sender,
      udp_sender,
      like_stateless: i.like_stateless,
      reliability: i
        .qos_policy
        .reliability() // use qos specification
        .unwrap_or(policy::Reliability::BestEffort), // or default to BestEffort
      topic_cache: i.topic_cache_handle,
      topic_name: i.topic_name,
      qos_policy: i.qos_policy,

      #[cfg(test)]
      seqnum_instant_map: BTreeMap::new(),
      my_guid: i.guid,

      heartbeat_response_delay: StdDuration::new(0, 500_000_000), // 0,5sec
      heartbeat_suppression_duration: StdDuration::new(0, 0),
      received_heartbeat_count: 0,
      fragment_assemblers: BTreeMap::new(),
      reassembly_bytes: 0,
      latest_fragment: BTreeMap::new(),
      deferred_heartbeats: BTreeMap::new(),
      last_fragment_garbage_collect: Timestamp::now(),
      fragment_gc_armed: false,
      ack_window,
      matched_writers: BTreeMap::new(),
      writer_match_count_total: 0,
      requested_deadline_missed_count: 0,
      offered_incompatible_qos_count: 0,
      timed_event_timer,
      data_reader_command_receiver: i.data_reader_command_receiver,
      data_reader_waker: i.data_reader_waker,
      poll_event_sender: i.poll_event_sender,
      discovery_notify: i.discovery_notify,
      participant_status_sender,

      security_plugins: i.security_plugins,
    }
  }
  // TODO: check if it's necessary to implement different handlers for discovery
  // and user messages

  /// Entity id encoded as a mio token. The internal poll no longer registers
  /// per-reader tokens; the ready queue carries the id instead.
  #[allow(dead_code)]
  pub fn entity_token(&self) -> Token {
    self.guid().entity_id.as_token()
  }

  pub fn set_requested_deadline_check_timer(&mut self) {
    if let Some(deadline) = self.qos_policy.deadline {
      debug!(
        "GUID={:?} set_requested_deadline_check_timer: {:?}",
        self.my_guid,
        deadline.0.to_std()
      );
      self.timed_event_timer.borrow_mut().set_timeout(
        deadline.0.to_std(),
        DpTimerEvent::Reader {
          entity_id: self.my_guid.entity_id,
          event: TimedEvent::DeadlineMissedCheck,
        },
      );
    } else {
      trace!(
        "GUID={:?} - no deadline policy - do not set set_requested_deadline_check_timer",
        self.my_guid
      );
    }
  }

  pub fn send_status_change(&self, change: DataReaderStatus) {
    match self.status_sender.try_send_impl(change) {
      Ok(()) => (), // expected result
      Err(std::sync::mpsc::TrySendError::Full(_)) => {
        // TODO: dead code. `StatusChannelSender::try_send` currently converts a
        // full channel into `Ok(())` (dropping the event), so this arm is never
        // reached. Kept because the handling is correct if `try_send` is ever
        // made to return `Full` again (cf. PR #442).
        trace!("Reader cannot send new status changes, datareader is full.");
        // It is perfectly normal to fail due to full channel, because
        // no-one is required to be listening to these.
      }
      Err(std::sync::mpsc::TrySendError::Disconnected(_)) => {
        // If we get here, our DataReader has died. The Reader should now dispose
        // itself. Or possibly it has lost the receiver object, which is sort of
        // sloppy, but does not necessarily mean the end of the world.
        // TODO: Implement Reader disposal.
        info!("send_status_change - cannot send status, DataReader Disconnected.");
      }
    }
  }

  fn send_participant_status(&self, event: DomainParticipantStatusEvent) {
    self
      .participant_status_sender
      .try_send(event)
      .unwrap_or_else(|e| error!("Cannot report participant status: {e:?}"));
  }

  // The deadline that the DataReader was expecting through its QosPolicy
  // DEADLINE was not respected for a specific instance
  // if statusChange is returned it should be send to DataReader
  // this calculation should be repeated every self.qos_policy.deadline
  fn calculate_if_requested_deadline_is_missed(&mut self) -> Vec<DataReaderStatus> {
    debug!("calculate_if_requested_deadline_is_missed");

    let deadline_duration = match self.qos_policy.deadline {
      None => return vec![],
      Some(policy::Deadline(deadline_duration)) => deadline_duration,
    };

    let mut changes: Vec<DataReaderStatus> = vec![];
    let now = Timestamp::now();
    for writer_proxy in self.matched_writers.values_mut() {
      if let Some(last_change) = writer_proxy.last_change_timestamp() {
        let since_last = now.duration_since(last_change);
        // if time singe last received message is greater than deadline increase status
        // and return notification.
        trace!("Comparing deadlines: {since_last:?} - {deadline_duration:?}");
        if since_last > deadline_duration {
          debug!("Deadline missed: {since_last:?} - {deadline_duration:?}");
          self.requested_deadline_missed_count += 1;
          changes.push(DataReaderStatus::RequestedDeadlineMissed {
            count: CountWithChange::start_from(self.requested_deadline_missed_count, 1),
          });
        }
      } else {
        // no messages received ever so deadline must be missed.
        // TODO: But what if the Reader or WriterProxy was just created?
        self.requested_deadline_missed_count += 1;
        changes.push(DataReaderStatus::RequestedDeadlineMissed {
          count: CountWithChange::start_from(self.requested_deadline_missed_count, 1),
        });
      }
    } // for
    changes
  } // fn

  // Handle a single timed event. The shared timer is drained by the event loop,
  // which dispatches each expired event to the addressed Reader.
  pub fn handle_timed_event(&mut self, event: TimedEvent) {
    match event {
      TimedEvent::DeadlineMissedCheck => {
        self.handle_requested_deadline_event();
        self.set_requested_deadline_check_timer(); // re-prime timer
      }
      TimedEvent::HeartbeatResponse { writer_guid } => {
        self.answer_deferred_heartbeat(writer_guid);
      }
      TimedEvent::FragmentGc => {
        self.fragment_gc_armed = false;
        self.expire_fragments(Timestamp::now());
        self.arm_fragment_gc();
      }
      TimedEvent::HorusAckWindow => self.request_what_fits(true),
    }
  }

  pub fn process_command(&mut self) {
    trace!("process_command {:?}", self.my_guid);
    // HORUS PATCH (HORUS-PATCH.md, item 17): the DataReader's application opened room in
    // the ack window for a held-back writer (TakenMarks::note): request what fits now.
    let horus_woken = self
      .ack_window
      .as_ref()
      .is_some_and(|w| w.taken.requesting());
    if horus_woken {
      self.request_what_fits(false);
    }
    loop {
      use std::sync::mpsc::TryRecvError;
      match self.data_reader_command_receiver.try_recv() {
        Ok(ReaderCommand::ResetRequestedDeadlineStatus) => {
          warn!("RESET_REQUESTED_DEADLINE_STATUS not implemented!");
          // TODO: This should be implemented.
        }
        // Disconnected is normal when terminating
        Err(TryRecvError::Disconnected) => {
          trace!("DataReader disconnected");
          break;
        }
        Err(TryRecvError::Empty) => {
          if !horus_woken {
            warn!("There was no command. Spurious command event??");
          }
          break;
        }
      }
    }
  }

  fn handle_requested_deadline_event(&mut self) {
    debug!("handle_requested_deadline_event");
    for missed_deadline in self.calculate_if_requested_deadline_is_missed() {
      self.send_status_change(missed_deadline);
    }
  }

  // TODO Used for test/debugging purposes
  #[cfg(test)]
  pub fn history_cache_change_data(&self, sequence_number: SequenceNumber) -> Option<DDSData> {
    let topic_cache = self.acquire_the_topic_cache_guard();
    let cc = self
      .seqnum_instant_map
      .get(&sequence_number)
      .and_then(|i| topic_cache.get_change(i));

    debug!("history cache !!!! {cc:?}");

    cc.map(|cc| cc.data_value.clone())
  }

  // TODO Used for test/debugging purposes
  #[cfg(test)]
  pub fn history_cache_sequence_start_and_end_numbers(&self) -> Vec<SequenceNumber> {
    if self.seqnum_instant_map.is_empty() {
      vec![]
    } else {
      let start = self.seqnum_instant_map.iter().min().unwrap().0;
      let end = self.seqnum_instant_map.iter().max().unwrap().0;
      vec![*start, *end]
    }
  }

  // updates or adds a new writer proxy, doesn't touch changes
  pub fn update_writer_proxy(&mut self, proxy: RtpsWriterProxy, offered_qos: &QosPolicies) {
    if self.like_stateless {
      debug!(
        "Attempted to update writer proxy for stateless reader. Ignoring. topic={:?}",
        self.topic_name
      );
      return;
    }

    debug!("update_writer_proxy topic={:?}", self.topic_name);
    let writer = proxy.remote_writer_guid;

    match offered_qos.compliance_failure_wrt(&self.qos_policy) {
      None => {
        // success, update or insert
        let count_change = self.matched_writer_update(proxy);
        if count_change > 0 {
          self.horus_rematched(writer); // HORUS PATCH (item 24)
          self.writer_match_count_total += count_change;
          self.send_status_change(DataReaderStatus::SubscriptionMatched {
            total: CountWithChange::new(self.writer_match_count_total, count_change),
            current: CountWithChange::new(self.matched_writers.len() as i32, count_change),
            writer,
          });
          self.send_participant_status(DomainParticipantStatusEvent::RemoteWriterMatched {
            local_reader: self.my_guid,
            remote_writer: writer,
          });

          info!(
            "Matched new remote writer on topic={:?} writer={:?}",
            self.topic_name, writer
          );

          // The writer may have matched us earlier and sent its HEARTBEAT before we
          // knew it, so that HEARTBEAT was discarded. Without a request the next
          // one comes only after the writer's heartbeat period, and a Reliable
          // reader withholds all samples received in the meantime.
          if self.reliability != policy::Reliability::BestEffort {
            if let Some(mut writer_proxy) = self.matched_writers.remove(&writer) {
              self.send_preemptive_acknack_to(&mut writer_proxy);
              self.matched_writers.insert(writer, writer_proxy);
            }
          }
        }
      }
      Some(bad_policy_id) => {
        // no QoS match.
        self.offered_incompatible_qos_count += 1;
        self.send_status_change(DataReaderStatus::RequestedIncompatibleQos {
          count: CountWithChange::new(self.offered_incompatible_qos_count, 1),
          last_policy_id: bad_policy_id,
          writer,
          requested_qos: Box::new(self.qos_policy.clone()),
          offered_qos: Box::new(offered_qos.clone()),
        });
        self.send_participant_status(DomainParticipantStatusEvent::RemoteWriterQosIncompatible {
          local_reader: self.my_guid,
          remote_writer: writer,
          requested_qos: Box::new(self.qos_policy.clone()),
          offered_qos: Box::new(offered_qos.clone()),
        });

        warn!("update_writer_proxy - QoS mismatch {bad_policy_id:?}");
        info!(
          "update_writer_proxy - QoS mismatch: topic={:?} requested={:?}  offered={:?}",
          self.topic_name, self.qos_policy, offered_qos
        );
      }
    }
  }

  // HORUS PATCH (HORUS-PATCH.md, item 24): `writer` matched (again). When it had left
  // before and what it announced then and this reader never accepted was counted lost
  // (horus_departed_writers.rs), those sequence numbers are not taken again: the new
  // proxy marks them not available (acknowledged, never delivered), or the application
  // would get samples it counted lost.
  fn horus_rematched(&mut self, writer: GUID) {
    let Some(window) = &self.ack_window else {
      return;
    };
    let Some(claimed) = window.taken.departed_rematched(writer) else {
      return;
    };
    if let Some(proxy) = self.matched_writers.get_mut(&writer) {
      // Saturating: a hostile writer's HEARTBEAT may have announced up to i64::MAX
      // (review 148: `claimed + 1` overflowed, a panic in a debug build's event loop).
      proxy.irrelevant_changes_up_to(SequenceNumber::new(i64::from(claimed).saturating_add(1)));
    }
  }

  // return value counts how many new proxies were added
  fn matched_writer_update(&mut self, proxy: RtpsWriterProxy) -> i32 {
    if let Some(op) = self.matched_writer_mut(proxy.remote_writer_guid) {
      op.update_contents(proxy);
      0
    } else {
      self.matched_writers.insert(proxy.remote_writer_guid, proxy);
      1
    }
  }

  pub fn remove_writer_proxy(&mut self, writer_guid: GUID) {
    // HORUS PATCH: nothing to answer or track for a writer gone.
    self.latest_fragment.remove(&writer_guid);
    self.deferred_heartbeats.remove(&writer_guid);
    if let Some(window) = &mut self.ack_window {
      // HORUS PATCH (item 24): what it announced and this reader never accepted is lost.
      let accepted = self
        .matched_writers
        .get(&writer_guid)
        .and_then(RtpsWriterProxy::horus_accepted_up_to);
      if let Some(accepted) = accepted {
        window.departed(writer_guid, accepted);
      }
      window.forget(writer_guid); // HORUS PATCH (item 17): its room goes to the others
    }
    if self.matched_writers.contains_key(&writer_guid) {
      self.matched_writers.remove(&writer_guid);
      self
        .acquire_the_topic_cache_guard()
        .forget_reliable_writer(writer_guid);
      #[cfg(feature = "security")]
      if let Some(security_plugins_handle) = &self.security_plugins {
        security_plugins_handle
          .get_plugins()
          .unregister_remote_writer(&self.my_guid, &writer_guid)
          .unwrap_or_else(|e| error!("{e}"));
      }
      self.send_status_change(DataReaderStatus::SubscriptionMatched {
        total: CountWithChange::new(self.writer_match_count_total, 0),
        current: CountWithChange::new(self.matched_writers.len() as i32, -1),
        writer: writer_guid,
      });
    }
  }

  // Entire remote participant was lost.
  // Remove all remote writers belonging to it.
  pub fn participant_lost(&mut self, guid_prefix: GuidPrefix) {
    let lost_writers: Vec<GUID> = self
      .matched_writers
      .range(guid_prefix.range())
      .map(|(g, _)| *g)
      .collect();
    for writer in lost_writers {
      self.remove_writer_proxy(writer);
    }
  }

  pub fn contains_writer(&self, entity_id: EntityId) -> bool {
    if !self.like_stateless {
      self
        .matched_writers
        .iter()
        .any(|(&g, _)| g.entity_id == entity_id)
    } else {
      // Making it explicit: stateless reader does not contain any writers
      false
    }
  }

  #[cfg(test)]
  pub(crate) fn matched_writer_add(
    &mut self,
    remote_writer_guid: GUID,
    remote_group_entity_id: EntityId,
    unicast_locator_list: Vec<Locator>,
    multicast_locator_list: Vec<Locator>,
    qos: &QosPolicies,
  ) {
    let proxy = RtpsWriterProxy::new(
      remote_writer_guid,
      unicast_locator_list,
      multicast_locator_list,
      remote_group_entity_id,
    );
    self.update_writer_proxy(proxy, qos);
  }

  fn matched_writer(&self, remote_writer_guid: GUID) -> Option<&RtpsWriterProxy> {
    self.matched_writers.get(&remote_writer_guid)
  }

  fn matched_writer_mut(&mut self, remote_writer_guid: GUID) -> Option<&mut RtpsWriterProxy> {
    self.matched_writers.get_mut(&remote_writer_guid)
  }

  // handles regular data message and updates history cache
  pub fn handle_data_msg(
    &mut self,
    data: Data,
    data_flags: BitFlags<DATA_Flags>,
    mr_state: &MessageReceiverState,
  ) {
    // trace!("handle_data_msg entry");
    let receive_timestamp = Timestamp::now();

    // parse write_options out of the message
    let mut write_options_b = WriteOptionsBuilder::new();
    // Check if we have s source timestamp
    if let Some(source_timestamp) = mr_state.source_timestamp {
      write_options_b = write_options_b.source_timestamp(source_timestamp);
    }
    // Check if the message specifies a related_sample_identity
    let representation_identifier = DATA_Flags::cdr_representation_identifier(data_flags);
    if let Some(related_sample_identity) =
      data.inline_qos.as_ref().and_then(|inline_qos_parameters| {
        InlineQos::related_sample_identity(inline_qos_parameters, representation_identifier)
          .unwrap_or_else(|e| {
            error!("Deserializing related_sample_identity: {:?}", e);
            None
          })
      })
    {
      write_options_b = write_options_b.related_sample_identity(related_sample_identity);
    }

    let writer_guid = GUID::new_with_prefix_and_id(mr_state.source_guid_prefix, data.writer_id);
    let writer_seq_num = data.writer_sn; // for borrow checker

    match self.data_to_dds_data(data, data_flags) {
      Ok(dds_data) => self.process_received_data(
        dds_data,
        receive_timestamp,
        write_options_b.build(),
        writer_guid,
        writer_seq_num,
      ),
      Err(e) => debug!("Parsing DATA to DDSData failed: {e}"),
    }
  }

  pub fn handle_datafrag_msg(
    &mut self,
    datafrag: &DataFrag,
    datafrag_flags: BitFlags<DATAFRAG_Flags>,
    mr_state: &MessageReceiverState,
  ) {
    let writer_guid = GUID::new_with_prefix_and_id(mr_state.source_guid_prefix, datafrag.writer_id);
    let seq_num = datafrag.writer_sn;
    let receive_timestamp = Timestamp::now();
    //trace!("DATAFRAG received topic={:?}", self.topic_name);

    // check if this submessage is expired already
    // TODO: Maybe this check is in the wrong place altogether? It should be
    // done when Datareader fetches data for the application.
    if let (Some(source_timestamp), Some(lifespan)) =
      (mr_state.source_timestamp, self.qos().lifespan)
    {
      let elapsed = receive_timestamp.duration_since(source_timestamp);
      if lifespan.duration < elapsed {
        info!(
          "DataFrag {:?} from {:?} lifespan exceeded. duration={:?} elapsed={:?}",
          seq_num, writer_guid, lifespan.duration, elapsed
        );
        return;
      }
    }

    // parse write_options out of the message
    // TODO: This is almost duplicate code from DATA processing
    let mut write_options_b = WriteOptionsBuilder::new();
    // Check if we have a source timestamp
    if let Some(source_timestamp) = mr_state.source_timestamp {
      write_options_b = write_options_b.source_timestamp(source_timestamp);
    }
    // Check if the message specifies a related_sample_identity
    let representation_identifier = DATAFRAG_Flags::cdr_representation_identifier(datafrag_flags);
    if let Some(related_sample_identity) =
      datafrag
        .inline_qos
        .as_ref()
        .and_then(|inline_qos_parameters| {
          InlineQos::related_sample_identity(inline_qos_parameters, representation_identifier)
            .unwrap_or_else(|e| {
              error!("Deserializing related_sample_identity: {:?}", e);
              None
            })
        })
    {
      write_options_b = write_options_b.related_sample_identity(related_sample_identity);
    }

    // HORUS PATCH (crates/horus-ros2/vendor/rustdds/HORUS-PATCH.md): a fragment of a sample
    // this reader already received from that writer (or one below its ack base) is a
    // duplicate: a writer sending each datagram through two transports (rmw_fastrtps under
    // ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST with a transport profile), or a repair that
    // crossed the last fragment. Feeding it to the assembler would open a reassembly buffer
    // for a sample that was delivered and forgotten: it never completes, and past
    // MAX_ASSEMBLY_BUFFERS of them a reliable reader evicts the newest (needed) sample at
    // each of its fragments until the 10 s fragment GC. Ignore it, as process_received_data
    // ignores a duplicate DATA (with the same SPDP exception).
    if !self.like_stateless && self.my_guid.entity_id != EntityId::SPDP_BUILTIN_PARTICIPANT_READER
    {
      if let Some(writer_proxy) = self.matched_writer(writer_guid) {
        if writer_proxy.should_ignore_change(seq_num) {
          trace!("handle_datafrag_msg already have this seq={seq_num:?}");
          return;
        }
      }
    }

    // HORUS PATCH (HORUS-PATCH.md): a fragment that would open a reassembly the reader
    // must not hold (a sample over the size limit, one cut into fragments under
    // horus_reassembly::MIN_FRAGMENT_SIZE, no room in the reader's budget, a user writer it
    // has not matched) is counted and dropped before anything is allocated.
    if !self.admit_datafrag(writer_guid, datafrag) {
      return;
    }

    // Feed to fragment assembler ...
    let writer_seq_num = datafrag.writer_sn; // for borrow checker
    let fragment_assembler = self.fragment_assembler_mutable(writer_guid);
    let reserved_before = fragment_assembler.reserved();
    let completed_dds_data = fragment_assembler.new_datafrag(datafrag, datafrag_flags);

    // HORUS PATCH: keep the reader's total in step, and forget a writer with nothing in
    // reassembly (so that writer GUIDs cannot pile up empty assemblers).
    let (reserved_after, now_empty) = (fragment_assembler.reserved(), fragment_assembler.is_empty());
    self.reassembly_bytes = self.reassembly_bytes - reserved_before + reserved_after;
    if now_empty {
      self.fragment_assemblers.remove(&writer_guid);
    }
    // HORUS PATCH: this writer's fragments of `seq_num` are arriving now.
    if self.reliability != policy::Reliability::BestEffort
      && !self.like_stateless
      && self.matched_writers.contains_key(&writer_guid)
    {
      self
        .latest_fragment
        .insert(writer_guid, (writer_seq_num, Instant::now()));
    }

    // ... and continue processing, if data was completed.
    if let Some(dds_data) = completed_dds_data {
      // Source timestamp (if any) will be the timestamp of the last fragment (that
      // completes the sample).
      self.process_received_data(
        dds_data,
        receive_timestamp,
        write_options_b.build(),
        writer_guid,
        writer_seq_num,
      );
    } else {
      self.garbage_collect_fragments();
    }
    self.arm_fragment_gc(); // HORUS PATCH (item 15)
  }

  // HORUS PATCH (HORUS-PATCH.md, item 17): while a writer has sequence numbers beyond the
  // ack window, a TimedEvent::HorusAckWindow is pending.
  fn arm_ack_window_timer(&mut self) {
    let Some(window) = &mut self.ack_window else {
      return;
    };
    window.taken.set_held_back(true);
    if window.timer_armed {
      return;
    }
    window.timer_armed = true;
    self.timed_event_timer.borrow_mut().set_timeout(
      horus_ack_window::POLL_PERIOD,
      DpTimerEvent::Reader {
        entity_id: self.my_guid.entity_id,
        event: TimedEvent::HorusAckWindow,
      },
    );
  }

  // HORUS PATCH (item 17): the ack window's timer fired (`timer`), or the DataReader woke
  // this reader because its application took samples: for each writer held back, widen
  // its window by what the application has taken since, and request (ACKNACK) what now
  // fits and is missing, so the writer sends it again without waiting for its next
  // HEARTBEAT. The timer is re-armed (if not pending) while a writer is still held back.
  fn request_what_fits(&mut self, timer: bool) {
    let Some(window) = &mut self.ack_window else {
      return;
    };
    if timer {
      window.timer_armed = false;
      // A wake already sent stays pending: process_command runs this again for it.
      window.taken.restart_count();
    }
    for writer_guid in window.held_back() {
      self.with_mutable_writer_proxy(writer_guid, |this, writer_proxy| {
        let Some(window) = &mut this.ack_window else {
          return;
        };
        window.refresh(writer_guid, writer_proxy.all_ackable_before(), |s| {
          writer_proxy.horus_sn_state(s)
        });
        let Some(upto) = window.to_request(writer_guid, writer_proxy.all_ackable_before()) else {
          return;
        };
        // Everything before the ack base is acknowledged; whatever is still missing up to
        // the new limit is requested (also what an earlier request asked for: its repair
        // may have been lost; a duplicate is dropped).
        let base = writer_proxy.all_ackable_before();
        let missing = if base > upto {
          Vec::new()
        } else {
          writer_proxy.missing_seqnums(base, upto)
        };
        let set: BTreeSet<SequenceNumber> = missing
          .iter()
          .copied()
          .take_while(|sn| *sn < base + SequenceNumber::new(256))
          .collect();
        let acknack = AckNack {
          reader_id: this.entity_id(),
          writer_id: writer_guid.entity_id,
          reader_sn_state: SequenceNumberSet::from_base_and_set(base, &set),
          count: writer_proxy.next_ack_nack_sequence_number(),
        };
        let flags = BitFlags::<ACKNACK_Flags>::from_flag(ACKNACK_Flags::Endianness)
          | BitFlags::<ACKNACK_Flags>::from_flag(ACKNACK_Flags::Final);
        let locators = writer_proxy.unicast_locator_list.clone();
        this.send_acknack_to(
          flags,
          acknack,
          InfoDestination {
            guid_prefix: writer_guid.prefix,
          },
          &locators,
          writer_guid,
        );
      });
    }
    if self
      .ack_window
      .as_ref()
      .is_some_and(|w| !w.held_back().is_empty())
    {
      self.arm_ack_window_timer();
    } else if let Some(w) = &self.ack_window {
      w.taken.set_held_back(false);
    }
  }

  // HORUS PATCH (HORUS-PATCH.md, item 15): while this reader has samples in reassembly, a
  // TimedEvent::FragmentGc is pending, so that a sample whose fragments stopped coming is
  // given up (and its process budget given back) even if this reader never receives
  // another DATA_FRAG.
  fn arm_fragment_gc(&mut self) {
    if self.fragment_gc_armed || self.fragment_assemblers.is_empty() {
      return;
    }
    self.fragment_gc_armed = true;
    self.timed_event_timer.borrow_mut().set_timeout(
      horus_reassembly::FRAGMENT_GC_PERIOD,
      DpTimerEvent::Reader {
        entity_id: self.my_guid.entity_id,
        event: TimedEvent::FragmentGc,
      },
    );
  }

  // HORUS PATCH (item 15): whether this is a built-in (discovery) reader, which takes
  // DATA_FRAGs from participants not yet discovered and so gets the small
  // horus_reassembly::BUILTIN_* limits.
  fn is_builtin(&self) -> bool {
    !self.my_guid.entity_id.entity_kind.is_user_defined()
  }

  // HORUS PATCH (item 15): the largest sample this reader reassembles.
  fn reassembly_sample_limit(&self) -> usize {
    if self.is_builtin() {
      horus_reassembly::BUILTIN_MAX_SAMPLE_SIZE
    } else {
      horus_reassembly::max_sample_size()
    }
  }

  // HORUS PATCH (item 15): the bytes this reader may hold in reassembly.
  fn reassembly_budget(&self) -> usize {
    if self.is_builtin() {
      horus_reassembly::BUILTIN_BUDGET_PER_READER
    } else {
      horus_reassembly::budget_per_reader()
    }
  }

  // HORUS PATCH (HORUS-PATCH.md, horus_reassembly.rs): whether `datafrag` may go to the
  // fragment assembler. A fragment of a sample already in reassembly may (it is charged);
  // one that would open a reassembly is refused and counted when it comes from a user
  // writer this stateful reader has not matched (the sample would be dropped on
  // completion), when it announces a sample over the size limit or cut into more than one
  // fragment under horus_reassembly::MIN_FRAGMENT_SIZE, or when the reader's
  // budget has no room for it even after evicting what the writer's assembler may give up.
  fn admit_datafrag(&mut self, writer_guid: GUID, datafrag: &DataFrag) -> bool {
    let sn = datafrag.writer_sn;
    if self.is_frag_partially_received(writer_guid, sn) {
      return true;
    }
    let data_size = datafrag.data_size as usize;
    let limit = self.reassembly_sample_limit();
    let budget = self.reassembly_budget();
    let refused = if !self.like_stateless
      && writer_guid.entity_id.entity_kind.is_user_defined()
      && self.matched_writer(writer_guid).is_none()
    {
      Some(horus_reassembly::Refusal::UnmatchedWriter)
    } else if data_size > limit {
      Some(horus_reassembly::Refusal::Oversize)
    } else if horus_reassembly::too_many_fragments(data_size, datafrag.fragment_size) {
      Some(horus_reassembly::Refusal::TooManyFragments)
    } else {
      let fragments = usize::from(datafrag.total_number_of_fragments());
      let cost = horus_reassembly::cost(data_size, fragments);
      // HORUS PATCH (HORUS-PATCH.md, item 12): the process's budget too (every reader of
      // every participant): the room this writer's assembler may give up is given up for
      // either, (item 15) only when giving it all up would make enough room: when other
      // readers hold the process's budget, evicting would lose samples and admit nothing.
      let fits = |held: usize, freed: usize| {
        held.saturating_sub(freed).saturating_add(cost) <= budget
          && horus_reassembly::process_has_room_after_freeing(cost, freed)
      };
      let evictable = self
        .fragment_assemblers
        .get(&writer_guid)
        .map_or(0, |fa| fa.evictable_for(sn));
      let worth_evicting = fits(self.reassembly_bytes, evictable);
      while worth_evicting && !fits(self.reassembly_bytes, 0) {
        let Some(fa) = self.fragment_assemblers.get_mut(&writer_guid) else {
          break;
        };
        let before = fa.reserved();
        if !fa.evict_one_for(sn) {
          break;
        }
        self.reassembly_bytes -= before - fa.reserved();
      }
      if self.reassembly_bytes.saturating_add(cost) > budget {
        Some(horus_reassembly::Refusal::OverBudget)
      } else if !horus_reassembly::process_has_room_for(cost) {
        Some(horus_reassembly::Refusal::OverProcessBudget)
      } else {
        None
      }
    };
    let Some(refusal) = refused else {
      return true;
    };
    horus_reassembly::count(refusal, || {
      format!(
        "topic={:?} writer={writer_guid:?} sn={sn:?} sampleSize={data_size} fragmentSize={} \
         limit={} in reassembly={} budget={} process: held={} budget={}",
        self.topic_name,
        datafrag.fragment_size,
        limit,
        self.reassembly_bytes,
        budget,
        horus_reassembly::held_in_process(),
        horus_reassembly::budget_per_process()
      )
    });
    false
  }

  // HORUS PATCH: no fragment size; each sample's buffer keeps its own (fragment_assembler.rs).
  fn fragment_assembler_mutable(&mut self, writer_guid: GUID) -> &mut FragmentAssembler {
    let reliable = self.reliability != policy::Reliability::BestEffort;
    self
      .fragment_assemblers
      .entry(writer_guid)
      .or_insert_with(|| FragmentAssembler::new(reliable))
  }

  fn garbage_collect_fragments(&mut self) {
    // If GC time/packet limit has been exceeded, iterate through
    // fragment assemblers and discard those assembly buffers whose
    // creation / modification timestamps look like it is no longer receiving
    // data and can therefore be discarded.
    let now = Timestamp::now();
    if now - self.last_fragment_garbage_collect > MIN_FRAGMENT_GC_INTERVAL {
      self.expire_fragments(now);
    } else {
      trace!("Not yet AssemblyBuffer GC time.");
    }
  }

  // HORUS PATCH (item 15; was the body of garbage_collect_fragments): gives up the samples
  // that got no fragment for FRAGMENT_ASSEMBLY_TIMEOUT before `now`, counted `expired`.
  fn expire_fragments(&mut self, now: Timestamp) {
    self.last_fragment_garbage_collect = now;

    let expire_before = now - FRAGMENT_ASSEMBLY_TIMEOUT;

    let reassembly_bytes = &mut self.reassembly_bytes; // HORUS PATCH
    let mut expired = 0; // HORUS PATCH
    self
      .fragment_assemblers
      .iter_mut()
      .for_each(|(writer, fa)| {
        debug!("AssemblyBuffer GC writer {writer:?}");
        let before = fa.reserved(); // HORUS PATCH
        expired += fa.garbage_collect_before(expire_before);
        *reassembly_bytes -= before - fa.reserved(); // HORUS PATCH
      });
    self.fragment_assemblers.retain(|_, fa| !fa.is_empty()); // HORUS PATCH
    horus_reassembly::count_expired(expired); // HORUS PATCH
  }

  fn missing_frags_for(
    &self,
    writer_guid: GUID,
    seq: SequenceNumber,
  ) -> Box<dyn '_ + Iterator<Item = FragmentNumber>> {
    self.fragment_assemblers.get(&writer_guid).map_or_else(
      || Box::new(iter::empty()) as Box<dyn Iterator<Item = FragmentNumber>>,
      |fa| fa.missing_frags_for(seq),
    )
  }

  fn is_frag_partially_received(&self, writer_guid: GUID, seq: SequenceNumber) -> bool {
    self
      .fragment_assemblers
      .get(&writer_guid)
      .is_some_and(|fa| fa.is_partially_received(seq))
  }

  // common parts of processing DATA or a completed DATAFRAG (when all frags are
  // received)
  fn process_received_data(
    &mut self,
    dds_data: DDSData,
    receive_timestamp: Timestamp,
    write_options: WriteOptions,
    writer_guid: GUID,
    writer_sn: SequenceNumber,
  ) {
    trace!(
      "handle_data_msg from {:?} seq={:?} topic={:?} reliability={:?} stateless={:?}",
      writer_guid,
      writer_sn,
      self.topic_name,
      self.reliability,
      self.like_stateless,
    );
    if !self.like_stateless {
      let my_entity_id = self.my_guid.entity_id; // to please borrow checker
      // HORUS PATCH (item 17): the field, not matched_writer_mut, so that the ack window
      // can be borrowed beside it.
      if let Some(writer_proxy) = self.matched_writers.get_mut(&writer_guid) {
        if writer_proxy.should_ignore_change(writer_sn) {
          // change already present
          trace!("handle_data_msg already have this seq={writer_sn:?}");
          if my_entity_id == EntityId::SPDP_BUILTIN_PARTICIPANT_READER {
            debug!("Accepting duplicate message to participant reader.");
            // This is an attempted workaround to eProsima FastRTPS not
            // incrementing sequence numbers. (eProsima shapes demo 2.1.0 from
            // 2021)
          } else {
            return;
          }
        }
        // HORUS PATCH (HORUS-PATCH.md, item 17): beyond the ack window, the sample is
        // dropped unacknowledged; it is requested again once the application has taken.
        if let Some(window) = &mut self.ack_window {
          let limit = window.refresh(writer_guid, writer_proxy.all_ackable_before(), |s| {
            writer_proxy.horus_sn_state(s)
          });
          if writer_sn > limit {
            window.withheld(writer_guid, writer_sn);
            trace!("DATA {writer_sn:?} of {writer_guid:?} beyond the ack window {limit:?}");
            self.arm_ack_window_timer();
            return;
          }
          // HORUS PATCH (item 21): inside the window but past the reader's byte budget:
          // withheld too (counted by admit), requested again once taken samples free room.
          let ack_base = writer_proxy.all_ackable_before();
          if !window.admit(writer_guid, writer_sn, dds_data.payload_size(), ack_base) {
            trace!("DATA {writer_sn:?} of {writer_guid:?} over the reader's byte budget");
            self.arm_ack_window_timer();
            return;
          }
        }
        // Add the change and get the instant
        writer_proxy.received_changes_add(writer_sn, receive_timestamp);
      } else {
        // no writer proxy found
        debug!(
          "handle_data_msg in stateful Reader {:?} has no writer proxy for {:?} topic={:?}",
          my_entity_id, writer_guid, self.topic_name,
        );
        // This is normal if the DATA was broadcast, but it was from another topic.
        // We just ignore the data in such a case
        // ... unless it is Discovery traffic.
        if writer_guid.entity_id.entity_kind.is_user_defined() {
          return;
        }
      }
    } else {
      // stateless reader: nothing to do before making cache change
    }

    self.make_cache_change(
      dds_data,
      receive_timestamp,
      write_options,
      writer_guid,
      writer_sn,
    );

    // Add to own track-keeping data structure
    #[cfg(test)]
    self.seqnum_instant_map.insert(writer_sn, receive_timestamp);

    self.notify_cache_change();
  }

  fn data_to_dds_data(
    &self,
    data: Data,
    data_flags: BitFlags<DATA_Flags>,
  ) -> Result<DDSData, String> {
    let representation_identifier = DATA_Flags::cdr_representation_identifier(data_flags);

    match (
      data.serialized_payload,
      data_flags.contains(DATA_Flags::Data),
      data_flags.contains(DATA_Flags::Key),
    ) {
      (Some(serialized_payload), true, false) => {
        // data
        Ok(DDSData::new(
          SerializedPayload::from_bytes(&serialized_payload).map_err(|e| format!("{e:?}"))?,
        ))
      }

      (Some(serialized_payload), false, true) => {
        // key
        Ok(DDSData::new_disposed_by_key(
          Self::deduce_change_kind(&data.inline_qos, false, representation_identifier),
          SerializedPayload::from_bytes(&serialized_payload).map_err(|e| format!("{e:?}"))?,
        ))
      }

      (None, false, false) => {
        // no data, no key. Maybe there is inline QoS?
        // At least we should find key hash, or we do not know WTF the writer is talking
        // about
        let key_hash = if let Some(h) = data.inline_qos.as_ref().and_then(|inline_qos_parameters| {
          InlineQos::key_hash(inline_qos_parameters).unwrap_or_else(|e| {
            error!("Deserializing key_hash: {:?}", e);
            None
          })
        }) {
          Ok(h)
        } else {
          info!("Received DATA that has no payload and no key_hash inline QoS - discarding");
          // Note: This case is normal when handling coherent sets.
          // The coherent set end marker is sent as DATA with no payload and not key, only
          // Inline QoS.
          Err("DATA with no contents".to_string())
        }?;
        // now, let's try to determine what is the dispose reason
        let change_kind =
          Self::deduce_change_kind(&data.inline_qos, false, representation_identifier);
        info!(
          "status change by Inline QoS: topic={:?} change={:?}",
          self.topic_name, change_kind
        );
        Ok(DDSData::new_disposed_by_key_hash(change_kind, key_hash))
      }

      (Some(_), true, true) => {
        // payload cannot be both key and data.
        // RTPS Spec 9.4.5.3.1 Flags in the Submessage Header says
        // "D=1 and K=1 is an invalid combination in this version of the protocol."
        warn!("Got DATA that claims to be both data and key - discarding.");
        Err("Ambiguous data/key received.".to_string())
      }

      (Some(_), false, false) => {
        // data but no data? - this should not be possible
        warn!("make_cache_change - Flags says no data or key, but got payload!");
        Err("DATA message has mystery contents".to_string())
      }
      (None, true, _) | (None, _, true) => {
        warn!("make_cache_change - Where is my SerializedPayload?");
        Err("DATA message contents missing".to_string())
      }
    }
  }

  // helper to work with mutable proxy
  fn with_mutable_writer_proxy<F, U>(&mut self, writer_guid: GUID, worker: F) -> Option<U>
  where
    F: FnOnce(&mut Self, &mut RtpsWriterProxy) -> U,
  {
    match self.matched_writers.remove(&writer_guid) {
      None => {
        error!("Writer proxy {writer_guid:?} not found");
        None
      }
      Some(mut wp) => {
        let res = worker(self, &mut wp);
        let x = self.matched_writers.insert(writer_guid, wp); // re-insert
        if x.is_some() {
          panic!(
            "RustDDS internal bug: with_mutable_writer_proxy worker re-inserted a writer proxy \
             for {writer_guid:?}"
          )
        }
        Some(res)
      }
    }
  }

  // Returns if responding with ACKNACK?
  // TODO: Return value seems to go unused in callers.
  // ...except in test cases, but not sure if this is strictly necessary to have.
  pub fn handle_heartbeat_msg(
    &mut self,
    heartbeat: &Heartbeat,
    final_flag_set: bool,
    mr_state: &MessageReceiverState,
  ) -> bool {
    let writer_guid =
      GUID::new_with_prefix_and_id(mr_state.source_guid_prefix, heartbeat.writer_id);

    if self.reliability == policy::Reliability::BestEffort || self.like_stateless {
      debug!(
        "HEARTBEAT from {:?}, but this Reader is BestEffort or stateless. Ignoring. topic={:?} \
         reader={:?}",
        writer_guid, self.topic_name, self.my_guid
      );
      // BestEffort Reader reacts only to DATA and GAP
      // See RTPS Spec Section "8.4.11 RTPS StatelessReader Behavior":
      // Figure 8.23 - Behavior of the Best-Effort StatefulReader with respect to each
      // matched Writer and
      // Figure 8.22 - Behavior of the Best-Effort StatelessReader
      return false;
    }

    if !self.matched_writers.contains_key(&writer_guid) {
      debug!(
        "HEARTBEAT from {:?}, but no writer proxy available. topic={:?} reader={:?}",
        writer_guid, self.topic_name, self.my_guid
      );
      return false;
    }
    // sanity check
    if heartbeat.first_sn < SequenceNumber::default() {
      warn!(
        "Writer {:?} advertised SequenceNumbers from {:?} to {:?}!",
        writer_guid, heartbeat.first_sn, heartbeat.last_sn
      );
    }

    self
      .with_mutable_writer_proxy(writer_guid, |this, writer_proxy| {
        // Note: This is worker closure. Use `this` instead of `self`.

        if heartbeat.count <= writer_proxy.received_heartbeat_count {
          // This heartbeat was already seen an processed.
          return false;
        }
        writer_proxy.received_heartbeat_count = heartbeat.count;

        // remove changes until first_sn.
        writer_proxy.irrelevant_changes_up_to(heartbeat.first_sn);

        let marker_moved = this
          .acquire_the_topic_cache_guard()
          .mark_reliably_received_before(writer_guid, writer_proxy.all_ackable_before());
        if marker_moved {
          this.notify_cache_change();
        }

        // HORUS PATCH: the answer is built in answer_heartbeat, which may defer it.
        let reply_locators = match mr_state.unicast_reply_locator_list {
          [] | [Locator::Invalid] => writer_proxy.unicast_locator_list.clone(),
          //TODO: What is writer_proxy has an empty list?
          others => others.to_vec(),
        };
        Self::answer_heartbeat(
          this,
          writer_proxy,
          heartbeat.first_sn,
          heartbeat.last_sn,
          final_flag_set,
          &reply_locators,
        )
      }) // worker fn
      .unwrap_or(false) // default false: no writer_proxy -> no acknack
  } // fn

  // Answers `writer_proxy`'s HEARTBEAT announcing `first_sn..=last_sn` with an ACKNACK (and
  // NACK_FRAGs for partially received samples). Returns whether an ACKNACK was sent.
  // 0.15.1's code from handle_heartbeat_msg, moved here so that a deferred answer can use
  // it, with one HORUS PATCH (HORUS-PATCH.md, item 9): a sample whose fragments are still
  // arriving (`sample_in_flight`) gets no NACK_FRAG, and a HEARTBEAT that finds only that
  // sample missing is answered later, by the timer `defer_heartbeat` arms, once the sample
  // has completed or its fragments have stopped coming (a lost fragment is then NACKed).
  fn answer_heartbeat(
    this: &mut Self,
    writer_proxy: &mut RtpsWriterProxy,
    first_sn: SequenceNumber,
    last_sn: SequenceNumber,
    final_flag_set: bool,
    reply_locators: &[Locator],
  ) -> bool {
    let writer_guid = writer_proxy.remote_writer_guid;
    let reader_id = this.entity_id();

    // HORUS PATCH (HORUS-PATCH.md, item 17): with an ack window, nothing beyond it is
    // requested (nor acknowledged: it is not received); the timer requests it once it fits.
    let last_sn = match &mut this.ack_window {
      Some(window) => {
        let limit = window.refresh(writer_guid, writer_proxy.all_ackable_before(), |s| {
          writer_proxy.horus_sn_state(s)
        });
        let beyond = window.known_up_to(writer_guid, last_sn);
        // HORUS PATCH (item 21, review): an ACKNACK's set reaches 256 past its base at
        // most: what lies beyond is not recorded as requested (the timer asks for it).
        let reach = writer_proxy.all_ackable_before() + SequenceNumber::new(255);
        window.requested(writer_guid, std::cmp::min(std::cmp::min(last_sn, limit), reach));
        if beyond {
          this.arm_ack_window_timer();
        }
        std::cmp::min(last_sn, limit)
      }
      None => last_sn,
    };

    // See if ACKNACK is needed, and generate one.
    let missing_seqnums = if this.ack_window.is_some() && first_sn > last_sn {
      Vec::new() // HORUS PATCH (item 17): all announced is beyond the ack window
    } else {
      writer_proxy.missing_seqnums(first_sn, last_sn)
    };

    // HORUS PATCH: defer the answer for a sample still arriving.
    let in_flight = this
      .sample_in_flight(writer_guid, Instant::now())
      .filter(|(sn, _)| missing_seqnums.contains(sn));
    match in_flight {
      Some((in_flight_sn, arriving_for)) => {
        this.defer_heartbeat(
          writer_guid,
          first_sn,
          last_sn,
          final_flag_set,
          reply_locators,
          arriving_for,
        );
        if missing_seqnums.iter().all(|sn| *sn == in_flight_sn) {
          trace!(
            "HEARTBEAT from {writer_guid:?}: sample {in_flight_sn:?} still arriving, answer \
             deferred. topic={:?}",
            this.topic_name
          );
          return false;
        }
      }
      None => {
        // Answered now: a pending deferred answer has nothing left to say.
        this.deferred_heartbeats.remove(&writer_guid);
      }
    }
    let in_flight_sn = in_flight.map(|(sn, _)| sn);

    // Interpretation of final flag in RTPS spec
    // 8.4.2.3.1 Readers must respond eventually after receiving a HEARTBEAT with
    // final flag not set
    //
    // Upon receiving a HEARTBEAT Message with final flag not set, the Reader must
    // respond with an ACKNACK Message. The ACKNACK Message may acknowledge
    // having received all the data samples or may indicate that some data
    // samples are missing. The response may be delayed to avoid message storms.

    if !missing_seqnums.is_empty() || !final_flag_set {
      let mut partially_received = Vec::new();
      // report of what we have.
      // We claim to have received all SNs before "base" and produce a set of missing
      // sequence numbers that are >= base.
      let reader_sn_state = match missing_seqnums.first() {
        Some(&first_missing) => {
          // Here we assume missing_seqnums are returned in order.
          // Limit the set to maximum that can be sent in acknack submessage.

          SequenceNumberSet::from_base_and_set(
            first_missing,
            &missing_seqnums
              .iter()
              .copied()
              .take_while(|sn| sn < &(first_missing + SequenceNumber::new(256)))
              .filter(|sn| {
                if Some(*sn) == in_flight_sn {
                  // HORUS PATCH: neither NACKed nor NACK_FRAGed while arriving.
                  false
                } else if this.is_frag_partially_received(writer_guid, *sn) {
                  partially_received.push(*sn);
                  false
                } else {
                  true
                }
              })
              .collect(),
          )
        }

        // Nothing missing. Report that we have all we have.
        None => SequenceNumberSet::new_empty(writer_proxy.all_ackable_before()),
      };

      let response_ack_nack = AckNack {
        reader_id,
        writer_id: writer_guid.entity_id,
        reader_sn_state,
        count: writer_proxy.next_ack_nack_sequence_number(),
      };

      // The acknack can be sent now or later. The rest of the RTPS message
      // needs to be constructed. p. 48
      let acknack_flags = BitFlags::<ACKNACK_Flags>::from_flag(ACKNACK_Flags::Endianness)
        | BitFlags::<ACKNACK_Flags>::from_flag(ACKNACK_Flags::Final);

      let nackfrag_flags = BitFlags::<NACKFRAG_Flags>::from_flag(NACKFRAG_Flags::Endianness);

      // send NackFrags, if any
      let mut nackfrags = Vec::new();
      for sn in partially_received {
        let count = writer_proxy.next_ack_nack_sequence_number();
        let mut missing_frags = this.missing_frags_for(writer_guid, sn);
        let first_missing = missing_frags.next();
        if let Some(first) = first_missing {
          let missing_frags_set = iter::once(first).chain(missing_frags).collect(); // "undo" the .next() above
          let nf = NackFrag {
            reader_id,
            writer_id: writer_proxy.remote_writer_guid.entity_id,
            writer_sn: sn,
            fragment_number_state: FragmentNumberSet::from_base_and_set(first, &missing_frags_set),
            count,
          };
          nackfrags.push(nf);
        } else {
          error!("The dog ate my missing fragments.");
          // Really, this should not happen, as we are above checking
          // that this SN is really partially (and not fully) received.
        }
      }

      if !nackfrags.is_empty() {
        this.send_nackfrags_to(
          nackfrag_flags,
          nackfrags,
          InfoDestination {
            guid_prefix: writer_guid.prefix,
          },
          reply_locators,
          writer_guid,
        );
      }

      this.send_acknack_to(
        acknack_flags,
        response_ack_nack,
        InfoDestination {
          guid_prefix: writer_guid.prefix,
        },
        reply_locators,
        writer_guid,
      );

      return true;
    }

    false
  }

  // HORUS PATCH (HORUS-PATCH.md, item 9): the sample of `writer_guid` whose fragments are
  // still arriving: the one its latest DATA_FRAG belonged to, if still partially received
  // and that fragment came less than HEARTBEAT_RESPONSE_DELAY before `now`; with the time
  // left until it no longer counts as arriving. A partially received sample the writer has
  // moved on from, or whose fragments stopped, is not in flight: its gaps are lost.
  fn sample_in_flight(
    &self,
    writer_guid: GUID,
    now: Instant,
  ) -> Option<(SequenceNumber, StdDuration)> {
    let &(sn, at) = self.latest_fragment.get(&writer_guid)?;
    let since = now.saturating_duration_since(at);
    (since < HEARTBEAT_RESPONSE_DELAY && self.is_frag_partially_received(writer_guid, sn))
      .then(|| (sn, HEARTBEAT_RESPONSE_DELAY - since))
  }

  // HORUS PATCH: remember a HEARTBEAT to answer in `after` (when the sample in
  // flight would count as stalled), merged with any already waiting; one timer per writer.
  fn defer_heartbeat(
    &mut self,
    writer_guid: GUID,
    first_sn: SequenceNumber,
    last_sn: SequenceNumber,
    final_flag_set: bool,
    reply_locators: &[Locator],
    after: StdDuration,
  ) {
    if let Some(waiting) = self.deferred_heartbeats.get_mut(&writer_guid) {
      waiting.first_sn = first_sn;
      waiting.last_sn = waiting.last_sn.max(last_sn);
      waiting.final_flag_set &= final_flag_set;
      if waiting.reply_locators != reply_locators {
        waiting.reply_locators = reply_locators.to_vec();
      }
      return;
    }
    self.deferred_heartbeats.insert(
      writer_guid,
      DeferredHeartbeat {
        first_sn,
        last_sn,
        final_flag_set,
        reply_locators: reply_locators.to_vec(),
      },
    );
    self.timed_event_timer.borrow_mut().set_timeout(
      after,
      DpTimerEvent::Reader {
        entity_id: self.my_guid.entity_id,
        event: TimedEvent::HeartbeatResponse { writer_guid },
      },
    );
  }

  // HORUS PATCH: the timer of a deferred HEARTBEAT answer fired. Answer it now,
  // unless it was answered meanwhile (a later HEARTBEAT found nothing in flight) or its
  // writer is gone; answer_heartbeat defers it again only while the sample's fragments
  // keep arriving.
  fn answer_deferred_heartbeat(&mut self, writer_guid: GUID) {
    if !self.matched_writers.contains_key(&writer_guid) {
      self.deferred_heartbeats.remove(&writer_guid);
      return;
    }
    let Some(waiting) = self.deferred_heartbeats.remove(&writer_guid) else {
      return;
    };
    self.with_mutable_writer_proxy(writer_guid, |this, writer_proxy| {
      Self::answer_heartbeat(
        this,
        writer_proxy,
        waiting.first_sn,
        waiting.last_sn,
        waiting.final_flag_set,
        &waiting.reply_locators,
      )
    });
  }

  pub fn handle_gap_msg(&mut self, gap: &Gap, mr_state: &MessageReceiverState) {
    // ATM all things related to groups is ignored. TODO?

    let writer_guid = GUID::new_with_prefix_and_id(mr_state.source_guid_prefix, gap.writer_id);

    if self.like_stateless {
      debug!(
        "GAP from {:?}, but reader is stateless. Ignoring. topic={:?} reader={:?}",
        writer_guid, self.topic_name, self.my_guid
      );
      return;
    }
    let all_ackable_before;
    {
      let writer_proxy = if let Some(wp) = self.matched_writer_mut(writer_guid) {
        wp
      } else {
        info!(
          "GAP from {:?}, but no writer proxy available. topic={:?} reader={:?}",
          writer_guid, self.topic_name, self.my_guid
        );
        return;
      };

      // Check validity of the GAP message (Section 8.3.8.4.3)
      if gap.gap_start <= SequenceNumber::new(0) {
        debug!(
          "Invalid GAP from {:?}: gap_start={:?} is zero or negative. topic={:?} reader={:?}",
          writer_guid, gap.gap_start, self.topic_name, self.my_guid
        );
        return;
      }
      if gap.gap_list.base() <= SequenceNumber::new(0) {
        debug!(
          "Invalid GAP from {:?}: minimum of gap_list (={:?}) is zero or negative. topic={:?} \
           reader={:?}",
          writer_guid,
          gap.gap_list.base(),
          self.topic_name,
          self.my_guid
        );
        return;
      }
      // TODO: check that maximum(gap_list) - minimum(gap_list) < 256 ?

      // Irrelevant sequence numbers communicated in the Gap message are
      // composed of two groups:
      //   1. All sequence numbers in the range gapStart <= sequence_number <
      // gapList.base
      writer_proxy.irrelevant_changes_range(gap.gap_start, gap.gap_list.base());

      //   2. All the sequence numbers that appear explicitly listed in the gapList.
      //      Note that gapList.base may or may not be included in gapList; its
      //      inclusion is determined by the bitmap, as with the other sequence
      //      numbers
      for seq_num in gap.gap_list.iter() {
        writer_proxy.set_irrelevant_change(seq_num);
      }
      all_ackable_before = writer_proxy.all_ackable_before();
    }

    // Get the topic cache and mark progress
    let marker_moved = self.reliability != policy::Reliability::BestEffort
      && self
        .acquire_the_topic_cache_guard()
        .mark_reliably_received_before(writer_guid, all_ackable_before);

    // Receiving a GAP could make a Reliable stream.
    // E.g. we had #2, but were missing #1. Now GAP says that #1 does not exist.
    // Then a Reliable Datareader
    if marker_moved {
      self.notify_cache_change();
    }
    // able to move forward, i.e. hand over data to application, if
    // we now know that nothing is missng from the past.

    // TODO: If receiving GAP actually moved the reliably received mark forward
    // in the Topic Cache, then we should generate a SAMPLE_LOST status event
    // from our Datareader (DDS Spec Section 2.2.4.1)
    //
    // If the the GAP message contained filteredCount (RTPS spec v2.5 Table
    // 8.43), then some of the not-available messages should not be treated
    // as "lost" but "filtered".
  }

  pub fn handle_heartbeatfrag_msg(
    &mut self,
    heartbeatfrag: &HeartbeatFrag,
    _mr_state: &MessageReceiverState,
  ) {
    info!(
      "HeartbeatFrag handling not implemented. topic={:?}   {:?}",
      self.topic_name, heartbeatfrag
    );
  }

  // This is used to determine exact change kind in case we do not get a data
  // payload in DATA submessage
  fn deduce_change_kind(
    inline_qos: &Option<ParameterList>,
    no_writers: bool,
    representation_identifier: RepresentationIdentifier,
  ) -> ChangeKind {
    match inline_qos.as_ref().and_then(|inline_qos_parameters| {
      InlineQos::status_info(inline_qos_parameters, representation_identifier).map_or_else(
        |e| {
          error!("Deserializing status_info: {:?}", e);
          None
        },
        Some,
      )
    }) {
      Some(si) => si.change_kind(), // get from inline QoS
      // TODO: What if si.change_kind() gives ALIVE ??
      None => {
        if no_writers {
          ChangeKind::NotAliveUnregistered
        } else {
          ChangeKind::NotAliveDisposed
        } // TODO: Is this reasonable default?
      }
    }
  }

  // Convert DATA submessage into a CacheChange and update history cache
  fn make_cache_change(
    &mut self,
    data: DDSData,
    receive_timestamp: Timestamp,
    write_options: WriteOptions,
    writer_guid: GUID,
    writer_sn: SequenceNumber,
  ) {
    let cache_change = CacheChange::new(writer_guid, writer_sn, write_options, data);

    // Get the topic cache
    let mut tc = self.acquire_the_topic_cache_guard();

    tc.add_change(&receive_timestamp, cache_change);
    // Mark seqnums as received if not behaving statelessly. Only a Reliable
    // reader waits for missing samples; a BestEffort marker would stay behind a
    // lost sample for good, and the topic cache would retain everything after it.
    if !self.like_stateless && self.reliability != policy::Reliability::BestEffort {
      self.matched_writer(writer_guid).map(|wp| {
        tc.mark_reliably_received_before(writer_guid, wp.all_ackable_before());
        // Here we do not need to notify waiting DataReader, because
        // the upper call level from here does it.
      });
    }
  }

  // notifies DataReaders (or any listeners that history cache has changed for
  // this reader) likely use of mio channel
  pub fn notify_cache_change(&mut self) {
    // async notify mechanism
    self
      .data_reader_waker
      .lock()
      .unwrap() // TODO: unwrap
      .take() // Take to nullify the reference
      .map(|w| w.wake_by_ref()); // If Some, call wake_by_ref

    // mio-0.8 / mio-1.2 notify for a caller-owned poll.
    self.poll_event_sender.send();

    // Discovery's poll cannot register the mio-0.6 notification channel.
    if let Some((sender, token)) = &self.discovery_notify {
      sender.notify(*token);
    }

    // mio-0.6 notify
    match self.notification_sender.try_send(()) {
      Ok(()) => (),
      Err(std::sync::mpsc::TrySendError::Full(_)) => (),
      // This is harmless. There is a notification in already.
      Err(std::sync::mpsc::TrySendError::Disconnected(_)) => {
        // If we get here, our DataReader has died. The Reader should now
        // dispose itself. TODO: Implement Reader disposal.
      }
    }
  }

  #[cfg(not(feature = "security"))]
  fn encode_and_send(
    &self,
    message: Message,
    _destination_guid: GUID,
    dst_locator_list: &[Locator],
  ) {
    let bytes = match message.write_to_vec_fast(Endianness::LittleEndian) {
      Ok(b) => b,
      Err(e) => {
        error!("Failed to serialize RTPS message for send: {e:?}");
        return;
      }
    };
    let _dummy = message; // consume it to avoid clippy warning
    self
      .udp_sender
      .send_to_locator_list(&bytes, dst_locator_list);
  }

  #[cfg(feature = "security")]
  fn encode_and_send(
    &self,
    message: Message,
    destination_guid: GUID,
    dst_locator_list: &[Locator],
  ) {
    match self.security_encode(message, destination_guid) {
      Ok(message) => {
        let bytes = match message.write_to_vec_with_ctx(Endianness::LittleEndian) {
          Ok(b) => b,
          Err(e) => {
            error!("Failed to serialize RTPS message for send: {e:?}");
            return;
          }
        };
        self
          .udp_sender
          .send_to_locator_list(&bytes, dst_locator_list);
      }
      Err(e) => error!("Failed to send message to writers. Encoding failed: {e:?}"),
    }
  }

  #[cfg(feature = "security")]
  fn security_encode(&self, message: Message, destination_guid: GUID) -> SecurityResult<Message> {
    // If we have security plugins, use them, otherwise pass through
    if let Some(security_plugins_handle) = &self.security_plugins {
      // Get the source GUID
      let source_guid = self.guid();
      // Destructure
      let Message {
        header,
        submessages,
      } = message;

      // Encode submessages
      SecurityResult::<Vec<Vec<Submessage>>>::from_iter(submessages.iter().map(|submessage| {
        security_plugins_handle
          .get_plugins()
          .encode_datareader_submessage(submessage.clone(), &source_guid, &[destination_guid])
          // Convert each encoding output to a Vec of 1 or 3 submessages
          .map(Vec::from)
      }))
      // Flatten and convert back to Message
      .map(|encoded_submessages| Message {
        header,
        submessages: encoded_submessages.concat(),
      })
      // Encode message
      .and_then(|message| {
        // Convert GUIDs to GuidPrefixes
        let source_guid_prefix = source_guid.prefix;
        let destination_guid_prefix = destination_guid.prefix;
        // Encode message
        security_plugins_handle.get_plugins().encode_message(
          message,
          &source_guid_prefix,
          &[destination_guid_prefix],
        )
      })
    } else {
      Ok(message)
    }
  }

  fn send_acknack_to(
    &self,
    flags: BitFlags<ACKNACK_Flags>,
    acknack: AckNack,
    info_dst: InfoDestination,
    dst_locator_list: &[Locator],
    destination_guid: GUID,
  ) {
    let infodst_flags =
      BitFlags::<INFODESTINATION_Flags>::from_flag(INFODESTINATION_Flags::Endianness);

    let mut message = Message::new(Header {
      protocol_id: ProtocolId::default(),
      protocol_version: ProtocolVersion::THIS_IMPLEMENTATION,
      vendor_id: VendorId::THIS_IMPLEMENTATION,
      guid_prefix: self.my_guid.prefix,
    });

    message.add_submessage(info_dst.create_submessage(infodst_flags));

    message.add_submessage(acknack.create_submessage(flags));

    self.encode_and_send(message, destination_guid, dst_locator_list);
  }

  fn send_nackfrags_to(
    &self,
    flags: BitFlags<NACKFRAG_Flags>,
    nackfrags: Vec<NackFrag>,
    info_dst: InfoDestination,
    dst_locator_list: &[Locator],
    destination_guid: GUID,
  ) {
    let infodst_flags =
      BitFlags::<INFODESTINATION_Flags>::from_flag(INFODESTINATION_Flags::Endianness);

    let mut message = Message::new(Header {
      protocol_id: ProtocolId::default(),
      protocol_version: ProtocolVersion::THIS_IMPLEMENTATION,
      vendor_id: VendorId::THIS_IMPLEMENTATION,
      guid_prefix: self.my_guid.prefix,
    });

    message.add_submessage(info_dst.create_submessage(infodst_flags));

    for nf in nackfrags {
      message.add_submessage(nf.create_submessage(flags));
    }

    self.encode_and_send(message, destination_guid, dst_locator_list);
  }

  pub fn send_preemptive_acknacks(&mut self) {
    if self.like_stateless {
      info!(
        "Attempted to send pre-emptive acknacks in a stateless Reader, which does not support \
         them. Ignoring. topic={:?}",
        self.topic_name
      );
      return;
    }

    // Detach the writer proxy set. This is a way to avoid multiple &mut self
    let mut writer_proxies = std::mem::take(&mut self.matched_writers);

    for (_, writer_proxy) in writer_proxies
      .iter_mut()
      .filter(|(_, p)| p.no_changes_received())
    {
      self.send_preemptive_acknack_to(writer_proxy);
    }
    // put writer proxies back
    self.matched_writers = writer_proxies;
  }

  // An ACKNACK without the final flag requests an immediate HEARTBEAT from the
  // writer.
  fn send_preemptive_acknack_to(&self, writer_proxy: &mut RtpsWriterProxy) {
    let flags = BitFlags::<ACKNACK_Flags>::from_flag(ACKNACK_Flags::Endianness);
    let acknack_count = writer_proxy.next_ack_nack_sequence_number();
    let RtpsWriterProxy {
      remote_writer_guid,
      unicast_locator_list,
      ..
    } = writer_proxy;
    self.send_acknack_to(
      flags,
      AckNack {
        reader_id: self.entity_id(),
        writer_id: remote_writer_guid.entity_id,
        reader_sn_state: SequenceNumberSet::new_empty(SequenceNumber::new(1)),
        count: acknack_count,
      },
      InfoDestination {
        guid_prefix: remote_writer_guid.prefix,
      },
      unicast_locator_list,
      *remote_writer_guid,
    );
  }

  pub fn topic_name(&self) -> &String {
    &self.topic_name
  }

  fn acquire_the_topic_cache_guard(&self) -> MutexGuard<'_, TopicCache> {
    self.topic_cache.lock().unwrap_or_else(|e| {
      panic!(
        "RustDDS internal bug: topic cache of topic {} is poisoned after a prior panic: {e}",
        self.topic_name
      )
    })
  }
} // impl Reader

impl HasQoSPolicy for Reader {
  fn qos(&self) -> QosPolicies {
    self.qos_policy.clone()
  }
}

impl RTPSEntity for Reader {
  fn guid(&self) -> GUID {
    self.my_guid
  }
}

impl fmt::Debug for Reader {
  fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
    f.debug_struct("Reader")
      .field("notification_sender, dds_cache", &"can't print".to_string())
      .field("topic_name", &self.topic_name)
      .field("my_guid", &self.my_guid)
      .field("heartbeat_response_delay", &self.heartbeat_response_delay)
      .field("received_heartbeat_count", &self.received_heartbeat_count)
      .finish()
  }
}

#[cfg(test)]
mod tests {
  use std::sync::RwLock;

  use bytes::Bytes;

  use crate::{
    dds::{qos::policy::Reliability, statusevents::sync_status_channel, typedesc::TypeDesc},
    polling::{new_shared_timer, wake_channel, LoopWaker},
    rtps::SubmessageBody,
    structure::{dds_cache::DDSCache, guid::EntityKind},
    QosPolicyBuilder,
  };
  use super::*;

  #[test]
  fn reader_sends_notification_when_receiving_data() {
    // 1. Create a reader
    // Create the DDS cache and a topic
    let dds_cache = Arc::new(RwLock::new(DDSCache::new()));
    let topic_name = "test_name";
    let qos_policy = QosPolicies::qos_none();

    let topic_cache_handle = dds_cache.write().unwrap().add_new_topic(
      topic_name.to_string(),
      TypeDesc::new("test_type".to_string()),
      &qos_policy,
    );

    // Create notification mechanisms
    // mio-0.6 channel:
    let (notification_sender, notification_receiver) = crate::mio_source::notification_channel(100);
    // mio-0.8 event source and sender:
    let (_notification_event_source, notification_event_sender) =
      mio_source::make_poll_channel().unwrap();
    // async notification waker
    let data_reader_waker = Arc::new(Mutex::new(None));

    // Create status channel
    let (status_sender, _status_receiver) = sync_status_channel::<DataReaderStatus>(4).unwrap();
    let (participant_status_sender, _participant_status_receiver) =
      sync_status_channel(16).unwrap();

    // Create reader command channel
    let (_reader_command_sender, reader_command_receiver) =
      wake_channel::<ReaderCommand>(10, &LoopWaker::new());

    // Then finally create the reader
    let reader_guid = GUID::dummy_test_guid(EntityKind::READER_NO_KEY_USER_DEFINED);
    let reader_ing = ReaderIngredients {
      guid: reader_guid,
      notification_sender,
      status_sender,
      topic_name: topic_name.to_string(),
      topic_cache_handle,
      like_stateless: false,
      qos_policy,
      data_reader_command_receiver: reader_command_receiver,
      data_reader_waker,
      poll_event_sender: notification_event_sender,
      security_plugins: None,
      discovery_notify: None,
      horus_taken: None,
    };
    let mut reader = Reader::new(
      reader_ing,
      Rc::new(UDPSender::new(0).unwrap()),
      new_shared_timer(),
      participant_status_sender,
    );

    // 2. Add info of a matched writer to the reader
    let writer_guid = GUID::dummy_test_guid(EntityKind::WRITER_NO_KEY_USER_DEFINED);

    let mr_state = MessageReceiverState {
      source_guid_prefix: writer_guid.prefix,
      ..Default::default()
    };

    reader.matched_writer_add(
      writer_guid,
      EntityId::UNKNOWN,
      mr_state.unicast_reply_locator_list.to_vec(),
      mr_state.multicast_reply_locator_list.to_vec(),
      &QosPolicies::qos_none(),
    );

    // 3. Create data that the matched writer supposedly sent to the reader
    let data = Data {
      reader_id: reader_guid.entity_id,
      writer_id: writer_guid.entity_id,
      ..Data::default()
    };
    let data_flags = BitFlags::<DATA_Flags>::from_flag(DATA_Flags::Data);

    // 4. Feed the data for the reader to handle
    reader.handle_data_msg(data, data_flags, &mr_state);

    // 5. Verify that the reader sends a notification about the new data
    assert!(
      notification_receiver.try_recv().is_ok(),
      "Reader did not send a notification through the mio-0.6 channel"
    );
    // TODO: Should the other notification mechanisms (mio-0.8 & async) be also
    // checked?
  }

  #[test]
  fn reader_sends_data_to_topic_cache() {
    // 1. Create a reader
    // Create the DDS cache and a topic
    let dds_cache = Arc::new(RwLock::new(DDSCache::new()));
    let topic_name = "test_name";
    let qos_policy = QosPolicies::qos_none();

    let topic_cache_handle = dds_cache.write().unwrap().add_new_topic(
      topic_name.to_string(),
      TypeDesc::new("test_type".to_string()),
      &qos_policy,
    );

    // Create mechanisms for notifications, statuses & commands
    let (notification_sender, _notification_receiver) =
      crate::mio_source::notification_channel(100);
    let (_notification_event_source, notification_event_sender) =
      mio_source::make_poll_channel().unwrap();
    let data_reader_waker = Arc::new(Mutex::new(None));

    let (status_sender, _status_receiver) = sync_status_channel::<DataReaderStatus>(4).unwrap();
    let (participant_status_sender, _participant_status_receiver) =
      sync_status_channel(16).unwrap();

    let (_reader_command_sender, reader_command_receiver) =
      wake_channel::<ReaderCommand>(10, &LoopWaker::new());

    // Then create the reader
    let reader_guid = GUID::dummy_test_guid(EntityKind::READER_NO_KEY_USER_DEFINED);
    let reader_ing = ReaderIngredients {
      guid: reader_guid,
      notification_sender,
      status_sender,
      topic_name: topic_name.to_string(),
      topic_cache_handle: topic_cache_handle.clone(),
      like_stateless: false,
      qos_policy,
      data_reader_command_receiver: reader_command_receiver,
      data_reader_waker,
      poll_event_sender: notification_event_sender,
      security_plugins: None,
      discovery_notify: None,
      horus_taken: None,
    };
    let mut reader = Reader::new(
      reader_ing,
      Rc::new(UDPSender::new(0).unwrap()),
      new_shared_timer(),
      participant_status_sender,
    );

    // 2. Add info of a matched writer to the reader
    let writer_guid = GUID::dummy_test_guid(EntityKind::WRITER_NO_KEY_USER_DEFINED);

    let source_timestamp = Timestamp::INVALID;
    let mr_state = MessageReceiverState {
      source_guid_prefix: writer_guid.prefix,
      source_timestamp: Some(source_timestamp),
      ..Default::default()
    };

    reader.matched_writer_add(
      writer_guid,
      EntityId::UNKNOWN,
      mr_state.unicast_reply_locator_list.to_vec(),
      mr_state.multicast_reply_locator_list.to_vec(),
      &QosPolicies::qos_none(),
    );

    // 3. Create data that the matched writer supposedly sent to the reader
    let data = Data {
      reader_id: reader_guid.entity_id,
      writer_id: writer_guid.entity_id,
      ..Data::default()
    };
    let data_flags = BitFlags::<DATA_Flags>::from_flag(DATA_Flags::Data);
    let sequence_num = data.writer_sn;

    // 4. Feed the data for the reader to handle
    reader.handle_data_msg(data.clone(), data_flags, &mr_state);

    // 5. Verify that the reader sent the data to the topic cache
    let topic_cache = topic_cache_handle.lock().unwrap();

    let cc_from_cache = topic_cache
      .get_change(reader.seqnum_instant_map.get(&sequence_num).unwrap())
      .expect("No cache change in topic cache");

    // 6. Verify that the content of the cache change is as expected
    // Construct a cache change with the expected content
    let dds_data = DDSData::new(data.unwrap_serialized_payload());
    let cc_locally_built = CacheChange::new(
      writer_guid,
      sequence_num,
      WriteOptions::from(Some(source_timestamp)),
      dds_data,
    );

    assert_eq!(
      cc_from_cache, &cc_locally_built,
      "The content of the cache change in the topic cache not as expected"
    );
  }

  #[test]
  fn reader_handles_heartbeats() {
    // 1. Create a reader for a topic with Reliable QoS
    // Create the DDS cache and the topic
    let dds_cache = Arc::new(RwLock::new(DDSCache::new()));
    let topic_name = "test_name";
    let reliable_qos = QosPolicyBuilder::new()
      .reliability(Reliability::Reliable {
        max_blocking_time: Duration::from_millis(100),
      })
      .build();

    let topic_cache_handle = dds_cache.write().unwrap().add_new_topic(
      topic_name.to_string(),
      TypeDesc::new("test_type".to_string()),
      &reliable_qos,
    );

    // Create mechanisms for notifications, statuses & commands
    let (notification_sender, _notification_receiver) =
      crate::mio_source::notification_channel(100);
    let (_notification_event_source, notification_event_sender) =
      mio_source::make_poll_channel().unwrap();
    let data_reader_waker = Arc::new(Mutex::new(None));

    let (status_sender, _status_receiver) = sync_status_channel::<DataReaderStatus>(4).unwrap();
    let (participant_status_sender, _participant_status_receiver) =
      sync_status_channel(16).unwrap();

    let (_reader_command_sender, reader_command_receiver) =
      wake_channel::<ReaderCommand>(10, &LoopWaker::new());

    // Then create the reader
    let reader_guid = GUID::dummy_test_guid(EntityKind::READER_NO_KEY_USER_DEFINED);
    let reader_ing = ReaderIngredients {
      guid: reader_guid,
      notification_sender,
      status_sender,
      topic_name: topic_name.to_string(),
      topic_cache_handle,
      like_stateless: false,
      qos_policy: reliable_qos.clone(),
      data_reader_command_receiver: reader_command_receiver,
      data_reader_waker,
      poll_event_sender: notification_event_sender,
      security_plugins: None,
      discovery_notify: None,
      horus_taken: None,
    };
    let mut reader = Reader::new(
      reader_ing,
      Rc::new(UDPSender::new(0).unwrap()),
      new_shared_timer(),
      participant_status_sender,
    );

    // 2. Add info of a matched writer to the reader
    let writer_guid = GUID::dummy_test_guid(EntityKind::WRITER_NO_KEY_USER_DEFINED);

    let mr_state = MessageReceiverState {
      source_guid_prefix: writer_guid.prefix,
      ..Default::default()
    };

    reader.matched_writer_add(
      writer_guid,
      EntityId::UNKNOWN,
      mr_state.unicast_reply_locator_list.to_vec(),
      mr_state.multicast_reply_locator_list.to_vec(),
      &reliable_qos,
    );

    // 3. Send an initial heartbeat from the new writer, reader should not respond
    // with acknack first_sn: 1, last_sn: 0 to indicate no samples available
    let hb_new = Heartbeat {
      reader_id: reader.entity_id(),
      writer_id: writer_guid.entity_id,
      first_sn: SequenceNumber::new(1),
      last_sn: SequenceNumber::new(0),
      count: 1,
    };
    assert!(!reader.handle_heartbeat_msg(&hb_new, true, &mr_state)); // should be false, no ack

    // 4. Send the first proper heartbeat, reader should respond with acknack
    let hb_one = Heartbeat {
      reader_id: reader.entity_id(),
      writer_id: writer_guid.entity_id,
      first_sn: SequenceNumber::new(1), // Only one in writers cache
      last_sn: SequenceNumber::new(1),
      count: 2,
    };
    assert!(reader.handle_heartbeat_msg(&hb_one, false, &mr_state)); // Should send an ack_nack

    // 5. Send a duplicate of the first heartbeat, reader should not respond with
    // acknack
    let hb_one2 = hb_one.clone();
    assert!(!reader.handle_heartbeat_msg(&hb_one2, false, &mr_state)); // No acknack

    // 6. Send a second proper heartbeat, reader should respond with acknack
    let hb_2 = Heartbeat {
      reader_id: reader.entity_id(),
      writer_id: writer_guid.entity_id,
      first_sn: SequenceNumber::new(1), // writer has last 2 in cache
      last_sn: SequenceNumber::new(3),  // writer has written 3 samples
      count: 3,
    };
    assert!(reader.handle_heartbeat_msg(&hb_2, false, &mr_state)); // Should send an ack_nack

    // 7. Count of acknack sent should be 3: the preemptive one on match and the
    // two above. The count is verified from the writer proxy
    let writer_proxy = reader
      .matched_writer(writer_guid)
      .expect("Did not find a matched writer");
    assert_eq!(writer_proxy.sent_ack_nack_count, 3);
  }

  #[test]
  fn reader_handles_gaps() {
    // 1. Create a reader
    // Create the DDS cache and a topic
    let dds_cache = Arc::new(RwLock::new(DDSCache::new()));
    let topic_name = "test_name";
    let qos_policy = QosPolicies::qos_none();

    let topic_cache_handle = dds_cache.write().unwrap().add_new_topic(
      topic_name.to_string(),
      TypeDesc::new("test_type".to_string()),
      &qos_policy,
    );

    // Create mechanisms for notifications, statuses & commands
    let (notification_sender, _notification_receiver) =
      crate::mio_source::notification_channel(100);
    let (_notification_event_source, notification_event_sender) =
      mio_source::make_poll_channel().unwrap();
    let data_reader_waker = Arc::new(Mutex::new(None));

    let (status_sender, _status_receiver) = sync_status_channel::<DataReaderStatus>(4).unwrap();
    let (participant_status_sender, _participant_status_receiver) =
      sync_status_channel(16).unwrap();

    let (_reader_command_sender, reader_command_receiver) =
      wake_channel::<ReaderCommand>(10, &LoopWaker::new());

    // Then create the reader
    let reader_guid = GUID::dummy_test_guid(EntityKind::READER_NO_KEY_USER_DEFINED);
    let reader_ing = ReaderIngredients {
      guid: reader_guid,
      notification_sender,
      status_sender,
      topic_name: topic_name.to_string(),
      topic_cache_handle,
      like_stateless: false,
      qos_policy,
      data_reader_command_receiver: reader_command_receiver,
      data_reader_waker,
      poll_event_sender: notification_event_sender,
      security_plugins: None,
      discovery_notify: None,
      horus_taken: None,
    };
    let mut reader = Reader::new(
      reader_ing,
      Rc::new(UDPSender::new(0).unwrap()),
      new_shared_timer(),
      participant_status_sender,
    );

    // 2. Add info of a matched writer to the reader
    let writer_guid = GUID::dummy_test_guid(EntityKind::WRITER_NO_KEY_USER_DEFINED);

    let mr_state = MessageReceiverState {
      source_guid_prefix: writer_guid.prefix,
      ..Default::default()
    };

    reader.matched_writer_add(
      writer_guid,
      EntityId::UNKNOWN,
      mr_state.unicast_reply_locator_list.to_vec(),
      mr_state.multicast_reply_locator_list.to_vec(),
      &QosPolicies::qos_none(),
    );

    // 3. Feed the reader a gap message which marks sequence numbers 1-2 & 4 as
    // irrelevant
    let gap_start = SequenceNumber::new(1);
    let gap_list_base = SequenceNumber::new(3);
    let mut gap_list = SequenceNumberSet::new(gap_list_base, 7);
    gap_list.test_insert(SequenceNumber::new(4));

    let gap = Gap {
      reader_id: reader.entity_id(),
      writer_id: writer_guid.entity_id,
      gap_start,
      gap_list,
    };
    reader.handle_gap_msg(&gap, &mr_state);

    // 4. Verify that the writer proxy reports seqnums below 3 as ackable
    // This should be the case since seqnums 1-2 were marked as irrelevant
    assert_eq!(
      reader
        .matched_writer(writer_guid)
        .unwrap()
        .all_ackable_before(),
      SequenceNumber::new(3)
    );

    // 5. Feed the reader a data message with sequence number 3
    let data = Data {
      writer_id: writer_guid.entity_id,
      writer_sn: SequenceNumber::new(3),
      ..Default::default()
    };
    let data_flags = BitFlags::<DATA_Flags>::from_flag(DATA_Flags::Data);

    reader.handle_data_msg(data, data_flags, &mr_state);

    // 6. Verify that the writer proxy reports seqnums below 5 as ackable
    // This should be the case since reader received data with seqnum 3 and seqnum 4
    // was marked irrelevant before
    assert_eq!(
      reader
        .matched_writer(writer_guid)
        .unwrap()
        .all_ackable_before(),
      SequenceNumber::new(5)
    );

    // 7. Feed the reader a gap message which marks the sequence number 5 as
    // irrelevant
    let gap_start = SequenceNumber::new(5);
    let gap_list_base = SequenceNumber::new(5);
    let mut gap_list = SequenceNumberSet::new(gap_list_base, 7);
    gap_list.test_insert(SequenceNumber::new(5));

    let gap = Gap {
      reader_id: reader.entity_id(),
      writer_id: writer_guid.entity_id,
      gap_start,
      gap_list,
    };
    reader.handle_gap_msg(&gap, &mr_state);

    // 8. Verify that the writer proxy reports seqnums below 6 as ackable
    assert_eq!(
      reader
        .matched_writer(writer_guid)
        .unwrap()
        .all_ackable_before(),
      SequenceNumber::new(6)
    );
  }

  #[test]
  fn stateless_reader_does_not_contain_writer_proxies() {
    // 1. Create a stateless-like reader
    // Create the DDS cache and a topic
    let dds_cache = Arc::new(RwLock::new(DDSCache::new()));
    let topic_name = "test_name";
    let qos_policy = QosPolicies::builder()
      .reliability(Reliability::BestEffort) // Stateless needs to be BestEffort
      .build();

    let topic_cache_handle = dds_cache.write().unwrap().add_new_topic(
      topic_name.to_string(),
      TypeDesc::new("test_type".to_string()),
      &qos_policy,
    );

    // Create mechanisms for notifications, statuses & commands
    let (notification_sender, _notification_receiver) =
      crate::mio_source::notification_channel(100);
    let (_notification_event_source, notification_event_sender) =
      mio_source::make_poll_channel().unwrap();
    let data_reader_waker = Arc::new(Mutex::new(None));

    let (status_sender, _status_receiver) = sync_status_channel::<DataReaderStatus>(4).unwrap();
    let (participant_status_sender, _participant_status_receiver) =
      sync_status_channel(16).unwrap();

    let (_reader_command_sender, reader_command_receiver) =
      wake_channel::<ReaderCommand>(10, &LoopWaker::new());

    let like_stateless = true;
    let reader_guid = GUID::dummy_test_guid(EntityKind::READER_NO_KEY_USER_DEFINED);
    let reader_ing = ReaderIngredients {
      guid: reader_guid,
      notification_sender,
      status_sender,
      topic_name: topic_name.to_string(),
      topic_cache_handle,
      like_stateless,
      qos_policy,
      data_reader_command_receiver: reader_command_receiver,
      data_reader_waker,
      poll_event_sender: notification_event_sender,
      security_plugins: None,
      discovery_notify: None,
      horus_taken: None,
    };
    let mut reader = Reader::new(
      reader_ing,
      Rc::new(UDPSender::new(0).unwrap()),
      new_shared_timer(),
      participant_status_sender,
    );

    // 2. Attempt to add info of a matched writer to the reader
    let writer_guid = GUID::dummy_test_guid(EntityKind::WRITER_NO_KEY_USER_DEFINED);

    let mr_state = MessageReceiverState {
      source_guid_prefix: writer_guid.prefix,
      ..Default::default()
    };

    reader.matched_writer_add(
      writer_guid,
      EntityId::UNKNOWN,
      mr_state.unicast_reply_locator_list.to_vec(),
      mr_state.multicast_reply_locator_list.to_vec(),
      &QosPolicies::qos_none(),
    );

    // 3. Verify that the reader does not contain a writer proxy for the writer that
    // we attempted to add
    assert!(reader.matched_writer(writer_guid).is_none());
  }

  // HORUS PATCH (HORUS-PATCH.md, item 9): tests of the deferred HEARTBEAT answer.

  // What a reader sent to the writer: (ACKNACK base and set) or (NACK_FRAG's sample and
  // fragments).
  #[derive(Debug, PartialEq, Eq)]
  enum Answer {
    AckNack(SequenceNumber, Vec<SequenceNumber>),
    NackFrag(SequenceNumber, Vec<FragmentNumber>),
  }

  struct FragmentedWriterFixture {
    reader: Reader,
    timer: SharedTimer<DpTimerEvent>,
    writer_guid: GUID,
    // The writer's socket: the reader's answers arrive here.
    writer_socket: std::net::UdpSocket,
    writer_locators: Vec<Locator>,
    heartbeat_count: i32,
  }

  const FRAG: u16 = 256; // horus_reassembly::MIN_FRAGMENT_SIZE
  const FRAGMENTS: u32 = 3;

  impl FragmentedWriterFixture {
    fn new() -> Self {
      let dds_cache = Arc::new(RwLock::new(DDSCache::new()));
      let reliable_qos = QosPolicyBuilder::new()
        .reliability(Reliability::Reliable {
          max_blocking_time: Duration::from_millis(100),
        })
        .build();
      let topic_cache_handle = dds_cache.write().unwrap().add_new_topic(
        "fragmented".to_string(),
        TypeDesc::new("test_type".to_string()),
        &reliable_qos,
      );
      let (notification_sender, _notification_receiver) =
        crate::mio_source::notification_channel(100);
      let (_notification_event_source, notification_event_sender) =
        mio_source::make_poll_channel().unwrap();
      let (status_sender, _status_receiver) = sync_status_channel::<DataReaderStatus>(4).unwrap();
      let (participant_status_sender, _participant_status_receiver) =
        sync_status_channel(16).unwrap();
      let (_reader_command_sender, reader_command_receiver) =
        wake_channel::<ReaderCommand>(10, &LoopWaker::new());
      let timer = new_shared_timer();
      let mut reader = Reader::new(
        ReaderIngredients {
          guid: GUID::dummy_test_guid(EntityKind::READER_NO_KEY_USER_DEFINED),
          notification_sender,
          status_sender,
          topic_name: "fragmented".to_string(),
          topic_cache_handle,
          like_stateless: false,
          qos_policy: reliable_qos.clone(),
          data_reader_command_receiver: reader_command_receiver,
          data_reader_waker: Arc::new(Mutex::new(None)),
          poll_event_sender: notification_event_sender,
          security_plugins: None,
          discovery_notify: None,
          horus_taken: None,
        },
        Rc::new(UDPSender::new(0).unwrap()),
        timer.clone(),
        participant_status_sender,
      );
      let writer_socket = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
      writer_socket.set_nonblocking(true).unwrap();
      let writer_locators = vec![Locator::from(writer_socket.local_addr().unwrap())];
      let writer_guid = GUID::dummy_test_guid(EntityKind::WRITER_NO_KEY_USER_DEFINED);
      reader.matched_writer_add(
        writer_guid,
        EntityId::UNKNOWN,
        writer_locators.clone(),
        vec![],
        &reliable_qos,
      );
      let fixture = Self {
        reader,
        timer,
        writer_guid,
        writer_socket,
        writer_locators,
        heartbeat_count: 0,
      };
      fixture.answers(); // the preemptive ACKNACK on match, if any
      fixture
    }

    // Fragment `frag` (1-based) of sample `sn`, FRAGMENTS fragments of FRAG bytes.
    fn fragment(&mut self, sn: i64, frag: u32) {
      let mut payload = vec![frag as u8; usize::from(FRAG)];
      if frag == 1 {
        payload[..4].copy_from_slice(&[0, 1, 0, 0]); // CDR_LE representation header
      }
      let datafrag = DataFrag {
        reader_id: self.reader.entity_id(),
        writer_id: self.writer_guid.entity_id,
        writer_sn: SequenceNumber::new(sn),
        fragment_starting_num: FragmentNumber::new(frag),
        fragments_in_submessage: 1,
        fragment_size: FRAG,
        data_size: u32::from(FRAG) * FRAGMENTS,
        serialized_payload: Bytes::from(payload),
        ..Default::default()
      };
      let mr_state = MessageReceiverState {
        source_guid_prefix: self.writer_guid.prefix,
        unicast_reply_locator_list: &self.writer_locators,
        ..Default::default()
      };
      self.reader.handle_datafrag_msg(
        &datafrag,
        BitFlags::from_flag(DATAFRAG_Flags::Endianness),
        &mr_state,
      );
    }

    // A HEARTBEAT announcing samples 1..=last_sn, final flag not set (as Fast DDS
    // piggybacks on its DATA_FRAG datagrams); whether the reader answered at once.
    fn heartbeat(&mut self, last_sn: i64) -> bool {
      self.heartbeat_count += 1;
      let heartbeat = Heartbeat {
        reader_id: self.reader.entity_id(),
        writer_id: self.writer_guid.entity_id,
        first_sn: SequenceNumber::new(1),
        last_sn: SequenceNumber::new(last_sn),
        count: self.heartbeat_count,
      };
      let mr_state = MessageReceiverState {
        source_guid_prefix: self.writer_guid.prefix,
        unicast_reply_locator_list: &self.writer_locators,
        ..Default::default()
      };
      self
        .reader
        .handle_heartbeat_msg(&heartbeat, false, &mr_state)
    }

    // Whether sample `sn` reached the topic cache.
    fn delivered(&self, sn: i64) -> bool {
      let sn = SequenceNumber::new(sn);
      self.reader.history_cache_change_data(sn).is_some()
    }

    // Every answer the writer's socket holds now (sent synchronously over loopback).
    fn answers(&self) -> Vec<Answer> {
      let mut answers = Vec::new();
      let mut buf = vec![0u8; 65536];
      while let Ok(n) = self.writer_socket.recv(&mut buf) {
        let message = Message::read_from_buffer(&Bytes::copy_from_slice(&buf[..n])).unwrap();
        for submessage in message.submessages {
          match submessage.body {
            SubmessageBody::Reader(ReaderSubmessage::AckNack(a, _)) => answers.push(
              Answer::AckNack(a.reader_sn_state.base(), a.reader_sn_state.iter().collect()),
            ),
            SubmessageBody::Reader(ReaderSubmessage::NackFrag(n, _)) => answers.push(
              Answer::NackFrag(n.writer_sn, n.fragment_number_state.iter().collect()),
            ),
            _ => {}
          }
        }
      }
      answers
    }

    // Runs every timed event the reader has armed, each when due.
    fn run_timers(&mut self) {
      loop {
        let Some(when) = self.timer.borrow().next_deadline() else {
          return;
        };
        std::thread::sleep(when.saturating_duration_since(Instant::now()));
        let fired = self.timer.borrow_mut().poll();
        if let Some(DpTimerEvent::Reader { event, .. }) = fired {
          self.reader.handle_timed_event(event);
        }
      }
    }

    // Runs the reader's timed events until it has answered (a deferred HEARTBEAT's timer
    // fires once the sample's fragments have stopped coming); the answers.
    fn answers_after_timer(&mut self) -> Vec<Answer> {
      let give_up = Instant::now() + StdDuration::from_secs(10);
      loop {
        let fired = self.timer.borrow_mut().poll();
        if let Some(DpTimerEvent::Reader { event, .. }) = fired {
          self.reader.handle_timed_event(event);
        }
        let answers = self.answers();
        if !answers.is_empty() || Instant::now() > give_up {
          return answers;
        }
        std::thread::sleep(StdDuration::from_millis(1));
      }
    }
  }

  // HORUS PATCH (item 15): a built-in (discovery) reader, reliable and stateful as SEDP's.
  fn builtin_reader() -> Reader {
    let dds_cache = Arc::new(RwLock::new(DDSCache::new()));
    let reliable_qos = QosPolicyBuilder::new()
      .reliability(Reliability::Reliable {
        max_blocking_time: Duration::from_millis(100),
      })
      .build();
    let topic_cache_handle = dds_cache.write().unwrap().add_new_topic(
      "builtin".to_string(),
      TypeDesc::new("test_type".to_string()),
      &reliable_qos,
    );
    let (notification_sender, _notification_receiver) =
      crate::mio_source::notification_channel(100);
    let (_notification_event_source, notification_event_sender) =
      mio_source::make_poll_channel().unwrap();
    let (status_sender, _status_receiver) = sync_status_channel::<DataReaderStatus>(4).unwrap();
    let (participant_status_sender, _participant_status_receiver) =
      sync_status_channel(16).unwrap();
    let (_reader_command_sender, reader_command_receiver) =
      wake_channel::<ReaderCommand>(10, &LoopWaker::new());
    Reader::new(
      ReaderIngredients {
        guid: GUID::dummy_test_guid(EntityKind::READER_WITH_KEY_BUILT_IN),
        notification_sender,
        status_sender,
        topic_name: "builtin".to_string(),
        topic_cache_handle,
        like_stateless: false,
        qos_policy: reliable_qos,
        data_reader_command_receiver: reader_command_receiver,
        data_reader_waker: Arc::new(Mutex::new(None)),
        poll_event_sender: notification_event_sender,
        security_plugins: None,
        discovery_notify: None,
        horus_taken: None,
      },
      Rc::new(UDPSender::new(0).unwrap()),
      new_shared_timer(),
      participant_status_sender,
    )
  }

  // HORUS PATCH (item 15): fragment 1 of sample `sn` of `size` bytes in 256-byte fragments,
  // from built-in writer `writer`, to `reader`.
  fn open_sample(reader: &mut Reader, writer: GUID, sn: i64, size: u32) {
    let mut payload = vec![0u8; 256];
    payload[..4].copy_from_slice(&[0, 1, 0, 0]);
    let datafrag = DataFrag {
      reader_id: reader.entity_id(),
      writer_id: writer.entity_id,
      writer_sn: SequenceNumber::new(sn),
      fragment_starting_num: FragmentNumber::new(1),
      fragments_in_submessage: 1,
      fragment_size: 256,
      data_size: size,
      serialized_payload: Bytes::from(payload),
      ..Default::default()
    };
    let mr_state = MessageReceiverState {
      source_guid_prefix: writer.prefix,
      ..Default::default()
    };
    reader.handle_datafrag_msg(
      &datafrag,
      BitFlags::from_flag(DATAFRAG_Flags::Endianness),
      &mr_state,
    );
  }

  // HORUS PATCH (item 15): what broke: a built-in reader took DATA_FRAGs from anyone with
  // the user readers' 64 MiB sample limit, so a stranger held the process budget through
  // it. Now a built-in reader refuses samples over BUILTIN_MAX_SAMPLE_SIZE (`oversize`).
  #[test]
  fn a_builtin_reader_refuses_samples_over_the_discovery_limit() {
    let mut reader = builtin_reader();
    let stranger = GUID::new(
      GuidPrefix::new(b"StrangerXXXX"),
      EntityId::new([0, 0, 3], EntityKind::WRITER_WITH_KEY_BUILT_IN),
    );
    let before = horus_reassembly::refusals().oversize;
    let over = horus_reassembly::BUILTIN_MAX_SAMPLE_SIZE as u32 + 1;
    open_sample(&mut reader, stranger, 1, over);
    assert!(!reader.is_frag_partially_received(stranger, SequenceNumber::new(1)));
    assert!(horus_reassembly::refusals().oversize > before, "counted oversize");
    open_sample(&mut reader, stranger, 2, horus_reassembly::BUILTIN_MAX_SAMPLE_SIZE as u32);
    assert!(reader.is_frag_partially_received(stranger, SequenceNumber::new(2)));
  }

  // HORUS PATCH (item 15): what broke: to make room for a new sample, a reader evicted its
  // writer's other samples even when that could not make enough room (other writers, or
  // other readers, held it), so the new sample was refused anyway and the evicted ones were
  // lost. Now it evicts only when that makes enough room. Here writer A fills a built-in
  // reader's 1 MiB budget but for ~59 KiB; writer B holds a 1 KiB sample (SN 5) and opens
  // a 64 KiB one (SN 3): evicting SN 5 cannot make room, so SN 3 is refused (`over_budget`)
  // and SN 5 kept.
  #[test]
  fn a_sample_that_eviction_cannot_make_room_for_evicts_nothing() {
    let mut reader = builtin_reader();
    let writer = |name: &[u8; 12]| {
      GUID::new(
        GuidPrefix::new(name),
        EntityId::new([0, 0, 3], EntityKind::WRITER_WITH_KEY_BUILT_IN),
      )
    };
    let (a, b) = (writer(b"WriterAAAAAA"), writer(b"WriterBBBBBB"));
    let max = horus_reassembly::BUILTIN_MAX_SAMPLE_SIZE as u32;
    for sn in 2..=16 {
      open_sample(&mut reader, a, sn, max);
      assert!(reader.is_frag_partially_received(a, SequenceNumber::new(sn)), "{sn}");
    }
    open_sample(&mut reader, b, 5, 1024);
    assert!(reader.is_frag_partially_received(b, SequenceNumber::new(5)));
    let refused_before = horus_reassembly::refusals().over_budget;
    open_sample(&mut reader, b, 3, max);
    assert!(!reader.is_frag_partially_received(b, SequenceNumber::new(3)));
    assert!(horus_reassembly::refusals().over_budget > refused_before, "counted");
    assert!(
      reader.is_frag_partially_received(b, SequenceNumber::new(5)),
      "SN 5 evicted for nothing"
    );
    // Where evicting does make room it still happens: A's SN 16 is evicted for its SN 1.
    open_sample(&mut reader, a, 1, max);
    assert!(reader.is_frag_partially_received(a, SequenceNumber::new(1)));
    assert!(!reader.is_frag_partially_received(a, SequenceNumber::new(16)));
  }

  #[test]
  fn heartbeats_between_fragments_still_arriving_are_not_answered_with_nack_frags() {
    let mut f = FragmentedWriterFixture::new();
    for frag in 1..FRAGMENTS {
      f.fragment(1, frag);
      // 0.15.1 answered each with a NACK_FRAG for the fragments behind it, still in
      // flight, and an ACKNACK.
      assert!(!f.heartbeat(1), "fragment {frag}: answered at once");
      assert_eq!(f.answers(), vec![], "fragment {frag}");
    }
    f.fragment(1, FRAGMENTS);
    assert!(f.delivered(1));
    // The HEARTBEAT after the last fragment is answered at once: all received.
    assert!(f.heartbeat(1));
    assert_eq!(
      f.answers(),
      vec![Answer::AckNack(SequenceNumber::new(2), vec![])]
    );
    // The deferred answer has nothing left to say.
    f.run_timers();
    assert_eq!(f.answers(), vec![]);
  }

  #[test]
  fn a_fragment_lost_while_heartbeats_are_deferred_is_nack_fragged_and_the_sample_completes() {
    let mut f = FragmentedWriterFixture::new();
    // Fragment 2 of 3 is lost; a HEARTBEAT comes with each fragment that arrives.
    f.fragment(1, 1);
    assert!(!f.heartbeat(1));
    f.fragment(1, 3);
    assert!(!f.heartbeat(1));
    assert_eq!(f.answers(), vec![]);
    // Once the fragments have stopped coming, the deferred answer asks for fragment 2.
    assert_eq!(
      f.answers_after_timer(),
      vec![
        Answer::NackFrag(SequenceNumber::new(1), vec![FragmentNumber::new(2)]),
        Answer::AckNack(SequenceNumber::new(1), vec![]),
      ]
    );
    assert!(!f.delivered(1));
    // The writer's repair completes the sample.
    f.fragment(1, 2);
    assert!(f.delivered(1));
    assert!(f.heartbeat(1));
    assert_eq!(
      f.answers(),
      vec![Answer::AckNack(SequenceNumber::new(2), vec![])]
    );
  }

  #[test]
  fn a_fragment_lost_in_a_sample_the_writer_moved_on_from_is_nack_fragged_at_once() {
    let mut f = FragmentedWriterFixture::new();
    // Sample 1 loses fragment 3; sample 2's fragments arrive: sample 1 is no longer in
    // flight, and the HEARTBEAT is answered at once for it (not for sample 2).
    f.fragment(1, 1);
    f.fragment(1, 2);
    f.fragment(2, 1);
    assert!(f.heartbeat(2));
    assert_eq!(
      f.answers(),
      vec![
        Answer::NackFrag(SequenceNumber::new(1), vec![FragmentNumber::new(3)]),
        Answer::AckNack(SequenceNumber::new(1), vec![]),
      ]
    );
  }

  // HORUS PATCH (HORUS-PATCH.md, item 24): a reader with an ack window of `window`, its
  // TakenMarks, and a writer matched to it.
  fn windowed_reader(window: u32) -> (Reader, Arc<crate::horus_ack_window::TakenMarks>, GUID) {
    let dds_cache = Arc::new(RwLock::new(DDSCache::new()));
    let qos = QosPolicyBuilder::new()
      .reliability(Reliability::Reliable {
        max_blocking_time: Duration::from_millis(100),
      })
      .build()
      .with_horus_ack_window(window);
    let topic_cache_handle = dds_cache.write().unwrap().add_new_topic(
      "windowed".to_string(),
      TypeDesc::new("test_type".to_string()),
      &qos,
    );
    let (notification_sender, _notification_receiver) =
      crate::mio_source::notification_channel(100);
    let (_notification_event_source, notification_event_sender) =
      mio_source::make_poll_channel().unwrap();
    let (status_sender, _status_receiver) = sync_status_channel::<DataReaderStatus>(64).unwrap();
    let (participant_status_sender, _participant_status_receiver) =
      sync_status_channel(64).unwrap();
    let (_reader_command_sender, reader_command_receiver) =
      wake_channel::<ReaderCommand>(10, &LoopWaker::new());
    let taken = Arc::new(crate::horus_ack_window::TakenMarks::with_window(window));
    let reader = Reader::new(
      ReaderIngredients {
        guid: GUID::dummy_test_guid(EntityKind::READER_NO_KEY_USER_DEFINED),
        notification_sender,
        status_sender,
        topic_name: "windowed".to_string(),
        topic_cache_handle,
        like_stateless: false,
        qos_policy: qos,
        data_reader_command_receiver: reader_command_receiver,
        data_reader_waker: Arc::new(Mutex::new(None)),
        poll_event_sender: notification_event_sender,
        security_plugins: None,
        discovery_notify: None,
        horus_taken: Some(Arc::clone(&taken)),
      },
      Rc::new(UDPSender::new(0).unwrap()),
      new_shared_timer(),
      participant_status_sender,
    );
    (
      reader,
      taken,
      GUID::dummy_test_guid(EntityKind::WRITER_NO_KEY_USER_DEFINED),
    )
  }

  fn match_writer(reader: &mut Reader, writer: GUID) {
    let qos = QosPolicyBuilder::new()
      .reliability(Reliability::Reliable {
        max_blocking_time: Duration::from_millis(100),
      })
      .build();
    reader.matched_writer_add(writer, EntityId::UNKNOWN, vec![], vec![], &qos);
  }

  fn send_data(reader: &mut Reader, writer: GUID, sn: i64) {
    let data = Data {
      reader_id: reader.entity_id(),
      writer_id: writer.entity_id,
      writer_sn: SequenceNumber::new(sn),
      ..Data::default()
    };
    let mr_state = MessageReceiverState {
      source_guid_prefix: writer.prefix,
      ..Default::default()
    };
    reader.handle_data_msg(data, BitFlags::from_flag(DATA_Flags::Data), &mr_state);
  }

  fn send_heartbeat(reader: &mut Reader, writer: GUID, count: i32, last: i64) {
    send_heartbeat_from(reader, writer, count, 1, last);
  }

  fn send_heartbeat_from(reader: &mut Reader, writer: GUID, count: i32, first: i64, last: i64) {
    let heartbeat = Heartbeat {
      reader_id: reader.entity_id(),
      writer_id: writer.entity_id,
      first_sn: SequenceNumber::new(first),
      last_sn: SequenceNumber::new(last),
      count,
    };
    let mr_state = MessageReceiverState {
      source_guid_prefix: writer.prefix,
      ..Default::default()
    };
    reader.handle_heartbeat_msg(&heartbeat, false, &mr_state);
  }

  // HORUS PATCH (item 24): what broke: a KEEP_ALL writer held back by the window that
  // left never sent what was withheld, and nothing counted it (horus-ros2's route counted
  // it `held_back` only). Now what it announced above what the reader accepted is counted
  // once, claimed by the application; a writer that comes back under the same GUID is not
  // counted twice and what was counted is not delivered after all.
  #[test]
  fn what_a_held_back_writer_that_left_had_announced_is_counted_once() {
    let (mut reader, taken, writer) = windowed_reader(16);
    match_writer(&mut reader, writer);
    send_heartbeat(&mut reader, writer, 1, 100);
    for sn in 1..=20 {
      send_data(&mut reader, writer, sn);
    }
    assert!(reader
      .history_cache_change_data(SequenceNumber::new(16))
      .is_some());
    assert!(
      reader
        .history_cache_change_data(SequenceNumber::new(17))
        .is_none(),
      "beyond the window: withheld"
    );
    assert_eq!(
      taken.claim_departed(|_, _| Some(SequenceNumber::zero())),
      0,
      "still matched: nothing lost yet"
    );
    reader.remove_writer_proxy(writer);
    assert_eq!(
      taken.claim_departed(|_, _| Some(SequenceNumber::zero())),
      84,
      "17..=100 announced, never accepted"
    );
    assert_eq!(
      taken.claim_departed(|_, _| Some(SequenceNumber::zero())),
      0,
      "claimed once"
    );

    // It comes back under the same GUID and sends them again: not delivered (counted).
    match_writer(&mut reader, writer);
    send_heartbeat(&mut reader, writer, 2, 101);
    send_data(&mut reader, writer, 50);
    send_data(&mut reader, writer, 101);
    assert!(reader
      .history_cache_change_data(SequenceNumber::new(50))
      .is_none());
    assert!(reader
      .history_cache_change_data(SequenceNumber::new(101))
      .is_some());
    reader.remove_writer_proxy(writer);
    assert_eq!(
      taken.claim_departed(|_, _| Some(SequenceNumber::zero())),
      0,
      "nothing announced past what it accepted"
    );
  }

  // HORUS PATCH (item 24): a writer that leaves with everything it announced accepted
  // adds nothing, nor one of which nothing was accepted (what it announced may be history
  // from before the match), nor one back before the count was claimed.
  #[test]
  fn a_writer_leaving_with_nothing_withheld_or_back_before_the_claim_adds_nothing() {
    let (mut reader, taken, writer) = windowed_reader(16);
    let other = |n: u8| GUID::new_with_prefix_and_id(GuidPrefix::new(&[n; 12]), writer.entity_id);
    // Everything announced accepted.
    let all = other(1);
    match_writer(&mut reader, all);
    send_heartbeat(&mut reader, all, 1, 5);
    for sn in 1..=5 {
      send_data(&mut reader, all, sn);
    }
    reader.remove_writer_proxy(all);
    // Nothing accepted: 1..=50 announced, no DATA came.
    let none = other(2);
    match_writer(&mut reader, none);
    send_heartbeat(&mut reader, none, 1, 50);
    reader.remove_writer_proxy(none);
    assert_eq!(taken.claim_departed(|_, _| Some(SequenceNumber::zero())), 0);

    // 17..=40 withheld when it left; back before the application claimed: not counted,
    // and what it sends again is delivered.
    match_writer(&mut reader, writer);
    send_heartbeat(&mut reader, writer, 1, 40);
    for sn in 1..=20 {
      send_data(&mut reader, writer, sn);
    }
    reader.remove_writer_proxy(writer);
    match_writer(&mut reader, writer);
    assert_eq!(
      taken.claim_departed(|_, _| Some(SequenceNumber::zero())),
      0,
      "it may send them again"
    );
    send_heartbeat_from(&mut reader, writer, 2, 17, 40);
    for sn in 17..=32 {
      send_data(&mut reader, writer, sn);
    }
    assert!(reader
      .history_cache_change_data(SequenceNumber::new(32))
      .is_some());
  }

  // Review 148 of item 24: a hostile writer's HEARTBEAT alone (no DATA beyond the one
  // accepted) makes its departure count up to i64::MAX lost, and matching again under the
  // same GUID after that claim computes `claimed + 1`, which overflows.
  #[test]
  fn review148_a_hostile_heartbeat_counts_what_it_says_and_its_return_does_not_panic() {
    let (mut reader, taken, writer) = windowed_reader(16);
    match_writer(&mut reader, writer);
    send_data(&mut reader, writer, 1);
    send_heartbeat(&mut reader, writer, 1, i64::MAX);
    reader.remove_writer_proxy(writer);
    let lost = taken.claim_departed(|_, _| Some(SequenceNumber::zero()));
    assert_eq!(
      lost,
      (i64::MAX - 1) as u64,
      "2..=i64::MAX counted lost from one HEARTBEAT"
    );
    // Back under the same GUID: the claimed numbers are marked not available.
    match_writer(&mut reader, writer);
  }
}
