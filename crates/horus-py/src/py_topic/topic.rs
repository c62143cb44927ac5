//! `Topic`: a topic of one message type opened from Python, the factory of its
//! publishers and subscribers.

use horus::{Overflow, WaitMode};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

use super::{durability_of, overflow_name, parse_overflow, parse_start};
use super::{Publisher, Subscriber, TopicStats};
use crate::dynamic::{self, DynTopic, TopicOptions};
use crate::endpoint::Endpoint;
use crate::errors;

/// A topic of one message type (by schema name), opened or created with the
/// given QoS. Settings left as None adopt the topic's.
#[pyclass(module = "horus._horus", frozen)]
pub(crate) struct Topic {
    inner: Endpoint<Box<dyn DynTopic>>,
    name: String,
    schema: String,
    /// The topic's QoS, fixed when it was created.
    overflow: Overflow,
    latched: u32,
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
                name: inner.name().to_owned(),
                schema: schema.to_owned(),
                overflow: inner.overflow(),
                latched: inner.durability().latched(),
                inner: Endpoint::new(inner, "topic"),
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
        &self.name
    }

    /// Schema name of the message type.
    #[getter]
    fn schema(&self) -> &str {
        &self.schema
    }

    /// Overflow policy in force: 'drop_oldest', 'reject' or 'block'.
    #[getter]
    fn overflow(&self) -> &'static str {
        overflow_name(self.overflow)
    }

    /// Messages each publisher keeps for subscribers that join later
    /// (transient-local durability); 0 for a volatile topic.
    #[getter]
    fn durability(&self) -> u32 {
        self.latched
    }

    /// Longest wait per send under 'block', in seconds; None otherwise.
    #[getter]
    fn block_timeout(&self) -> Option<f64> {
        match self.overflow {
            Overflow::Block { timeout } => Some(crate::seconds::as_secs(timeout)),
            _ => None,
        }
    }

    /// Creates a publisher (one per thread).
    fn publisher(&self, py: Python<'_>) -> PyResult<Publisher> {
        let inner = self
            .inner
            .lock()?
            .publisher()
            .map_err(|e| errors::topic_error(py, e))?;
        Ok(Publisher::new(
            inner,
            self.name.clone(),
            matches!(self.overflow, Overflow::Block { .. }),
        ))
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
            .lock()?
            .subscriber(mode, observer, start)
            .map_err(|e| errors::topic_error(py, e))?;
        if let Some(n) = spin {
            inner.set_spin(n);
        }
        Ok(Subscriber::new(inner, self.name.clone()))
    }

    /// Counters of every endpoint of the topic, in every process.
    fn stats(&self) -> PyResult<TopicStats> {
        Ok(TopicStats::from(self.inner.lock()?.stats()))
    }

    /// Lets go of the topic now (its segment is removed if this was the last
    /// handle on it). Publishers and subscribers made from it are endpoints
    /// of their own and stay open. Any use after raises ClosedError.
    /// Idempotent.
    fn close(&self) {
        self.inner.close();
    }

    /// Whether `close()` was called.
    #[getter]
    fn closed(&self) -> bool {
        self.inner.is_closed()
    }

    fn __repr__(&self) -> String {
        format!(
            "<Topic {:?} {} {}{}>",
            self.name,
            self.schema,
            overflow_name(self.overflow),
            if self.inner.is_closed() {
                " closed"
            } else {
                ""
            }
        )
    }
}
