//! `TopicStats`: the counters of every endpoint of a topic.

use pyo3::prelude::*;
use pyo3::types::PyDict;

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
