//! A service handle: a name, a request type and a response type, and the
//! segments they meet in. Clients and servers are made from it.

use std::marker::PhantomData;
use std::sync::{Arc, Mutex};

use horus_msgs::Message;
use horus_shm::{Channel, JoinError, OpenError, SegmentError, SCHEMA_BYTES};

use super::error::ServiceError;
use super::layout::Layout;
use super::stats::ServiceStats;
use super::table::{Table, TableConfig};
use super::{Client, Server};
use crate::schema_record;

const DEFAULT_DEPTH: u32 = 16;
const DEFAULT_CLIENTS: u32 = 16;
const DEFAULT_SERVERS: u32 = 8;
const DEFAULT_MAX_TAIL: u64 = 1 << 20;
/// Service names leave room for the response channels' suffix.
const MAX_NAME: usize = 180;

/// Builder for a [`Service`]. Settings left alone adopt whatever the
/// service already has (or the defaults when creating it); settings made
/// explicitly must match an existing service ([`ServiceError::ConfigMismatch`]).
#[derive(Clone, Debug)]
pub struct ServiceBuilder<Req, Resp> {
    name: String,
    namespace: Option<String>,
    depth: Option<u32>,
    max_clients: Option<u32>,
    max_servers: Option<u32>,
    req_tail: Option<u64>,
    resp_tail: Option<u64>,
    _t: PhantomData<fn(Req) -> Resp>,
}

impl<Req: Message, Resp: Message> ServiceBuilder<Req, Resp> {
    /// Calls in flight per client: its request queue (rounded up to a power
    /// of two, at most 1024). A call beyond it is refused with
    /// [`CallError::Busy`](super::CallError::Busy). Default 16.
    pub fn depth(mut self, depth: u32) -> Self {
        self.depth = Some(depth.max(1).next_power_of_two());
        self
    }

    /// Client places (1..=16). Default 16.
    pub fn max_clients(mut self, n: u32) -> Self {
        self.max_clients = Some(n);
        self
    }

    /// Server places (1..=32). Default 8.
    pub fn max_servers(mut self, n: u32) -> Self {
        self.max_servers = Some(n);
        self
    }

    /// Largest request tail (for request types with a tail). Default 1 MiB.
    pub fn max_request_tail(mut self, bytes: usize) -> Self {
        self.req_tail = Some(bytes as u64);
        self
    }

    /// Largest response tail (for response types with a tail). Default
    /// 1 MiB. A server replying with more gets
    /// [`ReplyError::TooLarge`](super::ReplyError::TooLarge).
    pub fn max_response_tail(mut self, bytes: usize) -> Self {
        self.resp_tail = Some(bytes as u64);
        self
    }

    /// Namespace (default: `HORUS_NAMESPACE`, else per user).
    pub fn namespace(mut self, ns: &str) -> Self {
        self.namespace = Some(ns.to_owned());
        self
    }

    fn invalid(&self, reason: impl Into<String>) -> ServiceError {
        ServiceError::Invalid {
            service: self.name.clone(),
            reason: reason.into(),
        }
    }

    fn wanted(&self) -> TableConfig {
        let d = default_config(
            Req::HAS_TAIL,
            Resp::HAS_TAIL,
            schema_record::encode(&Req::SCHEMA),
            schema_record::encode(&Resp::SCHEMA),
        );
        let tail =
            |default: u64, v: Option<u64>| if default > 0 { v.unwrap_or(default) } else { 0 };
        TableConfig {
            max_clients: self.max_clients.unwrap_or(d.max_clients),
            max_servers: self.max_servers.unwrap_or(d.max_servers),
            depth: self.depth.unwrap_or(d.depth),
            req_tail: tail(d.req_tail, self.req_tail),
            resp_tail: tail(d.resp_tail, self.resp_tail),
            ..d
        }
    }

