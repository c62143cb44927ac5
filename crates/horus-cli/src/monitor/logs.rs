//! The latest log lines of the namespace's processes, for the log pane.
//!
//! Not wired yet: `horus-log` (the shared-memory log rings and their reader) is being
//! written; until the monitor reads it, the pane says so.

/// Why the log pane is empty.
pub(crate) const UNAVAILABLE: &str =
    "logging is not available in this build of horus monitor (no horus-log reader wired in yet)";

/// The newest `_max` log lines of `_namespace`, oldest first, or why there are none.
pub(crate) fn latest(_namespace: &str, _max: usize) -> Result<Vec<String>, String> {
    Err(UNAVAILABLE.into())
}
