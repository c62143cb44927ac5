//! Run-time description of a message's layout: every field, with a kind a tool can decode
//! without having been compiled with the type.
//!
//! [`MessageDescription::of`] builds it from what [`message!`](crate::message!) generates; a
//! topic's segment carries it (as JSON) so that `horus topic echo`, the Python package and the
//! recorder decode any topic, standard or user-defined. A description read back from shared
//! memory is untrusted: [`MessageDescription::validate`] checks every offset, size and
//! reference and recomputes each type's layout hash from its fields.

mod check;

use crate::{LayoutHasher, Message};
use serde::{Deserialize, Serialize};

/// The scalar types a field (or an array element) can have.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
#[allow(missing_docs)]
pub enum Scalar {
    U8,
    U16,
    U32,
    U64,
    I8,
    I16,
    I32,
    I64,
    F32,
    F64,
}

impl Scalar {
    /// Size in bytes.
    pub const fn size(self) -> usize {
        match self {
            Scalar::U8 | Scalar::I8 => 1,
            Scalar::U16 | Scalar::I16 => 2,
            Scalar::U32 | Scalar::I32 | Scalar::F32 => 4,
            Scalar::U64 | Scalar::I64 | Scalar::F64 => 8,
        }
    }

    /// Whether the scalar is a floating-point number.
    pub const fn is_float(self) -> bool {
        matches!(self, Scalar::F32 | Scalar::F64)
    }

    /// Whether the scalar is a signed integer.
    pub const fn is_signed(self) -> bool {
        matches!(self, Scalar::I8 | Scalar::I16 | Scalar::I32 | Scalar::I64)
    }
}

/// What a field holds.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum FieldKind {
    /// One scalar, little-endian (native on every supported target).
    Scalar(Scalar),
    /// `len` elements of one kind, packed.
    Array {
        /// The element kind.
        of: Box<FieldKind>,
        /// Number of elements.
        len: usize,
    },
    /// A nested message, by schema name (described in the same [`MessageDescription`]).
    Message(String),
}

/// One field of a [`TypeDescription`].
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct FieldDescription {
    /// Field name.
    pub name: String,
    /// Field type as written in the definition (folded into the layout hash).
    pub ty: String,
    /// Byte offset from the start of the message.
    pub offset: usize,
    /// Size in bytes.
    pub size: usize,
    /// What the bytes hold.
    pub kind: FieldKind,
}

/// One message type: its identity and its fields.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TypeDescription {
    /// Schema name.
    pub name: String,
    /// Schema version.
    pub version: u32,
    /// Size of the fixed part, bytes.
    pub size: usize,
    /// Alignment, bytes.
    pub align: usize,
    /// Whether a variable-size byte tail follows the fixed part.
    pub has_tail: bool,
    /// The layout hash of the type's [`SchemaId`](crate::SchemaId).
    pub layout_hash: u64,
    /// Every field, in declaration order.
    pub fields: Vec<FieldDescription>,
}

impl TypeDescription {
    /// The layout hash recomputed from the fields, exactly as [`message!`](crate::message!)
    /// computes it at compile time.
    pub fn computed_hash(&self) -> u64 {
        let mut h = LayoutHasher::new().str(&self.name).u32(self.version);
        for f in &self.fields {
            h = h.field(&f.name, &f.ty, f.offset, f.size);
        }
        h.usize(self.size)
            .usize(self.align)
            .bool(self.has_tail)
            .finish()
    }
}

/// A message type and every message type nested in it; `types[0]` is the message itself.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct MessageDescription {
    /// The root type first, then each nested type once.
    pub types: Vec<TypeDescription>,
    /// For a type that travels as ROS 2 CDR bytes (horus's `Ros<M>`): its ROS 2 identity
    /// and definition; `types` then holds only the 8-byte frame. Absent (and not written)
    /// for fixed-layout types.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ros2: Option<crate::Ros2Type>,
}

