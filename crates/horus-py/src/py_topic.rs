//! `Topic`, `Publisher`, `Loan`, `Subscriber`, `Sample` and the counters, as
//! seen from Python. Messages cross as raw bytes; the Python package turns
//! them into message objects (NumPy views) built from the schema tables.

use std::ffi::c_int;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Mutex, MutexGuard, TryLockError};
use std::time::{Duration, Instant};

use horus::{Durability, Overflow, StartAt, WaitMode};
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict};

use crate::buffer::{export, with_bytes};
use crate::dynamic::{self, AnySample, DynPublisher, DynSubscriber, DynTopic, TopicOptions};
use crate::errors::{self, LoanViewsAliveError, RecvTimeoutError};

/// Longest stretch a blocking receive waits without the GIL before it
/// checks for signals (Ctrl-C).
const SIGNAL_SLICE: Duration = Duration::from_millis(50);

fn lock<'a, T: ?Sized>(m: &'a Mutex<T>, what: &str) -> PyResult<MutexGuard<'a, T>> {
    match m.try_lock() {
        Ok(g) => Ok(g),
        Err(TryLockError::WouldBlock) => Err(PyRuntimeError::new_err(format!(
            "this {what} is in use by another thread; make one {what} per thread"
        ))),
        Err(TryLockError::Poisoned(p)) => Ok(p.into_inner()),
    }
}

fn parse_overflow(
    overflow: Option<&str>,
    block_timeout: Option<f64>,
) -> PyResult<Option<Overflow>> {
    let timeout = || -> PyResult<Duration> {
        let t = block_timeout.unwrap_or(1.0);
        Duration::try_from_secs_f64(t)
            .map_err(|_| PyValueError::new_err(format!("block_timeout must be >= 0 s, not {t}")))
    };
    Ok(match overflow {
        None if block_timeout.is_some() => Some(Overflow::Block {
            timeout: timeout()?,
        }),
        None => None,
        Some("drop_oldest") => Some(Overflow::DropOldest),
        Some("reject") => Some(Overflow::Reject),
        Some("block") => Some(Overflow::Block {
            timeout: timeout()?,
        }),
        Some(other) => {
            return Err(PyValueError::new_err(format!(
                "overflow must be 'drop_oldest', 'reject' or 'block', not {other:?}"
            )))
        }
    })
}

/// The durability a history depth from Python stands for (0: volatile).
pub(crate) fn durability_of(latched: u32) -> Durability {
    match latched {
        0 => Durability::Volatile,
        depth => Durability::TransientLocal { depth },
    }
}

/// A subscriber's start from Python: None or 'durability', 'next', 'oldest'.
pub(crate) fn parse_start(start: Option<&str>) -> PyResult<StartAt> {
    match start {
        None | Some("durability") => Ok(StartAt::Durability),
        Some("next") => Ok(StartAt::Next),
        Some("oldest") => Ok(StartAt::Oldest),
        Some(other) => Err(PyValueError::new_err(format!(
            "start must be 'durability', 'next' or 'oldest', not {other:?}"
        ))),
    }
}

fn overflow_name(o: Overflow) -> &'static str {
    match o {
        Overflow::DropOldest => "drop_oldest",
        Overflow::Reject => "reject",
        Overflow::Block { .. } => "block",
    }
}

/// A topic of one message type (by schema name), opened or created with the
/// given QoS. Settings left as None adopt the topic's.
#[pyclass(module = "horus._horus", frozen)]
pub(crate) struct Topic {
    inner: Box<dyn DynTopic>,
    schema: String,
}

