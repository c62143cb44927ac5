//! ROS 2-typed topics from Python: the run-time (type-erased) endpoints of `horus::inspect`
//! (`open_or_create_ros_topic`), meeting typed Rust `Topic<Ros<M>>` endpoints on the
//! same chunks `[0 0 0 0][00 01 00 00][CDR body…]`.
//!
//! Publishing encodes the object straight into the pieces of the chunk: small fields
//! into one buffer, every large primitive array (≥ [`BLOCK_MIN`] bytes) left where it is
//! and copied once, by the publisher, into shared memory. Receiving hands out a
//! [`RosSample`] (the chunk, pinned) whose read-only buffer the decoder makes the NumPy
//! arrays view.

use std::ffi::c_int;
use std::time::{Duration, Instant};

use horus::inspect::{
    self, CreateError, RawPublisher, RawRosReader, RawRosSample, RawSendError, RosTopicError,
    TopicView,
};
use horus::msgs::Ros2Type;
use horus::Overflow;
use pyo3::exceptions::PyValueError;
use pyo3::ffi;
use pyo3::prelude::*;

use super::encode::{Enc, Parts, HEADER};
use super::loan::{self, Abandoned, RosLoan, RosPubState, FRAME};
use super::RosTypes;
use crate::buffer::export;
use crate::dynamic::SendFailure;
use crate::endpoint::{closed_error, Endpoint, Open};
use crate::errors::{self, InvalidTopicError, RecvTimeoutError, SchemaMismatchError, SegmentError};

/// Largest stretch a blocking receive waits without the GIL (signals: Ctrl-C).
const SIGNAL_SLICE: Duration = Duration::from_millis(50);

fn create_error(
    py: Python<'_>,
    namespace: &str,
    topic: &str,
    expected: &str,
    e: CreateError,
) -> PyErr {
    let msg = e.to_string();
    let err = match &e {
        CreateError::Open {
            source: horus_shm::OpenError::SchemaMismatch { .. },
            ..
        } => {
            let found = TopicView::open(namespace, topic)
                .map(|v| v.schema_text())
                .unwrap_or_else(|_| "another type".to_owned());
            let err = SchemaMismatchError::new_err(format!(
                "topic {topic:?} carries {found}, not {expected}"
            ));
            let v = err.value(py);
            let _ = v.setattr("expected", expected);
            let _ = v.setattr("found", found);
            err
        }
        CreateError::Open { .. } => SegmentError::new_err(msg),
        _ => InvalidTopicError::new_err(msg),
    };
    // Setting an attribute on a fresh exception instance cannot fail.
    let _ = err.value(py).setattr("topic", topic);
    err
}

fn ros_error(e: RosTopicError) -> PyErr {
    match e {
        RosTopicError::NotRos { .. } => SchemaMismatchError::new_err(e.to_string()),
        _ => crate::errors::TopicError::new_err(e.to_string()),
    }
}

pub(crate) fn send_failure(e: RawSendError) -> SendFailure {
    match e {
        RawSendError::Full => SendFailure::Full,
        RawSendError::Timeout(d) => SendFailure::Timeout(d),
        RawSendError::WrongSize { got, expected } => SendFailure::BadSize { got, expected },
        RawSendError::TooLarge { len, capacity } => SendFailure::TooLarge {
            requested: Some(len.saturating_sub(FRAME)),
            max: capacity.saturating_sub(FRAME),
        },
        RawSendError::PoolExhausted => SendFailure::PoolExhausted,
        RawSendError::SegmentLost => SendFailure::SegmentLost,
    }
}

/// A topic carrying one ROS 2 type, created if it does not exist.
#[pyclass(module = "horus._horus", frozen)]
pub(crate) struct RosTopic {
    view: Endpoint<TopicView>,
    name: String,
    latched: u32,
    type_name: String,
    blocks: bool,
}

