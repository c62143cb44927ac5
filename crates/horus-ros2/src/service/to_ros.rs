//! A horus service offered to ROS 2 clients: a DDS reader on the request topic, a DDS
//! writer on the reply topic, and horus clients of the service on worker threads
//! ([`workers`](super::workers): one for an ordinary service, several with lasting calls
//! for an action's `get_result`).
//!
//! A request from DDS is checked (size, CDR of the request type), queued for the workers
//! (at most [`MAX_WAITING`] calls waiting, further requests are dropped and counted:
//! ROS 2 has no way to refuse a call), called on the horus service with the bridge's call
//! timeout, and its reply written to DDS naming the request (see `endpoints`) once the
//! caller's reply reader has matched the bridge's reply writer (held until then, at most the
//! call timeout: [`reply_hold`](super::reply_hold)). A call that fails (no server, server
//! died, timed out, unanswered, no reply reader) is counted; the ROS 2 client sees no reply
//! and its own wait ends it.

use std::sync::mpsc::TrySendError;
use std::time::Duration;

use horus::{CallError, RawClient};
use rustdds::no_key::{DataReader, DataWriter};
use rustdds::rpc::SampleIdentity;
use rustdds::{RTPSEntity, Timestamp, WriteOptionsBuilder, GUID};

use super::endpoints::{self, request_identity};
use super::error::ServiceOpenError;
use super::reaper::Reaper;
use super::record::{record, wire_of};
use super::reply_hold::ReplyHold;
use super::status::ServiceCounters;
use super::types::{message, Checker};
use super::workers::{Ended, Job, Workers, MAX_WAITING};
use crate::action::{endpoint_of, Endpoint};
use crate::dds::Dds;
use crate::names::dds_type_name;
use crate::raw::{PassThrough, WireCdr};

/// Requests taken from DDS per pump.
const BATCH: usize = 64;

/// One horus service answering ROS 2 clients.
pub(crate) struct ToRos {
    reader: DataReader<WireCdr, PassThrough>,
    writer: DataWriter<WireCdr, PassThrough>,
    /// The workers: on drop they are told to call nothing more and handed to the reaper,
    /// which joins them (their horus clients leave the service) once their calls ended.
    workers: Workers,
    waiting: usize,
    request_check: Option<Checker>,
    /// The request type's DDS name and RIHS01 hash (ROS 2 clients are checked against them).
    request_type: (String, String),
    max_bytes: usize,
    me: GUID,
    /// Replies waiting for their caller's reply reader to match.
    hold: ReplyHold,
}

impl ToRos {
    /// Joins horus service `name` of `namespace` as a client, checks it carries ROS 2 types,
    /// and creates the DDS endpoints a ROS 2 server has.
    pub(crate) fn open(
        dds: &Dds,
        namespace: &str,
        name: &str,
        timeout: Duration,
        max_bytes: usize,
        reaper: &Reaper,
    ) -> Result<ToRos, ServiceOpenError> {
        let client =
            RawClient::open(namespace, name).map_err(|e| ServiceOpenError::horus(name, e))?;
        let d = client.description();
        let (Some(req), Some(resp)) = (&d.request.ros2, &d.response.ros2) else {
            return Err(ServiceOpenError::NotRosTyped(name.to_owned()));
        };
        let (req, resp) = (req.clone(), resp.clone());
        let not_ros = || ServiceOpenError::NotRosTyped(name.to_owned());
        let (req_dds, resp_dds) = (
            dds_type_name(&req.type_name).ok_or_else(not_ros)?,
            dds_type_name(&resp.type_name).ok_or_else(not_ros)?,
        );
        let rq = super::names::request_topic(name)?;
        let rr = super::names::reply_topic(name)?;
        let writer = endpoints::writer(dds, &rr, (&resp_dds, &resp.type_hash))?;
        let reader = endpoints::reader(dds, &rq, (&req_dds, &req.type_hash))?;
        // An action's get_result is answered when its goal ends: its calls last.
        let lasting = matches!(endpoint_of(name), Some((_, Endpoint::GetResult)));
        let workers = Workers::start(client, namespace, name, timeout, lasting, reaper)
            .map_err(|e| ServiceOpenError::horus(name, e))?;
        Ok(ToRos {
            reader,
            writer,
            workers,
            waiting: 0,
            request_check: Checker::of(&req),
            request_type: (req_dds, req.type_hash.clone()),
            max_bytes,
            me: dds.participant().guid(),
            hold: ReplyHold::new(timeout),
        })
    }

    /// Calls queued, in progress, or answered and held for their caller's reply reader.
    pub(crate) fn waiting(&self) -> usize {
        self.waiting + self.hold.len()
    }