#[pymethods]
impl Topic {
    #[new]
    #[pyo3(signature = (schema, name, *, depth=None, overflow=None, block_timeout=None,
                        max_publishers=None, max_subscribers=None, max_tail_bytes=None,
                        loan_pool=None, namespace=None, durability=None))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        py: Python<'_>,
        schema: &str,
        name: &str,
        depth: Option<u32>,
        overflow: Option<&str>,
        block_timeout: Option<f64>,
        max_publishers: Option<u32>,
        max_subscribers: Option<u32>,
        max_tail_bytes: Option<usize>,
        loan_pool: Option<u32>,
        namespace: Option<String>,
        durability: Option<u32>,
    ) -> PyResult<Self> {
        let opts = TopicOptions {
            namespace,
            depth,
            overflow: parse_overflow(overflow, block_timeout)?,
            max_publishers,
            max_subscribers,
            max_tail_bytes,
            loan_pool,
            durability: durability.map(durability_of),
        };
        match dynamic::open_topic(schema, name, &opts) {
            Ok(Some(inner)) => Ok(Topic {
                inner,
                schema: schema.to_owned(),
            }),
            Ok(None) => Err(PyValueError::new_err(format!(
                "no message type has the schema name {schema:?}"
            ))),
            Err(e) => Err(errors::topic_error(py, e)),
        }
    }

    /// Topic name.
    #[getter]
    fn name(&self) -> &str {
        self.inner.name()
    }

    /// Schema name of the message type.
    #[getter]
    fn schema(&self) -> &str {
        &self.schema
    }

    /// Overflow policy in force: 'drop_oldest', 'reject' or 'block'.
    #[getter]
    fn overflow(&self) -> &'static str {
        overflow_name(self.inner.overflow())
    }

    /// Messages each publisher keeps for subscribers that join later
    /// (transient-local durability); 0 for a volatile topic.
    #[getter]
    fn durability(&self) -> u32 {
        self.inner.durability().latched()
    }

    /// Longest wait per send under 'block', in seconds; None otherwise.
    #[getter]
    fn block_timeout(&self) -> Option<f64> {
        match self.inner.overflow() {
            Overflow::Block { timeout } => Some(timeout.as_secs_f64()),
            _ => None,
        }
    }

    /// Creates a publisher (one per thread).
    fn publisher(&self, py: Python<'_>) -> PyResult<Publisher> {
        let inner = self
            .inner
            .publisher()
            .map_err(|e| errors::topic_error(py, e))?;
        Ok(Publisher {
            inner: Mutex::new(PubState {
                publisher: inner,
                loan_id: None,
                next_loan: 1,
            }),
            abandoned: AtomicU64::new(0),
            topic: self.inner.name().to_owned(),
            blocks: matches!(self.inner.overflow(), Overflow::Block { .. }),
        })
    }

    /// Creates a subscriber. `busy_poll=True` spins while waiting (lowest
    /// latency, one core busy); otherwise it sleeps on a futex after `spin`
    /// empty polls. `observer=True` makes it an observer: it never
    /// back-pressures a Reject/Block publisher, is not counted by publishers,
    /// and counts what it misses as its own overrun. `start`: 'durability'
    /// (default: on a transient-local topic the latched history first),
    /// 'next' (only what is published from now on) or 'oldest' (the oldest
    /// message each publisher's ring still holds).
    #[pyo3(signature = (*, busy_poll=false, spin=None, observer=false, start=None))]
    fn subscriber(
        &self,
        py: Python<'_>,
        busy_poll: bool,
        spin: Option<u32>,
        observer: bool,
        start: Option<&str>,
    ) -> PyResult<Subscriber> {
        let start = parse_start(start)?;
        let mode = if busy_poll {
            WaitMode::BusyPoll
        } else {
            WaitMode::Futex
        };
        let mut inner = self
            .inner
            .subscriber(mode, observer, start)
            .map_err(|e| errors::topic_error(py, e))?;
        if let Some(n) = spin {
            inner.set_spin(n);
        }
        Ok(Subscriber {
            inner: Mutex::new(inner),
            topic: self.inner.name().to_owned(),
        })
    }

    /// Counters of every endpoint of the topic, in every process.
    fn stats(&self) -> TopicStats {
        TopicStats::from(self.inner.stats())
    }

    fn __repr__(&self) -> String {
        format!(
            "<Topic {:?} {} {}>",
            self.inner.name(),
            self.schema,
            overflow_name(self.inner.overflow())
        )
    }
}

struct PubState {
    publisher: Box<dyn DynPublisher>,
    /// Id of the outstanding loan, if any.
    loan_id: Option<u64>,
    next_loan: u64,
}

/// Publishes messages given as raw bytes (the package's message objects).
#[pyclass(module = "horus._horus", frozen)]
pub(crate) struct Publisher {
    inner: Mutex<PubState>,
    /// Id of a loan whose `Loan` object was freed while another thread held
    /// `inner` (0: none; ids start at 1). Discarded at the next lock.
    abandoned: AtomicU64,
    topic: String,
    blocks: bool,
}

