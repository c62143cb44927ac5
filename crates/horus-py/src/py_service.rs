//! `Service`, `Client`, `PendingCall`, `Server` and `Request`, as seen from
//! Python. Messages cross as the raw bytes of their fixed part; the Python
//! package (`horus._service`) turns them into message objects.
//!
//! Every blocking wait releases the GIL and wakes up at least every 50 ms
//! to let Python handle signals: Ctrl-C raises `KeyboardInterrupt` promptly
//! (a call interrupted that way is withdrawn, counted as `cancelled`).

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList};

use crate::dyn_service::{
    self, CallFailure, DynClient, DynPending, DynRequest, DynServer, DynService, ServiceOptions,
};
use crate::endpoint::{closed_error, lock, Endpoint};
use crate::errors::{self, CallTimeoutError, RecvTimeoutError};
use crate::service_in_flight::{InFlight, Slot};

/// Longest stretch a blocking wait runs without the GIL before it checks
/// for signals (Ctrl-C).
const SIGNAL_SLICE: Duration = Duration::from_millis(50);

/// Polls of a pending call before sleeping between polls.
const SPIN_POLLS: u32 = 200;

/// Longest sleep between two polls of a pending call.
const MAX_NAP: Duration = Duration::from_millis(1);

fn client_stats_dict<'py>(py: Python<'py>, s: &horus::ClientStats) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    for (k, v) in [
        ("calls", s.calls),
        ("responses", s.responses),
        ("no_server", s.no_server),
        ("server_died", s.server_died),
        ("busy", s.busy),
        ("timed_out", s.timed_out),
        ("cancelled", s.cancelled),
        ("late", s.late),
        ("unanswered", s.unanswered),
        ("failed", s.failed),
        ("malformed", s.malformed),
    ] {
        d.set_item(k, v)?;
    }
    Ok(d)
}

fn server_stats_dict<'py>(py: Python<'py>, s: &horus::ServerStats) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    for (k, v) in [
        ("received", s.received),
        ("replied", s.replied),
        ("unanswered", s.unanswered),
        ("client_gone", s.client_gone),
        ("malformed", s.malformed),
        ("reply_failed", s.reply_failed),
    ] {
        d.set_item(k, v)?;
    }
    Ok(d)
}

fn service_stats_dict<'py>(
    py: Python<'py>,
    s: &horus::ServiceStats,
) -> PyResult<Bound<'py, PyDict>> {
    let clients = PyList::empty(py);
    for e in &s.clients {
        let d = PyDict::new(py);
        d.set_item("place", e.place)?;
        d.set_item("pid", e.pid)?;
        d.set_item("stats", client_stats_dict(py, &e.stats)?)?;
        clients.append(d)?;
    }
    let servers = PyList::empty(py);
    for e in &s.servers {
        let d = PyDict::new(py);
        d.set_item("place", e.place)?;
        d.set_item("pid", e.pid)?;
        d.set_item("stats", server_stats_dict(py, &e.stats)?)?;
        servers.append(d)?;
    }
    let d = PyDict::new(py);
    d.set_item("clients", clients)?;
    d.set_item("servers", servers)?;
    Ok(d)
}

/// A service: a name, a request type and a response type (by schema name).
/// Opens it, creating it if it does not exist; settings left as None adopt
/// the existing service's.
#[pyclass(module = "horus._horus", frozen)]
pub(crate) struct Service {
    inner: Endpoint<Box<dyn DynService>>,
    name: String,
    depth: u32,
}

#[pymethods]
impl Service {
    #[new]
    #[pyo3(signature = (request_schema, response_schema, name, *, depth=None, max_clients=None, max_servers=None, namespace=None))]
    fn new(
        request_schema: &str,
        response_schema: &str,
        name: &str,
        depth: Option<u32>,
        max_clients: Option<u32>,
        max_servers: Option<u32>,
        namespace: Option<String>,
    ) -> PyResult<Self> {
        let o = ServiceOptions {
            namespace,
            depth,
            max_clients,
            max_servers,
        };
        match dyn_service::open_service(request_schema, response_schema, name, &o) {
            Ok(Some(inner)) => Ok(Service {
                name: inner.name().to_owned(),
                depth: inner.depth(),
                inner: Endpoint::new(inner, "service"),
            }),
            Ok(None) => Err(PyValueError::new_err(format!(
                "services carry fixed-size messages: requests and responses must each be one of {:?}, not {request_schema:?} and {response_schema:?}",
                dyn_service::service_schemas()
            ))),
            Err(e) => Err(errors::service_error(e)),
        }
    }

