//! A ROS 2 service offered to horus clients: a horus server of the service (created with the
//! ROS 2 types if it does not exist), a DDS writer on the request topic and a DDS reader on
//! the reply topic.
//!
//! A request from a horus client is written to DDS naming this bridge's reply reader (see
//! `endpoints`) and kept, with a deadline, under the DATA's sequence number; the reply that
//! names it is checked (size, CDR of the response type) and answers the horus client. At
//! most [`MAX_PENDING`] calls wait at once (further requests stay in the horus queue, whose
//! clients then get `Busy`). A call not answered within the bridge's call timeout is
//! dropped and counted (its client gets `Unanswered` if it still waits); when the ROS 2
//! server leaves, the calls it held are answered `ServerDied` (pid 0: a ROS 2 process).
//! An action's `get_result` is answered when its goal ends (minutes, for a navigation
//! goal): its calls are kept past the timeout for as long as the horus client's process
//! lives (checked once per call timeout; counted `caller_gone` when it left), so they end
//! with the goal's result, the ROS 2 server leaving, or the horus client leaving.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use horus::description::ServiceDescription;
use horus::msgs::MessageDescription;
use horus::{RawRequest, RawServer, RemoteFailure};
use horus_msgs::Ros2Type;
use rustdds::no_key::{DataReader, DataWriter};
use rustdds::rpc::SampleIdentity;
use rustdds::{
    DataWriterStatus, RTPSEntity, SequenceNumber, StatusEvented, Timestamp, WriteOptionsBuilder,
    GUID,
};

use super::endpoints;
use super::error::ServiceOpenError;
use super::record::{record, wire_of};
use super::status::ServiceCounters;
use super::types::{message, Checker};
use crate::dds::Dds;
use crate::names::dds_type_name;
use crate::raw::{PassThrough, WireCdr};

/// Calls waiting for a ROS 2 reply, per service.
pub(crate) const MAX_PENDING: usize = 256;

/// Requests or replies moved per pump.
const BATCH: usize = 64;

/// A call written to DDS, waiting for its reply.
struct Pending {
    request: RawRequest,
    deadline: Instant,
}

/// Whether process `pid` (a horus client) is alive; 0 (not known) counts as alive.
fn process_alive(pid: u32) -> bool {
    let Ok(pid) = libc::pid_t::try_from(pid) else {
        return true;
    };
    if pid == 0 {
        return true;
    }
    // SAFETY: signal 0 only checks that the process exists; no signal is sent.
    let r = unsafe { libc::kill(pid, 0) };
    r == 0 || std::io::Error::last_os_error().raw_os_error() != Some(libc::ESRCH)
}

/// How long after its DDS endpoints exist a route serves in horus even if RustDDS reported
/// no match for its request writer (its matched-status events are a fallback-free signal
/// otherwise).
const SETTLE: Duration = Duration::from_secs(1);

/// One ROS 2 service answering horus clients.
pub(crate) struct FromRos {
    /// The horus server: created once the request writer matched a ROS 2 server's reader
    /// (or after [`SETTLE`]), so that the first request is not written to nobody.
    server: Option<RawServer>,
    description: ServiceDescription,
    /// Its request and response type (those of `description`).
    types: (Ros2Type, Ros2Type),
    created: Instant,
    matched: bool,
    writer: DataWriter<WireCdr, PassThrough>,
    reader: DataReader<WireCdr, PassThrough>,
    /// Calls in flight by the sequence number of their request DATA.
    pending: HashMap<SequenceNumber, Pending>,
    /// The GUIDs a reply for us names: our reply reader (what we send) or request writer.
    ours: [GUID; 2],
    response_check: Option<Checker>,
    timeout: Duration,
    /// An action's `get_result`: calls last while their horus client lives.
    lasting: bool,
    max_bytes: usize,
}

impl FromRos {
    /// Creates (or joins) horus service `name` of `namespace` as a server of `req`/`resp`,
    /// and the DDS endpoints a ROS 2 client has.
    pub(crate) fn open(
        dds: &Dds,
        name: &str,
        (req, resp): (&Ros2Type, &Ros2Type),
        timeout: Duration,
        max_bytes: usize,
    ) -> Result<FromRos, ServiceOpenError> {
        let horus = |e: &dyn std::fmt::Display| ServiceOpenError::horus(name, e);
        let description = ServiceDescription {
            request: MessageDescription::ros2(req.clone()).map_err(|e| horus(&e))?,
            response: MessageDescription::ros2(resp.clone()).map_err(|e| horus(&e))?,
        };
        let not_ros = || ServiceOpenError::NotRosTyped(name.to_owned());
        let (req_dds, resp_dds) = (
            dds_type_name(&req.type_name).ok_or_else(not_ros)?,
            dds_type_name(&resp.type_name).ok_or_else(not_ros)?,
        );
        let rq = super::names::request_topic(name)?;
        let rr = super::names::reply_topic(name)?;
        let reader = endpoints::reader(dds, &rr, (&resp_dds, &resp.type_hash))?;
        let writer = endpoints::writer(dds, &rq, (&req_dds, &req.type_hash))?;
        Ok(FromRos {
            ours: [reader.guid(), writer.guid()],
            server: None,
            description,
            types: (req.clone(), resp.clone()),
            created: Instant::now(),
            matched: false,
            writer,
            reader,
            pending: HashMap::new(),
            response_check: Checker::of(resp),
            timeout,
            lasting: matches!(
                crate::action::endpoint_of(name),
                Some((_, crate::action::Endpoint::GetResult))
            ),
            max_bytes,
        })
    }

