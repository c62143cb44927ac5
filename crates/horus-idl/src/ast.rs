//! What a parsed interface file says: fields, constants and their types, before
//! nested type names are resolved against other packages.

use std::fmt;

use crate::comments::Comment;

/// A primitive type of the `.msg` language.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Primitive {
    /// `bool`
    Bool,
    /// `byte` (IDL `octet`)
    Byte,
    /// `char` (IDL `uint8`: ROS 2 maps `char` to an unsigned 8-bit integer)
    Char,
    /// `int8`
    Int8,
    /// `uint8`
    UInt8,
    /// `int16`
    Int16,
    /// `uint16`
    UInt16,
    /// `int32`
    Int32,
    /// `uint32`
    UInt32,
    /// `int64`
    Int64,
    /// `uint64`
    UInt64,
    /// `float32` (IDL `float`)
    Float32,
    /// `float64` (IDL `double`)
    Float64,
}

impl Primitive {
    /// The primitive named `name` in a `.msg` file (`string`/`wstring` are not primitives here).
    pub fn from_msg_name(name: &str) -> Option<Self> {
        Some(match name {
            "bool" => Self::Bool,
            "byte" => Self::Byte,
            "char" => Self::Char,
            "int8" => Self::Int8,
            "uint8" => Self::UInt8,
            "int16" => Self::Int16,
            "uint16" => Self::UInt16,
            "int32" => Self::Int32,
            "uint32" => Self::UInt32,
            "int64" => Self::Int64,
            "uint64" => Self::UInt64,
            "float32" => Self::Float32,
            "float64" => Self::Float64,
            _ => return None,
        })
    }

    /// The name as written in a `.msg` file.
    pub fn msg_name(self) -> &'static str {
        match self {
            Self::Bool => "bool",
            Self::Byte => "byte",
            Self::Char => "char",
            Self::Int8 => "int8",
            Self::UInt8 => "uint8",
            Self::Int16 => "int16",
            Self::UInt16 => "uint16",
            Self::Int32 => "int32",
            Self::UInt32 => "uint32",
            Self::Int64 => "int64",
            Self::UInt64 => "uint64",
            Self::Float32 => "float32",
            Self::Float64 => "float64",
        }
    }

    /// The inclusive range of an integer primitive (`byte` and `char` are 0..=255);
    /// `None` for `bool` and floating point.
    pub fn integer_range(self) -> Option<(i128, i128)> {
        Some(match self {
            Self::Byte | Self::Char | Self::UInt8 => (0, u8::MAX.into()),
            Self::Int8 => (i8::MIN.into(), i8::MAX.into()),
            Self::Int16 => (i16::MIN.into(), i16::MAX.into()),
            Self::UInt16 => (0, u16::MAX.into()),
            Self::Int32 => (i32::MIN.into(), i32::MAX.into()),
            Self::UInt32 => (0, u32::MAX.into()),
            Self::Int64 => (i64::MIN.into(), i64::MAX.into()),
            Self::UInt64 => (0, u64::MAX.into()),
            Self::Bool | Self::Float32 | Self::Float64 => return None,
        })
    }
}

/// The element type of a field, without its array part.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum BaseType {
    /// A primitive number or `bool`.
    Primitive(Primitive),
    /// `string` (`bound: None`) or `string<=N`.
    String {
        /// The maximum length in bytes, if bounded.
        bound: Option<u32>,
    },
    /// `wstring` or `wstring<=N`.
    WString {
        /// The maximum length in characters, if bounded.
        bound: Option<u32>,
    },
    /// Another message: `pkg/Type`, or `Type` of the same package.
    Named(NamedType),
}

/// A reference to a message type as written in a file (`pkg/Type` or `Type`).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct NamedType {
    /// The package, or `None` when written without one (the file's own package).
    pub package: Option<String>,
    /// The message name.
    pub name: String,
}

/// The array part of a field type.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ArrayKind {
    /// Not an array.
    Single,
    /// `T[N]`: exactly N elements.
    Fixed(u32),
    /// `T[<=N]`: at most N elements.
    Bounded(u32),
    /// `T[]`: any number of elements.
    Unbounded,
}

/// The type of a field: element type plus array part.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct FieldType {
    /// The element type.
    pub base: BaseType,
    /// Whether and how it is an array.
    pub array: ArrayKind,
}