/// Most types one description may hold.
pub(crate) const MAX_TYPES: usize = 256;
/// Most fields one type may have.
pub(crate) const MAX_FIELDS: usize = 4096;
/// Most fields all the types of one description may have together.
pub(crate) const MAX_TOTAL_FIELDS: usize = 16 * 1024;
/// Deepest nesting of messages and arrays a description may use.
pub(crate) const MAX_DEPTH: usize = 32;
/// Largest size of a type's fixed part, bytes (1 GiB).
pub(crate) const MAX_TYPE_SIZE: usize = 1 << 30;
/// Largest alignment of a type, bytes.
pub(crate) const MAX_ALIGN: usize = 4096;

/// Why a description is not acceptable.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum DescriptionError {
    /// No types at all.
    #[error("description holds no types")]
    Empty,
    /// More types or fields than allowed.
    #[error("description too large: {0}")]
    TooLarge(String),
    /// Two types share a name.
    #[error("type {0} is described twice")]
    Duplicate(String),
    /// A field refers to a type the description does not hold.
    #[error("field {field} of {ty} refers to undescribed type {missing}")]
    Unresolved {
        /// The type holding the field.
        ty: String,
        /// The field.
        field: String,
        /// The missing type.
        missing: String,
    },
    /// A field's offset, size or kind does not fit its type.
    #[error("field {field} of {ty}: {reason}")]
    BadField {
        /// The type holding the field.
        ty: String,
        /// The field.
        field: String,
        /// What is wrong.
        reason: String,
    },
    /// Nesting deeper than [`MAX_DEPTH`].
    #[error("type {0} nests deeper than {MAX_DEPTH} levels")]
    TooDeep(String),
    /// A type contains itself, directly or through other types.
    #[error("type {0} contains itself")]
    Cycle(String),
    /// A type's size or alignment is impossible.
    #[error("type {ty}: {reason}")]
    BadType {
        /// The type.
        ty: String,
        /// What is wrong.
        reason: String,
    },
    /// The `ros2` section is malformed or does not match the type it describes.
    #[error("ROS 2 type: {0}")]
    Ros2(String),
    /// The fields do not hash to the claimed layout hash.
    #[error("type {ty}: fields hash to {computed:#018x}, description claims {claimed:#018x}")]
    HashMismatch {
        /// The type.
        ty: String,
        /// Recomputed from the fields.
        computed: u64,
        /// As stated.
        claimed: u64,
    },
}

impl MessageDescription {
    /// Most types one description may hold.
    pub const MAX_TYPES: usize = MAX_TYPES;
    /// Most fields one type may have.
    pub const MAX_FIELDS: usize = MAX_FIELDS;
    /// Most fields all the types of one description may have together.
    pub const MAX_TOTAL_FIELDS: usize = MAX_TOTAL_FIELDS;
    /// Deepest nesting of messages and arrays.
    pub const MAX_DEPTH: usize = MAX_DEPTH;
    /// Largest size of a type's fixed part, bytes.
    pub const MAX_TYPE_SIZE: usize = MAX_TYPE_SIZE;
    /// Largest alignment of a type, bytes.
    pub const MAX_ALIGN: usize = MAX_ALIGN;

    /// The description of `M` and every message nested in it.
    pub fn of<M: Message>() -> Self {
        let mut c = TypeCollector { types: Vec::new() };
        c.add::<M>();
        MessageDescription {
            types: c.types,
            ros2: M::ROS2.map(|r| r.to_owned_type()),
        }
    }

    /// The message itself.
    ///
    /// # Panics
    /// If the description holds no types (never after [`validate`](Self::validate)).
    pub fn root(&self) -> &TypeDescription {
        &self.types[0]
    }

    /// A described type by schema name.
    pub fn get(&self, name: &str) -> Option<&TypeDescription> {
        self.types.iter().find(|t| t.name == name)
    }

