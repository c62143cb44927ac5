//! A server of a service whose types this process learns at run time (from a
//! [`ServiceDescription`], e.g. received from another host by a bridge that
//! serves here a service whose real server runs there).
//!
//! It opens or creates the service exactly as a typed
//! [`Service`](super::Service) of the same types with default settings would,
//! so typed clients and [`RawClient`](super::RawClient)s of it meet it; it
//! receives with the same bounded, validating receive as a typed
//! [`Server`](super::Server).

use std::sync::Arc;
use std::time::{Duration, Instant};

use horus_msgs::MessageDescription;
use horus_shm::SCHEMA_BYTES;

use super::error::ServiceError;
use super::layout::Layout;
use super::raw_client::copy_out;
use super::raw_request::RawRequest;
use super::receiver::Receiver;
use super::service::{default_config, open_inner, ServiceInner};
use super::stats::{ServerStats, ServiceStats};
use super::wire::RequestHeader;
use crate::description::{encode_service_description, SchemaRecord, ServiceDescription};
use crate::schema_record;

/// Largest fixed part of a type served raw. Descriptions come from other
/// hosts: a consistent description of a huge type would make every segment
/// of the service huge (sparse, but committed as clients write). Large data
/// travels in tails, bounded by the service's tail limits.
pub const MAX_RAW_TYPE_SIZE: usize = 16 << 20;

/// Serves a service with requests and responses given as bytes.
pub struct RawServer {
    rx: Receiver,
    description: ServiceDescription,
}

/// The schema record of a described type, as its typed endpoints store it.
fn schema(d: &MessageDescription, what: &str) -> Result<[u8; SCHEMA_BYTES], String> {
    let root = d.root();
    if root.align > 8 {
        return Err(format!("{what} alignment {} above 8 bytes", root.align));
    }
    if root.size > MAX_RAW_TYPE_SIZE {
        return Err(format!(
            "{what} type of {} bytes too large (at most {MAX_RAW_TYPE_SIZE})",
            root.size
        ));
    }
    let record = SchemaRecord {
        name: root.name.clone(),
        version: root.version,
        size: root.size as u32,
        align: root.align as u32,
        layout_hash: root.layout_hash,
    };
    schema_record::encode_record(&record).ok_or_else(|| format!("{what} schema name too long"))
}

/// Opens service `name` of `namespace` with the types `description` gives, creating it
/// (with default settings) if it does not exist, as a typed [`Service`](super::Service) of
/// the same types would: what [`RawServer::create`] and
/// [`RawClient::create`](super::RawClient::create) share. The description is untrusted: it
/// is validated first ([`ServiceError::Invalid`]); an existing service of other types is
/// [`ServiceError::SchemaMismatch`].
pub(super) fn open_described(
    namespace: &str,
    name: &str,
    description: &ServiceDescription,
) -> Result<ServiceInner, ServiceError> {
    let invalid = |reason: String| ServiceError::Invalid {
        service: name.to_owned(),
        reason,
    };
    description
        .validate()
        .map_err(|e| invalid(format!("invalid description: {e}")))?;
    let (req, resp) = (description.request.root(), description.response.root());
    let want = default_config(
        req.has_tail,
        resp.has_tail,
        schema(&description.request, "request").map_err(invalid)?,
        schema(&description.response, "response").map_err(invalid)?,
    );
    open_inner(
        name,
        Some(namespace.to_owned()),
        &want,
        Layout::described(req, resp),
        encode_service_description(description),
        // Whatever settings the service has are adopted.
        |_| Ok(()),
    )
}

impl RawServer {
    /// Opens service `name` of `namespace` as a server of the types
    /// `description` gives, creating the service (with default settings)
    /// if it does not exist ([`open_described`]).
    pub fn create(
        namespace: &str,
        name: &str,
        description: &ServiceDescription,
    ) -> Result<RawServer, ServiceError> {
        let inner = open_described(namespace, name, description)?;
        Ok(RawServer {
            rx: Receiver::join(Arc::new(inner), false)?,
            description: description.clone(),
        })
    }

    /// Both types of the service.
    pub fn description(&self) -> &ServiceDescription {
        &self.description
    }

    fn request(&self, taken: Option<(RequestHeader, Vec<u8>)>) -> Option<RawRequest> {
        let (header, body) = taken?;
        Some(RawRequest::new(body, header, Arc::clone(&self.rx.replier)))
    }

    /// The next request, if one is waiting. Never blocks; bounded however
    /// many records (honest or not) the clients wrote.
    pub fn try_recv(&mut self) -> Option<RawRequest> {
        let taken = self.rx.try_recv(copy_out);
        self.request(taken)
    }

    /// Waits at most `timeout` for the next request.
    pub fn recv_timeout(&mut self, timeout: Duration) -> Option<RawRequest> {
        let taken = self.rx.wait(Some(Instant::now() + timeout), copy_out);
        self.request(taken)
    }

    /// Whether a request record is waiting (copies nothing, moves nothing).
    pub fn has_pending(&self) -> bool {
        self.rx.has_pending()
    }

    /// This server's counters.
    pub fn stats(&self) -> ServerStats {
        self.rx.stats()
    }

    /// Counters of every client and server of the service.
    pub fn service_stats(&self) -> ServiceStats {
        self.rx.service_stats()
    }
}
