//! horus across hosts, through Zenoh.
//!
//! One bridge per host ([`Bridge`]) holds one Zenoh session and speaks shared memory
//! locally: a message crosses the network once per host that wants it, whatever the number
//! of subscribers there. Processes on either host use the ordinary horus API and never see
//! Zenoh. The architecture, key expressions and wire format are in `docs/multi-host.md`.
//!
//! What crosses:
//! * a topic published on host A crosses to host B only while B has a subscriber for it (each
//!   bridge declares Zenoh liveliness tokens for what its host offers and wants, so interest
//!   follows processes coming and going, and a host that disappears takes its tokens along);
//! * a service served on host A is served on host B by B's bridge (a raw server standing for
//!   the remote one), calls travelling as Zenoh queries.
//!
//! Semantics kept: schema id and layout hash travel with every offer, want and message, and a
//! mismatch is a typed error at both ends ([`TopicIssue::SchemaMismatch`]); `Block` topics are
//! carried reliably with congestion control `Block` (back-pressure reaches the publisher),
//! `DropOldest` topics with congestion control `Drop`; every message carries the sending
//! bridge's sequence number, so what the network dropped is counted as loss at the receiving
//! bridge ([`TopicCounters::wire_lost`]).

mod allocator;
mod auth;
mod bridge;
mod config;
mod describer;
mod error;
mod filter;
mod history_fetch;
mod history_serve;
mod inbound;
mod keys;
mod latched_copy;
mod limits;
mod local;
mod outbound;
mod policy;
mod refusals;
mod remote;
mod service_in;
mod service_out;
mod session;
mod status;
mod topic_shape;
mod wire;
mod worker;

pub use allocator::tune_allocator_for_bridge;
pub use auth::{AuthConfig, AuthError, TlsAuth, UserAuth, MAX_AUTH_HOSTS};
pub use bridge::Bridge;
pub use config::{endpoint_of, BridgeConfig, ConfigError, DEFAULT_PORT, MAX_CONCURRENT_CALLS};
pub use error::BridgeError;
pub use filter::{Filter, PatternError};
pub use limits::Limits;
pub use policy::{Policy, PROTECTED_SERVICES};
pub use status::{
    read_status_file, status_file_path, BridgeStatus, HostRefusals, PeerStatus, ServiceCounters,
    ServiceStatus, StatusReadError, TopicCounters, TopicIssue, TopicRefusal, TopicStatus,
};
pub use wire::{WireError, WireHeader, HEADER_LEN};
