//! Python exceptions, one per way an operation can fail, and the mapping
//! from the Rust error enums.

use pyo3::create_exception;
use pyo3::exceptions::PyException;
use pyo3::prelude::*;

use crate::dynamic::SendFailure;
use horus_tensor::{AllocError, AttachError, OpenError};

create_exception!(
    _horus,
    HorusError,
    PyException,
    "Base class of every horus error."
);
create_exception!(
    _horus,
    ClosedError,
    HorusError,
    "An endpoint was used after its close()."
);
create_exception!(
    _horus,
    TopicError,
    HorusError,
    "A topic could not be opened, or an endpoint created on it."
);
create_exception!(
    _horus,
    SchemaMismatchError,
    TopicError,
    "The topic exists with another message type. `expected` and `found` name both schemas."
);
create_exception!(
    _horus,
    QosMismatchError,
    TopicError,
    "The topic exists with other QoS or capacities than explicitly requested."
);
create_exception!(
    _horus,
    TopicFullError,
    TopicError,
    "Every publisher or subscriber place of the topic is held by a live endpoint."
);
create_exception!(
    _horus,
    InvalidTopicError,
    TopicError,
    "The request is invalid (topic name, capacities, message type)."
);
create_exception!(
    _horus,
    SegmentError,
    TopicError,
    "The shared-memory segment is missing, truncated, corrupt, or from an incompatible build."
);
create_exception!(
    _horus,
    SendError,
    HorusError,
    "A message was not published (it is never reported as sent)."
);
create_exception!(
    _horus,
    HistoryFullError,
    SendError,
    "Overflow.REJECT: a subscriber has not read the oldest message of the history."
);
create_exception!(
    _horus,
    SendTimeoutError,
    SendError,
    "Overflow.block(timeout): no room appeared within the timeout."
);
create_exception!(
    _horus,
    PoolExhaustedError,
    SendError,
    "Every loan chunk is in use (held by the history or by subscribers)."
);
create_exception!(
    _horus,
    LoanError,
    HorusError,
    "A loan could not be made or used (tail too large, loan outstanding, no loan)."
);
create_exception!(
    _horus,
    LoanViewsAliveError,
    LoanError,
    "send() or discard() of a loan while views of its memory (NumPy arrays, memoryviews) are alive; `views` counts them. The loan stays outstanding."
);
create_exception!(
    _horus,
    RecvTimeoutError,
    HorusError,
    "No message arrived within the timeout."
);
create_exception!(
    _horus,
    SegmentLostError,
    HorusError,
    "Another process truncated the topic's shared-memory segment: this endpoint is dead (`topic` names it). Open the topic again: it gets a fresh segment."
);
create_exception!(
    _horus,
    TensorPoolError,
    HorusError,
    "A tensor pool could not be opened, or a tensor allocated or attached."
);
create_exception!(
    _horus,
    StaleDescriptorError,
    TensorPoolError,
    "The descriptor names a tensor that was freed since, or another pool's slot."
);

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

create_exception!(
    _horus,
    ServiceError,
    HorusError,
    "A service could not be opened or used, or a call produced no response. Base class of the call errors."
);
create_exception!(
    _horus,
    NoServerError,
    ServiceError,
    "No server is running: reported at once, nothing was sent (or the request was withdrawn before any server took it)."
);
create_exception!(
    _horus,
    ServerDiedError,
    ServiceError,
    "The server that took the request died before answering (`pid` names it). Retrying may reach another server."
);
create_exception!(
    _horus,
    BusyError,
    ServiceError,
    "The client's request queue is full of unanswered calls (`in_flight` of them): nothing was sent."
);
create_exception!(
    _horus,
    CallTimeoutError,
    ServiceError,
    "No response within the timeout; the call was withdrawn (a late response is discarded and counted)."
);
create_exception!(
    _horus,
    UnansweredError,
    ServiceError,
    "The server dropped the request without replying."
);
create_exception!(
    _horus,
    ReplyFailedError,
    ServiceError,
    "The server tried to reply but could not send its response."
);

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
