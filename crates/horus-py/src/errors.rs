//! The Python exceptions, and the mapping from the Rust error enums of
//! topics, services and tensor pools (actions: `action_errors.rs`,
//! parameters: `param_errors.rs`, transforms: `py_tf_errors.rs`, the ROS 2
//! codec: `ros/errors.rs`).
//!
//! Every exception class is declared once, in Python (`python/horus/_errors.py`),
//! where it can subclass the built-in a Python user catches (`TimeoutError`,
//! `KeyError`, `LookupError`, `ValueError`) besides `HorusError`; the types
//! below import it from there when an error is first raised. The module's
//! initialisation imports `horus._errors`, so these imports cannot fail later.

/// The classes of `horus._errors`, as Rust types (`X::new_err(message)`).
#[allow(unreachable_pub)]
mod classes {
    pyo3::import_exception!(horus._errors, HorusError);
    pyo3::import_exception!(horus._errors, ClosedError);
    pyo3::import_exception!(horus._errors, TopicError);
    pyo3::import_exception!(horus._errors, SchemaMismatchError);
    pyo3::import_exception!(horus._errors, QosMismatchError);
    pyo3::import_exception!(horus._errors, TopicFullError);
    pyo3::import_exception!(horus._errors, InvalidTopicError);
    pyo3::import_exception!(horus._errors, SegmentError);
    pyo3::import_exception!(horus._errors, SendError);
    pyo3::import_exception!(horus._errors, HistoryFullError);
    pyo3::import_exception!(horus._errors, SendTimeoutError);
    pyo3::import_exception!(horus._errors, PoolExhaustedError);
    pyo3::import_exception!(horus._errors, LoanError);
    pyo3::import_exception!(horus._errors, LoanViewsAliveError);
    pyo3::import_exception!(horus._errors, RecvTimeoutError);
    pyo3::import_exception!(horus._errors, SegmentLostError);
    pyo3::import_exception!(horus._errors, TensorPoolError);
    pyo3::import_exception!(horus._errors, StaleDescriptorError);
    pyo3::import_exception!(horus._errors, ServiceError);
    pyo3::import_exception!(horus._errors, NoServerError);
    pyo3::import_exception!(horus._errors, ServerDiedError);
    pyo3::import_exception!(horus._errors, BusyError);
    pyo3::import_exception!(horus._errors, CallTimeoutError);
    pyo3::import_exception!(horus._errors, UnansweredError);
    pyo3::import_exception!(horus._errors, ReplyFailedError);
    pyo3::import_exception!(horus._errors, ActionError);
    pyo3::import_exception!(horus._errors, ActionNoServerError);
    pyo3::import_exception!(horus._errors, ActionServerDiedError);
    pyo3::import_exception!(horus._errors, ActionTimeoutError);
    pyo3::import_exception!(horus._errors, GoalRejectedError);
    pyo3::import_exception!(horus._errors, UnknownGoalError);
    pyo3::import_exception!(horus._errors, ActionTypeError);
    pyo3::import_exception!(horus._errors, InvalidTransitionError);
    pyo3::import_exception!(horus._errors, ParamError);
    pyo3::import_exception!(horus._errors, ParamNotFoundError);
    pyo3::import_exception!(horus._errors, ParamTypeError);
    pyo3::import_exception!(horus._errors, ParamRangeError);
    pyo3::import_exception!(horus._errors, ParamDeclarationError);
    pyo3::import_exception!(horus._errors, ParamTooLargeError);
    pyo3::import_exception!(horus._errors, ParamYamlError);
    pyo3::import_exception!(horus._errors, CdrError);
    pyo3::import_exception!(horus._errors, CdrEncodeError);
    pyo3::import_exception!(horus._errors, CdrDecodeError);
    pyo3::import_exception!(horus._errors, InterfaceError);
    pyo3::import_exception!(horus._errors, TransformError);
    pyo3::import_exception!(horus._errors, FrameNotFoundError);
    pyo3::import_exception!(horus._errors, ConnectivityError);
    pyo3::import_exception!(horus._errors, ExtrapolationError);
    pyo3::import_exception!(horus._errors, TransformLoopError);
    pyo3::import_exception!(horus._errors, TransformTimeoutError);
    pyo3::import_exception!(horus._errors, InvalidTransformError);
}
pub(crate) use classes::*;

use pyo3::prelude::*;

use crate::dynamic::SendFailure;
use horus_tensor::{AllocError, AttachError, OpenError};

fn with_attrs(py: Python<'_>, err: PyErr, attrs: &[(&str, &str)]) -> PyErr {
    let value = err.value(py);
    for (k, v) in attrs {
        // Setting attributes on a fresh exception instance cannot fail.
        let _ = value.setattr(*k, *v);
    }
    err
}

/// Maps a topic error to its exception, with the details as attributes.
pub(crate) fn topic_error(py: Python<'_>, e: horus::TopicError) -> PyErr {
    let msg = e.to_string();
    match &e {
        horus::TopicError::SchemaMismatch {
            topic,
            expected,
            found,
        } => with_attrs(
            py,
            SchemaMismatchError::new_err(msg),
            &[("topic", topic), ("expected", expected), ("found", found)],
        ),
        horus::TopicError::QosMismatch {
            topic,
            found,
            requested,
        } => with_attrs(
            py,
            QosMismatchError::new_err(msg),
            &[("topic", topic), ("found", found), ("requested", requested)],
        ),
        horus::TopicError::Invalid { topic, .. } => {
            with_attrs(py, InvalidTopicError::new_err(msg), &[("topic", topic)])
        }
        horus::TopicError::Full { topic, .. } => {
            with_attrs(py, TopicFullError::new_err(msg), &[("topic", topic)])
        }
        horus::TopicError::Segment { topic, .. } => {
            with_attrs(py, SegmentError::new_err(msg), &[("topic", topic)])
        }
        horus::TopicError::NotFound(topic) => {
            with_attrs(py, SegmentError::new_err(msg), &[("topic", topic)])
        }
        horus::TopicError::SegmentLost { topic } => segment_lost(py, topic),
        // TopicError is non-exhaustive in spirit: keep a catch-all.
        #[allow(unreachable_patterns)]
        _ => TopicError::new_err(msg),
    }
}