    /// Service name.
    #[getter]
    fn name(&self) -> &str {
        &self.name
    }

    /// Calls in flight each client may have.
    #[getter]
    fn depth(&self) -> u32 {
        self.depth
    }

    /// A client (one per thread).
    fn client(&self) -> PyResult<Client> {
        let client = self.inner.lock()?.client();
        Ok(Client {
            service: self.name.clone(),
            inner: Endpoint::new(client.map_err(errors::service_error)?, "service client"),
            calls: Arc::default(),
        })
    }

    /// A server (one per thread). Several servers share the load.
    fn server(&self) -> PyResult<Server> {
        let server = self.inner.lock()?.server();
        Ok(Server {
            service: self.name.clone(),
            inner: Endpoint::new(server.map_err(errors::service_error)?, "service server"),
        })
    }

    /// Counters of every client and server: `{"clients": [...], "servers": [...]}`.
    fn stats<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        service_stats_dict(py, &self.inner.lock()?.stats())
    }

    /// Lets go of the service now (its segment is removed if this was the
    /// last handle on it). Clients and servers made from it stay open. Any
    /// use after raises ClosedError. Idempotent.
    fn close(&self) {
        self.inner.close();
    }

    /// Whether `close()` was called.
    #[getter]
    fn closed(&self) -> bool {
        self.inner.is_closed()
    }
}

/// The calling end of a service.
#[pyclass(module = "horus._horus", frozen)]
pub(crate) struct Client {
    service: String,
    inner: Endpoint<Box<dyn DynClient>>,
    /// The `PendingCall`s made by `call_async`, withdrawn by `close()`.
    calls: Arc<InFlight>,
}

impl Client {
    fn start(&self, py: Python<'_>, req: &[u8], timeout: f64) -> PyResult<Box<dyn DynPending>> {
        let timeout = crate::seconds::timeout("timeout", timeout)?;
        self.inner
            .lock()?
            .call_async(req, timeout)
            .map_err(|e| match e {
                CallFailure::BadSize { got, expected } => PyValueError::new_err(format!(
                    "service {:?}: got {got} request bytes, the request type has {expected}",
                    self.service
                )),
                CallFailure::Call(e) => errors::call_error(py, &self.service, e),
            })
    }
}

#[pymethods]
impl Client {
    /// Calls the service with `request` (exactly the bytes of one request)
    /// and waits at most `timeout` seconds for the response bytes.
    #[pyo3(signature = (request, timeout=1.0))]
    fn call<'py>(
        &self,
        py: Python<'py>,
        request: &[u8],
        timeout: f64,
    ) -> PyResult<Bound<'py, PyBytes>> {
        let mut pending = self.start(py, request, timeout)?;
        wait(py, &self.service, &mut *pending, None, &self.calls)
    }

    /// Sends `request` and returns at once; the call times out after
    /// `timeout` seconds whether or not anyone waits.
    #[pyo3(signature = (request, timeout=1.0))]
    fn call_async(&self, py: Python<'_>, request: &[u8], timeout: f64) -> PyResult<PendingCall> {
        let inner: Slot = Arc::new(Mutex::new(Some(self.start(py, request, timeout)?)));
        if !self.calls.register(&inner) {
            // Closed by another thread since the call started: withdrawn.
            return Err(withdrawn());
        }
        Ok(PendingCall {
            service: self.service.clone(),
            inner,
            calls: Arc::clone(&self.calls),
        })
    }

    /// Calls in flight (sent, result not yet taken).
    #[getter]
    fn in_flight(&self) -> PyResult<usize> {
        Ok(self.inner.lock()?.in_flight())
    }

    /// Servers running now.
    #[getter]
    fn servers(&self) -> PyResult<u32> {
        Ok(self.inner.lock()?.servers())
    }

    /// This client's counters.
    fn stats<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        client_stats_dict(py, &self.inner.lock()?.stats())
    }

    /// Counters of every client and server of the service.
    fn service_stats<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        service_stats_dict(py, &self.inner.lock()?.service_stats())
    }

    /// Leaves the service now: this client's place is released (calls in
    /// flight are withdrawn: waiting on one, or taking its result, raises
    /// ClosedError; a thread waiting on one is woken within 50 ms) and any
    /// use after raises ClosedError. Idempotent.
    fn close(&self) {
        self.inner.close();
        self.calls.close();
    }

    /// Whether `close()` was called.
    #[getter]
    fn closed(&self) -> bool {
        self.inner.is_closed()
    }
}

/// The error of a call its client's `close()` withdrew.
pub(crate) fn withdrawn() -> PyErr {
    errors::ClosedError::new_err("this service client is closed: the call was withdrawn")
}

