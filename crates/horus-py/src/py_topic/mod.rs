//! `Topic`, `Publisher`, `Loan`, `Subscriber`, `Sample` and the counters, as
//! seen from Python, one class per file. Messages cross as raw bytes; the
//! Python package turns them into message objects (NumPy views) built from
//! the schema tables. This file holds what they share: parsing the QoS
//! arguments and the per-thread lock of an endpoint.

mod loan;
mod publisher;
mod publisher_stats;
mod sample;
mod subscriber;
mod subscriber_stats;
mod topic;
mod topic_stats;

use std::time::Duration;

use horus::{Durability, Overflow, StartAt};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

pub(crate) use loan::Loan;
pub(crate) use publisher::Publisher;
pub(crate) use publisher_stats::PublisherStats;
pub(crate) use sample::Sample;
pub(crate) use subscriber::Subscriber;
pub(crate) use subscriber_stats::SubscriberStats;
pub(crate) use topic::Topic;
pub(crate) use topic_stats::TopicStats;

/// Longest stretch a blocking receive waits without the GIL before it
/// checks for signals (Ctrl-C).
pub(super) const SIGNAL_SLICE: Duration = Duration::from_millis(50);

pub(super) fn parse_overflow(
    overflow: Option<&str>,
    block_timeout: Option<f64>,
) -> PyResult<Option<Overflow>> {
    let timeout = || -> PyResult<Duration> {
        crate::seconds::timeout("block_timeout", block_timeout.unwrap_or(1.0))
    };
    Ok(match overflow {
        None if block_timeout.is_some() => Some(Overflow::Block {
            timeout: timeout()?,
        }),
        None => None,
        Some("drop_oldest") => Some(Overflow::DropOldest),
        Some("reject") => Some(Overflow::Reject),
        Some("block") => Some(Overflow::Block {
            timeout: timeout()?,
        }),
        Some(other) => {
            return Err(PyValueError::new_err(format!(
                "overflow must be 'drop_oldest', 'reject' or 'block', not {other:?}"
            )))
        }
    })
}

/// The durability a history depth from Python stands for (0: volatile).
pub(crate) fn durability_of(latched: u32) -> Durability {
    match latched {
        0 => Durability::Volatile,
        depth => Durability::TransientLocal { depth },
    }
}

/// A subscriber's start from Python: None or 'durability', 'next', 'oldest'.
pub(crate) fn parse_start(start: Option<&str>) -> PyResult<StartAt> {
    match start {
        None | Some("durability") => Ok(StartAt::Durability),
        Some("next") => Ok(StartAt::Next),
        Some("oldest") => Ok(StartAt::Oldest),
        Some(other) => Err(PyValueError::new_err(format!(
            "start must be 'durability', 'next' or 'oldest', not {other:?}"
        ))),
    }
}

pub(super) fn overflow_name(o: Overflow) -> &'static str {
    match o {
        Overflow::DropOldest => "drop_oldest",
        Overflow::Reject => "reject",
        Overflow::Block { .. } => "block",
    }
}
