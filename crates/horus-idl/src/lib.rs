//! ROS 2 interface definitions for horus: the `.msg`, `.srv` and `.action` languages,
//! resolution of types across packages, and type identity as ROS 2 has it — the type
//! name (`sensor_msgs/msg/Image`) and the RIHS01 type hash computed from the type
//! description exactly as `rosidl_generator_type_description` computes it.
//!
//! ```
//! use horus_idl::InterfaceSet;
//!
//! let set = InterfaceSet::standard().unwrap();
//! let resolved = set.resolve().unwrap();
//! let hash = resolved.type_hash("std_msgs/msg/Header").unwrap();
//! assert!(hash.to_string().starts_with("RIHS01_"));
//! ```
//!
//! The standard packages ([`STANDARD_PACKAGES`]) are vendored under
//! [`standard_interfaces_dir`]; a user's package is added the same way
//! ([`InterfaceSet::add_package_dir`] or [`InterfaceSet::add_source`]).
//!
//! Every input is bounded ([`limits`]); a malformed file is a [`ParseError`] with its
//! file, line and column; unknown or recursive types are a [`ResolveError`].
//!
//! [`cdr`] encodes and decodes messages as the CDR bytes ROS 2 puts on the wire.
//!
//! Work in progress: code generation and CDR views build on this crate next.

#![warn(missing_docs)]

mod ast;
pub mod cdr;
mod comments;
mod description;
mod embedded;
mod hash;
mod interface_set;
pub mod limits;
mod load;
mod names;
mod parse_error;
mod parser;
mod resolve_error;
mod resolved;
mod resolved_set;
mod ros2msg_definition;
mod ros2msg_read;
mod type_name;
mod value;

pub use ast::{
    ActionSpec, ArrayKind, BaseType, Constant, ConstantType, DefaultValue, Field, FieldType,
    InterfaceKind, InterfaceSpec, MessageSpec, NamedType, Position, Primitive, ServiceSpec, Value,
};
pub use comments::Comment;
pub use description::{
    field_type_description, individual_description, FieldDescription, FieldTypeDescription,
    IndividualTypeDescription, TypeDescription,
};
pub use embedded::{standard_file, standard_files, StandardFile};
pub use hash::{hashable_json, type_hash, TypeHash};
pub use interface_set::{AddError, InterfaceSet};
pub use load::{standard_interfaces_dir, LoadError, STANDARD_PACKAGES};
pub use names::{
    is_valid_constant_name, is_valid_field_name, is_valid_message_name, is_valid_package_name,
};
pub use parse_error::{ParseError, ParseErrorKind, TypeProblem};
pub use parser::parse_interface;
pub use resolve_error::ResolveError;
pub use resolved::{
    ActionDef, Member, ResolvedBase, ResolvedType, ServiceDef, StructDef, PLACEHOLDER_MEMBER,
};
pub use resolved_set::Resolved;
pub use ros2msg_read::{resolve_ros2msg, Ros2MsgError, ROS2MSG_DELIMITER};
pub use type_name::TypeName;