    /// Closes the route with calls still waiting: results already in are counted as
    /// usual, the rest (never called, or called but no longer carried back) are counted
    /// `abandoned`. Dropping the route then neither calls nor waits for anything.
    pub(crate) fn abandon(&mut self, c: &mut ServiceCounters) {
        self.workers.cancel();
        self.take_done(c);
        c.abandoned += (self.waiting + self.hold.clear()) as u64;
        self.waiting = 0;
    }

    /// The DDS writers (GUIDs as discovery lists them) of the service's ROS 2 clients now.
    pub(crate) fn set_clients(&self, clients: impl IntoIterator<Item = String>) {
        self.workers.set_clients(clients);
    }

    /// The request type's DDS name and RIHS01 hash.
    pub(crate) fn request_type(&self) -> (String, String) {
        self.request_type.clone()
    }

    /// Takes requests from DDS and hands them to the worker; writes the replies of
    /// finished calls. Returns how many requests and replies moved.
    pub(crate) fn pump(&mut self, c: &mut ServiceCounters) -> usize {
        let mut moved = 0;
        while moved < BATCH {
            let sample = match self.reader.take_next_sample() {
                Ok(Some(s)) => s,
                Ok(None) => break,
                // Not little-endian CDR: RustDDS has moved past it.
                Err(_) => {
                    moved += 1;
                    c.malformed += 1;
                    continue;
                }
            };
            moved += 1;
            let info = sample.sample_info();
            if info.writer_guid().prefix == self.me.prefix {
                continue;
            }
            let id = request_identity(info);
            let client = format!("{:?}", info.writer_guid());
            let wire = &sample.value().0;
            if wire.len() > self.max_bytes {
                c.oversize += 1;
                continue;
            }
            let Some(wire) = message(&self.request_check, wire) else {
                c.malformed += 1;
                continue;
            };
            if self.waiting() >= MAX_WAITING {
                c.overloaded += 1;
                continue;
            }
            let len = wire.len() as u64;
            let job = Job {
                id,
                client,
                record: record(wire),
            };
            match self.workers.submit(job, self.waiting) {
                Ok(()) => {
                    self.waiting += 1;
                    c.request_bytes += len;
                }
                Err(TrySendError::Full(_)) => c.overloaded += 1,
                // The worker ended (it never does while the route lives).
                Err(TrySendError::Disconnected(_)) => c.unanswered += 1,
            }
        }
        moved + self.take_done(c) + self.release_held(c)
    }

    /// Writes the held replies whose caller's reader matched since; counts the expired
    /// ones. How many left the hold.
    fn release_held(&mut self, c: &mut ServiceCounters) -> usize {
        if self.hold.len() == 0 {
            return 0;
        }
        self.hold.note_matches(&self.writer);
        let released = self.hold.release();
        c.no_reply_reader += released.expired;
        let n = released.ready.len() + released.expired as usize;
        for h in released.ready {
            self.write_reply(h.id, &h.wire, c);
        }
        n
    }

    /// Writes the replies of finished calls and counts the failed ones; how many.
    fn take_done(&mut self, c: &mut ServiceCounters) -> usize {
        let mut moved = 0;
        let done: Vec<_> = self.workers.finished().collect();
        for d in done {
            moved += 1;
            self.waiting = self.waiting.saturating_sub(1);
            match d.result {
                Ok(resp) => self.reply(d.id, &resp, c),
                Err(Ended::ClientGone) => c.caller_gone += 1,
                Err(Ended::Call(e)) => match e {
                    CallError::Timeout(_) => c.timed_out += 1,
                    CallError::ServerDied { .. } => c.server_died += 1,
                    CallError::NoServer(_) => c.no_server += 1,
                    CallError::Busy { .. } | CallError::PoolExhausted => c.overloaded += 1,
                    CallError::TooLarge { .. } => c.oversize += 1,
                    _ => c.unanswered += 1,
                },
            }
        }
        moved
    }

    /// Writes the reply to call `id` now, or holds it until its caller's reader matched.
    fn reply(&mut self, id: SampleIdentity, record: &[u8], c: &mut ServiceCounters) {
        let Some(wire) = wire_of(record) else {
            c.malformed += 1;
            return;
        };
        self.hold.note_matches(&self.writer);
        if !self.hold.caller_matched(&id) {
            c.held_for_reader += 1;
            self.hold.hold(id, wire);
            return;
        }
        self.write_reply(id, wire, c);
    }

    /// Writes a reply to DDS naming call `id`.
    fn write_reply(&self, id: SampleIdentity, wire: &[u8], c: &mut ServiceCounters) {
        let len = wire.len() as u64;
        let opts = WriteOptionsBuilder::new()
            .source_timestamp(Timestamp::now())
            .related_sample_identity(id)
            .build();
        match self
            .writer
            .write_with_options(WireCdr(bytes::Bytes::copy_from_slice(wire)), opts)
        {
            Ok(_) => {
                c.calls += 1;
                c.reply_bytes += len;
            }
            Err(_) => c.write_failed += 1,
        }
    }
}