    /// Checks the settings made explicitly against an existing service's.
    fn check_adopted(&self, want: &TableConfig, have: &TableConfig) -> Result<(), ServiceError> {
        let ok = self.depth.is_none_or(|_| want.depth == have.depth)
            && self
                .max_clients
                .is_none_or(|_| want.max_clients == have.max_clients)
            && self
                .max_servers
                .is_none_or(|_| want.max_servers == have.max_servers)
            && self.req_tail.is_none_or(|_| want.req_tail == have.req_tail)
            && self
                .resp_tail
                .is_none_or(|_| want.resp_tail == have.resp_tail);
        if ok {
            Ok(())
        } else {
            Err(ServiceError::ConfigMismatch {
                service: self.name.clone(),
                found: describe(have),
                requested: describe(want),
            })
        }
    }

    /// Opens the service, creating it if it does not exist. Both types'
    /// schemas are checked against an existing service.
    pub fn open(self) -> Result<Service<Req, Resp>, ServiceError> {
        for (what, align) in [
            ("request", std::mem::align_of::<Req>()),
            ("response", std::mem::align_of::<Resp>()),
        ] {
            if align > 8 {
                return Err(self.invalid(format!("{what} alignment above 8 bytes")));
            }
        }
        let want = self.wanted();
        let inner = open_inner(
            &self.name,
            self.namespace.clone(),
            &want,
            Layout::new::<Req, Resp>(),
            crate::description::encode_service::<Req, Resp>(),
            |have| self.check_adopted(&want, have),
        )?;
        Ok(Service {
            inner: Arc::new(inner),
            _t: PhantomData,
        })
    }
}

/// The configuration of a service created with default settings, for types
/// with (or without) tails and of these schemas.
pub(crate) fn default_config(
    req_has_tail: bool,
    resp_has_tail: bool,
    req_schema: [u8; SCHEMA_BYTES],
    resp_schema: [u8; SCHEMA_BYTES],
) -> TableConfig {
    let tail = |has: bool| if has { DEFAULT_MAX_TAIL } else { 0 };
    TableConfig {
        max_clients: DEFAULT_CLIENTS,
        max_servers: DEFAULT_SERVERS,
        depth: DEFAULT_DEPTH,
        req_tail: tail(req_has_tail),
        resp_tail: tail(resp_has_tail),
        req_schema,
        resp_schema,
    }
}

/// Opens service `name` (in `namespace`, default: the process's), creating
/// its table and request channel with `want` when it does not exist. An
/// existing service must carry `want`'s schemas; `adopt` then checks the
/// rest of its configuration. Typed and raw servers open services here.
pub(crate) fn open_inner(
    name: &str,
    namespace: Option<String>,
    want: &TableConfig,
    layout: Layout,
    description: Arc<[u8]>,
    adopt: impl FnOnce(&TableConfig) -> Result<(), ServiceError>,
) -> Result<ServiceInner, ServiceError> {
    let invalid = |reason: String| ServiceError::Invalid {
        service: name.to_owned(),
        reason,
    };
    if name.len() > MAX_NAME {
        return Err(invalid(format!("names are limited to {MAX_NAME} bytes")));
    }
    want.validate().map_err(invalid)?;
    // Both channels must be possible before anything is created (types
    // learned at run time may be of any size).
    for chan in [layout.request_channel(want), layout.response_channel(want)] {
        horus_shm::Layout::new(chan).map_err(invalid)?;
    }
    let ns = namespace.unwrap_or_else(horus_shm::name::namespace);
    let seg = |kind: &str| {
        horus_shm::name::segment_name(&ns, kind, name).map_err(|e| invalid(e.to_string()))
    };
    let (table_name, req_name) = (seg("sv")?, seg("sq")?);
    let segment_err = |source| ServiceError::Segment {
        service: name.to_owned(),
        source,
    };
    let table = Table::open_or_create(&table_name, want)
        .map_err(segment_err)?
        .with_response_prefix(response_prefix(&ns, name));
    let have = *table.config();
    if want.req_schema != have.req_schema || want.resp_schema != have.resp_schema {
        return Err(ServiceError::SchemaMismatch {
            service: name.to_owned(),
            expected_request: schema_record::describe(&want.req_schema),
            expected_response: schema_record::describe(&want.resp_schema),
            found_request: schema_record::describe(&have.req_schema),
            found_response: schema_record::describe(&have.resp_schema),
        });
    }
    adopt(&have)?;
    let chan = layout.request_channel(&have);
    let req = match Channel::open_or_create_described(&req_name, &chan, &description) {
        Ok(req) => req,
        Err(e) => {
            // A table this call created is not left behind.
            table.close_if_unused();
            return Err(segment_err(e));
        }
    };
    Ok(ServiceInner::from_parts(
        name.to_owned(),
        ns,
        table_name,
        req_name,
        layout,
        description,
        table,
        req,
    ))
}

