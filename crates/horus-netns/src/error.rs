//! The errors of this crate: why test hosts cannot exist here ([`Unavailable`]),
//! and what went wrong while making or changing them ([`NetnsError`]).

use std::process::ExitStatus;

/// Why two test hosts cannot be created on this machine; tests print it and skip.
#[derive(Debug, Clone, thiserror::Error)]
pub enum Unavailable {
    /// Network namespaces need root (CAP_SYS_ADMIN and CAP_NET_ADMIN).
    #[error("network namespaces need root; this process runs as uid {uid}")]
    NotRoot {
        /// The effective uid.
        uid: u32,
    },
    /// A command this crate runs is not installed.
    #[error("`{command}` is not installed (Debian package {package}): {reason}")]
    Missing {
        /// The command, e.g. `ip`.
        command: &'static str,
        /// The Debian package that provides it.
        package: &'static str,
        /// What running it said.
        reason: String,
    },
    /// The kernel or the container refused a namespace operation.
    #[error("a throwaway network namespace could not be {step}: {reason}")]
    Refused {
        /// `created` or `deleted`.
        step: &'static str,
        /// The command's error output.
        reason: String,
    },
}

/// A failure while creating, changing or entering test hosts.
#[derive(Debug, thiserror::Error)]
pub enum NetnsError {
    /// The machine cannot host namespaces, or a needed tool is missing.
    #[error(transparent)]
    Unavailable(#[from] Unavailable),
    /// A tag may only hold lowercase ASCII letters and digits, 1 to 8 of them.
    #[error("bad host tag {0:?}: 1 to 8 characters of [a-z0-9]")]
    BadTag(String),
    /// A command could not be started.
    #[error("running `{command}`: {source}")]
    Spawn {
        /// The command line.
        command: String,
        /// The OS error.
        source: std::io::Error,
    },
    /// A command ran and failed.
    #[error("`{command}` failed ({status}): {stderr}")]
    Command {
        /// The command line.
        command: String,
        /// How it exited.
        status: ExitStatus,
        /// Its error output, trimmed.
        stderr: String,
    },
    /// `setns` into a namespace failed.
    #[error("entering network namespace {name}: {source}")]
    Enter {
        /// The namespace name.
        name: String,
        /// The OS error.
        source: std::io::Error,
    },
    /// A percentage above 100 or a zero rate.
    #[error("bad impairment: {0}")]
    BadImpairment(String),
}