    /// Checks a description that may come from an untrusted peer: bounded sizes
    /// ([`Self::MAX_TYPES`], [`Self::MAX_FIELDS`], [`Self::MAX_TOTAL_FIELDS`],
    /// [`Self::MAX_TYPE_SIZE`], [`Self::MAX_ALIGN`]), unique names, every reference resolved, every field inside its type
    /// with a kind of its size, nesting bounded by [`Self::MAX_DEPTH`] and free of cycles, and
    /// every type's fields hashing to its layout hash. Time and memory are linear in the
    /// description's size: each type is visited once.
    ///
    /// A description with a [`ros2`](Self::ros2) section must hold exactly the 8-byte frame
    /// of that type, and the section must be well-formed (see
    /// [`Ros2Type::validate`](crate::Ros2Type::validate)).
    pub fn validate(&self) -> Result<(), DescriptionError> {
        if let Some(ty) = &self.ros2 {
            return crate::ros2::check(self, ty);
        }
        check::Checker::new(self)?.check_all()
    }

    /// [`validate`](Self::validate), also returning how many times a type was visited
    /// (at most once each): for tests of the linear bound.
    #[doc(hidden)]
    pub fn validate_counting_visits(&self) -> (Result<(), DescriptionError>, usize) {
        if self.ros2.is_some() {
            return (self.validate(), 0);
        }
        match check::Checker::new(self) {
            Ok(mut c) => {
                let r = c.check_all();
                (r, c.visits)
            }
            Err(e) => (Err(e), 0),
        }
    }
}

/// Collects the types of a description while [`MessageDescription::of`] walks the fields.
/// Not for direct use: [`message!`](crate::message!) calls it.
#[doc(hidden)]
pub struct TypeCollector {
    types: Vec<TypeDescription>,
}

impl TypeCollector {
    /// Adds `M` (and, through its fields, every message nested in it) unless already present.
    pub fn add<M: Message>(&mut self) {
        let name = M::SCHEMA.name();
        if self.types.iter().any(|t| t.name == name) {
            return;
        }
        let at = self.types.len();
        self.types.push(TypeDescription {
            name: name.to_owned(),
            version: M::SCHEMA.version(),
            size: M::SCHEMA.size() as usize,
            align: M::SCHEMA.align() as usize,
            has_tail: M::HAS_TAIL,
            layout_hash: M::SCHEMA.layout_hash(),
            fields: Vec::new(),
        });
        let kinds = M::field_kinds(self);
        self.types[at].fields = M::FIELDS
            .iter()
            .zip(kinds)
            .map(|(f, kind)| FieldDescription {
                name: f.name.to_owned(),
                ty: f.ty.to_owned(),
                offset: f.offset,
                size: f.size,
                kind,
            })
            .collect();
    }
}

/// A type a message field can have: a scalar, an array of field types, or a message.
///
/// Implemented for `u8`–`u64`, `i8`–`i64`, `f32`, `f64`, arrays of those, and every type
/// [`message!`](crate::message!) defines. A message field of another type does not compile.
pub trait FieldType {
    /// The field's kind, registering any nested message with `types`.
    #[doc(hidden)]
    fn field_kind(types: &mut TypeCollector) -> FieldKind;
}

macro_rules! scalar_field_type {
    ($($t:ty => $s:ident),* $(,)?) => {
        $(impl FieldType for $t {
            fn field_kind(_: &mut TypeCollector) -> FieldKind {
                FieldKind::Scalar(Scalar::$s)
            }
        })*
    };
}

scalar_field_type!(
    u8 => U8, u16 => U16, u32 => U32, u64 => U64,
    i8 => I8, i16 => I16, i32 => I32, i64 => I64,
    f32 => F32, f64 => F64,
);

impl<T: FieldType, const N: usize> FieldType for [T; N] {
    fn field_kind(types: &mut TypeCollector) -> FieldKind {
        FieldKind::Array {
            of: Box::new(T::field_kind(types)),
            len: N,
        }
    }
}
