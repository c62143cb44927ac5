//! The Foxglove WebSocket bridge: every topic of a horus namespace, live in Foxglove.
//!
//! [`Bridge::start`] listens for Foxglove clients (WebSocket subprotocol
//! `foxglove.websocket.v1`), advertises every topic of the namespace (new ones as they appear,
//! removed ones unadvertised) and streams those a client subscribes to. Standard messages map
//! to Foxglove's built-in schemas (JSON); every other type goes as CDR with the `ros2msg`
//! schema `horus-record` generates, which Foxglove decodes natively ([`schemas`]).
//!
//! The bridge is an observer: it never slows a publisher. A client that falls behind loses
//! messages from its own bounded queue, counted per client and topic ([`Bridge::stats`]).
//!
//! Who may connect is checked before the WebSocket upgrade ([`access`]: the page's origin,
//! the `Host` header on loopback, an optional token), and what a client can make the bridge
//! hold is capped ([`limits`]); refusals are counted ([`BridgeStats::refused`]).
//!
//! Why not the `foxglove` crate (Foxglove's SDK, 0.30): its WebSocket server brings an async
//! runtime (tokio, tokio-tungstenite, flume) and the crate always depends on protobuf (prost)
//! — a large cold compile for what is a handful of JSON messages and one binary frame type. This speaks the protocol over
//! `tungstenite` (synchronous, small), and writes data frames itself so that a payload is
//! never copied per client. See docs/foxglove.md.
//!
//! ```no_run
//! use horus_foxglove::{Bridge, BridgeOptions};
//! let bridge = Bridge::start(BridgeOptions::new("127.0.0.1:8765".parse().unwrap(), "demo"))?;
//! println!("open ws://{} in Foxglove", bridge.local_addr());
//! # Ok::<(), horus_foxglove::StartError>(())
//! ```

#![warn(missing_docs)]

pub mod access;
mod catch_up;
mod client;
mod client_msg;
pub mod discovery;
pub mod limits;
pub mod protocol;
pub mod schemas;
mod send;
mod server;
mod subs;

pub use access::{AccessPolicy, Refusal, Token, TokenError};
pub use limits::Limits;
pub use send::{MAX_QUEUED_BYTES, MAX_QUEUED_CONTROL, MAX_QUEUED_MESSAGES};
pub use server::{
    Bridge, BridgeOptions, BridgeStats, ClientStats, Event, StartError, EVENT_QUEUE, LOG_CHANNEL,
};
