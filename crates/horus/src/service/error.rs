//! Typed errors of services: one enum per operation.

use std::time::Duration;

use horus_shm::OpenError;

/// Why a service handle or an endpoint (client, server) could not be made.
#[derive(Debug, thiserror::Error)]
pub enum ServiceError {
    /// The service exists with other request or response types. Names both
    /// pairs.
    #[error(
        "service {service:?} carries requests {found_request} and responses {found_response}, \
         not {expected_request} and {expected_response}"
    )]
    SchemaMismatch {
        /// Service name.
        service: String,
        /// Request type this process asked for.
        expected_request: String,
        /// Response type this process asked for.
        expected_response: String,
        /// Request type the service has.
        found_request: String,
        /// Response type the service has.
        found_response: String,
    },
    /// A setting made explicitly differs from the existing service's.
    #[error("service {service:?} exists with {found}, not {requested}")]
    ConfigMismatch {
        /// Service name.
        service: String,
        /// The existing configuration.
        found: String,
        /// The requested one.
        requested: String,
    },
    /// A bad name or setting.
    #[error("service {service:?}: {reason}")]
    Invalid {
        /// Service name.
        service: String,
        /// What is wrong.
        reason: String,
    },
    /// Every client or server place is taken.
    #[error("service {service:?}: all {max} {role} places are taken")]
    Full {
        /// Service name.
        service: String,
        /// `"client"` or `"server"`.
        role: &'static str,
        /// Places the service has for that role.
        max: u32,
    },
    /// The client place this endpoint was given is held by a live process
    /// that marked itself as reclaiming it and has not finished for longer
    /// than any reclaim takes (a stopped or hostile process). Nothing was
    /// joined; retrying after that process ends (or continues) succeeds.
    #[error(
        "service {service:?}: client place {place} is held by process {pid}, \
         which is reclaiming it and does not finish"
    )]
    PlaceStuck {
        /// Service name.
        service: String,
        /// The place.
        place: usize,
        /// Process id of the holder.
        pid: u32,
    },
    /// A shared-memory segment could not be created, opened or validated.
    #[error("service {service:?}: {source}")]
    Segment {
        /// Service name.
        service: String,
        /// The underlying error.
        #[source]
        source: OpenError,
    },
}

/// Why a call produced no response. Each outcome is counted in the
/// client's stats (and so visible from every process).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CallError {
    /// No server is running: reported at once, nothing was sent (or the
    /// request was withdrawn before any server took it).
    #[error("no server for service {0:?}")]
    NoServer(String),
    /// The server that took the request died before answering. The
    /// request was not answered; retrying may reach another server.
    #[error("the server (pid {pid}) died holding the request")]
    ServerDied {
        /// Process id of the dead server.
        pid: u32,
    },
    /// The client's request queue is full of unanswered calls (at most
    /// `in_flight` at once): nothing was sent.
    #[error("request queue full: {in_flight} calls already in flight")]
    Busy {
        /// The service's queue depth per client.
        in_flight: u32,
    },
    /// No response within the timeout; the call was withdrawn and a late
    /// response will be discarded (and counted as `late`).
    #[error("no response within {0:?}")]
    Timeout(Duration),
    /// The server dropped the request without replying.
    #[error("the server dropped the request unanswered")]
    Unanswered,
    /// The server tried to reply but could not (response larger than the
    /// service allows, or its loan pool was exhausted).
    #[error("the server failed to send its response")]
    ReplyFailed,
    /// The request (its tail) is larger than the service allows.
    #[error("request of {requested} tail bytes exceeds the service's {max}")]
    TooLarge {
        /// Tail bytes asked for.
        requested: usize,
        /// Largest tail the service allows for requests.
        max: usize,
    },
    /// Every request chunk of this client is in use.
    #[error("request loan pool exhausted")]
    PoolExhausted,
    /// This pending call's result was already taken.
    #[error("the call's result was already taken")]
    Taken,
    /// The caller's `stop` condition held while the call waited
    /// ([`Client::call_or_stop`](super::Client::call_or_stop),
    /// [`PendingCall::wait_or_stop`](super::PendingCall::wait_or_stop),
    /// [`RawClient::call_or_stop`](super::RawClient::call_or_stop)): the call was
    /// withdrawn (counted as `cancelled`; a response that still comes is discarded and
    /// counted as `late`).
    #[error("the call was stopped while it waited, and withdrawn")]
    Stopped,
}

/// Why a reply was not delivered. The request counts as answered either
/// way (a reply is attempted exactly once).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ReplyError {
    /// The client left or died: the response was dropped and counted
    /// (`client_gone` in the server's stats).
    #[error("the client is gone; response dropped")]
    ClientGone,
    /// The response's tail is larger than the service allows; the client is
    /// told (`CallError::ReplyFailed`).
    #[error("response of {requested} tail bytes exceeds the service's {max}")]
    TooLarge {
        /// Tail bytes asked for.
        requested: usize,
        /// Largest tail the service allows for responses.
        max: usize,
    },
    /// Every response chunk for this client is in use; the client is told.
    #[error("response loan pool exhausted")]
    PoolExhausted,
    /// A raw reply's length fits no response of the service's type
    /// (shorter than its fixed part, or longer when the type has no tail);
    /// the client is told (`CallError::ReplyFailed`).
    #[error("a response of {len} bytes does not fit the {size}-byte response type")]
    WrongSize {
        /// Bytes given.
        len: usize,
        /// Size of the response type's fixed part.
        size: usize,
    },
}
