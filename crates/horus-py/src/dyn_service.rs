//! Type-erased services, clients, servers, pending calls and requests.
//!
//! `horus` services are generic over a (request, response) pair; Python
//! picks both at run time by schema name. [`open_service`] is the only
//! place that matches on the type list (every pair of the fixed-size
//! messages, see [`for_each_fixed_message`]); everything after it goes
//! through the object-safe traits below, implemented once, generically.
//! Messages cross as the raw bytes of their fixed part.

use std::time::Duration;

use horus::{
    CallError, Client, ClientStats, Message, PendingCall, ReplyError, Request, Server, ServerStats,
    Service, ServiceError, ServiceStats,
};

/// Settings of [`open_service`]; `None` adopts the service's (or the default).
#[derive(Clone, Debug, Default)]
pub(crate) struct ServiceOptions {
    pub(crate) namespace: Option<String>,
    pub(crate) depth: Option<u32>,
    pub(crate) max_clients: Option<u32>,
    pub(crate) max_servers: Option<u32>,
}

/// Why a call failed on the Python side before `horus` saw it, or how
/// `horus` refused it.
#[derive(Debug)]
pub(crate) enum CallFailure {
    /// The bytes are not one message of the request type.
    BadSize { got: usize, expected: usize },
    /// What `horus` reported.
    Call(CallError),
}

impl From<CallError> for CallFailure {
    fn from(e: CallError) -> Self {
        CallFailure::Call(e)
    }
}

/// A service of some (request, response) pair.
pub(crate) trait DynService: Send + Sync {
    fn name(&self) -> &str;
    fn depth(&self) -> u32;
    fn client(&self) -> Result<Box<dyn DynClient>, ServiceError>;
    fn server(&self) -> Result<Box<dyn DynServer>, ServiceError>;
    fn stats(&self) -> ServiceStats;
}

/// A client sending raw request bytes.
pub(crate) trait DynClient: Send {
    /// Sends one request (exactly its bytes); the call times out after
    /// `timeout` whether or not anyone waits.
    fn call_async(
        &mut self,
        req: &[u8],
        timeout: Duration,
    ) -> Result<Box<dyn DynPending>, CallFailure>;
    fn in_flight(&self) -> usize;
    fn servers(&self) -> u32;
    fn stats(&self) -> ClientStats;
    fn service_stats(&self) -> ServiceStats;
}

/// A call in flight.
pub(crate) trait DynPending: Send {
    /// The response bytes or why there is none; `None` while in flight.
    fn try_result(&mut self) -> Option<Result<Vec<u8>, CallError>>;
}

/// A server receiving raw requests.
pub(crate) trait DynServer: Send {
    fn try_recv(&mut self) -> Option<Box<dyn DynRequest>>;
    fn recv_timeout(&mut self, timeout: Duration) -> Option<Box<dyn DynRequest>>;
    fn stats(&self) -> ServerStats;
    fn service_stats(&self) -> ServiceStats;
}

/// A request taken by a server; dropping it unanswered tells the client.
pub(crate) trait DynRequest: Send {
    fn bytes(&self) -> &[u8];
    fn client_pid(&self) -> u32;
    /// Answers with `resp` (exactly the bytes of one response). `Err(None)`
    /// if the bytes have the wrong size (the request stays unanswered).
    fn reply(self: Box<Self>, resp: &[u8]) -> Result<(), Result<ReplyError, usize>>;
    /// Expected response size.
    fn response_size(&self) -> usize;
}

/// Calls `$m!` with every message type without a tail (services from
/// Python carry fixed-size messages only).
macro_rules! for_each_fixed_message {
    ($m:ident) => {
        $m!(
            Time,
            Header,
            Vector3,
            Quaternion,
            Pose2D,
            Pose,
            Twist,
            CmdVel,
            EmergencyStop,
            Imu,
            LaserScan,
            BatteryState,
            Odometry,
            JointState,
            TensorRef
        )
    };
}

/// Every fixed-size type, under one path for the dispatch macro.
mod types {
    pub(crate) use horus::msgs::{
        BatteryState, CmdVel, EmergencyStop, Header, Imu, JointState, LaserScan, Odometry, Pose,
        Pose2D, Quaternion, Time, Twist, Vector3,
    };
    pub(crate) use horus_tensor::TensorRef;
}

/// Schema names of the types services from Python can carry.
pub(crate) fn service_schemas() -> Vec<&'static str> {
    macro_rules! names {
        ($($t:ident),*) => { vec![$(<types::$t as Message>::SCHEMA.name()),*] };
    }
    for_each_fixed_message!(names)
}

/// The run-time description of the fixed-size message type named
/// `schema` (actions from Python carry these as raw payloads: one code path
/// for every type, no instantiation per type triple). `None` for others.
pub(crate) fn raw_spec(schema: &str) -> Option<horus_actions::RawSpec> {
    macro_rules! find {
        ($($t:ident),*) => {
            $(
                if schema == <types::$t as Message>::SCHEMA.name() {
                    return Some(horus_actions::RawSpec::of::<types::$t>());
                }
            )*
        };
    }
    for_each_fixed_message!(find);
    None
}

/// Opens the service `name` with requests of schema `req` and responses of
/// schema `resp`. `Ok(None)` if either is not a fixed-size message type.
pub(crate) fn open_service(
    req: &str,
    resp: &str,
    name: &str,
    o: &ServiceOptions,
) -> Result<Option<Box<dyn DynService>>, ServiceError> {
    macro_rules! outer {
        ($($q:ident),*) => {
            $(
                if req == <types::$q as Message>::SCHEMA.name() {
                    return with_request::<types::$q>(resp, name, o);
                }
            )*
        };
    }
    for_each_fixed_message!(outer);
    Ok(None)
}

