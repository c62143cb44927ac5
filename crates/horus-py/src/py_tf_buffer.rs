//! `TfBuffer` as seen from Python: a [`TfListener`] (the host's shared transform buffer,
//! fed by one process per host; or a per-process one fed by its own subscription) with
//! lookups returning plain tuples. `python/horus/_tf.py` wraps it as `horus.tf.Buffer`.

use std::sync::RwLock;
use std::time::Duration;

use horus_tf::{StampedTransform, TfListener};
use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;

use crate::py_tf_errors::lookup_error;

/// `((x, y, z), (qx, qy, qz, qw), stamp_ns)`.
type TransformTuple = ((f64, f64, f64), (f64, f64, f64, f64), i64);

fn tuple(t: &StampedTransform) -> TransformTuple {
    let [x, y, z] = t.transform.translation;
    let [qx, qy, qz, qw] = t.transform.rotation;
    ((x, y, z), (qx, qy, qz, qw), t.stamp_ns)
}

/// Transform lookups from a buffer kept filled from `tf` and `tf_static`.
#[pyclass(module = "horus._horus", frozen)]
pub(crate) struct TfBuffer {
    /// `None` once closed. Lookups take the read lock (many threads at once).
    listener: RwLock<Option<TfListener>>,
}

impl TfBuffer {
    fn with<R>(&self, f: impl FnOnce(&TfListener) -> R) -> PyResult<R> {
        let guard = self
            .listener
            .read()
            .map_err(|_| PyRuntimeError::new_err("tf buffer lock poisoned"))?;
        match guard.as_ref() {
            Some(l) => Ok(f(l)),
            None => Err(crate::endpoint::closed_error("tf buffer")),
        }
    }
}

#[pymethods]
impl TfBuffer {
    /// Opens the host's shared buffer of `namespace` (`per_process`: a buffer of this
    /// process's own, fed by its own subscription, as tf2 does).
    #[new]
    #[pyo3(signature = (namespace=None, per_process=false))]
    fn new(namespace: Option<String>, per_process: bool) -> PyResult<Self> {
        let ns = namespace.unwrap_or_else(horus_shm::name::namespace);
        let listener = if per_process {
            TfListener::per_process(&ns)
        } else {
            TfListener::open(&ns)
        }
        .map_err(|e| PyRuntimeError::new_err(e.to_string()))?;
        Ok(TfBuffer {
            listener: RwLock::new(Some(listener)),
        })
    }

    /// The transform mapping `source` coordinates into `target` at `time_ns` (0: the
    /// latest common time): `((x, y, z), (qx, qy, qz, qw), stamp_ns)`.
    fn lookup(
        &self,
        py: Python<'_>,
        target: &str,
        source: &str,
        time_ns: i64,
    ) -> PyResult<TransformTuple> {
        match self.with(|l| l.lookup_transform(target, source, time_ns))? {
            Ok(t) => Ok(tuple(&t)),
            Err(e) => Err(lookup_error(py, &e)),
        }
    }

    /// Whether `lookup` would succeed now.
    fn can_transform(&self, target: &str, source: &str, time_ns: i64) -> PyResult<bool> {
        self.with(|l| l.can_transform(target, source, time_ns))
    }

    /// `lookup`, retried as transforms arrive, for at most `timeout` seconds (the GIL is
    /// released while waiting); `TransformTimeoutError` with the last reason after it.
    fn wait(
        &self,
        py: Python<'_>,
        target: &str,
        source: &str,
        time_ns: i64,
        timeout: f64,
    ) -> PyResult<TransformTuple> {
        let timeout = crate::seconds::timeout("timeout", timeout)?;
        // Wait in slices so that Ctrl-C is seen.
        let end = std::time::Instant::now() + timeout;
        loop {
            let left = end.saturating_duration_since(std::time::Instant::now());
            let slice = left.min(Duration::from_millis(100));
            let r =
                py.detach(|| self.with(|l| l.wait_for_transform(target, source, time_ns, slice)))?;
            match r {
                Ok(t) => return Ok(tuple(&t)),
                Err(horus_tf::LookupError::Timeout { last, .. })
                    if !left.is_zero() && slice < left =>
                {
                    py.check_signals()?;
                    let _ = last;
                }
                Err(horus_tf::LookupError::Timeout { last, .. }) => {
                    return Err(lookup_error(
                        py,
                        &horus_tf::LookupError::Timeout {
                            waited: timeout,
                            last,
                        },
                    ))
                }
                Err(e) => return Err(lookup_error(py, &e)),
            }
        }
    }

    /// Whether this is the host's shared buffer (false: per-process).
    #[getter]
    fn is_shared(&self) -> PyResult<bool> {
        self.with(|l| l.buffer().is_shared())
    }

    /// Frame ids in the buffer.
    fn frames(&self) -> PyResult<Vec<String>> {
        self.with(|l| l.buffer().frames().into_iter().map(|f| f.name).collect())
    }

    /// The feeder's counters: (feeding, messages, accepted, refused, undecodable, missed).
    fn feeder_stats(&self) -> PyResult<(bool, u64, u64, u64, u64, u64)> {
        self.with(|l| {
            let s = l.stats();
            (
                s.feeding,
                s.messages,
                s.accepted,
                s.refused,
                s.undecodable,
                s.missed,
            )
        })
    }

    /// Stops the feeder and leaves the buffer (idempotent).
    fn close(&self, py: Python<'_>) -> PyResult<()> {
        let taken = self
            .listener
            .write()
            .map_err(|_| PyRuntimeError::new_err("tf buffer lock poisoned"))?
            .take();
        // Joining the feeder thread waits up to one wait slice: without the GIL.
        py.detach(move || drop(taken));
        Ok(())
    }
}
