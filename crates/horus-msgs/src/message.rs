//! The [`Message`] trait: what a type must provide to travel over a horus topic.

use crate::describe::{FieldKind, TypeCollector};
use crate::schema::{FieldInfo, SchemaId};

/// A fixed-layout message that travels over shared memory as raw bytes.
///
/// `Pod` is what makes reading a message from untrusted shared memory sound: every bit pattern
/// is a valid value, there are no pointers, no padding and no interior mutability. A peer that is
/// buggy, old or hostile can only ever hand us *wrong* values, never undefined behaviour.
///
/// Do not implement this trait by hand; define messages with [`message!`](crate::message!),
/// which derives [`SCHEMA`](Message::SCHEMA) and [`FIELDS`](Message::FIELDS) from the same
/// field list that declares the struct, so the three cannot drift apart.
pub trait Message: bytemuck::Pod + Send + Sync + 'static {
    /// Identity of this message type; publisher and subscriber must agree on it exactly.
    const SCHEMA: SchemaId;

    /// Every field, in declaration order, with its byte offset and size.
    const FIELDS: &'static [FieldInfo];

    /// `true` for messages whose fixed part is followed by a variable-size byte tail
    /// (`PointCloud`, `Image`); such messages are published through `loan_slice(tail_len)`.
    ///
    /// The tail is not part of the struct. The transport guarantees that it starts at an
    /// 8-byte-aligned address.
    const HAS_TAIL: bool = false;

    /// For a type that carries ROS 2 CDR bytes (horus's `Ros<M>` frame): its ROS 2 identity,
    /// which its [`MessageDescription`](crate::MessageDescription) carries. `None` for every
    /// fixed-layout message.
    const ROS2: Option<crate::Ros2Info> = None;

    /// The kind of each field, in [`FIELDS`](Message::FIELDS) order, registering nested
    /// messages (see [`MessageDescription`](crate::MessageDescription)).
    #[doc(hidden)]
    fn field_kinds(types: &mut TypeCollector) -> Vec<FieldKind>;
}
