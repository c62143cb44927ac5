//! ROS 2 interface types on horus topics and services, zero-copy and byte-identical to
//! ROS 2's wire bytes.
//!
//! A type generated from a `.msg`/`.srv` file (`horus_ros_msgs`, or `horus-idl-gen` in a
//! build script) implements [`RosMessage`](horus_cdr::RosMessage); wrapped in [`Ros`] it is
//! a horus message: `Topic<Ros<Image>>`, `Service<Ros<AddTwoInts_Request>,
//! Ros<AddTwoInts_Response>>`. Each message travels in one pool chunk:
//!
//! ```text
//! chunk + 0   [0 0 0 0]        reserved
//! chunk + 4   [00 01 00 00]    CDR encapsulation header (little-endian plain CDR)
//! chunk + 8   CDR body …       8-byte aligned: CDR alignment == memory alignment
//! ```
//!
//! - [`Publisher::publish`](crate::Publisher::publish) loans a chunk and encodes the body
//!   into it in one pass (every encoding check on the way; an error sends nothing and
//!   returns the chunk); [`Publisher::loan_encoded`](crate::Publisher::loan_encoded) stops
//!   before sending.
//! - [`Sample::view`](crate::Sample::view) reads it in place (`&str`, `&[f32]`, nested
//!   views), [`Sample::decode`](crate::Sample::decode) copies it out,
//!   [`Sample::cdr`](crate::Sample::cdr) gives the wire bytes (`chunk[4..len]`).
//! - The largest body is the topic's `max_tail_bytes` (default 1 MiB): raise it with
//!   [`TopicBuilder::max_tail_bytes`](crate::TopicBuilder::max_tail_bytes) for images
//!   and point clouds; a larger message is [`RosSendError::TooLarge`] and nothing is sent.
//! - The topic's description carries the type's ROS name, RIHS01 hash and `ros2msg`
//!   definition ([`horus_msgs::Ros2Type`]), so tools decode it without the type;
//!   [`inspect`](crate::inspect) opens, publishes and reads ROS-typed topics whose type is
//!   known only at run time.
//!
//! A received message's bytes are checked when viewed or decoded, not when received: a
//! publisher that sends bytes that are not a valid message of the type gives its
//! subscribers a [`DecodeError`](horus_cdr::DecodeError) from `view`/`decode` (the sample
//! was received and counted; the subscriber carries on).

mod error;
mod frame;
mod publish;
mod sample;
mod service;

pub use error::{RosCallError, RosReplyError, RosSendError};
pub use frame::Ros;
pub use service::RosSrv;