    /// The request and response type it serves in horus.
    pub(crate) fn types(&self) -> (Ros2Type, Ros2Type) {
        self.types.clone()
    }

    /// Whether the horus server exists (calls cross).
    pub(crate) fn serving(&self) -> bool {
        self.server.is_some()
    }

    /// Creates the horus server once the DDS request writer has matched a ROS 2 server
    /// (or [`SETTLE`] passed); an existing horus service of other types is refused here.
    pub(crate) fn serve_when_matched(
        &mut self,
        namespace: &str,
        name: &str,
    ) -> Result<(), ServiceOpenError> {
        while let Some(st) = self.writer.try_recv_status() {
            if let DataWriterStatus::PublicationMatched { current, .. } = st {
                self.matched |= current.count() > 0;
            }
        }
        if self.server.is_none() && (self.matched || self.created.elapsed() >= SETTLE) {
            let s = RawServer::create(namespace, name, &self.description)
                .map_err(|e| ServiceOpenError::horus(name, e))?;
            self.server = Some(s);
        }
        Ok(())
    }

    /// Moves requests to DDS and replies back, and gives up calls past their deadline.
    /// Returns how many requests and replies moved.
    pub(crate) fn pump(&mut self, c: &mut ServiceCounters) -> usize {
        let mut moved = 0;
        while moved < BATCH && self.pending.len() < MAX_PENDING {
            let Some(request) = self.server.as_mut().and_then(RawServer::try_recv) else {
                break;
            };
            moved += 1;
            self.send(request, c);
        }
        let mut taken = 0;
        while taken < BATCH {
            let sample = match self.reader.take_next_sample() {
                Ok(Some(s)) => s,
                Ok(None) => break,
                Err(_) => {
                    taken += 1;
                    c.malformed += 1;
                    continue;
                }
            };
            taken += 1;
            let Some(id) = sample.sample_info().related_sample_identity() else {
                // A reply naming no call (not rmw_fastrtps's mapping): nobody's.
                c.late += 1;
                continue;
            };
            if !self.ours.contains(&id.writer_guid) {
                // Another client's reply (every server writes to the one reply topic).
                continue;
            }
            let Some(p) = self.pending.remove(&id.sequence_number) else {
                c.late += 1;
                continue;
            };
            let wire = &sample.value().0;
            if wire.len() > self.max_bytes {
                c.oversize += 1;
                continue; // dropping the request answers `Unanswered`
            }
            let Some(wire) = message(&self.response_check, wire) else {
                c.malformed += 1;
                continue; // dropping the request answers `Unanswered`
            };
            match p.request.reply(&record(wire)) {
                Ok(()) => {
                    c.calls += 1;
                    c.reply_bytes += wire.len() as u64;
                }
                Err(horus::ReplyError::ClientGone) => c.caller_gone += 1,
                Err(_) => c.oversize += 1,
            }
        }
        moved += taken;
        let now = Instant::now();
        let (lasting, timeout) = (self.lasting, self.timeout);
        let (mut timed_out, mut caller_gone) = (0, 0);
        self.pending.retain(|_, p| {
            if p.deadline > now {
                return true;
            }
            if !lasting {
                timed_out += 1;
                return false;
            }
            if process_alive(p.request.client_pid()) {
                p.deadline = now + timeout;
                return true;
            }
            caller_gone += 1;
            false
        });
        c.timed_out += timed_out;
        c.caller_gone += caller_gone;
        moved
    }

    /// Writes one horus request to DDS and keeps it until its reply.
    fn send(&mut self, request: RawRequest, c: &mut ServiceCounters) {
        let Some(wire) = wire_of(request.bytes()) else {
            c.malformed += 1;
            return;
        };
        if wire.len() > self.max_bytes {
            c.oversize += 1;
            return;
        }
        let len = wire.len() as u64;
        let opts = WriteOptionsBuilder::new()
            .source_timestamp(Timestamp::now())
            .related_sample_identity(SampleIdentity {
                writer_guid: self.ours[0],
                sequence_number: SequenceNumber::UNKNOWN,
            })
            .build();
        let data = WireCdr(bytes::Bytes::copy_from_slice(wire));
        match self.writer.write_with_options(data, opts) {
            Ok(sent) => {
                c.request_bytes += len;
                let deadline = Instant::now() + self.timeout;
                self.pending
                    .insert(sent.sequence_number, Pending { request, deadline });
            }
            Err(_) => c.write_failed += 1,
        }
    }

    /// The ROS 2 server left: the calls it held are answered `ServerDied` and counted.
    pub(crate) fn fail_pending(&mut self, c: &mut ServiceCounters) {
        for (_, p) in self.pending.drain() {
            p.request.fail(RemoteFailure::ServerDied { pid: 0 });
            c.server_died += 1;
        }
    }
}
