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

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Receiver, SyncSender, TrySendError};
use std::sync::Arc;
use std::time::Duration;

use horus::{CallError, RawClient};
use rustdds::no_key::{DataReader, DataWriter};
use rustdds::rpc::SampleIdentity;
use rustdds::{RTPSEntity, Timestamp, WriteOptionsBuilder, GUID};

use super::endpoints::{self, request_identity};
use super::error::ServiceOpenError;
use super::reaper::Reaper;
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
    /// The worker: on drop it is told to call nothing more and handed to `reaper`, which
    /// joins it (its horus client leaves the service) once its current call ended.
    worker: Option<std::thread::JoinHandle<()>>,
    /// Set when the route closes: the worker calls none of the jobs still queued.
    cancel: Arc<AtomicBool>,
    reaper: Reaper,
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
        let writer = endpoints::writer(dds, &rr, &resp_dds)?;
        let reader = endpoints::reader(dds, &rq, &req_dds)?;
        let (jobs, job_rx) = mpsc::sync_channel::<Job>(MAX_WAITING);
        let (done_tx, done) = mpsc::channel::<Done>();
        let cancel = Arc::new(AtomicBool::new(false));
        let stop = Arc::clone(&cancel);
        let worker = std::thread::Builder::new()
            .name(format!("ros2-svc {name}"))
            .spawn(move || worker(client, job_rx, done_tx, timeout, &stop))
            .map_err(|e| ServiceOpenError::horus(name, e))?;
        Ok(ToRos {
            reader,
            writer,
            jobs,
            done,
            worker: Some(worker),
            cancel,
            reaper: reaper.clone(),
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

    /// Closes the route with calls still waiting: results already in are counted as
    /// usual, the rest (never called, or called but no longer carried back) are counted
    /// `abandoned`. Dropping the route then neither calls nor waits for anything.
    pub(crate) fn abandon(&mut self, c: &mut ServiceCounters) {
        self.cancel.store(true, Ordering::Relaxed);
        self.take_done(c);
        c.abandoned += self.waiting as u64;
        self.waiting = 0;
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
        moved + self.take_done(c)
    }

    /// Writes the replies of finished calls and counts the failed ones; how many.
    fn take_done(&mut self, c: &mut ServiceCounters) -> usize {
        let mut moved = 0;
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
    /// Ends the worker without waiting for it: it calls none of the jobs still queued,
    /// finishes the call it is in (at most the call timeout) off the bridge loop, and the
    /// reaper joins it.
    fn drop(&mut self) {
        // Relaxed: the flag carries no data; the worker reads it before each call.
        self.cancel.store(true, Ordering::Relaxed);
        let (closed, _) = mpsc::sync_channel(0);
        drop(std::mem::replace(&mut self.jobs, closed));
        if let Some(w) = self.worker.take() {
            self.reaper.adopt(w);
        }
    }
}

/// Calls the horus service for each job until the route is dropped (its sender gone) or
/// `cancel` is set (jobs still queued are then not called).
fn worker(
    mut client: RawClient,
    jobs: Receiver<Job>,
    done: mpsc::Sender<Done>,
    t: Duration,
    cancel: &AtomicBool,
) {
    while let Ok(job) = jobs.recv() {
        if cancel.load(Ordering::Relaxed) {
            return;
        }
        let result = client.call(&job.record, t);
        if done.send(Done { id: job.id, result }).is_err() {
            return;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use horus::description::ServiceDescription;
    use horus::msgs::{MessageDescription, Ros2Type};
    use horus::RawServer;
    use horus_ros_msgs::horus_cdr::RosMessage;
    use horus_ros_msgs::std_srvs::srv::{SetBool_Request, SetBool_Response};
    use rustdds::SequenceNumber;

    fn set_bool() -> ServiceDescription {
        let d = |n, h, def| MessageDescription::ros2(Ros2Type::new(n, h, def)).unwrap();
        ServiceDescription {
            request: d(
                SetBool_Request::TYPE_NAME,
                SetBool_Request::TYPE_HASH,
                SetBool_Request::DEFINITION,
            ),
            response: d(
                SetBool_Response::TYPE_NAME,
                SetBool_Response::TYPE_HASH,
                SetBool_Response::DEFINITION,
            ),
        }
    }

    fn job() -> Job {
        Job {
            id: SampleIdentity {
                writer_guid: GUID::GUID_UNKNOWN,
                sequence_number: SequenceNumber::UNKNOWN,
            },
            // SetBool { data: true }: CDR LE header + bool.
            record: record(&[0, 1, 0, 0, 1]),
        }
    }

    /// Before, a closed route's worker went on calling every queued job against a server
    /// that never answers (up to 64 × the call timeout, joined on the bridge loop).
    #[test]
    fn a_closed_routes_worker_calls_none_of_its_queued_jobs() {
        let ns = format!("hr2-unit-cancel-{}", std::process::id());
        let mut server = RawServer::create(&ns, "hang", &set_bool()).expect("server");
        let client = RawClient::open(&ns, "hang").expect("client");
        let (jobs, job_rx) = mpsc::sync_channel::<Job>(MAX_WAITING);
        let (done_tx, done) = mpsc::channel::<Done>();
        let cancel = Arc::new(AtomicBool::new(false));
        let stop = Arc::clone(&cancel);
        let t = Duration::from_millis(300);
        let w = std::thread::spawn(move || worker(client, job_rx, done_tx, t, &stop));
        for _ in 0..3 {
            jobs.send(job()).unwrap();
        }
        // The first call reaches the server (never answered); then the route closes.
        let first = server.recv_timeout(Duration::from_secs(30));
        assert!(first.is_some(), "the first job was called");
        cancel.store(true, Ordering::Relaxed);
        drop(jobs);
        w.join().unwrap();
        assert_eq!(done.try_iter().count(), 1, "only the first call ended");
        assert!(
            server.recv_timeout(Duration::from_millis(100)).is_none(),
            "a queued job was called after the route closed"
        );
        drop(first);
        drop(server);
        horus::clean::clean_stale(&ns).ok();
    }
}