/// The segment name of the response channel of client `token`.
pub(crate) fn response_name(ns: &str, name: &str, token: u64) -> String {
    horus_shm::name::segment_name(ns, "sr", &format!("{name}/{token:016x}"))
        .expect("the service name was validated with room for the suffix")
}

/// [`response_name`] without the token's 16 hex digits.
pub(crate) fn response_prefix(ns: &str, name: &str) -> String {
    let full = response_name(ns, name, 0);
    full[..full.len() - 16].to_owned()
}

fn describe(c: &TableConfig) -> String {
    format!(
        "depth {}, {} clients, {} servers, tails {} B / {} B",
        c.depth, c.max_clients, c.max_servers, c.req_tail, c.resp_tail
    )
}

/// The current segments of a service (replaced when the last participant
/// closed them while this handle had no endpoint).
#[derive(Debug)]
pub(crate) struct Shared {
    pub(crate) table: Arc<Table>,
    pub(crate) req: Arc<Channel>,
}

/// What every endpoint of a service in this process shares.
#[derive(Debug)]
pub(crate) struct ServiceInner {
    pub(crate) name: String,
    pub(crate) namespace: String,
    table_name: String,
    req_name: String,
    pub(crate) config: TableConfig,
    pub(crate) layout: Layout,
    /// The JSON description of both types, written into a request channel
    /// this process creates (for tools: `horus service call`).
    pub(crate) description: Arc<[u8]>,
    shared: Mutex<Shared>,
}

/// Why joining failed once.
pub(crate) enum JoinFailure {
    /// The segment is closing: reopen and try again.
    Closing,
    /// A final error.
    Fatal(ServiceError),
}

impl ServiceInner {
    /// A service handle made from parts already opened and checked (by
    /// [`open_inner`] or [`RawClient::open`](super::RawClient::open)).
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn from_parts(
        name: String,
        namespace: String,
        table_name: String,
        req_name: String,
        layout: Layout,
        description: Arc<[u8]>,
        table: Table,
        req: Arc<Channel>,
    ) -> ServiceInner {
        ServiceInner {
            name,
            namespace,
            table_name,
            req_name,
            config: *table.config(),
            layout,
            description,
            shared: Mutex::new(Shared {
                table: Arc::new(table),
                req,
            }),
        }
    }

    pub(crate) fn shared(&self) -> (Arc<Table>, Arc<Channel>) {
        let s = self.shared.lock().unwrap_or_else(|e| e.into_inner());
        (Arc::clone(&s.table), Arc::clone(&s.req))
    }

    /// The segment name of the response channel of client `token`.
    pub(crate) fn response_name(&self, token: u64) -> String {
        response_name(&self.namespace, &self.name, token)
    }

    pub(crate) fn full(&self, role: &'static str, max: u32) -> ServiceError {
        ServiceError::Full {
            service: self.name.clone(),
            role,
            max,
        }
    }

    pub(crate) fn place_stuck(&self, place: usize, pid: u32) -> ServiceError {
        ServiceError::PlaceStuck {
            service: self.name.clone(),
            place,
            pid,
        }
    }

    pub(crate) fn segment_error(&self, source: OpenError) -> ServiceError {
        ServiceError::Segment {
            service: self.name.clone(),
            source,
        }
    }

    pub(crate) fn join_error(&self, e: JoinError, role: &'static str) -> JoinFailure {
        match e {
            JoinError::Closing => JoinFailure::Closing,
            JoinError::Full { max, .. } => JoinFailure::Fatal(self.full(role, max)),
        }
    }