/// One value of a constant or default.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    /// A `bool` value.
    Bool(bool),
    /// An integer value (any integer primitive, range-checked for its type).
    Int(i128),
    /// A floating-point value (`inf`, `-inf` and `nan` included, as ROS 2 accepts them).
    Float(f64),
    /// A `string` or `wstring` value, quotes removed.
    String(String),
}

/// A default value: one value, or the elements of an array default.
#[derive(Debug, Clone, PartialEq)]
pub enum DefaultValue {
    /// The default of a non-array field.
    Scalar(Value),
    /// The default of an array field.
    Array(Vec<Value>),
}

/// Where something was written: 1-based line and column (in characters).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Position {
    /// 1-based line.
    pub line: usize,
    /// 1-based column, in characters.
    pub column: usize,
}

/// A field: `TYPE name [default]`.
#[derive(Debug, Clone, PartialEq)]
pub struct Field {
    /// The field name.
    pub name: String,
    /// The field type.
    pub field_type: FieldType,
    /// The default value, if one is written.
    pub default: Option<DefaultValue>,
    /// Where the field's type is written.
    pub position: Position,
    /// Its comment (see [`MessageSpec::comment`]).
    pub comment: Comment,
}

/// The type of a constant: a primitive, `string` or `wstring` (never an array).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ConstantType {
    /// A primitive.
    Primitive(Primitive),
    /// `string`
    String,
    /// `wstring`
    WString,
}

/// A constant: `TYPE NAME=VALUE`.
#[derive(Debug, Clone, PartialEq)]
pub struct Constant {
    /// The constant name.
    pub name: String,
    /// Its type.
    pub constant_type: ConstantType,
    /// Its value.
    pub value: Value,
    /// Where the constant's type is written.
    pub position: Position,
    /// Its comment (see [`MessageSpec::comment`]).
    pub comment: Comment,
}

/// The content of a `.msg` file, or one section of a `.srv` or `.action` file.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct MessageSpec {
    /// The fields, in order.
    pub fields: Vec<Field>,
    /// The constants, in order.
    pub constants: Vec<Constant>,
    /// The comment at the top of the file (or section). Comments are attached as ROS 2
    /// attaches them: `#` lines before a definition and its trailing comment belong to it,
    /// indented `#` lines after it are appended to it; see [`Comment`].
    pub comment: Comment,
}

/// The content of a `.srv` file.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ServiceSpec {
    /// The section before `---`.
    pub request: MessageSpec,
    /// The section after `---`.
    pub response: MessageSpec,
}

/// The content of an `.action` file.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ActionSpec {
    /// The first section.
    pub goal: MessageSpec,
    /// The second section.
    pub result: MessageSpec,
    /// The third section.
    pub feedback: MessageSpec,
}

/// Which kind of interface a file defines (and the middle part of its ROS type name).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum InterfaceKind {
    /// A `.msg` file: `pkg/msg/Name`.
    Message,
    /// A `.srv` file: `pkg/srv/Name`.
    Service,
    /// An `.action` file: `pkg/action/Name`.
    Action,
}

impl InterfaceKind {
    /// The namespace part of the ROS type name: `msg`, `srv` or `action`
    /// (also the directory and the file extension).
    pub fn namespace(self) -> &'static str {
        match self {
            Self::Message => "msg",
            Self::Service => "srv",
            Self::Action => "action",
        }
    }

    /// The kind whose file extension (without dot) is `ext`.
    pub fn from_extension(ext: &str) -> Option<Self> {
        match ext {
            "msg" => Some(Self::Message),
            "srv" => Some(Self::Service),
            "action" => Some(Self::Action),
            _ => None,
        }
    }
}

impl fmt::Display for InterfaceKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.namespace())
    }
}

/// A parsed interface file.
#[derive(Debug, Clone, PartialEq)]
pub enum InterfaceSpec {
    /// A `.msg` file.
    Message(MessageSpec),
    /// A `.srv` file.
    Service(ServiceSpec),
    /// An `.action` file.
    Action(ActionSpec),
}

impl InterfaceSpec {
    /// The kind of file this came from.
    pub fn kind(&self) -> InterfaceKind {
        match self {
            Self::Message(_) => InterfaceKind::Message,
            Self::Service(_) => InterfaceKind::Service,
            Self::Action(_) => InterfaceKind::Action,
        }
    }
}
