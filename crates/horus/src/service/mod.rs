//! Services: typed request/response over shared memory.
//!
//! A [`Service<Req, Resp>`] is opened by name like a topic; both types'
//! schemas are checked. [`Client`]s call it ([`Client::call`] with a
//! timeout always in force, or [`Client::call_async`] for several calls in
//! flight); [`Server`]s receive [`Request`]s and answer each exactly once.
//! Several servers share the load: each request is taken by exactly one.
//!
//! Built from the topic substrate (`horus-shm` channels), not a second
//! mechanism: requests travel on a request channel where each client is a
//! publisher (its ring is its request queue, its pool its request loans)
//! and each server a subscriber; each client answers arrive on a response
//! channel of its own where the servers publish. A small service table
//! holds both schemas, the per-call claim words servers take calls with,
//! and everybody's counters. See `docs/services.md` for the design and the
//! failure semantics.
//!
//! ```
//! use horus::prelude::*;
//! use std::time::Duration;
//! # std::env::set_var("HORUS_NAMESPACE", format!("doctest-svc-{}", std::process::id()));
//!
//! horus::message! {
//!     /// Two numbers to add.
//!     pub struct AddRequest: "example/AddRequest", version 1 {
//!         /// First term.
//!         pub a: i64,
//!         /// Second term.
//!         pub b: i64,
//!     }
//! }
//! horus::message! {
//!     /// Their sum.
//!     pub struct AddResponse: "example/AddResponse", version 1 {
//!         /// a + b.
//!         pub sum: i64,
//!     }
//! }
//!
//! let service = Service::<AddRequest, AddResponse>::open("math/add")?;
//! let mut server = service.server()?;
//! let mut client = service.client()?;
//!
//! let worker = std::thread::spawn(move || {
//!     let request = server.recv();
//!     let sum = request.a + request.b;
//!     request.reply(&AddResponse { sum }).expect("client waiting");
//! });
//!
//! let response = client.call(&AddRequest { a: 2, b: 3 }, Duration::from_secs(5)).unwrap();
//! assert_eq!(response.sum, 5);
//! worker.join().unwrap();
//! assert_eq!(client.stats().responses, 1);
//! # Ok::<(), horus::ServiceError>(())
//! ```

pub(crate) mod clean;
mod client;
mod client_core;
mod coarse_clock;
mod error;
mod layout;
mod liveness;
mod pending;
mod raw_client;
mod raw_request;
mod raw_server;
mod readiness;
mod receiver;
mod replier;
mod request;
mod server;
#[allow(clippy::module_inception)]
mod service;
mod snapshot;
mod stats;
mod table;
mod wire;

pub use client::{Client, DEFAULT_CALL_TIMEOUT};
pub use error::{CallError, ReplyError, ServiceError};
pub use pending::PendingCall;
pub use raw_client::RawClient;
pub use raw_request::{RawRequest, RemoteFailure};
pub use raw_server::{RawServer, MAX_RAW_TYPE_SIZE};
pub use readiness::ServerReadiness;
pub use request::Request;
pub use server::Server;
pub use service::{Service, ServiceBuilder};
pub use snapshot::{
    list_services, EndpointSnapshot, ListServicesError, ServiceListing, ServiceSnapshot,
};
pub use stats::{ClientStats, EndpointStats, ServerStats, ServiceStats};
