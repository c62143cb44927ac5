//! horus-log: logging that costs the calling thread nanoseconds.
//!
//! A log statement writes a compact binary record — a call-site id plus its raw argument
//! values — into this process's shared-memory ring, `/dev/shm/horus.<ns>.log.<pid>`,
//! without formatting, allocating, locking or blocking. Formatting happens in readers: a
//! background thread of the process prints human lines on stderr (configurable, see
//! [`Console`]), and `horus log` reads every process's ring — also a crashed one's, whose
//! segment stays until `horus log --clean`. A full ring drops the record and counts it.
//! The format and guarantees: `docs/logging.md`.
//!
//! ```
//! # std::env::set_var("HORUS_NAMESPACE", format!("doctest-log-{}", std::process::id()));
//! let _guard = horus_log::Builder::new().console(horus_log::Console::Off).init().unwrap();
//! let (id, speed) = (7u32, 0.5f64);
//! horus_log::info!("goal {} reached at {:.2} m/s", id, speed; attempts = 3u8, ok = true);
//! horus_log::warn!(target: "nav", "obstacle at {} m", 1.2f32);
//! horus_log::debug!("{}", horus_log::display(&std::net::Ipv4Addr::LOCALHOST));
//! // Dropping the guard prints what is left and removes the segment.
//! ```
//!
//! Arguments and field values are integers, floats, bools, chars and strings (copied), or
//! [`display`]/[`debug`] captures for other types (formatted into a bounded stack buffer).
//! The `log` facade and `tracing` are bridged in ([`LogBridge`], [`TracingLayer`]); those
//! records are formatted by the library before they arrive, so they may allocate: the fast
//! path is the macros.
#![warn(missing_docs)]
#![cfg_attr(loom, allow(dead_code, unused_imports))]

mod ring;
mod sync;

#[cfg(not(loom))]
mod abandon;
#[cfg(not(loom))]
mod bridge;
#[cfg(not(loom))]
mod callsite;
#[cfg(not(loom))]
mod clock;
#[cfg(all(fuzzing, not(loom)))]
#[doc(hidden)]
pub mod fuzz_api;
#[cfg(not(loom))]
mod layout;
#[cfg(not(loom))]
mod logger;
#[cfg(not(loom))]
mod macros;
#[cfg(not(loom))]
mod reader;
#[cfg(not(loom))]
mod record;
#[cfg(not(loom))]
mod sink;
#[cfg(not(loom))]
mod value;
#[cfg(not(loom))]
mod view;

#[cfg(not(loom))]
pub use bridge::{LogBridge, TracingLayer};
#[cfg(not(loom))]
pub use callsite::{CallSite, Meta, SiteInfo};
#[cfg(not(loom))]
pub use logger::{
    dropped, segment_name, set_level, shutdown, Builder, LogGuard, DEFAULT_RING_BYTES,
};
#[cfg(not(loom))]
pub use reader::{remove_dead, segments, Batch, Counters, LogSegment, SegmentEntry};
#[cfg(not(loom))]
pub use record::{format_time, render, render_counted, DecodeError, LogRecord, MAX_PRECISION};
#[cfg(not(loom))]
pub use sink::Console;
#[cfg(not(loom))]
pub use value::{debug, display, Captured, Out, Val, Value, Values, CAPTURE_LEN};

/// Internals the macros and bindings use.
#[cfg(not(loom))]
#[doc(hidden)]
pub mod __private {
    pub use crate::logger::__write;

    /// One bridged record (Python's handler, the `log` and `tracing` bridges).
    pub fn write_dynamic(
        level: crate::Level,
        target: &str,
        file: &str,
        line: u32,
        message: &str,
        fields: &[(&str, &dyn crate::Value)],
    ) {
        crate::logger::write_dynamic(level, target, file, line, message, fields)
    }
}

/// The lock-free ring protocol, for the loom model (`tests/loom_log.rs`).
#[cfg(loom)]
pub mod model {
    pub use crate::ring::model::ModelRing;
}

/// Severity of a record.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[repr(u8)]
pub enum Level {
    /// Very detailed tracing.
    Trace = 0,
    /// Debugging.
    Debug = 1,
    /// Normal operation.
    Info = 2,
    /// Something unexpected, handled.
    Warn = 3,
    /// Something failed.
    Error = 4,
}

impl Level {
    /// Upper-case name (`INFO`).
    pub fn name(self) -> &'static str {
        ["TRACE", "DEBUG", "INFO", "WARN", "ERROR"][self as usize]
    }

    /// From the stored number.
    pub fn from_u32(v: u32) -> Option<Level> {
        Some(match v {
            0 => Level::Trace,
            1 => Level::Debug,
            2 => Level::Info,
            3 => Level::Warn,
            4 => Level::Error,
            _ => return None,
        })
    }
}

impl std::str::FromStr for Level {
    type Err = String;
    fn from_str(s: &str) -> Result<Level, String> {
        Ok(match s.to_ascii_lowercase().as_str() {
            "trace" => Level::Trace,
            "debug" => Level::Debug,
            "info" => Level::Info,
            "warn" | "warning" => Level::Warn,
            "error" => Level::Error,
            _ => {
                return Err(format!(
                    "unknown level {s:?} (trace, debug, info, warn, error)"
                ))
            }
        })
    }
}

impl std::fmt::Display for Level {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// Why the logger could not start or a segment could not be read.
#[cfg(not(loom))]
#[derive(Debug, thiserror::Error)]
pub enum LogError {
    /// The namespace or segment name is invalid.
    #[error(transparent)]
    Name(#[from] horus_shm::NameError),
    /// Creating, opening or mapping the segment failed.
    #[error(transparent)]
    Segment(#[from] horus_shm::SegmentError),
    /// The segment is not a valid log segment of this build.
    #[error("{name}: not a valid log segment: {why}")]
    Invalid {
        /// Segment name.
        name: String,
        /// What is wrong.
        why: String,
    },
    /// A logger is already installed in this process.
    #[error("a logger is already installed in this process")]
    AlreadyInitialised,
    /// The drain thread could not be started.
    #[error("cannot start the log thread: {0}")]
    Thread(std::io::Error),
    /// `/dev/shm` could not be listed.
    #[error("cannot list /dev/shm: {0}")]
    List(std::io::Error),
}
