//! The exceptions of transform lookups and broadcasts, raised as the classes
//! `python/horus/_tf.py` defines (so that they can subclass both `LookupError` and
//! `TimeoutError`, as tf2's Python users catch them): looked up there when an error is
//! raised, never on the success path.

use horus_tf::{BroadcastError, LookupError};
use pyo3::prelude::*;

/// A `horus._tf` exception class called with `message`.
fn raise(py: Python<'_>, class: &str, message: String) -> PyErr {
    let made = py
        .import("horus._tf")
        .and_then(|m| m.getattr(class))
        .and_then(|c| c.call1((message.clone(),)));
    match made {
        Ok(e) => PyErr::from_value(e),
        // The package is not importable (the native module used on its own): a LookupError.
        Err(_) => pyo3::exceptions::PyLookupError::new_err(message),
    }
}

/// A failed lookup as `FrameNotFoundError`, `ConnectivityError`, `ExtrapolationError`,
/// `TransformLoopError`, `TransformTimeoutError` or `TransformError`.
pub(crate) fn lookup_error(py: Python<'_>, e: &LookupError) -> PyErr {
    let class = match e {
        LookupError::UnknownFrame { .. } => "FrameNotFoundError",
        LookupError::Disconnected { .. } => "ConnectivityError",
        LookupError::ExtrapolationPast { .. } | LookupError::ExtrapolationFuture { .. } => {
            "ExtrapolationError"
        }
        LookupError::Loop { .. } => "TransformLoopError",
        LookupError::Timeout { .. } => "TransformTimeoutError",
        _ => "TransformError",
    };
    raise(py, class, e.to_string())
}

/// A refused broadcast: `InvalidTransformError` (a `ValueError`) for a transform tf
/// refuses, `TransformError` for a failed publish.
pub(crate) fn broadcast_error(py: Python<'_>, e: &BroadcastError) -> PyErr {
    match e {
        BroadcastError::Invalid { .. } => raise(py, "InvalidTransformError", e.to_string()),
        _ => pyo3::exceptions::PyRuntimeError::new_err(e.to_string()),
    }
}
