//! [`Ros<M>`]: the 8-byte frame in front of a ROS 2 message's CDR body in a chunk.

use std::fmt;
use std::marker::PhantomData;

use horus_cdr::{RosMessage, ENCAPSULATION_CDR_LE};
use horus_msgs::{
    rihs01_layout_hash, FieldInfo, FieldKind, Message, Ros2Info, SchemaId, TypeCollector,
};

/// A ROS 2 interface type `M` on a horus topic or service: `Topic<Ros<Image>>`.
///
/// The value itself is the 8-byte frame at the start of each message's chunk: 4 reserved
/// bytes (zero), then the CDR encapsulation header `00 01 00 00`. The CDR body follows as the
/// message's tail, which the transport places 8-byte aligned, so CDR alignment is memory
/// alignment and primitive sequences are viewed in place (`&[f32]`, `&[u8]`). The ROS 2
/// wire bytes (header and body) are contiguous from byte 4.
///
/// Publish with [`Publisher::publish`](crate::Publisher::publish), read with
/// [`Sample::view`](crate::Sample::view) / [`Sample::decode`](crate::Sample::decode) /
/// [`Sample::cdr`](crate::Sample::cdr).
///
/// Its [`SchemaId`] is the ROS type name, version 1, 8 bytes, alignment 8, and as layout
/// hash the first 8 bytes of the type's RIHS01 hash: a topic carrying another type (another
/// ROS type, or another definition of this one) refuses to open.
#[repr(C, align(8))]
pub struct Ros<M> {
    reserved: [u8; 4],
    encapsulation: [u8; 4],
    _m: PhantomData<fn() -> M>,
}

impl<M> Ros<M> {
    /// The frame every horus publisher writes: zeros, then `00 01 00 00`.
    pub const fn new() -> Self {
        Ros {
            reserved: [0; 4],
            encapsulation: ENCAPSULATION_CDR_LE,
            _m: PhantomData,
        }
    }

    /// The encapsulation header as received (`00 01 00 00` from horus and ROS 2).
    pub fn encapsulation(&self) -> [u8; 4] {
        self.encapsulation
    }
}

impl<M> Default for Ros<M> {
    fn default() -> Self {
        Self::new()
    }
}

impl<M> Clone for Ros<M> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<M> Copy for Ros<M> {}

impl<M> fmt::Debug for Ros<M> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Ros")
            .field("encapsulation", &self.encapsulation)
            .finish()
    }
}

// SAFETY: `repr(C)` of two `[u8; 4]` and a zero-sized marker: 8 bytes without padding, and
// all zeros is a valid value.
unsafe impl<M: 'static> bytemuck::Zeroable for Ros<M> {}
// SAFETY: as above, every bit pattern is a valid value (plain bytes, no padding, no
// pointers, no interior mutability); `Copy` and `'static` hold.
unsafe impl<M: 'static> bytemuck::Pod for Ros<M> {}

/// The layout hash of `M`'s schema: a malformed `TYPE_HASH` is a compile-time error where
/// `Ros<M>` is used.
const fn layout_hash<M: RosMessage>() -> u64 {
    match rihs01_layout_hash(M::TYPE_HASH) {
        Some(h) => h,
        None => panic!("RosMessage::TYPE_HASH must be RIHS01_ and 64 lowercase hex digits"),
    }
}

impl<M: RosMessage> Message for Ros<M> {
    const SCHEMA: SchemaId = SchemaId::new(M::TYPE_NAME, 1, 8, 8, layout_hash::<M>());
    /// The frame has no fields a tool decodes: the message is described by its
    /// [`ROS2`](Message::ROS2) section (its `ros2msg` definition).
    const FIELDS: &'static [FieldInfo] = &[];
    const HAS_TAIL: bool = true;
    const ROS2: Option<Ros2Info> = Some(Ros2Info {
        type_name: M::TYPE_NAME,
        type_hash: M::TYPE_HASH,
        definition: M::DEFINITION,
    });

    fn field_kinds(_: &mut TypeCollector) -> Vec<FieldKind> {
        Vec::new()
    }
}

const _: () = assert!(std::mem::size_of::<Ros<()>>() == 8 && std::mem::align_of::<Ros<()>>() == 8);
