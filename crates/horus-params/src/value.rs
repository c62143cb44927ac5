//! Parameter values and their kinds.

use std::fmt;

/// The type of a parameter. A parameter's kind is fixed by its declaration.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ParamKind {
    /// `true` / `false`.
    Bool,
    /// 64-bit signed integer.
    I64,
    /// 64-bit float.
    F64,
    /// UTF-8 string.
    Str,
    /// Array of booleans.
    BoolArray,
    /// Array of 64-bit signed integers.
    I64Array,
    /// Array of 64-bit floats.
    F64Array,
    /// Array of strings.
    StrArray,
}

impl ParamKind {
    /// Every kind, in wire-code order (code = index + 1).
    pub const ALL: [ParamKind; 8] = [
        ParamKind::Bool,
        ParamKind::I64,
        ParamKind::F64,
        ParamKind::Str,
        ParamKind::BoolArray,
        ParamKind::I64Array,
        ParamKind::F64Array,
        ParamKind::StrArray,
    ];

    /// The one-byte code used on the wire (1..=8).
    pub fn code(self) -> u8 {
        Self::ALL.iter().position(|k| *k == self).unwrap_or(0) as u8 + 1
    }

    /// The kind with wire code `code`, if any.
    pub fn from_code(code: u8) -> Option<ParamKind> {
        Self::ALL.get(usize::from(code).checked_sub(1)?).copied()
    }

    /// Whether a range may be declared for this kind (numbers and arrays of numbers).
    pub fn is_numeric(self) -> bool {
        matches!(
            self,
            ParamKind::I64 | ParamKind::F64 | ParamKind::I64Array | ParamKind::F64Array
        )
    }
}

impl fmt::Display for ParamKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            ParamKind::Bool => "bool",
            ParamKind::I64 => "i64",
            ParamKind::F64 => "f64",
            ParamKind::Str => "string",
            ParamKind::BoolArray => "bool[]",
            ParamKind::I64Array => "i64[]",
            ParamKind::F64Array => "f64[]",
            ParamKind::StrArray => "string[]",
        })
    }
}

/// A parameter value.
#[derive(Clone, Debug, PartialEq)]
pub enum ParamValue {
    /// A boolean.
    Bool(bool),
    /// A 64-bit signed integer.
    I64(i64),
    /// A 64-bit float.
    F64(f64),
    /// A string.
    Str(String),
    /// An array of booleans.
    BoolArray(Vec<bool>),
    /// An array of integers.
    I64Array(Vec<i64>),
    /// An array of floats.
    F64Array(Vec<f64>),
    /// An array of strings.
    StrArray(Vec<String>),
}

impl ParamValue {
    /// The kind of this value.
    pub fn kind(&self) -> ParamKind {
        match self {
            ParamValue::Bool(_) => ParamKind::Bool,
            ParamValue::I64(_) => ParamKind::I64,
            ParamValue::F64(_) => ParamKind::F64,
            ParamValue::Str(_) => ParamKind::Str,
            ParamValue::BoolArray(_) => ParamKind::BoolArray,
            ParamValue::I64Array(_) => ParamKind::I64Array,
            ParamValue::F64Array(_) => ParamKind::F64Array,
            ParamValue::StrArray(_) => ParamKind::StrArray,
        }
    }

    /// The boolean, if this is a `Bool`.
    pub fn as_bool(&self) -> Option<bool> {
        match self {
            ParamValue::Bool(b) => Some(*b),
            _ => None,
        }
    }

    /// The integer, if this is an `I64`.
    pub fn as_i64(&self) -> Option<i64> {
        match self {
            ParamValue::I64(v) => Some(*v),
            _ => None,
        }
    }

    /// The float, if this is an `F64`.
    pub fn as_f64(&self) -> Option<f64> {
        match self {
            ParamValue::F64(v) => Some(*v),
            _ => None,
        }
    }

    /// The string, if this is a `Str`.
    pub fn as_str(&self) -> Option<&str> {
        match self {
            ParamValue::Str(s) => Some(s),
            _ => None,
        }
    }
}

impl fmt::Display for ParamValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fn list<T: fmt::Debug>(f: &mut fmt::Formatter<'_>, items: &[T]) -> fmt::Result {
            f.write_str("[")?;
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    f.write_str(", ")?;
                }
                write!(f, "{item:?}")?;
            }
            f.write_str("]")
        }
        match self {
            ParamValue::Bool(b) => write!(f, "{b}"),
            ParamValue::I64(v) => write!(f, "{v}"),
            ParamValue::F64(v) => write!(f, "{v:?}"),
            ParamValue::Str(s) => write!(f, "{s:?}"),
            ParamValue::BoolArray(v) => list(f, v),
            ParamValue::I64Array(v) => list(f, v),
            ParamValue::F64Array(v) => list(f, v),
            ParamValue::StrArray(v) => list(f, v),
        }
    }
}

impl From<bool> for ParamValue {
    fn from(v: bool) -> Self {
        ParamValue::Bool(v)
    }
}
impl From<i64> for ParamValue {
    fn from(v: i64) -> Self {
        ParamValue::I64(v)
    }
}
impl From<f64> for ParamValue {
    fn from(v: f64) -> Self {
        ParamValue::F64(v)
    }
}
impl From<&str> for ParamValue {
    fn from(v: &str) -> Self {
        ParamValue::Str(v.to_owned())
    }
}
impl From<String> for ParamValue {
    fn from(v: String) -> Self {
        ParamValue::Str(v)
    }
}
impl From<Vec<bool>> for ParamValue {
    fn from(v: Vec<bool>) -> Self {
        ParamValue::BoolArray(v)
    }
}
impl From<Vec<i64>> for ParamValue {
    fn from(v: Vec<i64>) -> Self {
        ParamValue::I64Array(v)
    }
}
impl From<Vec<f64>> for ParamValue {
    fn from(v: Vec<f64>) -> Self {
        ParamValue::F64Array(v)
    }
}
impl From<Vec<String>> for ParamValue {
    fn from(v: Vec<String>) -> Self {
        ParamValue::StrArray(v)
    }
}
