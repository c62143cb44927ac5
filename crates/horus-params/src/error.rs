//! Errors of parameter operations.

use crate::value::ParamKind;

/// Why getting, setting or declaring a parameter failed. On every error the
/// stored value is unchanged.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum ParamError {
    /// No parameter of that name is declared.
    #[error("no parameter named `{name}`")]
    NotFound {
        /// The name asked for.
        name: String,
    },
    /// The value's type is not the parameter's declared type.
    #[error("parameter `{name}` is {expected}, got {got}")]
    WrongType {
        /// The parameter.
        name: String,
        /// Its declared kind.
        expected: ParamKind,
        /// The kind of the rejected value.
        got: ParamKind,
    },
    /// The value (or an element of an array value) is outside the declared range.
    #[error("parameter `{name}`: {value} is outside [{min}, {max}]")]
    OutOfRange {
        /// The parameter.
        name: String,
        /// The offending number, as text.
        value: String,
        /// Lower bound, as text.
        min: String,
        /// Upper bound, as text.
        max: String,
    },
    /// The declaration itself is invalid (duplicate name, empty or too long a
    /// name, a range on a non-numeric kind or of the wrong number type, a
    /// default outside its range, a value too large for the wire).
    #[error("invalid declaration of `{name}`: {reason}")]
    InvalidDeclaration {
        /// The parameter.
        name: String,
        /// What is wrong.
        reason: String,
    },
    /// The value does not fit in the parameter service's value field.
    #[error("value of `{name}` takes {len} bytes encoded, more than {max}")]
    TooLarge {
        /// The parameter.
        name: String,
        /// Encoded length.
        len: usize,
        /// The limit ([`crate::VALUE_CAPACITY`]).
        max: usize,
    },
}

/// Why loading a YAML parameter file failed. Nothing is applied when loading fails.
#[derive(Debug, thiserror::Error)]
pub enum YamlError {
    /// The file could not be read or written.
    #[error("parameter file {path}: {source}")]
    Io {
        /// The file.
        path: String,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
    /// Malformed YAML, an unknown parameter, a value of the wrong type or out
    /// of range, at `line`:`column` (1-based) of the file.
    #[error("line {line}, column {column}: {message}")]
    At {
        /// 1-based line.
        line: usize,
        /// 1-based column.
        column: usize,
        /// What is wrong there.
        message: String,
    },
    /// An error without a position (an empty document that is not a mapping).
    #[error("{message}")]
    Other {
        /// What is wrong.
        message: String,
    },
    /// The file is too large, or the document expands to too many nodes (an alias bomb):
    /// see [`crate::yaml_bound`].
    #[error(transparent)]
    Bound(#[from] crate::yaml_bound::YamlBoundError),
}
