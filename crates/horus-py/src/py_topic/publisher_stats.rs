//! `PublisherStats`: one publisher's counters.

use pyo3::prelude::*;

/// Counters of one publisher (this endpoint only).
#[pyclass(module = "horus._horus", frozen, get_all)]
pub(crate) struct PublisherStats {
    /// Messages published.
    pub(super) sent: u64,
    /// Messages published while no subscriber was active.
    pub(super) undelivered: u64,
    /// Messages refused: history full under 'reject'.
    pub(super) rejected: u64,
    /// Messages refused: no room within the 'block' timeout.
    pub(super) timed_out: u64,
    /// Sends and loans refused: every chunk in use.
    pub(super) pool_exhausted: u64,
    /// Subscribers active when read.
    pub(super) subscribers: u32,
}

#[pymethods]
impl PublisherStats {
    fn __repr__(&self) -> String {
        format!(
            "PublisherStats(sent={}, undelivered={}, rejected={}, timed_out={}, pool_exhausted={}, subscribers={})",
            self.sent, self.undelivered, self.rejected, self.timed_out, self.pool_exhausted, self.subscribers
        )
    }
}
