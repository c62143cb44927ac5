//! A topic going to ROS 2: a subscriber on the horus topic and a DDS writer, each message's
//! ROS 2 wire bytes (encapsulation header + CDR body) copied once from shared memory into
//! the writer, never converted.
//!
//! The route runs on a thread of its own (route_thread.rs): it waits on the horus
//! subscriber (futex, no CPU while idle) and writes each message as soon as it arrives.
//! Back-pressure follows the horus topic's overflow policy:
//! - `Block`: a reliable ROS 2 reader whose send window is full makes the write wait
//!   (retried every `max_blocking_time` until it fits or the route closes). The bridge then
//!   stops reading the horus topic, its ring fills, and the horus publisher waits for the
//!   bridge as for any slow `Block` subscriber (its own timeout, counted there): reliable
//!   end to end, and only this route waits.
//! - `DropOldest`, `Reject`: the write never waits; a full window counts the message
//!   `refused` and the route goes on with the next (the newest readings matter).

use bytes::Bytes;
use horus::inspect::{RawRosReader, TopicView};
use horus::{Overflow, StartAt};
use rustdds::dds::WriteError;
use rustdds::no_key::DataWriter;

use crate::dds::Dds;
use crate::local::LocalTopic;
use crate::qos::writer_qos;
use crate::raw::{PassThrough, WireCdr};
use crate::route_error::RouteError;
use crate::route_thread::{OwnPlace, RouteThread, SharedCounters, StopFlag, STOP_POLL};

/// One horus topic being written to DDS: its thread, stopped when this drops.
pub(crate) struct Outbound {
    thread: RouteThread,
}

/// What the route's thread owns.
struct Mover {
    reader: RawRosReader,
    writer: DataWriter<WireCdr, PassThrough>,
    /// Whether a full send window makes the write wait (a `Block` horus topic).
    wait_for_room: bool,
    /// The bridge's own publisher on the topic (its messages came from ROS 2).
    skip: OwnPlace,
    counters: SharedCounters,
    /// The reader's missed count already added to the counters.
    lost_seen: u64,
    /// The reader's malformed count already added.
    malformed_seen: u64,
}

impl Outbound {
    /// Creates the DDS writer for `topic` (`dds_topic`, `dds_type`), joins the horus topic
    /// as a subscriber (a latched topic's retained messages first) and starts the route's
    /// thread. Messages from the horus publisher place in `skip` are not sent back.
    pub(crate) fn open(
        dds: &Dds,
        view: &TopicView,
        local: &LocalTopic,
        dds_topic: &str,
        dds_type: &str,
        skip: OwnPlace,
        counters: SharedCounters,
    ) -> Result<Outbound, RouteError> {
        let wait_for_room = matches!(local.qos.overflow, Some(Overflow::Block { .. }));
        let qos = writer_qos(local.durability, local.qos.depth, wait_for_room);
        let writer = dds
            .raw_writer(dds_topic, dds_type, &local.ty.type_hash, qos)
            .map_err(|e| RouteError::dds(dds_topic, e))?;
        // Blocking: the subscriber registers for the publishers' futex wake-ups (a
        // non-blocking one sleeps in 1 ms ticks, polling: up to 1 ms per message).
        let reader = view
            .ros_reader_at(true, false, StartAt::Durability)
            .map_err(|e| RouteError::horus(view.name(), e))?;
        let mut mover = Mover {
            reader,
            writer,
            wait_for_room,
            skip,
            counters,
            lost_seen: 0,
            malformed_seen: 0,
        };
        let thread = RouteThread::spawn(format!("ros2-out {}", view.name()), None, move |stop| {
            mover.run(&stop)
        })
        .map_err(|e| RouteError::thread(view.name(), e))?;
        Ok(Outbound { thread })
    }

    /// Stops the route's thread; returns it to be joined off the bridge loop.
    pub(crate) fn stop(self) -> Option<std::thread::JoinHandle<()>> {
        self.thread.stop()
    }
}

impl Mover {
    /// Waits for horus messages and writes each to DDS until asked to stop.
    fn run(&mut self, stop: &StopFlag) {
        while !stop.is_set() {
            if let Some(sample) = self.reader.recv_timeout(STOP_POLL) {
                if Some(sample.source()) != self.skip.get() {
                    let data = WireCdr(Bytes::copy_from_slice(sample.cdr()));
                    // The chunk goes back to the topic before the write may wait.
                    drop(sample);
                    self.write(data, stop);
                }
            }
            self.count_reader_losses();
        }
    }

    /// Writes one message, waiting for room in a reliable reader's window when the topic
    /// is `Block` (until the route is asked to stop: then it counts as refused).
    fn write(&mut self, mut data: WireCdr, stop: &StopFlag) {
        let len = data.0.len() as u64;
        loop {
            match self.writer.write(data, None) {
                Ok(()) => {
                    let mut c = self.counters.lock();
                    c.messages += 1;
                    c.bytes += len;
                }
                Err(WriteError::Serialization { .. }) => self.counters.lock().malformed += 1,
                Err(WriteError::WouldBlock { data: back }) if self.wait_for_room => {
                    if !stop.is_set() {
                        data = back;
                        continue;
                    }
                    self.counters.lock().refused += 1;
                }
                // A full window on a topic that does not wait, or the writer gone.
                Err(_) => self.counters.lock().refused += 1,
            }
            return;
        }
    }

    /// Adds what the horus ring overwrote before the bridge read it (and frames too short
    /// to be messages) to the counters.
    fn count_reader_losses(&mut self) {
        let (_, missed, malformed) = self.reader.counts();
        if (missed, malformed) != (self.lost_seen, self.malformed_seen) {
            let mut c = self.counters.lock();
            c.lost += missed.saturating_sub(self.lost_seen);
            c.malformed += malformed.saturating_sub(self.malformed_seen);
            (self.lost_seen, self.malformed_seen) = (missed, malformed);
        }
    }
}
