//! The Foxglove WebSocket bridge (work in progress).
#![warn(missing_docs)]
