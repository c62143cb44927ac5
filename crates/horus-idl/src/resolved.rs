//! Interfaces after resolution: every type name is full (`pkg/msg/Type`) and known,
//! and the types ROS 2 implies for services and actions exist as structures.

use crate::ast::{ArrayKind, Constant, DefaultValue, Position, Primitive};
use crate::comments::Comment;
use crate::type_name::TypeName;

/// The element type of a resolved member.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum ResolvedBase {
    /// A primitive number or `bool`.
    Primitive(Primitive),
    /// `string` or `string<=N`.
    String {
        /// The maximum length, if bounded.
        bound: Option<u32>,
    },
    /// `wstring` or `wstring<=N`.
    WString {
        /// The maximum length, if bounded.
        bound: Option<u32>,
    },
    /// Another structure, by its full name.
    Nested(TypeName),
}

/// The type of a resolved member.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ResolvedType {
    /// The element type.
    pub base: ResolvedBase,
    /// Whether and how it is an array.
    pub array: ArrayKind,
}

/// A member of a resolved structure.
#[derive(Debug, Clone, PartialEq)]
pub struct Member {
    /// The member name.
    pub name: String,
    /// Its type.
    pub member_type: ResolvedType,
    /// Its default value, if the file gives one.
    pub default: Option<DefaultValue>,
    /// True for the `uint8 structure_needs_at_least_one_member` that ROS 2 adds to a
    /// structure without fields (it is serialized like any other member).
    pub placeholder: bool,
    /// Where it is written (line 0 for members ROS 2 implies).
    pub position: Position,
    /// Its comment (empty for members ROS 2 implies).
    pub comment: Comment,
}

/// Name of the member ROS 2 adds to a structure without fields.
pub const PLACEHOLDER_MEMBER: &str = "structure_needs_at_least_one_member";

/// A structure: a message, or a type ROS 2 implies for a service or action
/// (`Foo_Request`, `Foo_Event`, `Bar_Goal`, `Bar_SendGoal_Request`, `Bar_FeedbackMessage`, …).
#[derive(Debug, Clone, PartialEq)]
pub struct StructDef {
    /// Its full name.
    pub name: TypeName,
    /// Its members, in order (never empty: see [`Member::placeholder`]).
    pub members: Vec<Member>,
    /// Its constants, in order.
    pub constants: Vec<Constant>,
    /// The file it comes from.
    pub file: String,
    /// The comment at the top of its file or section (empty for implied structures).
    pub comment: Comment,
}

/// A service: its name and the three structures it implies.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServiceDef {
    /// `pkg/srv/Name` (or `pkg/action/Name_SendGoal` / `_GetResult` for an action's services).
    pub name: TypeName,
    /// `…_Request`
    pub request: TypeName,
    /// `…_Response`
    pub response: TypeName,
    /// `…_Event` (`info`, `request[<=1]`, `response[<=1]`)
    pub event: TypeName,
}

/// An action: its name and the types it implies.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ActionDef {
    /// `pkg/action/Name`
    pub name: TypeName,
    /// `…_Goal`
    pub goal: TypeName,
    /// `…_Result`
    pub result: TypeName,
    /// `…_Feedback`
    pub feedback: TypeName,
    /// `…_SendGoal` (request: `goal_id`, `goal`; response: `accepted`, `stamp`)
    pub send_goal: ServiceDef,
    /// `…_GetResult` (request: `goal_id`; response: `status`, `result`)
    pub get_result: ServiceDef,
    /// `…_FeedbackMessage` (`goal_id`, `feedback`)
    pub feedback_message: TypeName,
}