#[pymethods]
impl RosTopic {
    /// Opens `name` as a topic of `type_name` (its hash and definition from `types`),
    /// creating it with the settings a typed Rust `Topic<Ros<M>>` uses by default
    /// (`max_tail_bytes`: largest CDR body, default 1 MiB) unless given here.
    #[new]
    #[pyo3(signature = (types, type_name, name, *, depth=None, overflow=None, block_timeout=None,
                        max_tail_bytes=None, namespace=None, durability=None))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        py: Python<'_>,
        types: &RosTypes,
        type_name: &str,
        name: &str,
        depth: Option<u32>,
        overflow: Option<&str>,
        block_timeout: Option<f64>,
        max_tail_bytes: Option<usize>,
        namespace: Option<String>,
        durability: Option<u32>,
    ) -> PyResult<Self> {
        let hash = types.type_hash(type_name)?;
        let definition = types.definition(type_name)?;
        let ty = Ros2Type::new(type_name, &hash, &definition);
        let mut qos = inspect::ros_qos(max_tail_bytes.unwrap_or(1 << 20));
        if let Some(d) = depth {
            qos.depth = d;
            qos.chunks_per_publisher = 2 * d + 4;
        }
        let timeout = || -> PyResult<Duration> {
            crate::seconds::timeout("block_timeout", block_timeout.unwrap_or(1.0))
        };
        match overflow {
            None => {}
            Some("drop_oldest") => qos.overflow = Some(Overflow::DropOldest),
            Some("reject") => qos.overflow = Some(Overflow::Reject),
            Some("block") => {
                qos.overflow = Some(Overflow::Block {
                    timeout: timeout()?,
                })
            }
            Some(other) => {
                return Err(PyValueError::new_err(format!(
                    "overflow must be 'drop_oldest', 'reject' or 'block', not {other:?}"
                )))
            }
        }
        let ns = namespace.unwrap_or_else(horus_shm::name::namespace);
        let wanted = durability.map(crate::py_topic::durability_of);
        let view = inspect::open_or_create_ros_topic_durable(
            &ns,
            name,
            &ty,
            &qos,
            wanted.unwrap_or(horus::Durability::Volatile),
        )
        .map_err(|e| create_error(py, &ns, name, type_name, e))?;
        // An explicit durability must match an existing topic's, as with `Topic`.
        if let Some(want) = wanted.filter(|&w| w != view.durability()) {
            return Err(crate::errors::topic_error(
                py,
                horus::TopicError::QosMismatch {
                    topic: name.to_owned(),
                    found: view.durability().to_string(),
                    requested: want.to_string(),
                },
            ));
        }
        let blocks = matches!(view.qos().overflow, Some(Overflow::Block { .. }));
        Ok(RosTopic {
            name: view.name().to_owned(),
            latched: view.durability().latched(),
            view: Endpoint::new(view, "topic"),
            type_name: type_name.to_owned(),
            blocks,
        })
    }

    /// Topic name.
    #[getter]
    fn name(&self) -> &str {
        &self.name
    }

    /// The ROS 2 type name it carries.
    #[getter]
    fn type_name(&self) -> &str {
        &self.type_name
    }

    /// Messages each publisher keeps for subscribers that join later
    /// (transient-local durability); 0 for a volatile topic.
    #[getter]
    fn durability(&self) -> u32 {
        self.latched
    }

    /// A publisher (one per thread).
    fn publisher(&self) -> PyResult<RosPublisher> {
        let view = self.view.lock()?;
        view.ros2().map_err(ros_error)?;
        let raw = view
            .publisher(FRAME)
            .map_err(|e| ros_error(RosTopicError::Join(e)))?;
        Ok(RosPublisher {
            state: Endpoint::new(RosPubState::new(raw), "publisher"),
            abandoned: Abandoned::new(),
            topic: self.name.clone(),
            type_name: self.type_name.clone(),
            blocks: self.blocks,
        })
    }

    /// A subscriber (`observer=True`: an observer, never back-pressuring publishers).
    /// `recv` polls `spin` times before it sleeps on the futex, as an ordinary
    /// subscriber's (`Topic.subscriber(spin=…)`); None keeps the native default.
    /// `start`: 'durability' (default: the latched history first on a
    /// transient-local topic), 'next' or 'oldest' (see `Topic.subscriber`).
    #[pyo3(signature = (*, spin=None, observer=false, start=None))]
    fn subscriber(
        &self,
        spin: Option<u32>,
        observer: bool,
        start: Option<&str>,
    ) -> PyResult<RosSubscriber> {
        let start = crate::py_topic::parse_start(start)?;
        let mut r = self
            .view
            .lock()?
            .ros_reader_at(true, observer, start)
            .map_err(ros_error)?;
        if let Some(n) = spin {
            r.set_spin(n);
        }
        Ok(RosSubscriber {
            raw: Endpoint::new(r, "subscriber"),
            topic: self.name.clone(),
        })
    }

    /// Lets go of the topic now; publishers and subscribers made from it
    /// stay open. Any use after raises ClosedError. Idempotent.
    fn close(&self) {
        self.view.close();
    }

    /// Whether `close()` was called.
    #[getter]
    fn closed(&self) -> bool {
        self.view.is_closed()
    }
}

