//! The exceptions of transform lookups and broadcasts (declared in
//! `python/horus/_errors.py`, where they subclass both `LookupError` and, for a
//! timeout, `TimeoutError`, as tf2's Python users catch them).

use horus_tf::{BroadcastError, LookupError};
use pyo3::prelude::*;

use crate::errors::{
    ConnectivityError, ExtrapolationError, FrameNotFoundError, InvalidTransformError,
    TransformError, TransformLoopError, TransformTimeoutError,
};

/// A failed lookup as `FrameNotFoundError`, `ConnectivityError`, `ExtrapolationError`,
/// `TransformLoopError`, `TransformTimeoutError` or `TransformError`.
pub(crate) fn lookup_error(_py: Python<'_>, e: &LookupError) -> PyErr {
    let message = e.to_string();
    match e {
        LookupError::UnknownFrame { .. } => FrameNotFoundError::new_err(message),
        LookupError::Disconnected { .. } => ConnectivityError::new_err(message),
        LookupError::ExtrapolationPast { .. } | LookupError::ExtrapolationFuture { .. } => {
            ExtrapolationError::new_err(message)
        }
        LookupError::Loop { .. } => TransformLoopError::new_err(message),
        LookupError::Timeout { .. } => TransformTimeoutError::new_err(message),
        _ => TransformError::new_err(message),
    }
}

/// A refused broadcast: `InvalidTransformError` (a `ValueError`) for a transform tf
/// refuses, `RuntimeError` for a failed publish.
pub(crate) fn broadcast_error(_py: Python<'_>, e: &BroadcastError) -> PyErr {
    match e {
        BroadcastError::Invalid { .. } => InvalidTransformError::new_err(e.to_string()),
        _ => pyo3::exceptions::PyRuntimeError::new_err(e.to_string()),
    }
}
