//! A client of a service whose types this process learns at run time, from the description
//! the service's request channel carries (for `horus service call` and bindings).
//!
//! Same protocol, counters and failure semantics as [`Client`](super::Client): it is the same
//! client core with a decoder that copies the response out as bytes.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use horus_shm::{Channel, OpenError, SegmentError};

use super::client::{lock, wait_or_stop};
use super::client_core::{ClientCore, ResponseBody};
use super::error::{CallError, ServiceError};
use super::layout::Layout;
use super::service::{response_prefix, ServiceInner};
use super::stats::ClientStats;
use super::table::Table;
use super::wire;
use crate::description::{decode_service, ServiceDescription};
use crate::schema_record;
use horus_msgs::Ros2Type;

/// Calls an existing service with requests given as bytes.
pub struct RawClient {
    core: Arc<Mutex<ClientCore<Vec<u8>>>>,
    description: ServiceDescription,
    layout: Layout,
}

/// Copies a record's body out (and releases its chunk): a response here, a
/// request in a raw server.
pub(super) fn copy_out(b: ResponseBody<'_>) -> Option<Vec<u8>> {
    Some(match b {
        ResponseBody::Inline(body) => body.bytes().to_vec(),
        ResponseBody::Chunk {
            place,
            pool,
            chunk,
            ptr,
            len,
        } => {
            let mut out = vec![0u8; len];
            // SAFETY: the client core validated the record (len within the chunk, pinned for
            // us by the receive) before handing the body over; `ptr` is its first byte.
            unsafe { std::ptr::copy_nonoverlapping(ptr, out.as_mut_ptr(), len) };
            place.release_chunk(pool, chunk);
            out
        }
    })
}

/// The types a service's request channel carries (`bytes`, its description), read with the
/// schemas its table holds (`config`).
fn carried_description(
    name: &str,
    bytes: &[u8],
    config: &super::table::TableConfig,
) -> Result<ServiceDescription, ServiceError> {
    let invalid = |reason: String| ServiceError::Invalid {
        service: name.to_owned(),
        reason,
    };
    let request = schema_record::decode(&config.req_schema)
        .ok_or_else(|| invalid("the request schema is not readable".into()))?;
    let response = schema_record::decode(&config.resp_schema)
        .ok_or_else(|| invalid("the response schema is not readable".into()))?;
    decode_service(bytes, &request, &response)
        .map_err(|e| invalid(format!("cannot learn its types: {e}")))
}

impl RawClient {
    /// Opens the existing service `name` of `namespace` as a client. The service's types are
    /// taken from its description, checked against the schemas its table holds.
    pub fn open(namespace: &str, name: &str) -> Result<RawClient, ServiceError> {
        let invalid = |reason: String| ServiceError::Invalid {
            service: name.to_owned(),
            reason,
        };
        let seg = |kind: &str| {
            horus_shm::name::segment_name(namespace, kind, name).map_err(|e| invalid(e.to_string()))
        };
        let (table_name, req_name) = (seg("sv")?, seg("sq")?);
        let segment_err = |source| ServiceError::Segment {
            service: name.to_owned(),
            source,
        };
        let table = Table::open_now(&table_name).map_err(|e| match e {
            OpenError::Segment(SegmentError::NotFound(_)) => {
                invalid(format!("no such service in namespace {namespace}"))
            }
            e => segment_err(e),
        })?;
        let config = *table.config();
        let req =
            Channel::open_existing(&req_name, Some(&config.req_schema)).map_err(segment_err)?;
        let bytes = req.description();
        let description = carried_description(name, &bytes, &config)?;
        let layout = Layout::described(description.request.root(), description.response.root());
        let svc = Arc::new(ServiceInner::from_parts(
            name.to_owned(),
            namespace.to_owned(),
            table_name,
            req_name,
            layout,
            bytes.into(),
            table.with_response_prefix(response_prefix(namespace, name)),
            req,
        ));
        Ok(RawClient {
            core: Arc::new(Mutex::new(ClientCore::join(&svc, copy_out, false)?)),
            description,
            layout,
        })
    }

