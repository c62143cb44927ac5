//! ROS 2 type descriptions (`type_description_interfaces/msg/TypeDescription`), as
//! `rosidl_generator_type_description` builds them and ships them in each package's
//! `.json` files.

use serde::{Deserialize, Serialize};

use crate::ast::{ArrayKind, DefaultValue, Primitive};
use crate::resolved::{Member, ResolvedBase, StructDef};
use crate::value::{python_str, python_tuple_repr};

/// The type of a field (`type_description_interfaces/msg/FieldType`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FieldTypeDescription {
    /// `FieldType.FIELD_TYPE_*`: the element kind, plus 48 for a fixed array, 96 for a
    /// bounded sequence, 144 for an unbounded sequence.
    pub type_id: u8,
    /// The array size or sequence bound, 0 otherwise.
    pub capacity: u64,
    /// The string bound of bounded (w)strings, 0 otherwise.
    pub string_capacity: u64,
    /// The full name of a nested type, empty otherwise.
    pub nested_type_name: String,
}

/// A field (`type_description_interfaces/msg/Field`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FieldDescription {
    /// The field name.
    pub name: String,
    /// Its type.
    #[serde(rename = "type")]
    pub field_type: FieldTypeDescription,
    /// The default value as ROS 2 writes it (Python's `str()` of the value; arrays as a
    /// tuple `(1, 2)`), empty without a default. Not part of the hash.
    pub default_value: String,
}

/// One type without its references (`type_description_interfaces/msg/IndividualTypeDescription`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct IndividualTypeDescription {
    /// The full type name, e.g. `sensor_msgs/msg/Image`.
    pub type_name: String,
    /// Its fields, in order (constants are not part of a description).
    pub fields: Vec<FieldDescription>,
}

/// A type with every type it refers to, directly or not, sorted by name
/// (`type_description_interfaces/msg/TypeDescription`): what RIHS01 hashes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TypeDescription {
    /// The type itself.
    pub type_description: IndividualTypeDescription,
    /// Every type it refers to, sorted by `type_name`.
    pub referenced_type_descriptions: Vec<IndividualTypeDescription>,
}

/// `FieldType.FIELD_TYPE_NESTED_TYPE`
const NESTED_TYPE_ID: u8 = 1;
/// Added to an element's id for `T[N]`, `T[<=N]`, `T[]`.
const FIXED_ARRAY_OFFSET: u8 = 48;
const BOUNDED_SEQUENCE_OFFSET: u8 = 96;
const UNBOUNDED_SEQUENCE_OFFSET: u8 = 144;

/// The `FieldType` id of an element type.
fn element_type_id(base: &ResolvedBase) -> u8 {
    match base {
        ResolvedBase::Nested(_) => NESTED_TYPE_ID,
        ResolvedBase::Primitive(p) => match p {
            Primitive::Int8 => 2,
            // ROS 2 maps `char` to IDL `uint8`.
            Primitive::UInt8 | Primitive::Char => 3,
            Primitive::Int16 => 4,
            Primitive::UInt16 => 5,
            Primitive::Int32 => 6,
            Primitive::UInt32 => 7,
            Primitive::Int64 => 8,
            Primitive::UInt64 => 9,
            Primitive::Float32 => 10,
            Primitive::Float64 => 11,
            Primitive::Bool => 15,
            Primitive::Byte => 16,
        },
        ResolvedBase::String { bound: None } => 17,
        ResolvedBase::WString { bound: None } => 18,
        ResolvedBase::String { bound: Some(_) } => 21,
        ResolvedBase::WString { bound: Some(_) } => 22,
    }
}

/// The description of one member's type.
pub fn field_type_description(member: &Member) -> FieldTypeDescription {
    let t = &member.member_type;
    let (offset, capacity) = match t.array {
        ArrayKind::Single => (0, 0),
        ArrayKind::Fixed(n) => (FIXED_ARRAY_OFFSET, n),
        ArrayKind::Bounded(n) => (BOUNDED_SEQUENCE_OFFSET, n),
        ArrayKind::Unbounded => (UNBOUNDED_SEQUENCE_OFFSET, 0),
    };
    let string_capacity = match t.base {
        ResolvedBase::String { bound: Some(b) } | ResolvedBase::WString { bound: Some(b) } => b,
        _ => 0,
    };
    let nested_type_name = match &t.base {
        ResolvedBase::Nested(n) => n.to_string(),
        _ => String::new(),
    };
    FieldTypeDescription {
        type_id: element_type_id(&t.base) + offset,
        capacity: capacity.into(),
        string_capacity: string_capacity.into(),
        nested_type_name,
    }
}

/// A default value as ROS 2's description writes it.
fn default_value_text(default: Option<&DefaultValue>) -> String {
    match default {
        None => String::new(),
        Some(DefaultValue::Scalar(v)) => python_str(v),
        Some(DefaultValue::Array(vs)) => python_tuple_repr(vs),
    }
}

/// The individual description of a structure.
pub fn individual_description(def: &StructDef) -> IndividualTypeDescription {
    IndividualTypeDescription {
        type_name: def.name.to_string(),
        fields: def
            .members
            .iter()
            .map(|m| FieldDescription {
                name: m.name.clone(),
                field_type: field_type_description(m),
                default_value: default_value_text(m.default.as_ref()),
            })
            .collect(),
    }
}

/// A field of a service or action description that only names a nested type.
pub(crate) fn nested_field(name: &str, type_name: String) -> FieldDescription {
    FieldDescription {
        name: name.to_string(),
        field_type: FieldTypeDescription {
            type_id: NESTED_TYPE_ID,
            capacity: 0,
            string_capacity: 0,
            nested_type_name: type_name,
        },
        default_value: String::new(),
    }
}