impl Publisher {
    fn state(&self) -> PyResult<MutexGuard<'_, PubState>> {
        let mut st = lock(&self.inner, "publisher")?;
        // Relaxed peek: the common case (nothing abandoned) costs a load.
        // Acquire swap: pairs with the Release store in `Loan::drop`.
        if self.abandoned.load(Ordering::Relaxed) != 0 {
            let id = self.abandoned.swap(0, Ordering::Acquire);
            if st.loan_id == Some(id) {
                st.publisher.drop_loan();
                st.loan_id = None;
            }
        }
        Ok(st)
    }

    fn err(&self, e: dynamic::SendFailure) -> PyErr {
        errors::send_error(&self.topic, e)
    }
}

#[pymethods]
impl Publisher {
    /// Publishes one message: `header` holds exactly its bytes; `tail` the
    /// variable-size data of messages that have one. Returns the number of
    /// subscribers reached (0: nobody listened; counted as undelivered).
    /// Raises a SendError subclass if the message was not published.
    #[pyo3(signature = (header, tail=None))]
    fn send(
        &self,
        py: Python<'_>,
        header: &Bound<'_, PyAny>,
        tail: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<u32> {
        let mut st = self.state()?;
        let p: &mut dyn DynPublisher = &mut *st.publisher;
        let blocks = self.blocks;
        let r = with_bytes(header, |h| match tail {
            None if blocks => Ok(py.detach(|| p.send(h, None))),
            None => Ok(p.send(h, None)),
            Some(t) => with_bytes(t, |t| {
                if blocks {
                    py.detach(|| p.send(h, Some(t)))
                } else {
                    p.send(h, Some(t))
                }
            }),
        })??;
        r.map_err(|e| self.err(e))
    }

    /// Loans shared memory for one message with `tail_len` tail bytes,
    /// initialised with `header`. Write the tail in place, then send the loan.
    #[pyo3(signature = (header, tail_len=0))]
    fn loan(slf: &Bound<'_, Self>, header: &Bound<'_, PyAny>, tail_len: usize) -> PyResult<Loan> {
        let this = slf.get();
        let mut st = this.state()?;
        if st.loan_id.is_some() {
            return Err(this.err(dynamic::SendFailure::LoanOutstanding));
        }
        let (ptr, len, tail_offset) =
            with_bytes(header, |h| st.publisher.loan(h, tail_len))?.map_err(|e| this.err(e))?;
        let id = st.next_loan;
        st.next_loan += 1;
        st.loan_id = Some(id);
        Ok(Loan {
            publisher: slf.clone().unbind(),
            addr: ptr.as_ptr() as usize,
            len,
            tail_offset,
            tail_len,
            id,
            exports: AtomicUsize::new(0),
        })
    }

    /// Raises SegmentLostError if another process truncated the topic's
    /// segment (this publisher is then dead: open the topic again).
    fn check(&self) -> PyResult<()> {
        self.state()?.publisher.check().map_err(|e| self.err(e))
    }

    /// Subscribers active now.
    #[getter]
    fn subscribers(&self) -> PyResult<u32> {
        self.state()?
            .publisher
            .subscribers()
            .map_err(|e| self.err(e))
    }

    /// Largest tail a message may carry on this topic (0 without a tail).
    #[getter]
    fn max_tail(&self) -> PyResult<usize> {
        self.state()?.publisher.max_tail().map_err(|e| self.err(e))
    }

    /// Topic name.
    #[getter]
    fn topic(&self) -> &str {
        &self.topic
    }

    /// This publisher's counters.
    fn stats(&self) -> PyResult<PublisherStats> {
        let s = self.state()?.publisher.stats().map_err(|e| self.err(e))?;
        Ok(PublisherStats {
            sent: s.sent,
            undelivered: s.undelivered,
            rejected: s.rejected,
            timed_out: s.timed_out,
            pool_exhausted: s.pool_exhausted,
            subscribers: s.subscribers,
        })
    }

    /// Counters of every endpoint of the topic, in every process.
    fn topic_stats(&self) -> PyResult<TopicStats> {
        let s = self
            .state()?
            .publisher
            .topic_stats()
            .map_err(|e| self.err(e))?;
        Ok(TopicStats::from(s))
    }
}

/// A message being written in place in shared memory. Export it as a buffer
/// (NumPy) to write the header and tail, then `send()` it, or `discard()`
/// it.
///
/// # Views never outlive the loan
///
/// Once sent, the memory belongs to the subscribers (Rust ones hold `&T`
/// into it); once discarded, to the pool, which recycles it for the next
/// loan. So no Python view of it may be writable afterwards. A buffer view
/// cannot be revoked (NumPy keeps the raw pointer), so the loan makes sure
/// none is alive instead:
///
/// * the memory is exported only through this object's buffer protocol,
///   and every export is counted (`__getbuffer__` +1, `__releasebuffer__`
///   −1). Any object that can reach the memory from Python — a NumPy
///   array, and every slice, reshape or `np.asarray` of it (they keep their
///   base array, hence its export, alive), a memoryview, a ctypes or
///   `Message` view — holds one export;
/// * `send()` and `discard()` refuse with `LoanViewsAliveError` while the
///   count is not zero, and the loan stays outstanding (its memory still
///   ours): a write through a live view lands in a message nobody reads yet;
/// * after `send()`/`discard()`, `__getbuffer__` refuses, so no new view
///   appears; with no view left, writing after the send is impossible;
/// * a `Loan` object freed while outstanding (its views hold references to
///   it, so none is alive then) discards its loan.
///
/// Counting is exact because exports and the check happen under the
/// publisher's lock; only raw addresses taken out of a view (`ctypes.data`)
/// escape it, and they are the caller's own unsafety.
#[pyclass(module = "horus._horus", frozen)]
pub(crate) struct Loan {
    publisher: Py<Publisher>,
    /// Start of the loaned region (header, padding, tail).
    addr: usize,
    len: usize,
    tail_offset: usize,
    tail_len: usize,
    id: u64,
    /// Buffer views of the region alive now.
    exports: AtomicUsize,
}

impl Loan {
    fn is_current(&self, st: &PubState) -> bool {
        st.loan_id == Some(self.id)
    }

