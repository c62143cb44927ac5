//! A topic coming from ROS 2: a DDS reader and a publisher on the horus topic. Each
//! message's wire bytes are checked against the topic's type (bounded in time and memory
//! by their length: a DDS peer is untrusted) and copied once into a chunk, never converted.

use std::collections::{HashMap, HashSet};

use horus::inspect::{RawRosPublisher, RawRosSendError, TopicView};
use rustdds::no_key::DataReader;
use rustdds::{RTPSEntity, TopicKind, GUID};

use crate::dds::Dds;
use crate::local::LocalTopic;
use crate::qos::ReaderKind;
use crate::raw::{PassThrough, WireCdr};
use crate::route_error::RouteError;
use crate::sequence_gaps::{new_reader_incarnation, SequenceGaps};
use crate::type_check::PayloadCheck;
use crate::status::RouteCounters;

/// Messages moved per route per pump, so that one busy topic cannot starve the others.
const BATCH: usize = 64;

/// One DDS topic being published into horus.
pub(crate) struct Inbound {
    reader: DataReader<WireCdr, PassThrough>,
    publisher: RawRosPublisher,
    /// The reader's QoS request (the route reopens when the writers need another).
    pub(crate) kind: ReaderKind,
    /// The topic's type, to check payloads (`None`: its definition does not resolve; then
    /// only the encapsulation header is checked).
    check: Option<PayloadCheck>,
    /// Largest message carried.
    max_bytes: usize,
    /// This bridge's participant.
    me: GUID,
    /// The writers the last scan accepted (type and hash checked), by their GUID as
    /// discovery prints it. RustDDS matches writers by topic name alone, so samples of a
    /// refused writer (same name, other type) reach this reader too: they are dropped.
    accepted: HashSet<String>,
    /// The verdict on each writer seen since the last scan (so that a GUID is printed once
    /// per scan, not per sample). Cleared with each new `accepted`; bounded by the writers.
    verdicts: HashMap<GUID, bool>,
    /// This DDS reader's number (a reopened route's reader has a new one: sequence_gaps.rs).
    incarnation: u64,
}

impl Inbound {
    /// Creates the DDS reader (asking for `kind`) and joins the horus topic as a publisher.
    pub(crate) fn open(
        dds: &Dds,
        view: &TopicView,
        local: &LocalTopic,
        dds_topic: &str,
        dds_type: &str,
        kind: ReaderKind,
        max_bytes: usize,
    ) -> Result<Inbound, RouteError> {
        let qos = kind.qos(local.qos.depth);
        let topic = dds
            .participant()
            .create_topic(
                dds_topic.to_owned(),
                dds_type.to_owned(),
                &qos,
                TopicKind::NoKey,
            )
            .map_err(|e| RouteError::dds(dds_topic, e))?;
        let publisher = view
            .ros_publisher()
            .map_err(|e| RouteError::horus(view.name(), e))?;
        let reader = dds
            .subscriber()
            .create_datareader_no_key::<WireCdr, PassThrough>(&topic, Some(qos))
            .map_err(|e| RouteError::dds(dds_topic, e))?;
        let check = PayloadCheck::new(&local.ty.type_name, &local.ty.definition);
        // A chunk holds 8 bytes of frame (4 reserved + the header) before the body.
        let chunk_room =
            usize::try_from(local.qos.chunk_bytes.saturating_sub(4)).unwrap_or(usize::MAX);
        Ok(Inbound {
            reader,
            publisher,
            kind,
            check,
            max_bytes: max_bytes.min(chunk_room),
            me: dds.participant().guid(),
            accepted: HashSet::new(),
            verdicts: HashMap::new(),
            incarnation: new_reader_incarnation(),
        })
    }

    /// The writers whose samples are carried from now on (those the scan accepted);
    /// samples of any other writer are dropped and counted refused.
    pub(crate) fn accept_writers(&mut self, guids: HashSet<String>) {
        if guids != self.accepted {
            self.accepted = guids;
            self.verdicts.clear();
        }
    }

    /// The horus publisher's place (what it publishes must not go back to DDS).
    pub(crate) fn place(&self) -> usize {
        self.publisher.place()
    }

    /// Moves what DDS has (at most a batch) into the horus topic; returns how many samples
    /// were taken (carried or dropped). `gaps`: the route's writers' sequence numbers (loss
    /// and replays, kept across reopening).
    pub(crate) fn pump(&mut self, c: &mut RouteCounters, gaps: &mut SequenceGaps) -> usize {
        let mut taken = 0;
        while taken < BATCH {
            let sample = match self.reader.take_next_sample() {
                Ok(Some(s)) => s,
                Ok(None) => break,
                // Not little-endian CDR: RustDDS has moved past it.
                Err(_) => {
                    taken += 1;
                    c.malformed += 1;
                    gaps.undecodable();
                    continue;
                }
            };
            taken += 1;
            // This bridge's own writer (the topic also crosses the other way): not again.
            let writer = sample.sample_info().writer_guid();
            if writer.prefix == self.me.prefix {
                continue;
            }
            // A writer the scan refused (or has not checked yet): not carried, counted.
            let accepted = &self.accepted;
            let ok = *self
                .verdicts
                .entry(writer)
                .or_insert_with(|| accepted.contains(&format!("{writer:?}")));
            if !ok {
                c.refused += 1;
                continue;
            }
            let seq = sample.sample_info().sample_identity().sequence_number;
            if gaps.is_replay(self.incarnation, writer, seq, c) {
                continue;
            }
            let mut wire = &sample.value().0[..];
            if wire.len() > self.max_bytes {
                c.oversize += 1;
                continue;
            }
            if let Some(check) = &self.check {
                match check.message_end(wire) {
                    // The message ends where its type says: RTPS pads a payload to a
                    // multiple of 4 bytes (and rmw's buffers may run on); horus carries the
                    // message alone, as `serialize_message` gives it.
                    Ok(end) => wire = &wire[..end],
                    Err(_) => {
                        c.malformed += 1;
                        continue;
                    }
                }
            }
            match self.publisher.send_cdr(wire) {
                Ok(_) => {
                    c.messages += 1;
                    c.bytes += wire.len() as u64;
                }
                Err(RawRosSendError::NotCdr(_)) => c.malformed += 1,
                Err(RawRosSendError::Send(_)) => c.refused += 1,
            }
        }
        taken
    }
}