/// Publishes message objects of one ROS 2 type, encoded for each send or written in
/// place in a loan ([`RosLoan`]).
#[pyclass(module = "horus._horus", frozen)]
pub(crate) struct RosPublisher {
    state: Endpoint<RosPubState>,
    /// A loan whose `RosLoan` was freed while another thread held `state`; given back
    /// at the next lock.
    abandoned: Abandoned,
    pub(crate) topic: String,
    type_name: String,
    pub(crate) blocks: bool,
}

impl RosPublisher {
    /// The state for one call (an abandoned loan given back first).
    pub(crate) fn state(&self) -> PyResult<Open<'_, RosPubState>> {
        let mut st = self.state.lock()?;
        if let Some(id) = self.abandoned.take() {
            st.discard_abandoned(id);
        }
        Ok(st)
    }

    /// The state if it is open and free now (for `Drop` code): `None` when closed,
    /// `Some(Err(()))` while another thread holds it.
    pub(crate) fn try_state(&self) -> Option<Result<Open<'_, RosPubState>, ()>> {
        self.state.try_lock()
    }

    /// Leaves loan `id` to be given back at the next lock.
    pub(crate) fn abandon(&self, id: u64) {
        self.abandoned.set(id);
    }

    pub(crate) fn err(&self, e: SendFailure) -> PyErr {
        errors::send_error(&self.topic, e)
    }

    pub(crate) fn type_name(&self) -> &str {
        &self.type_name
    }

    pub(crate) fn closed(&self) -> bool {
        self.state.is_closed()
    }
}

#[pymethods]
impl RosPublisher {
    /// Encodes `obj` (an object of the topic's type) and publishes it. Returns the
    /// subscribers reached. Raises CdrEncodeError (nothing sent) or a SendError.
    fn send(&self, py: Python<'_>, types: &RosTypes, obj: &Bound<'_, PyAny>) -> PyResult<u32> {
        let codec = types.codec();
        let idx = RosTypes::index(&codec, &self.type_name)?;
        let mut enc = Enc {
            plans: &codec.plans,
            sink: Parts::default(),
        };
        enc.structure(idx, obj, 0)
            .map_err(|e| e.into_py(py, &self.type_name))?;
        let parts = enc.sink;
        // The chunk: 4 reserved bytes, the encapsulation header, the body.
        let frame = [0, 0, 0, 0, HEADER[0], HEADER[1], HEADER[2], HEADER[3]];
        let pieces = parts.pieces(&frame);
        let mut st = self.state()?;
        let raw: &mut RawPublisher = &mut st.raw;
        let r = if self.blocks {
            py.detach(|| raw.send_parts(&pieces))
        } else {
            raw.send_parts(&pieces)
        };
        r.map_err(|e| errors::send_error(&self.topic, send_failure(e)))
    }

    /// Loans a chunk for one message written in place: `msg` (an object of the topic's
    /// type, the package's own copy) is encoded into it, and each field named in
    /// `lengths` becomes a writable NumPy view of that many elements in the chunk (as
    /// `numpy.empty`: write every element). Raises TypeError / ValueError for a field
    /// that is not a loanable array of the type, CdrEncodeError, LoanError (a loan is
    /// outstanding, or the message exceeds max_tail_bytes), PoolExhaustedError.
    fn loan(
        slf: &Bound<'_, Self>,
        types: &RosTypes,
        msg: &Bound<'_, PyAny>,
        lengths: Vec<(String, usize)>,
    ) -> PyResult<Py<RosLoan>> {
        let l = Bound::new(slf.py(), loan::open_loan(slf, types, msg, lengths)?)?;
        loan::attach_views(&l, types, msg)?;
        Ok(l.unbind())
    }

    /// Leaves the topic now: this publisher's place is released and any use after
    /// raises ClosedError. An outstanding loan is given back; while views of its
    /// memory are alive this raises LoanViewsAliveError and the publisher stays open.
    /// Idempotent.
    fn close(&self) -> PyResult<()> {
        self.state.close_if(|st| st.close_loan(&self.topic))
    }

    /// Whether `close()` was called.
    #[getter(closed)]
    fn is_closed(&self) -> bool {
        self.state.is_closed()
    }

    /// Topic name.
    #[getter]
    fn topic(&self) -> &str {
        &self.topic
    }
}

/// Receives messages of one ROS 2 type as [`RosSample`]s (decoded by the package).
#[pyclass(module = "horus._horus", frozen)]
pub(crate) struct RosSubscriber {
    raw: Endpoint<RawRosReader>,
    topic: String,
}