/// Polls `pending` without the GIL until it settles, `deadline` passes
/// (`CallTimeoutError`), its client is closed (`ClosedError`; the caller
/// drops the call) or a signal handler raises.
fn wait<'py>(
    py: Python<'py>,
    service: &str,
    pending: &mut dyn DynPending,
    deadline: Option<Instant>,
    calls: &InFlight,
) -> PyResult<Bound<'py, PyBytes>> {
    let mut polls = 0u32;
    let mut nap = Duration::from_micros(10);
    loop {
        let slice_end = Instant::now() + SIGNAL_SLICE;
        let r = py.detach(|| loop {
            if calls.is_closed() {
                return None;
            }
            if let Some(r) = pending.try_result() {
                return Some(r);
            }
            let now = Instant::now();
            if now >= slice_end || deadline.is_some_and(|d| now >= d) {
                return None;
            }
            if polls < SPIN_POLLS {
                polls += 1;
                std::thread::yield_now();
            } else {
                std::thread::sleep(nap);
                nap = (nap * 2).min(MAX_NAP);
            }
        });
        match r {
            Some(Ok(bytes)) => return Ok(PyBytes::new(py, &bytes)),
            Some(Err(e)) => return Err(errors::call_error(py, service, e)),
            None => {}
        }
        if calls.is_closed() {
            return Err(withdrawn());
        }
        py.check_signals()?;
        if deadline.is_some_and(|d| Instant::now() >= d) {
            return Err(CallTimeoutError::new_err(format!(
                "service {service:?}: no response within the wait's timeout; the call was withdrawn"
            )));
        }
    }
}

/// A call in flight. Its own timeout is in force whether or not anyone
/// waits; dropping it before taking the result withdraws the call.
#[pyclass(module = "horus._horus", frozen)]
pub(crate) struct PendingCall {
    service: String,
    inner: Slot,
    /// Its client's calls: `close()` of the client withdraws this one.
    calls: Arc<InFlight>,
}

impl PendingCall {
    /// `ClosedError` (dropping the call) once its client was closed;
    /// `taken` once the result was taken.
    fn check(&self, g: &mut Option<Box<dyn DynPending>>) -> PyResult<()> {
        if self.calls.is_closed() {
            *g = None;
            return Err(withdrawn());
        }
        if g.is_none() {
            return Err(taken(&self.service));
        }
        Ok(())
    }
}

#[pymethods]
impl PendingCall {
    /// The response bytes if the call is settled, None while it is in
    /// flight; raises the call's error if it failed. The result is taken
    /// once: afterwards this raises ServiceError.
    fn try_result<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyBytes>>> {
        let mut g = lock(&self.inner, "pending call")?;
        self.check(&mut g)?;
        let Some(p) = g.as_mut() else {
            return Err(taken(&self.service));
        };
        match p.try_result() {
            None => Ok(None),
            Some(r) => {
                *g = None;
                match r {
                    Ok(bytes) => Ok(Some(PyBytes::new(py, &bytes))),
                    Err(e) => Err(errors::call_error(py, &self.service, e)),
                }
            }
        }
    }

    /// Waits for the result: until the call's own timeout (None), or at
    /// most `timeout` seconds, after which the call is withdrawn (counted
    /// as `cancelled`) and CallTimeoutError raised.
    #[pyo3(signature = (timeout=None))]
    fn wait<'py>(&self, py: Python<'py>, timeout: Option<f64>) -> PyResult<Bound<'py, PyBytes>> {
        let deadline = crate::seconds::deadline("timeout", timeout)?;
        let mut g = lock(&self.inner, "pending call")?;
        self.check(&mut g)?;
        let Some(mut p) = g.take() else {
            return Err(taken(&self.service));
        };
        wait(py, &self.service, &mut *p, deadline, &self.calls)
    }

    /// Whether the result was taken (or the call withdrawn, by `cancel()`
    /// or by `close()` of its client).
    #[getter]
    fn done(&self) -> PyResult<bool> {
        let g = lock(&self.inner, "pending call")?;
        Ok(g.is_none() || self.calls.is_closed())
    }

    /// Withdraws the call if its result was not taken (counted as
    /// `cancelled`; a response that still comes is discarded).
    fn cancel(&self) -> PyResult<()> {
        lock(&self.inner, "pending call")?.take();
        Ok(())
    }
}

fn taken(service: &str) -> PyErr {
    errors::ServiceError::new_err(format!(
        "service {service:?}: the call's result was already taken"
    ))
}

