//! A horus service offered to ROS 2 clients: a DDS reader on the request topic, a DDS
//! writer on the reply topic, and a horus client of the service on a worker thread (a horus
//! call blocks until its response or timeout; the bridge loop never does).
//!
//! A request from DDS is checked (size, CDR of the request type), queued for the worker
//! (at most [`MAX_WAITING`] calls waiting, further requests are dropped and counted:
//! ROS 2 has no way to refuse a call), called on the horus service with the bridge's call
//! timeout, and its reply written to DDS naming the request (see `endpoints`). A call that
//! fails (no server, server died, timed out, unanswered) is counted; the ROS 2 client sees
//! no reply and its own wait ends it.

use std::sync::mpsc::{self, Receiver, SyncSender, TrySendError};
use std::time::Duration;

use horus::{CallError, RawClient};
use rustdds::no_key::{DataReader, DataWriter};
use rustdds::rpc::SampleIdentity;
use rustdds::{RTPSEntity, Timestamp, WriteOptionsBuilder, GUID};

use super::endpoints::{self, request_identity};
use super::error::ServiceOpenError;
use super::record::{record, wire_of};
use super::status::ServiceCounters;
use super::types::{message, Checker};
use crate::dds::Dds;
use crate::names::dds_type_name;
use crate::raw::{PassThrough, WireCdr};

/// Calls waiting at the bridge for one service (queued or being called).
pub(crate) const MAX_WAITING: usize = 64;

/// Requests taken from DDS per pump.
const BATCH: usize = 64;

/// A call for the worker.
struct Job {
    id: SampleIdentity,
    record: Vec<u8>,
}

/// What the worker's call gave.
struct Done {
    id: SampleIdentity,
    result: Result<Vec<u8>, CallError>,
}

/// One horus service answering ROS 2 clients.
pub(crate) struct ToRos {
    reader: DataReader<WireCdr, PassThrough>,
    writer: DataWriter<WireCdr, PassThrough>,
    jobs: SyncSender<Job>,
    done: Receiver<Done>,
    /// The worker, joined on drop so that its horus client leaves the service.
    worker: Option<std::thread::JoinHandle<()>>,
    waiting: usize,
    request_check: Option<Checker>,
    /// The request type's DDS name and RIHS01 hash (ROS 2 clients are checked against them).
    request_type: (String, String),
    max_bytes: usize,
    me: GUID,
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
        let writer = endpoints::writer(dds, &rr, &resp_dds)?;
        let reader = endpoints::reader(dds, &rq, &req_dds)?;
        let (jobs, job_rx) = mpsc::sync_channel::<Job>(MAX_WAITING);
        let (done_tx, done) = mpsc::channel::<Done>();
        let worker = std::thread::Builder::new()
            .name(format!("ros2-svc {name}"))
            .spawn(move || worker(client, job_rx, done_tx, timeout))
            .map_err(|e| ServiceOpenError::horus(name, e))?;
        Ok(ToRos {
            reader,
            writer,
            jobs,
            done,
            worker: Some(worker),
            waiting: 0,
            request_check: Checker::of(&req),
            request_type: (req_dds, req.type_hash.clone()),
            max_bytes,
            me: dds.participant().guid(),
        })
    }

    /// Calls queued or in progress.
    pub(crate) fn waiting(&self) -> usize {
        self.waiting
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
            let wire = &sample.value().0;
            if wire.len() > self.max_bytes {
                c.oversize += 1;
                continue;
            }
            let Some(wire) = message(&self.request_check, wire) else {
                c.malformed += 1;
                continue;
            };
            if self.waiting >= MAX_WAITING {
                c.overloaded += 1;
                continue;
            }
            let len = wire.len() as u64;
            match self.jobs.try_send(Job {
                id,
                record: record(wire),
            }) {
                Ok(()) => {
                    self.waiting += 1;
                    c.request_bytes += len;
                }
                Err(TrySendError::Full(_)) => c.overloaded += 1,
                // The worker ended (it never does while the route lives).
                Err(TrySendError::Disconnected(_)) => c.unanswered += 1,
            }
        }
        while let Ok(d) = self.done.try_recv() {
            moved += 1;
            self.waiting = self.waiting.saturating_sub(1);
            match d.result {
                Ok(resp) => self.reply(d.id, &resp, c),
                Err(CallError::Timeout(_)) => c.timed_out += 1,
                Err(CallError::ServerDied { .. }) => c.server_died += 1,
                Err(CallError::NoServer(_)) => c.no_server += 1,
                Err(CallError::Busy { .. } | CallError::PoolExhausted) => c.overloaded += 1,
                Err(CallError::TooLarge { .. }) => c.oversize += 1,
                Err(_) => c.unanswered += 1,
            }
        }
        moved
    }

    fn reply(&self, id: SampleIdentity, record: &[u8], c: &mut ServiceCounters) {
        let Some(wire) = wire_of(record) else {
            c.malformed += 1;
            return;
        };
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

impl Drop for ToRos {
    /// Ends the worker: it finishes the call it is in (at most the call timeout; a route
    /// closes only when no call waits) and drops its horus client.
    fn drop(&mut self) {
        let (closed, _) = mpsc::sync_channel(0);
        drop(std::mem::replace(&mut self.jobs, closed));
        if let Some(w) = self.worker.take() {
            let _ = w.join();
        }
    }
}

/// Calls the horus service for each job until the route is dropped (its sender gone).
fn worker(mut client: RawClient, jobs: Receiver<Job>, done: mpsc::Sender<Done>, t: Duration) {
    while let Ok(job) = jobs.recv() {
        let result = client.call(&job.record, t);
        if done.send(Done { id: job.id, result }).is_err() {
            return;
        }
    }
}