#[pymethods]
impl RosSubscriber {
    /// The next message if one is ready, else None.
    fn try_recv(&self) -> PyResult<Option<RosSample>> {
        Ok(self.raw.lock()?.try_recv().map(|inner| RosSample { inner }))
    }

    /// Waits for the next message, at most `timeout` seconds (None: for ever),
    /// without the GIL; raises RecvTimeoutError when it expires.
    #[pyo3(signature = (timeout=None))]
    fn recv(&self, py: Python<'_>, timeout: Option<f64>) -> PyResult<RosSample> {
        let mut guard = self.raw.lock()?;
        let deadline = crate::seconds::deadline("timeout", timeout)?;
        let r: &mut RawRosReader = &mut guard;
        loop {
            let slice = match deadline {
                Some(d) => d
                    .saturating_duration_since(Instant::now())
                    .min(SIGNAL_SLICE),
                None => SIGNAL_SLICE,
            };
            if let Some(inner) = py.detach(|| r.recv_timeout(slice)) {
                return Ok(RosSample { inner });
            }
            py.check_signals()?;
            if self.raw.is_closed() {
                return Err(closed_error("subscriber"));
            }
            if deadline.is_some_and(|d| Instant::now() >= d) {
                return Err(RecvTimeoutError::new_err(format!(
                    "topic {:?}: no message within {} s",
                    self.topic,
                    timeout.unwrap_or_default()
                )));
            }
        }
    }

    /// `try_recv` and `types.decode(type_name, sample)` in one call: the next message
    /// object (its arrays viewing the sample, which they keep pinned), or None.
    fn try_recv_msg<'py>(
        &self,
        py: Python<'py>,
        types: &RosTypes,
        type_name: &str,
    ) -> PyResult<Option<Bound<'py, PyAny>>> {
        let Some(s) = self.try_recv()? else {
            return Ok(None);
        };
        let codec = types.codec();
        let idx = RosTypes::index(&codec, type_name)?;
        types
            .decode_sample(&codec, idx, &Bound::new(py, s)?, 0)
            .map(Some)
    }

    /// `recv(timeout)` and `types.decode(type_name, sample)` in one call.
    #[pyo3(signature = (types, type_name, timeout=None))]
    fn recv_msg<'py>(
        &self,
        py: Python<'py>,
        types: &RosTypes,
        type_name: &str,
        timeout: Option<f64>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let s = self.recv(py, timeout)?;
        let codec = types.codec();
        let idx = RosTypes::index(&codec, type_name)?;
        types.decode_sample(&codec, idx, &Bound::new(py, s)?, 0)
    }

    /// (received, overrun, malformed) so far.
    fn counts(&self) -> PyResult<(u64, u64, u64)> {
        Ok(self.raw.lock()?.counts())
    }

    /// Leaves the topic now: this subscriber's place is released and any use after
    /// raises ClosedError. A `recv` waiting on it in another
    /// thread raises ClosedError within 50 ms. Idempotent.
    fn close(&self) {
        self.raw.close();
    }

    /// Whether `close()` was called.
    #[getter]
    fn closed(&self) -> bool {
        self.raw.is_closed()
    }

    /// Topic name.
    #[getter]
    fn topic(&self) -> &str {
        &self.topic
    }
}

/// One received message in place (its chunk pinned while this object or a view of it
/// lives): a read-only buffer of its wire bytes (encapsulation header, CDR body).
#[pyclass(module = "horus._horus", frozen)]
pub(crate) struct RosSample {
    inner: RawRosSample,
}

impl RosSample {
    /// Its wire bytes (encapsulation header, CDR body), in place.
    pub(crate) fn cdr(&self) -> &[u8] {
        self.inner.cdr()
    }
}

#[pymethods]
impl RosSample {
    /// The publisher place it came from.
    #[getter]
    fn source(&self) -> usize {
        self.inner.source()
    }

    /// Whether it is read in place in shared memory.
    #[getter]
    fn zero_copy(&self) -> bool {
        self.inner.is_zero_copy()
    }

    fn __len__(&self) -> usize {
        self.inner.cdr().len()
    }

    unsafe fn __getbuffer__(
        slf: Bound<'_, Self>,
        view: *mut ffi::Py_buffer,
        flags: c_int,
    ) -> PyResult<()> {
        let cdr = slf.get().inner.cdr();
        // SAFETY: the bytes are the sample's pinned chunk (or its own copy), valid while
        // the sample lives, which the view guarantees through its reference to it;
        // read-only (other subscribers read the same chunk).
        unsafe {
            export(
                slf.as_any(),
                view,
                cdr.as_ptr().cast_mut(),
                cdr.len(),
                true,
                flags,
            )
        }
    }
}
