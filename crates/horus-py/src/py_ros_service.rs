//! `RosServiceClient`, `RosServiceServer` and `RosServiceRequest`, as seen from Python:
//! services of ROS 2 types (a `horus.interfaces` service class such as
//! `std_srvs.srv.SetBool`) on horus's raw service endpoints. Requests and responses cross
//! as ROS 2 wire bytes in horus's ROS-typed records (`Ros<M>` frame, CDR body in the
//! tail), so a Python end meets a Rust `RosSrv<S>` (`call_ros` / `reply_ros`) of the same
//! service; `python/horus/_ros_service.py` encodes and decodes with the classes.

use std::sync::atomic::Ordering;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use horus::description::ServiceDescription;
use horus::msgs::Ros2Type;
use horus::{RawClient, RawRequest, RawServer};
use pyo3::prelude::*;
use pyo3::types::PyBytes;

use crate::endpoint::{closed_error, lock, Endpoint};
use crate::errors::{call_error, service_error, NoServerError, RecvTimeoutError, ServiceError};
use crate::py_service::withdrawn;

/// Signals are checked at least this often while a call or `recv` waits.
const SIGNAL_SLICE: Duration = Duration::from_millis(50);

/// One ROS 2 type as Python gives it: (type name, RIHS01 hash, ros2msg definition).
type TypeTriple = (String, String, String);

fn ros2((n, h, d): &TypeTriple) -> Ros2Type {
    Ros2Type::new(n, h, d)
}

/// `[0 0 0 0]` + wire bytes: a ROS-typed record as the raw endpoints take it.
fn record(wire: &[u8]) -> Vec<u8> {
    let mut v = Vec::with_capacity(wire.len() + 4);
    v.extend_from_slice(&[0; 4]);
    v.extend_from_slice(wire);
    v
}

/// The wire bytes of a record (a record shorter than its 8-byte frame gives none).
fn wire(record: &[u8]) -> &[u8] {
    record.get(4..).filter(|w| w.len() >= 4).unwrap_or(&[])
}

/// Calls a ROS-typed service.
#[pyclass(module = "horus._horus", frozen)]
pub(crate) struct RosServiceClient {
    name: String,
    namespace: String,
    types: (Ros2Type, Ros2Type),
    /// Opened, or the service created with its types, when made (so that the ROS 2 bridge
    /// learns the types of a ROS 2 server's service).
    inner: Endpoint<Option<RawClient>>,
}

impl RosServiceClient {
    /// The client, the service created with its types if no server made it yet; a service
    /// of other types is a ServiceError.
    fn connect(&self) -> PyResult<RawClient> {
        RawClient::create_ros(&self.namespace, &self.name, &self.types.0, &self.types.1)
            .map_err(service_error)
    }
}

#[pymethods]
impl RosServiceClient {
    #[new]
    #[pyo3(signature = (request_type, response_type, name, *, namespace=None))]
    fn new(
        request_type: TypeTriple,
        response_type: TypeTriple,
        name: &str,
        namespace: Option<&str>,
    ) -> PyResult<Self> {
        horus_shm::name::validate(name).map_err(|e| ServiceError::new_err(e.to_string()))?;
        let mut client = RosServiceClient {
            name: name.to_owned(),
            namespace: namespace.map_or_else(horus::namespace, str::to_owned),
            types: (ros2(&request_type), ros2(&response_type)),
            inner: Endpoint::new(None, "service client"),
        };
        // Now, not at the first call: the bridge can serve a ROS 2 server's service before
        // it; another type under the name is refused here.
        client.inner = Endpoint::new(Some(client.connect()?), "service client");
        Ok(client)
    }

    /// Leaves the service now: this client's place is released and any use after
    /// raises ClosedError. A `call` waiting in another thread is withdrawn and raises
    /// ClosedError within a few milliseconds. Idempotent.
    fn close(&self) {
        self.inner.close();
    }

    /// Whether `close()` was called.
    #[getter]
    fn closed(&self) -> bool {
        self.inner.is_closed()
    }

    /// The service's name.
    #[getter]
    fn name(&self) -> &str {
        &self.name
    }

    /// Calls with `request` (wire bytes of one request) and waits at most `timeout`
    /// seconds; returns the response's wire bytes (not checked: decode them).
    /// NoServerError when no server serves it (yet); ServiceError when it carries other
    /// types.
    #[pyo3(signature = (request, timeout=1.0))]
    fn call<'py>(
        &self,
        py: Python<'py>,
        request: &[u8],
        timeout: f64,
    ) -> PyResult<Bound<'py, PyBytes>> {
        let t = crate::seconds::timeout("timeout", timeout)?;
        let mut g = self.inner.lock()?;
        if g.is_none() {
            *g = Some(self.connect()?);
        }
        let Some(c) = g.as_mut() else {
            return Err(NoServerError::new_err(format!(
                "service {:?}: no server",
                self.name
            )));
        };
        let req = record(request);
        let closed = self.inner.closed_flag();
        // Acquire: pairs with `close()`'s Release store.
        let r = py.detach(|| c.call_or_stop(&req, t, || closed.load(Ordering::Acquire)));
        py.check_signals()?;
        let resp = r.map_err(|e| match e {
            horus::CallError::Stopped => withdrawn(),
            e => call_error(py, &self.name, e),
        })?;
        Ok(PyBytes::new(py, wire(&resp)))
    }
}

