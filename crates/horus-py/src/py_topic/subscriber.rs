//! `Subscriber`: receives messages as bytes or in-place `Sample`s.

use std::time::Instant;

use pyo3::prelude::*;
use pyo3::types::PyBytes;

use super::{Sample, SubscriberStats, TopicStats, SIGNAL_SLICE};
use crate::dynamic::{AnySample, DynSubscriber};
use crate::endpoint::{closed_error, Endpoint, Open};
use crate::errors::{self, RecvTimeoutError};

/// Receives messages as raw bytes (small messages) or `Sample`s (messages
/// read in place in shared memory).
#[pyclass(module = "horus._horus", frozen)]
pub(crate) struct Subscriber {
    pub(super) inner: Endpoint<Box<dyn DynSubscriber>>,
    pub(super) topic: String,
}

/// Fixed-size messages up to this size reach Python as a copy (`bytes`), wherever they
/// travel: `horus::COPY_OUT_MAX`, the rule service receivers follow too. They travelled
/// inline up to this size before `horus::INLINE_MAX` went down to 512 B; a Python program
/// that keeps received messages (a list for a plot) would otherwise now pin a loan chunk per
/// message it keeps and make the publisher's next loan fail (`PoolExhausted`). The copy of at
/// most 2 KiB costs little beside Python's own overhead.
const PY_COPY_MAX: usize = horus::COPY_OUT_MAX;

fn wrap(py: Python<'_>, s: Box<dyn AnySample>) -> PyResult<Py<PyAny>> {
    let small_fixed = s.tail_len() == 0 && s.header().len() <= PY_COPY_MAX;
    if s.is_zero_copy() && !small_fixed {
        Ok(Py::new(py, Sample { inner: s })?.into_any())
    } else {
        Ok(PyBytes::new(py, s.header()).into_any().unbind())
    }
}

impl Subscriber {
    pub(super) fn new(inner: Box<dyn DynSubscriber>, topic: String) -> Self {
        Subscriber {
            inner: Endpoint::new(inner, "subscriber"),
            topic,
        }
    }

    fn sub(&self) -> PyResult<Open<'_, Box<dyn DynSubscriber>>> {
        self.inner.lock()
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
        let deadline = crate::seconds::deadline("timeout", timeout)?;
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
            if self.inner.is_closed() {
                // Closed by another thread while we waited: the state goes
                // when `guard` does.
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

    /// Leaves the topic now: this subscriber's place is released and any use
    /// after raises ClosedError. Samples already received stay readable
    /// (each pins its own message). From another thread, a `recv` waiting on
    /// this subscriber raises ClosedError within 50 ms. Idempotent.
    fn close(&self) {
        self.inner.close();
    }

    /// Whether `close()` was called.
    #[getter]
    fn closed(&self) -> bool {
        self.inner.is_closed()
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
