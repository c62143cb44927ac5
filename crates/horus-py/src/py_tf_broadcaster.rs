//! `TfBroadcaster` as seen from Python: a [`TransformBroadcaster`] (`tf`) or a
//! [`StaticTransformBroadcaster`] (`tf_static`, latched), taking transforms as plain
//! tuples. `python/horus/_tf.py` wraps it as `horus.tf.TransformBroadcaster` and
//! `horus.tf.StaticTransformBroadcaster`.

use std::sync::Mutex;

use horus_tf::{time_of_ns, transform_stamped, StaticTransformBroadcaster, TransformBroadcaster};
use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;

use crate::py_tf_errors::broadcast_error;

/// `(parent, child, stamp_ns, (x, y, z), (qx, qy, qz, qw))`.
type TransformArg = (String, String, i64, (f64, f64, f64), (f64, f64, f64, f64));

enum Inner {
    Dynamic(TransformBroadcaster),
    Static(StaticTransformBroadcaster),
}

/// Publishes transforms on `tf` (or, `static`, on `tf_static`).
#[pyclass(module = "horus._horus", frozen)]
pub(crate) struct TfBroadcaster {
    inner: Mutex<Option<Inner>>,
}

#[pymethods]
impl TfBroadcaster {
    #[new]
    #[pyo3(signature = (namespace=None, is_static=false))]
    fn new(namespace: Option<String>, is_static: bool) -> PyResult<Self> {
        let ns = namespace.as_deref();
        let inner = if is_static {
            StaticTransformBroadcaster::open(ns).map(Inner::Static)
        } else {
            TransformBroadcaster::open(ns).map(Inner::Dynamic)
        }
        .map_err(|e| PyRuntimeError::new_err(e.to_string()))?;
        Ok(TfBroadcaster {
            inner: Mutex::new(Some(inner)),
        })
    }

    /// Publishes `transforms` in one message (each
    /// `(parent, child, stamp_ns, (x, y, z), (qx, qy, qz, qw))`); a transform tf refuses
    /// raises `InvalidTransformError` and nothing is sent.
    fn send(&self, py: Python<'_>, transforms: Vec<TransformArg>) -> PyResult<()> {
        let msgs: Vec<_> = transforms
            .iter()
            .map(|(parent, child, stamp, (x, y, z), (qx, qy, qz, qw))| {
                transform_stamped(
                    parent,
                    child,
                    time_of_ns(*stamp),
                    [*x, *y, *z],
                    [*qx, *qy, *qz, *qw],
                )
            })
            .collect();
        let mut guard = self
            .inner
            .lock()
            .map_err(|_| PyRuntimeError::new_err("broadcaster lock poisoned"))?;
        let r = match guard.as_mut() {
            Some(Inner::Dynamic(b)) => b.send_all(&msgs),
            Some(Inner::Static(b)) => b.send_all(&msgs),
            None => return Err(crate::endpoint::closed_error("broadcaster")),
        };
        r.map_err(|e| broadcast_error(py, &e))
    }

    /// Processes reading `tf` now (dynamic broadcasters; 0 for a static one).
    /// ClosedError once closed, as every other use.
    fn subscribers(&self) -> PyResult<u32> {
        let guard = self
            .inner
            .lock()
            .map_err(|_| PyRuntimeError::new_err("broadcaster lock poisoned"))?;
        match guard.as_ref() {
            Some(Inner::Dynamic(b)) => Ok(b.subscribers()),
            Some(_) => Ok(0),
            None => Err(crate::endpoint::closed_error("broadcaster")),
        }
    }

    /// Leaves the topic (a static broadcaster's transforms are no longer latched).
    fn close(&self) -> PyResult<()> {
        self.inner
            .lock()
            .map_err(|_| PyRuntimeError::new_err("broadcaster lock poisoned"))?
            .take();
        Ok(())
    }
}
