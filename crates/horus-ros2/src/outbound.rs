//! A topic going to ROS 2: a subscriber on the horus topic and a DDS writer, each message's
//! ROS 2 wire bytes (encapsulation header + CDR body) copied once from shared memory into
//! the writer, never converted.

use bytes::Bytes;
use horus::inspect::{RawRosReader, TopicView};
use horus::StartAt;
use rustdds::no_key::DataWriter;
use rustdds::TopicKind;

use crate::dds::Dds;
use crate::local::LocalTopic;
use crate::qos::writer_qos;
use crate::raw::{PassThrough, WireCdr};
use crate::route_error::RouteError;
use crate::status::RouteCounters;

/// Messages moved per route per pump, so that one busy topic cannot starve the others.
const BATCH: usize = 64;

/// One horus topic being written to DDS.
pub(crate) struct Outbound {
    reader: RawRosReader,
    writer: DataWriter<WireCdr, PassThrough>,
    /// The reader's missed count already added to the counters.
    lost_seen: u64,
    /// The reader's malformed count already added.
    malformed_seen: u64,
}

impl Outbound {
    /// Creates the DDS writer for `topic` (`dds_topic`, `dds_type`) and joins the horus
    /// topic as a subscriber (a latched topic's retained messages first).
    pub(crate) fn open(
        dds: &Dds,
        view: &TopicView,
        local: &LocalTopic,
        dds_topic: &str,
        dds_type: &str,
    ) -> Result<Outbound, RouteError> {
        let qos = writer_qos(local.durability, local.qos.depth);
        let topic = dds
            .participant()
            .create_topic(
                dds_topic.to_owned(),
                dds_type.to_owned(),
                &qos,
                TopicKind::NoKey,
            )
            .map_err(|e| RouteError::dds(dds_topic, e))?;
        let writer = dds
            .publisher()
            .create_datawriter_no_key::<WireCdr, PassThrough>(&topic, Some(qos))
            .map_err(|e| RouteError::dds(dds_topic, e))?;
        let reader = view
            .ros_reader_at(false, false, StartAt::Durability)
            .map_err(|e| RouteError::horus(view.name(), e))?;
        Ok(Outbound {
            reader,
            writer,
            lost_seen: 0,
            malformed_seen: 0,
        })
    }

    /// Moves what the horus topic has (at most a batch) to DDS; returns how many were read.
    /// Messages from horus place `skip` (this bridge's own publisher, when the topic also
    /// comes from ROS 2) are not sent back.
    pub(crate) fn pump(&mut self, c: &mut RouteCounters, skip: Option<usize>) -> usize {
        let mut moved = 0;
        while moved < BATCH {
            let Some(sample) = self.reader.try_recv() else {
                break;
            };
            moved += 1;
            if Some(sample.source()) == skip {
                continue;
            }
            let cdr = sample.cdr();
            let len = cdr.len() as u64;
            match self
                .writer
                .write(WireCdr(Bytes::copy_from_slice(cdr)), None)
            {
                Ok(()) => {
                    c.messages += 1;
                    c.bytes += len;
                }
                Err(rustdds::dds::WriteError::Serialization { .. }) => c.malformed += 1,
                // A reliable reader's window is full (the writer never waits: see qos.rs):
                // this message is counted refused, the rest of the batch waits in the
                // horus topic for the next pass instead of stalling the bridge loop.
                Err(rustdds::dds::WriteError::WouldBlock { .. }) => {
                    c.refused += 1;
                    break;
                }
                Err(_) => c.refused += 1,
            }
        }
        let (_, missed, malformed) = self.reader.counts();
        c.lost += missed.saturating_sub(self.lost_seen);
        c.malformed += malformed.saturating_sub(self.malformed_seen);
        (self.lost_seen, self.malformed_seen) = (missed, malformed);
        moved
    }
}