    /// Runs `join` on the current segments; if one was closing, reopens
    /// (recreating) them with this handle's configuration and tries again.
    pub(crate) fn join<P>(
        &self,
        join: impl Fn(&Arc<Table>, &Arc<Channel>) -> Result<P, JoinFailure>,
    ) -> Result<P, ServiceError> {
        for _ in 0..8 {
            let (table, req) = self.shared();
            match join(&table, &req) {
                Ok(p) => return Ok(p),
                Err(JoinFailure::Fatal(e)) => return Err(e),
                Err(JoinFailure::Closing) => {
                    // The last participant is unlinking: give it a moment
                    // so the reopen finds the name gone, not still closing.
                    std::thread::sleep(std::time::Duration::from_millis(1));
                    self.reopen()?
                }
            }
        }
        Err(self.segment_error(OpenError::NotInitialized(self.table_name.clone())))
    }

    fn reopen(&self) -> Result<(), ServiceError> {
        let table = Table::open_or_create(&self.table_name, &self.config)
            .map_err(|e| self.segment_error(e))?
            .with_response_prefix(response_prefix(&self.namespace, &self.name));
        if *table.config() != self.config {
            return Err(ServiceError::ConfigMismatch {
                service: self.name.clone(),
                found: describe(table.config()),
                requested: describe(&self.config),
            });
        }
        let want = self.layout.request_channel(&self.config);
        let req = match Channel::open_existing(&self.req_name, Some(&want.schema)) {
            Err(OpenError::Segment(SegmentError::NotFound(_))) => {
                Channel::open_or_create_described(&self.req_name, &want, &self.description)
            }
            other => other,
        }
        .map_err(|e| self.segment_error(e))?;
        let mut s = self.shared.lock().unwrap_or_else(|e| e.into_inner());
        s.table = Arc::new(table);
        s.req = req;
        Ok(())
    }
}

impl Drop for ServiceInner {
    fn drop(&mut self) {
        // Endpoints hold the ServiceInner, so this runs after all of ours
        // are gone: unlink the segments unless another process uses them.
        let (table, req) = self.shared();
        table.close_if_unused();
        req.unlink_if_unused();
    }
}

/// A typed service: requests of type `Req` answered by responses of type
/// `Resp`. Cheap to clone; clients and servers made from it share one
/// mapping.
pub struct Service<Req, Resp> {
    pub(crate) inner: Arc<ServiceInner>,
    _t: PhantomData<fn(Req) -> Resp>,
}

impl<Req, Resp> Clone for Service<Req, Resp> {
    fn clone(&self) -> Self {
        Service {
            inner: Arc::clone(&self.inner),
            _t: PhantomData,
        }
    }
}

impl<Req: Message, Resp: Message> Service<Req, Resp> {
    /// A builder for the service `name` (`[A-Za-z0-9_./-]`, at most 180
    /// bytes, e.g. `planner/plan_path`).
    pub fn builder(name: &str) -> ServiceBuilder<Req, Resp> {
        ServiceBuilder {
            name: name.to_owned(),
            namespace: None,
            depth: None,
            max_clients: None,
            max_servers: None,
            req_tail: None,
            resp_tail: None,
            _t: PhantomData,
        }
    }

    /// Opens (or creates) `name` with default settings.
    pub fn open(name: &str) -> Result<Service<Req, Resp>, ServiceError> {
        Self::builder(name).open()
    }

    /// The service name.
    pub fn name(&self) -> &str {
        &self.inner.name
    }

    /// Calls in flight per client (the request queue depth).
    pub fn depth(&self) -> u32 {
        self.inner.config.depth
    }

    /// Creates a client.
    pub fn client(&self) -> Result<Client<Req, Resp>, ServiceError> {
        Client::new(Arc::clone(&self.inner))
    }

    /// Creates a server.
    pub fn server(&self) -> Result<Server<Req, Resp>, ServiceError> {
        Server::new(Arc::clone(&self.inner))
    }

    /// Counters of every client and server of the service, in every
    /// process.
    pub fn stats(&self) -> ServiceStats {
        ServiceStats::read(&self.inner.shared().0)
    }
}