/// Serves a ROS-typed service (creating it if it does not exist).
#[pyclass(module = "horus._horus", frozen)]
pub(crate) struct RosServiceServer {
    name: String,
    inner: Endpoint<RawServer>,
}

#[pymethods]
impl RosServiceServer {
    #[new]
    #[pyo3(signature = (request_type, response_type, name, *, namespace=None))]
    fn new(
        request_type: TypeTriple,
        response_type: TypeTriple,
        name: &str,
        namespace: Option<&str>,
    ) -> PyResult<Self> {
        let description = ServiceDescription::ros2(ros2(&request_type), ros2(&response_type))
            .map_err(|e| ServiceError::new_err(e.to_string()))?;
        let ns = namespace.map_or_else(horus::namespace, str::to_owned);
        let s = RawServer::create(&ns, name, &description).map_err(service_error)?;
        Ok(RosServiceServer {
            name: name.to_owned(),
            inner: Endpoint::new(s, "service server"),
        })
    }

    /// Leaves the service now: this server's place is released and any use after
    /// raises ClosedError. A `recv` waiting on it in another
    /// thread raises ClosedError within 50 ms. Idempotent.
    fn close(&self) {
        self.inner.close();
    }

    /// Whether `close()` was called.
    #[getter]
    fn closed(&self) -> bool {
        self.inner.is_closed()
    }

    /// The service's name.
    #[getter]
    fn name(&self) -> &str {
        &self.name
    }

    /// The next request if one is waiting, else None. Never blocks.
    fn try_recv(&self) -> PyResult<Option<RosServiceRequest>> {
        Ok(self.inner.lock()?.try_recv().map(RosServiceRequest::new))
    }

    /// Waits for the next request, at most `timeout` seconds (None: for ever).
    #[pyo3(signature = (timeout=None))]
    fn recv(&self, py: Python<'_>, timeout: Option<f64>) -> PyResult<RosServiceRequest> {
        let deadline = crate::seconds::deadline("timeout", timeout)?;
        let mut g = self.inner.lock()?;
        let server: &mut RawServer = &mut g;
        loop {
            let slice = deadline.map_or(SIGNAL_SLICE, |d| {
                d.saturating_duration_since(Instant::now())
                    .min(SIGNAL_SLICE)
            });
            if let Some(r) = py.detach(|| server.recv_timeout(slice)) {
                return Ok(RosServiceRequest::new(r));
            }
            py.check_signals()?;
            if self.inner.is_closed() {
                return Err(closed_error("service server"));
            }
            if deadline.is_some_and(|d| Instant::now() >= d) {
                return Err(RecvTimeoutError::new_err(format!(
                    "service {:?}: no request within {} s",
                    self.name,
                    timeout.unwrap_or_default()
                )));
            }
        }
    }
}

/// A request taken by a RosServiceServer. Dropping it unanswered tells the client.
#[pyclass(module = "horus._horus", frozen)]
pub(crate) struct RosServiceRequest {
    client_pid: u32,
    inner: Mutex<Option<RawRequest>>,
}

impl RosServiceRequest {
    fn new(r: RawRequest) -> Self {
        RosServiceRequest {
            client_pid: r.client_pid(),
            inner: Mutex::new(Some(r)),
        }
    }
}

#[pymethods]
impl RosServiceRequest {
    /// Process id of the calling client.
    #[getter]
    fn client_pid(&self) -> u32 {
        self.client_pid
    }

    /// The request's wire bytes (a copy; not checked: decode them). Empty once answered.
    #[getter]
    fn data<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        let g = lock(&self.inner, "request")?;
        Ok(PyBytes::new(
            py,
            g.as_ref().map_or(&[][..], |r| wire(r.bytes())),
        ))
    }

    /// Whether the request was answered (or dropped unanswered).
    #[getter]
    fn answered(&self) -> PyResult<bool> {
        Ok(lock(&self.inner, "request")?.is_none())
    }

    /// Answers with `response` (wire bytes of one response). True if delivered, False
    /// if the client is gone. A second reply raises ServiceError.
    fn reply(&self, response: &[u8]) -> PyResult<bool> {
        let r = lock(&self.inner, "request")?
            .take()
            .ok_or_else(|| ServiceError::new_err("the request was already answered"))?;
        match r.reply(&record(response)) {
            Ok(()) => Ok(true),
            Err(horus::ReplyError::ClientGone) => Ok(false),
            Err(e) => Err(ServiceError::new_err(e.to_string())),
        }
    }

    /// Drops the request unanswered: the client gets UnansweredError.
    fn drop_unanswered(&self) -> PyResult<()> {
        drop(lock(&self.inner, "request")?.take());
        Ok(())
    }
}
