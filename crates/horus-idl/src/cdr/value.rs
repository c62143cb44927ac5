//! A dynamic message value: what [`super::encode`] writes and [`super::decode`] reads.

/// The value of a message, a field or an element.
#[derive(Debug, Clone, PartialEq)]
pub enum CdrValue {
    /// `bool`
    Bool(bool),
    /// `int8`, `int16`, `int32`, `int64`
    Int(i64),
    /// `byte`, `char`, `uint8`, `uint16`, `uint32`, `uint64`
    UInt(u64),
    /// `float32`
    Float32(f32),
    /// `float64`
    Float64(f64),
    /// `string`
    String(String),
    /// `wstring`
    WString(String),
    /// An array or sequence of `byte`, `char` or `uint8` (what [`super::decode`] gives for
    /// them; [`super::encode`] also takes an [`CdrValue::Array`] of [`CdrValue::UInt`]).
    Bytes(Vec<u8>),
    /// An array or sequence of anything else.
    Array(Vec<CdrValue>),
    /// A structure: its members by name, in the order of the type's members.
    Struct(Vec<(String, CdrValue)>),
}

impl CdrValue {
    /// The member called `name` of a structure.
    pub fn field(&self, name: &str) -> Option<&CdrValue> {
        match self {
            Self::Struct(fields) => fields.iter().find(|(n, _)| n == name).map(|(_, v)| v),
            _ => None,
        }
    }

    /// What kind of value this is, for error messages.
    pub(crate) fn kind_name(&self) -> &'static str {
        match self {
            Self::Bool(_) => "bool",
            Self::Int(_) => "signed integer",
            Self::UInt(_) => "unsigned integer",
            Self::Float32(_) => "float32",
            Self::Float64(_) => "float64",
            Self::String(_) => "string",
            Self::WString(_) => "wstring",
            Self::Bytes(_) => "bytes",
            Self::Array(_) => "array",
            Self::Struct(_) => "structure",
        }
    }
}
