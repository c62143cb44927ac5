//! Rust types from ROS 2 interface definitions (`.msg`, `.srv`, `.action`), for
//! `horus-ros-msgs`, users' build scripts ([`Builder`]) and `horus msg gen`
//! ([`generate_rust`]).
//!
//! For each structure (a message, or a request, response, event, goal, … that a
//! service or action implies) the generated code has:
//!
//! - an owned struct (`String`, `Vec<T>`, `[T; N]`, nested structs) with ROS 2's
//!   default values in `Default`, constants as associated consts, and the `.msg`
//!   comments as docs; field names that are Rust keywords are raw (`r#type`);
//! - `impl horus_cdr::RosMessage`: type name, RIHS01 hash and `ros2msg` definition
//!   (computed by `horus-idl` when generating), a CDR writer that checks bounds and
//!   strings, and a reader that checks every count before allocating;
//! - a `FooView<'a>`: checked once when made, then accessors that cannot fail —
//!   numbers by value, strings as `&'a str`, numeric arrays and sequences as `&'a [T]`
//!   in place, `bool` ones as `BoolsView<'a>` (bytes read as `!= 0`, never an invalid
//!   `bool` if shared memory is rewritten), nested messages as their views, arrays and
//!   sequences of strings and structures as `SeqView`s; and `From<FooView> for Foo`.
//!
//! Modules mirror ROS 2's names: `pkg::msg::Foo`, `pkg::srv::Foo_Request` /
//! `_Response` / `_Event` plus a marker `pkg::srv::Foo` (`RosService`),
//! `pkg::action::Foo_Goal` / `_Result` / `_Feedback` / `_FeedbackMessage` /
//! `_SendGoal_Request` / … plus markers `Foo` (`RosAction`), `Foo_SendGoal`,
//! `Foo_GetResult`.

#![warn(missing_docs)]

mod builder;
mod context;
mod docs;
mod emit_blocks;
mod emit_codec;
mod emit_module;
mod emit_struct;
mod emit_view;
mod error;
mod generate;
mod literal;
mod names;
mod options;
mod types;

pub use builder::Builder;
pub use error::GenError;
pub use generate::generate_rust;
pub use options::GenOptions;