    /// Refuses to give the memory up while views of it are alive.
    fn check_no_views(&self, py: Python<'_>, p: &Publisher, what: &str) -> PyResult<()> {
        // Acquire: pairs with the Release decrement in `__releasebuffer__`,
        // so the released views' writes happen before the memory is handed
        // on. Increments happen under the publisher lock, which we hold.
        let n = self.exports.load(Ordering::Acquire);
        if n == 0 {
            return Ok(());
        }
        let err = LoanViewsAliveError::new_err(format!(
            "topic {:?}: cannot {what} the loan: {n} view(s) of its memory are alive \
             (NumPy arrays or memoryviews made from it, e.g. `pts = msg.points`, and \
             their slices); writes through them after the {what} would reach memory \
             that is no longer ours. Delete them (`del pts`) first. The loan stays \
             outstanding (it is discarded when it and its views are freed).",
            p.topic
        ));
        // Setting an attribute on a fresh exception instance cannot fail.
        let _ = err.value(py).setattr("views", n);
        Err(err)
    }
}

#[pymethods]
impl Loan {
    /// Where the tail starts in the buffer.
    #[getter]
    fn tail_offset(&self) -> usize {
        self.tail_offset
    }

    /// Bytes of tail.
    #[getter]
    fn tail_len(&self) -> usize {
        self.tail_len
    }

    /// Whether the loan is still outstanding (not sent nor discarded).
    #[getter]
    fn active(&self, py: Python<'_>) -> PyResult<bool> {
        let p = self.publisher.bind(py).get();
        Ok(self.is_current(&*p.state()?))
    }

    /// Buffer views of the loaned memory alive now.
    #[getter]
    fn views(&self) -> usize {
        self.exports.load(Ordering::Relaxed)
    }

    /// Publishes the loan. Raises LoanViewsAliveError while views of it
    /// are alive, and the SendError on refusal (history full, timeout); the
    /// loan then stays outstanding.
    fn send(&self, py: Python<'_>) -> PyResult<u32> {
        let p = self.publisher.bind(py).get();
        let mut st = p.state()?;
        if !self.is_current(&st) {
            return Err(p.err(dynamic::SendFailure::NoLoan));
        }
        self.check_no_views(py, p, "send")?;
        // While we hold `st`, no view can be made (`__getbuffer__` takes
        // the same lock), also while the GIL is released below.
        let r = if p.blocks {
            let inner: &mut dyn DynPublisher = &mut *st.publisher;
            py.detach(|| inner.send_loan())
        } else {
            st.publisher.send_loan()
        };
        let n = r.map_err(|e| p.err(e))?;
        st.loan_id = None;
        Ok(n)
    }