/// [`open_service`] once the request type is known.
fn with_request<Q: Message>(
    resp: &str,
    name: &str,
    o: &ServiceOptions,
) -> Result<Option<Box<dyn DynService>>, ServiceError> {
    macro_rules! inner {
        ($($t:ident),*) => {
            $(
                if resp == <types::$t as Message>::SCHEMA.name() {
                    return Ok(Some(Box::new(build::<Q, types::$t>(name, o)?)));
                }
            )*
        };
    }
    for_each_fixed_message!(inner);
    Ok(None)
}

fn build<Q: Message, R: Message>(
    name: &str,
    o: &ServiceOptions,
) -> Result<Service<Q, R>, ServiceError> {
    let mut b = Service::<Q, R>::builder(name);
    if let Some(ns) = &o.namespace {
        b = b.namespace(ns);
    }
    if let Some(d) = o.depth {
        b = b.depth(d);
    }
    if let Some(n) = o.max_clients {
        b = b.max_clients(n);
    }
    if let Some(n) = o.max_servers {
        b = b.max_servers(n);
    }
    b.open()
}

impl<Q: Message, R: Message> DynService for Service<Q, R> {
    fn name(&self) -> &str {
        Service::name(self)
    }
    fn depth(&self) -> u32 {
        Service::depth(self)
    }
    fn client(&self) -> Result<Box<dyn DynClient>, ServiceError> {
        Ok(Box::new(Service::client(self)?))
    }
    fn server(&self) -> Result<Box<dyn DynServer>, ServiceError> {
        Ok(Box::new(Service::server(self)?))
    }
    fn stats(&self) -> ServiceStats {
        Service::stats(self)
    }
}

impl<Q: Message, R: Message> DynClient for Client<Q, R> {
    fn call_async(
        &mut self,
        req: &[u8],
        timeout: Duration,
    ) -> Result<Box<dyn DynPending>, CallFailure> {
        if req.len() != std::mem::size_of::<Q>() {
            return Err(CallFailure::BadSize {
                got: req.len(),
                expected: std::mem::size_of::<Q>(),
            });
        }
        let q: Q = bytemuck::pod_read_unaligned(req);
        self.set_timeout(timeout);
        Ok(Box::new(Client::call_async(self, &q)?))
    }
    fn in_flight(&self) -> usize {
        Client::in_flight(self)
    }
    fn servers(&self) -> u32 {
        Client::servers(self)
    }
    fn stats(&self) -> ClientStats {
        Client::stats(self)
    }
    fn service_stats(&self) -> ServiceStats {
        Client::service_stats(self)
    }
}

impl<R: Message> DynPending for PendingCall<R> {
    fn try_result(&mut self) -> Option<Result<Vec<u8>, CallError>> {
        PendingCall::try_result(self).map(|r| r.map(|s| bytemuck::bytes_of(&*s).to_vec()))
    }
}

impl<Q: Message, R: Message> DynServer for Server<Q, R> {
    fn try_recv(&mut self) -> Option<Box<dyn DynRequest>> {
        Server::try_recv(self).map(|r| Box::new(r) as Box<dyn DynRequest>)
    }
    fn recv_timeout(&mut self, timeout: Duration) -> Option<Box<dyn DynRequest>> {
        Server::recv_timeout(self, timeout).map(|r| Box::new(r) as Box<dyn DynRequest>)
    }
    fn stats(&self) -> ServerStats {
        Server::stats(self)
    }
    fn service_stats(&self) -> ServiceStats {
        Server::service_stats(self)
    }
}

impl<Q: Message, R: Message> DynRequest for Request<Q, R> {
    fn bytes(&self) -> &[u8] {
        bytemuck::bytes_of::<Q>(self)
    }
    fn client_pid(&self) -> u32 {
        Request::client_pid(self)
    }
    fn reply(self: Box<Self>, resp: &[u8]) -> Result<(), Result<ReplyError, usize>> {
        if resp.len() != std::mem::size_of::<R>() {
            return Err(Err(resp.len()));
        }
        let r: R = bytemuck::pod_read_unaligned(resp);
        Request::reply(*self, &r).map_err(Ok)
    }
    fn response_size(&self) -> usize {
        std::mem::size_of::<R>()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::for_each_message;
    use horus::msgs::*;
    use horus_tensor::TensorRef;

    #[test]
    fn every_message_without_a_tail_can_be_carried() {
        macro_rules! fixed {
            ($($t:ident),*) => {
                vec![$(<$t as Message>::SCHEMA.name()),*]
                    .into_iter()
                    .zip([$(<$t as Message>::HAS_TAIL),*])
                    .filter(|(_, tail)| !tail)
                    .map(|(n, _)| n)
                    .collect::<Vec<_>>()
            };
        }
        let want: Vec<&str> = for_each_message!(fixed);
        assert_eq!(service_schemas(), want);
    }

    #[test]
    fn unknown_or_tailed_types_are_refused() {
        let o = ServiceOptions::default();
        for (q, r) in [("horus/Image", "horus/CmdVel"), ("horus/CmdVel", "no/Such")] {
            assert!(open_service(q, r, "never-opened", &o).unwrap().is_none());
        }
    }

    #[test]
    fn actions_carry_the_same_types_as_services_with_their_sizes() {
        for name in service_schemas() {
            let spec = raw_spec(name).expect("every service type");
            assert_eq!(spec.name, name);
            assert!(spec.size > 0);
        }
        assert_eq!(
            raw_spec("horus/CmdVel"),
            Some(horus_actions::RawSpec::of::<CmdVel>())
        );
        assert_eq!(raw_spec("horus/PointCloud"), None);
        assert_eq!(raw_spec("no/Such"), None);
    }
}