/// The exception for an endpoint whose segment another process truncated.
pub(crate) fn segment_lost(py: Python<'_>, topic: &str) -> PyErr {
    with_attrs(
        py,
        SegmentLostError::new_err(format!(
            "topic {topic:?}: its shared-memory segment was truncated by another process; open the topic again"
        )),
        &[("topic", topic)],
    )
}

/// Maps a send failure to its exception.
pub(crate) fn send_error(topic: &str, e: SendFailure) -> PyErr {
    match e {
        SendFailure::Full => HistoryFullError::new_err(format!(
            "topic {topic:?}: history full (Overflow.REJECT): a subscriber has not read the oldest message; the message was not sent"
        )),
        SendFailure::Timeout(d) => SendTimeoutError::new_err(format!(
            "topic {topic:?}: history still full after {d:?} (Overflow.block); the message was not sent"
        )),
        SendFailure::PoolExhausted => PoolExhaustedError::new_err(format!(
            "topic {topic:?}: loan pool exhausted: every chunk is held by the history or by subscribers; the message was not sent"
        )),
        SendFailure::BadSize { got, expected } => pyo3::exceptions::PyValueError::new_err(
            format!("topic {topic:?}: got {got} bytes, the message type has {expected}"),
        ),
        SendFailure::TooLarge { requested, max } => LoanError::new_err(format!(
            "topic {topic:?}: tail of {} bytes; the topic allows at most {max} (max_tail_bytes)",
            requested.map_or_else(|| "too many".to_owned(), |n| n.to_string())
        )),
        SendFailure::LoanOutstanding => LoanError::new_err(format!(
            "topic {topic:?}: this publisher has an outstanding loan; send or discard it first"
        )),
        SendFailure::NoLoan => LoanError::new_err(format!(
            "topic {topic:?}: the loan was already sent or discarded"
        )),
        SendFailure::SegmentLost => Python::attach(|py| segment_lost(py, topic)),
    }
}

/// Maps a tensor pool's open error to its exception.
pub(crate) fn pool_open_error(e: OpenError) -> PyErr {
    match e {
        OpenError::InvalidConfig { .. } => pyo3::exceptions::PyValueError::new_err(e.to_string()),
        _ => TensorPoolError::new_err(e.to_string()),
    }
}

/// Maps a tensor pool's alloc error to its exception.
pub(crate) fn pool_alloc_error(e: AllocError) -> PyErr {
    match e {
        AllocError::TooLarge { .. } | AllocError::UnknownDtype(_) | AllocError::Shape(_) => {
            pyo3::exceptions::PyValueError::new_err(e.to_string())
        }
        AllocError::Exhausted { .. } | AllocError::Departed(_) => {
            TensorPoolError::new_err(e.to_string())
        }
    }
}

/// Maps a tensor pool's attach (acquire) error to its exception.
pub(crate) fn pool_attach_error(e: AttachError) -> PyErr {
    match e {
        AttachError::ForeignPool { .. }
        | AttachError::OutOfBounds { .. }
        | AttachError::Stale { .. } => StaleDescriptorError::new_err(e.to_string()),
        AttachError::Descriptor(_) => pyo3::exceptions::PyValueError::new_err(e.to_string()),
        AttachError::Contended { .. } | AttachError::Departed(_) => {
            TensorPoolError::new_err(e.to_string())
        }
    }
}

/// Maps a service open or endpoint error to its exception.
pub(crate) fn service_error(e: horus::ServiceError) -> PyErr {
    ServiceError::new_err(e.to_string())
}

/// Maps a call error to its exception, with the details as attributes.
pub(crate) fn call_error(py: Python<'_>, service: &str, e: horus::CallError) -> PyErr {
    let msg = format!("service {service:?}: {e}");
    let err = match &e {
        horus::CallError::NoServer(_) => NoServerError::new_err(msg),
        horus::CallError::ServerDied { pid } => {
            let err = ServerDiedError::new_err(msg);
            let _ = err.value(py).setattr("pid", *pid);
            err
        }
        horus::CallError::Busy { in_flight } => {
            let err = BusyError::new_err(msg);
            let _ = err.value(py).setattr("in_flight", *in_flight);
            err
        }
        horus::CallError::Timeout(_) => CallTimeoutError::new_err(msg),
        horus::CallError::Unanswered => UnansweredError::new_err(msg),
        horus::CallError::ReplyFailed => ReplyFailedError::new_err(msg),
        _ => ServiceError::new_err(msg),
    };
    with_attrs(py, err, &[("service", service)])
}

/// A descriptor that cannot be made, or whose dtype or shape cannot be
/// viewed, as a ValueError.
pub(crate) fn descriptor_error(e: horus_tensor::DescriptorError) -> PyErr {
    pyo3::exceptions::PyValueError::new_err(e.to_string())
}