    /// Opens service `name` of `namespace` as a client of the types `description` gives,
    /// creating the service (with default settings) if it does not exist, as a typed
    /// client's [`Service`](super::Service) does: a process that serves the service from
    /// elsewhere (the ROS 2 bridge) learns its types from it before any server runs. A
    /// call before a server joins fails as any call without a server. An existing service
    /// of other types is [`ServiceError::SchemaMismatch`]; [`description`](Self::description)
    /// is what the service's request channel carries (its creator's, for an existing one).
    pub fn create(
        namespace: &str,
        name: &str,
        description: &ServiceDescription,
    ) -> Result<RawClient, ServiceError> {
        let svc = Arc::new(super::raw_server::open_described(
            namespace,
            name,
            description,
        )?);
        let (_, req) = svc.shared();
        let carried = carried_description(name, &req.description(), &svc.config)?;
        let layout = svc.layout;
        Ok(RawClient {
            core: Arc::new(Mutex::new(ClientCore::join(&svc, copy_out, false)?)),
            description: carried,
            layout,
        })
    }

    /// [`create`](Self::create) for a service of ROS 2 types, which must be exactly those
    /// the service carries (name and RIHS01 hash; equal schemas say only that the layouts
    /// agree): another type there is [`ServiceError::SchemaMismatch`].
    pub fn create_ros(
        namespace: &str,
        name: &str,
        request: &Ros2Type,
        response: &Ros2Type,
    ) -> Result<RawClient, ServiceError> {
        let d = ServiceDescription::ros2(request.clone(), response.clone()).map_err(|e| {
            ServiceError::Invalid {
                service: name.to_owned(),
                reason: e.to_string(),
            }
        })?;
        let c = Self::create(namespace, name, &d)?;
        let carried = c.description();
        let same = |t: &Option<Ros2Type>, want: &Ros2Type| {
            t.as_ref()
                .is_some_and(|t| t.type_name == want.type_name && t.type_hash == want.type_hash)
        };
        if same(&carried.request.ros2, request) && same(&carried.response.ros2, response) {
            return Ok(c);
        }
        let label = |t: Option<&Ros2Type>| {
            t.map_or("none".to_owned(), |t| {
                format!("{} ({})", t.type_name, t.type_hash)
            })
        };
        Err(ServiceError::SchemaMismatch {
            service: name.to_owned(),
            expected_request: label(Some(request)),
            expected_response: label(Some(response)),
            found_request: label(carried.request.ros2.as_ref()),
            found_response: label(carried.response.ros2.as_ref()),
        })
    }

    /// Both types of the service.
    pub fn description(&self) -> &ServiceDescription {
        &self.description
    }

    /// Calls the service with `request` and waits at most `timeout` for the response's bytes.
    /// Both are laid out as on the wire: the fixed part and, for a type with a tail, the tail
    /// at the next multiple of 8 (as [`RawRequest::bytes`](super::RawRequest::bytes)); a
    /// request of a length the type cannot have is refused before anything is sent.
    pub fn call(&mut self, request: &[u8], timeout: Duration) -> Result<Vec<u8>, CallError> {
        self.call_or_stop(request, timeout, || false)
    }

    /// [`RawClient::call`], asking `stop` every few milliseconds while it waits (between
    /// the wait's own slices: no extra wake-ups); once `stop` says so, the call is
    /// withdrawn: [`CallError::Stopped`]. For a binding whose `close()` from another
    /// thread must end a call in progress.
    pub fn call_or_stop(
        &mut self,
        request: &[u8],
        timeout: Duration,
        stop: impl Fn() -> bool,
    ) -> Result<Vec<u8>, CallError> {
        let root = self.description.request.root();
        let (size, tail_at) = (root.size, root.size.next_multiple_of(8));
        let Some((fixed, tail)) = wire::split_body(request, size, tail_at, root.has_tail) else {
            return Err(CallError::TooLarge {
                requested: request.len(),
                max: size,
            });
        };
        let started = lock(&self.core).start_bytes(tail.len(), root.has_tail, |body, t| {
            body.copy_from_slice(fixed);
            t.copy_from_slice(tail);
        })?;
        let mut response = wait_or_stop(
            &self.core,
            started.id,
            started.sent + timeout,
            timeout,
            stop,
        )?;
        // The receive checked `response.len() >= resp_size`; a chunked body may
        // be longer than its type (the chunk's rest, or a hostile server's claim).
        let l = &self.layout;
        wire::trim_body(
            &mut response,
            l.resp_size,
            l.resp_tail_offset,
            l.resp_has_tail,
        );
        Ok(response)
    }

    /// This client's counters.
    pub fn stats(&self) -> ClientStats {
        let core = lock(&self.core);
        ClientStats::from_counters(core.table.client_counters(core.k))
    }
}
