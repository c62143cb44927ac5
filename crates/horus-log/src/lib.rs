//! horus-log: logging into a per-process shared-memory ring.
#![warn(missing_docs)]