    /// Returns the memory to the pool unsent (no-op if already sent).
    /// Raises LoanViewsAliveError while views of it are alive (the pool
    /// would hand it to the next loan); the loan then stays outstanding.
    fn discard(&self, py: Python<'_>) -> PyResult<()> {
        let p = self.publisher.bind(py).get();
        let mut st = p.state()?;
        if self.is_current(&st) {
            self.check_no_views(py, p, "discard")?;
            st.publisher.drop_loan();
            st.loan_id = None;
        }
        Ok(())
    }

    unsafe fn __getbuffer__(
        slf: Bound<'_, Self>,
        view: *mut ffi::Py_buffer,
        flags: c_int,
    ) -> PyResult<()> {
        let this = slf.get();
        let p = this.publisher.bind(slf.py()).get();
        let st = p.state()?;
        if !this.is_current(&st) {
            return Err(p.err(dynamic::SendFailure::NoLoan));
        }
        // SAFETY: the region is loaned memory of the publisher (its staging
        // buffer or a chunk of the mapped channel). It stays mapped while the
        // publisher lives, which the view guarantees through its reference
        // to this loan (which references the publisher). It is writable and
        // stays ours while the view lives: send and discard refuse while
        // `exports` (incremented below, under the same lock) is not zero.
        unsafe {
            export(
                slf.as_any(),
                view,
                this.addr as *mut u8,
                this.len,
                false,
                flags,
            )?;
        }
        // Relaxed: increments are ordered with the check in
        // `check_no_views` by the publisher lock held here.
        this.exports.fetch_add(1, Ordering::Relaxed);
        drop(st);
        Ok(())
    }

    unsafe fn __releasebuffer__(&self, _view: *mut ffi::Py_buffer) {
        // Release: the view's accesses to the memory happen before a send
        // or discard that sees the decremented count (Acquire there).
        // Called once per successful `__getbuffer__`, so this never wraps.
        self.exports.fetch_sub(1, Ordering::Release);
    }
}

impl Drop for Loan {
    /// A loan freed unsent goes back to the pool. Its views reference this
    /// object, so none is alive now.
    fn drop(&mut self) {
        // `get` needs no GIL (frozen, Sync), and Drop may run without it.
        let p = self.publisher.get();
        let mut st = match p.inner.try_lock() {
            Ok(st) => st,
            Err(TryLockError::Poisoned(e)) => e.into_inner(),
            // Another thread holds the publisher (and may wait for the GIL
            // we may hold): leave the id for its next `state()` to discard.
            // Release: pairs with the Acquire swap in `Publisher::state`.
            Err(TryLockError::WouldBlock) => {
                p.abandoned.store(self.id, Ordering::Release);
                return;
            }
        };
        if self.is_current(&st) {
            st.publisher.drop_loan();
            st.loan_id = None;
        }
    }
}

/// Receives messages as raw bytes (small messages) or `Sample`s (messages
/// read in place in shared memory).
#[pyclass(module = "horus._horus", frozen)]
pub(crate) struct Subscriber {
    inner: Mutex<Box<dyn DynSubscriber>>,
    topic: String,
}

fn wrap(py: Python<'_>, s: Box<dyn AnySample>) -> PyResult<Py<PyAny>> {
    if s.is_zero_copy() {
        Ok(Py::new(py, Sample { inner: s })?.into_any())
    } else {
        Ok(PyBytes::new(py, s.header()).into_any().unbind())
    }
}

impl Subscriber {
    fn sub(&self) -> PyResult<MutexGuard<'_, Box<dyn DynSubscriber>>> {
        lock(&self.inner, "subscriber")
    }
}

#[pymethods]
impl Subscriber {
    /// The next message if one is ready, else None. Never blocks.
    fn try_recv(&self, py: Python<'_>) -> PyResult<Option<Py<PyAny>>> {
        self.sub()?.try_recv().map(|s| wrap(py, s)).transpose()
    }

