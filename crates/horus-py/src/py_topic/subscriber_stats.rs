//! `SubscriberStats`: one subscriber's counters.

use pyo3::prelude::*;

/// Counters of one subscriber (this endpoint only).
#[pyclass(module = "horus._horus", frozen, get_all)]
pub(crate) struct SubscriberStats {
    /// Messages received.
    pub(super) received: u64,
    /// Messages overwritten before being read ('drop_oldest'): lost.
    pub(super) overrun: u64,
    /// Messages passed over on purpose by latest().
    pub(super) skipped: u64,
    /// Messages rejected as corrupt.
    pub(super) malformed: u64,
    /// Publishers active when read.
    pub(super) publishers: u32,
}

#[pymethods]
impl SubscriberStats {
    fn __repr__(&self) -> String {
        format!(
            "SubscriberStats(received={}, overrun={}, skipped={}, malformed={}, publishers={})",
            self.received, self.overrun, self.skipped, self.malformed, self.publishers
        )
    }
}