/// The answering end of a service.
#[pyclass(module = "horus._horus", frozen)]
pub(crate) struct Server {
    service: String,
    inner: Endpoint<Box<dyn DynServer>>,
}

#[pymethods]
impl Server {
    /// The next request if one is waiting, else None. Never blocks.
    fn try_recv(&self) -> PyResult<Option<Request>> {
        Ok(self
            .inner
            .lock()?
            .try_recv()
            .map(|r| Request::new(&self.service, r)))
    }

    /// Waits for the next request, at most `timeout` seconds (None: for
    /// ever). Raises RecvTimeoutError when the timeout expires.
    #[pyo3(signature = (timeout=None))]
    fn recv(&self, py: Python<'_>, timeout: Option<f64>) -> PyResult<Request> {
        let deadline = crate::seconds::deadline("timeout", timeout)?;
        let mut g = self.inner.lock()?;
        let server: &mut dyn DynServer = &mut **g;
        loop {
            let slice = match deadline {
                Some(d) => d
                    .saturating_duration_since(Instant::now())
                    .min(SIGNAL_SLICE),
                None => SIGNAL_SLICE,
            };
            if let Some(r) = py.detach(|| server.recv_timeout(slice)) {
                return Ok(Request::new(&self.service, r));
            }
            py.check_signals()?;
            if self.inner.is_closed() {
                return Err(closed_error("service server"));
            }
            if deadline.is_some_and(|d| Instant::now() >= d) {
                return Err(RecvTimeoutError::new_err(format!(
                    "service {:?}: no request within {} s",
                    self.service,
                    timeout.unwrap_or_default()
                )));
            }
        }
    }

    /// This server's counters.
    fn stats<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        server_stats_dict(py, &self.inner.lock()?.stats())
    }

    /// Counters of every client and server of the service.
    fn service_stats<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        service_stats_dict(py, &self.inner.lock()?.service_stats())
    }

    /// Leaves the service now: this server's place is released and any use
    /// after raises ClosedError. From another thread, a `recv` waiting on
    /// this server raises ClosedError within 50 ms. Idempotent.
    fn close(&self) {
        self.inner.close();
    }

    /// Whether `close()` was called.
    #[getter]
    fn closed(&self) -> bool {
        self.inner.is_closed()
    }
}

/// A request taken by a server. Answer it once with `reply`; dropping it
/// unanswered (or `drop_unanswered`) tells the client (UnansweredError).
#[pyclass(module = "horus._horus", frozen)]
pub(crate) struct Request {
    service: String,
    data: Vec<u8>,
    client_pid: u32,
    inner: Mutex<Option<Box<dyn DynRequest>>>,
}

impl Request {
    fn new(service: &str, r: Box<dyn DynRequest>) -> Self {
        Request {
            service: service.to_owned(),
            data: r.bytes().to_vec(),
            client_pid: r.client_pid(),
            inner: Mutex::new(Some(r)),
        }
    }
}

#[pymethods]
impl Request {
    /// The request's bytes (a copy).
    #[getter]
    fn data<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        PyBytes::new(py, &self.data)
    }

    /// Process id of the calling client.
    #[getter]
    fn client_pid(&self) -> u32 {
        self.client_pid
    }

    /// Whether the request was answered (or dropped unanswered).
    #[getter]
    fn answered(&self) -> PyResult<bool> {
        Ok(lock(&self.inner, "request")?.is_none())
    }

    /// Answers with `response` (exactly the bytes of one response). Returns
    /// True if delivered, False if the client is gone (the response is
    /// dropped and counted). A second reply raises ServiceError.
    fn reply(&self, response: &[u8]) -> PyResult<bool> {
        let mut g = lock(&self.inner, "request")?;
        let Some(r) = g.as_ref() else {
            return Err(errors::ServiceError::new_err(format!(
                "service {:?}: the request was already answered",
                self.service
            )));
        };
        if response.len() != r.response_size() {
            return Err(PyValueError::new_err(format!(
                "service {:?}: got {} response bytes, the response type has {}",
                self.service,
                response.len(),
                r.response_size()
            )));
        }
        let r = g.take().expect("checked above");
        match r.reply(response) {
            Ok(()) => Ok(true),
            Err(Ok(horus::ReplyError::ClientGone)) => Ok(false),
            Err(Ok(e)) => Err(errors::ReplyFailedError::new_err(format!(
                "service {:?}: {e}",
                self.service
            ))),
            Err(Err(_)) => unreachable!("size checked above"),
        }
    }

    /// Drops the request unanswered: the client gets UnansweredError.
    fn drop_unanswered(&self) -> PyResult<()> {
        lock(&self.inner, "request")?.take();
        Ok(())
    }
}