    /// Waits for the next message, at most `timeout` seconds (None: for
    /// ever). Releases the GIL while waiting and wakes up at least every
    /// 50 ms to let Python handle signals (KeyboardInterrupt).
    /// Raises RecvTimeoutError when the timeout expires.
    #[pyo3(signature = (timeout=None))]
    fn recv(&self, py: Python<'_>, timeout: Option<f64>) -> PyResult<Py<PyAny>> {
        let mut guard = self.sub()?;
        if let Some(s) = guard.try_recv() {
            return wrap(py, s);
        }
        let deadline = match timeout {
            Some(t) => Some(
                Instant::now()
                    + Duration::try_from_secs_f64(t).map_err(|_| {
                        PyValueError::new_err(format!("timeout must be >= 0 s, not {t}"))
                    })?,
            ),
            None => None,
        };
        let sub: &mut dyn DynSubscriber = &mut **guard;
        loop {
            let slice = match deadline {
                Some(d) => d
                    .saturating_duration_since(Instant::now())
                    .min(SIGNAL_SLICE),
                None => SIGNAL_SLICE,
            };
            if let Some(s) = py.detach(|| sub.recv_timeout(slice)) {
                return wrap(py, s);
            }
            if sub.check().is_err() {
                return Err(errors::segment_lost(py, &self.topic));
            }
            py.check_signals()?;
            if deadline.is_some_and(|d| Instant::now() >= d) {
                return Err(RecvTimeoutError::new_err(format!(
                    "topic {:?}: no message within {} s",
                    self.topic,
                    timeout.unwrap_or_default()
                )));
            }
        }
    }

    /// Skips to the newest message (older ones are counted as skipped);
    /// None if nothing new was published.
    fn latest(&self, py: Python<'_>) -> PyResult<Option<Py<PyAny>>> {
        self.sub()?.latest().map(|s| wrap(py, s)).transpose()
    }

    /// Publishers active now.
    #[getter]
    fn publishers(&self) -> PyResult<u32> {
        Ok(self.sub()?.publishers())
    }

    /// Raises SegmentLostError if another process truncated the topic's
    /// segment (this subscriber is then dead: open the topic again).
    /// try_recv keeps returning None in that case; recv raises it.
    fn check(&self, py: Python<'_>) -> PyResult<()> {
        self.sub()?
            .check()
            .map_err(|_| errors::segment_lost(py, &self.topic))
    }

    /// Topic name.
    #[getter]
    fn topic(&self) -> &str {
        &self.topic
    }

    /// This subscriber's counters.
    fn stats(&self) -> PyResult<SubscriberStats> {
        let s = self.sub()?.stats();
        Ok(SubscriberStats {
            received: s.received,
            overrun: s.overrun,
            skipped: s.skipped,
            malformed: s.malformed,
            publishers: s.publishers,
        })
    }

    /// Counters of every endpoint of the topic, in every process.
    fn topic_stats(&self) -> PyResult<TopicStats> {
        Ok(TopicStats::from(self.sub()?.topic_stats()))
    }
}

/// A message read in place in shared memory (read-only buffer: header,
/// padding, tail). The chunk is pinned while the sample or any view of it
/// is alive.
#[pyclass(module = "horus._horus", frozen)]
pub(crate) struct Sample {
    inner: Box<dyn AnySample>,
}

#[pymethods]
impl Sample {
    /// Where the tail starts in the buffer.
    #[getter]
    fn tail_offset(&self) -> usize {
        self.inner.tail_offset()
    }

    /// Bytes of tail.
    #[getter]
    fn tail_len(&self) -> usize {
        self.inner.tail_len()
    }

    /// Bytes of the fixed part.
    #[getter]
    fn header_len(&self) -> usize {
        self.inner.header().len()
    }

    unsafe fn __getbuffer__(
        slf: Bound<'_, Self>,
        view: *mut ffi::Py_buffer,
        flags: c_int,
    ) -> PyResult<()> {
        let region = slf.get().inner.region();
        // SAFETY: the region is pinned by the sample, which the view keeps
        // alive through its reference; read-only (other subscribers read it).
        unsafe {
            export(
                slf.as_any(),
                view,
                region.as_ptr().cast_mut(),
                region.len(),
                true,
                flags,
            )
        }
    }
}

