//! `Topic`: a topic of one message type opened from Python, the factory of its
//! publishers and subscribers.

use std::sync::atomic::AtomicU64;
use std::sync::Mutex;

use horus::{Overflow, WaitMode};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

use super::publisher::PubState;
use super::{durability_of, overflow_name, parse_overflow, parse_start};
use super::{Publisher, Subscriber, TopicStats};
use crate::dynamic::{self, DynTopic, TopicOptions};
use crate::errors;

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