/// Counters of one publisher (this endpoint only).
#[pyclass(module = "horus._horus", frozen, get_all)]
pub(crate) struct PublisherStats {
    /// Messages published.
    sent: u64,
    /// Messages published while no subscriber was active.
    undelivered: u64,
    /// Messages refused: history full under 'reject'.
    rejected: u64,
    /// Messages refused: no room within the 'block' timeout.
    timed_out: u64,
    /// Sends and loans refused: every chunk in use.
    pool_exhausted: u64,
    /// Subscribers active when read.
    subscribers: u32,
}

#[pymethods]
impl PublisherStats {
    fn __repr__(&self) -> String {
        format!(
            "PublisherStats(sent={}, undelivered={}, rejected={}, timed_out={}, pool_exhausted={}, subscribers={})",
            self.sent, self.undelivered, self.rejected, self.timed_out, self.pool_exhausted, self.subscribers
        )
    }
}

/// Counters of one subscriber (this endpoint only).
#[pyclass(module = "horus._horus", frozen, get_all)]
pub(crate) struct SubscriberStats {
    /// Messages received.
    received: u64,
    /// Messages overwritten before being read ('drop_oldest'): lost.
    overrun: u64,
    /// Messages passed over on purpose by latest().
    skipped: u64,
    /// Messages rejected as corrupt.
    malformed: u64,
    /// Publishers active when read.
    publishers: u32,
}

#[pymethods]
impl SubscriberStats {
    fn __repr__(&self) -> String {
        format!(
            "SubscriberStats(received={}, overrun={}, skipped={}, malformed={}, publishers={})",
            self.received, self.overrun, self.skipped, self.malformed, self.publishers
        )
    }
}

/// Counters of every active endpoint of a topic, in every process.
#[pyclass(module = "horus._horus", frozen)]
pub(crate) struct TopicStats {
    inner: horus::TopicStats,
}

impl From<horus::TopicStats> for TopicStats {
    fn from(inner: horus::TopicStats) -> Self {
        TopicStats { inner }
    }
}

#[pymethods]
impl TopicStats {
    /// Messages lost by all subscribers (overwritten or malformed).
    #[getter]
    fn lost(&self) -> u64 {
        self.inner.lost()
    }

    /// Messages refused to all publishers (rejected, timed out, no chunk).
    #[getter]
    fn refused(&self) -> u64 {
        self.inner.refused()
    }

    /// Per publisher place: place, pid, sent, rejected, timed_out,
    /// loan_failures, undelivered, head.
    #[getter]
    fn publishers<'py>(&self, py: Python<'py>) -> PyResult<Vec<Bound<'py, PyDict>>> {
        self.inner
            .snapshot
            .publishers
            .iter()
            .map(|p| {
                let d = PyDict::new(py);
                d.set_item("place", p.place)?;
                d.set_item("pid", p.pid)?;
                d.set_item("sent", p.sent)?;
                d.set_item("rejected", p.rejected)?;
                d.set_item("timed_out", p.timed_out)?;
                d.set_item("loan_failures", p.loan_failures)?;
                d.set_item("undelivered", p.undelivered)?;
                d.set_item("head", p.head)?;
                Ok(d)
            })
            .collect()
    }

    /// Per subscriber place: place, pid, received, overrun, skipped,
    /// malformed, backlog.
    #[getter]
    fn subscribers<'py>(&self, py: Python<'py>) -> PyResult<Vec<Bound<'py, PyDict>>> {
        self.inner
            .snapshot
            .subscribers
            .iter()
            .map(|s| {
                let d = PyDict::new(py);
                d.set_item("place", s.place)?;
                d.set_item("pid", s.pid)?;
                d.set_item("received", s.received)?;
                d.set_item("overrun", s.overrun)?;
                d.set_item("skipped", s.skipped)?;
                d.set_item("malformed", s.malformed)?;
                d.set_item("backlog", s.backlog)?;
                d.set_item("observer", u64::from(s.observer))?;
                Ok(d)
            })
            .collect()
    }

    fn __repr__(&self) -> String {
        format!(
            "TopicStats(publishers={}, subscribers={}, lost={}, refused={})",
            self.inner.publishers(),
            self.inner.subscribers(),
            self.inner.lost(),
            self.inner.refused()
        )
    }
}
