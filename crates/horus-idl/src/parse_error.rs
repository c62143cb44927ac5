//! Errors of parsing one interface file: what went wrong, and where.

use std::fmt;

/// A malformed interface file: the file, the 1-based line and column, and what is wrong.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{file}:{line}:{column}: {kind}")]
pub struct ParseError {
    /// The file as named by the caller (a path, or a name like `pkg/msg/Type.msg`).
    pub file: String,
    /// 1-based line (0 when the error concerns the whole file).
    pub line: usize,
    /// 1-based column in characters (0 when the error concerns the whole file or line).
    pub column: usize,
    /// What is wrong.
    pub kind: ParseErrorKind,
}

/// What is wrong in a malformed interface file.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum ParseErrorKind {
    /// The file is larger than [`crate::limits::MAX_FILE_BYTES`].
    #[error("file is {size} bytes, more than the limit of {limit}")]
    FileTooLarge {
        /// The file's size.
        size: usize,
        /// The limit.
        limit: usize,
    },
    /// A line is longer than [`crate::limits::MAX_LINE_BYTES`].
    #[error("line is {length} bytes, more than the limit of {limit}")]
    LineTooLong {
        /// The line's length.
        length: usize,
        /// The limit.
        limit: usize,
    },
    /// The file is not UTF-8 (the position is that of the first bad byte).
    #[error("the file is not valid UTF-8")]
    NotUtf8,
    /// A section holds more fields and constants than [`crate::limits::MAX_MEMBERS`].
    #[error("more than {limit} fields and constants")]
    TooManyMembers {
        /// The limit.
        limit: usize,
    },
    /// A line starts with whitespace but is not a comment.
    #[error("a definition must start at the beginning of the line")]
    Indented,
    /// A type without a name after it.
    #[error("'{text}' is a type without a field or constant name")]
    MissingName {
        /// The line's content.
        text: String,
    },
    /// A type that is neither a primitive, a string nor a valid `pkg/Type`.
    #[error("'{text}' is not a valid type: {reason}")]
    BadType {
        /// The type as written.
        text: String,
        /// Why not.
        reason: TypeProblem,
    },
    /// An array size or bound that is not an integer in 1..=2^32-1.
    #[error("'{text}' is not a valid array size or bound (an integer from 1 to {max}, optionally after '<=')")]
    BadArrayBound {
        /// The bound as written.
        text: String,
        /// The largest bound accepted.
        max: u64,
    },
    /// A string bound (`string<=N`) that is not an integer in 1..=2^32-1.
    #[error("'{text}' is not a valid string bound (an integer from 1 to {max})")]
    BadStringBound {
        /// The bound as written.
        text: String,
        /// The largest bound accepted.
        max: u64,
    },
    /// A field name that breaks ROS 2's rule (`[a-z][a-z0-9_]*`, no `__`, no trailing `_`).
    #[error("'{name}' is not a valid field name (lower case letters, digits and single underscores, starting with a letter, not ending with '_')")]
    BadFieldName {
        /// The name as written.
        name: String,
    },
    /// A constant name that breaks ROS 2's rule (`[A-Z]([A-Z0-9_]?[A-Z0-9]+)*`).
    #[error("'{name}' is not a valid constant name (upper case letters, digits and single underscores, starting with a letter, not ending with '_')")]
    BadConstantName {
        /// The name as written.
        name: String,
    },
    /// A constant whose type is not a primitive, `string` or `wstring`.
    #[error("constant type '{text}' must be a primitive type, 'string' or 'wstring'")]
    BadConstantType {
        /// The type as written.
        text: String,
    },
    /// A value (constant or default) that does not fit its type.
    #[error("value '{value}' is not a valid {type_name}: {reason}")]
    BadValue {
        /// The value as written.
        value: String,
        /// The type it was read as.
        type_name: String,
        /// Why not.
        reason: String,
    },
    /// A default value on a field whose type is a message.
    #[error("field of message type '{type_name}' cannot have a default value")]
    DefaultOnNestedType {
        /// The field's type as written.
        type_name: String,
    },
    /// Two fields with the same name.
    #[error("duplicate field '{name}' (first defined on line {first_line})")]
    DuplicateField {
        /// The name.
        name: String,
        /// Where it was first defined.
        first_line: usize,
    },
    /// Two constants with the same name.
    #[error("duplicate constant '{name}' (first defined on line {first_line})")]
    DuplicateConstant {
        /// The name.
        name: String,
        /// Where it was first defined.
        first_line: usize,
    },
    /// A `.srv` without exactly one `---`, or an `.action` without exactly two.
    #[error("a .{extension} file needs exactly {expected} '---' separator line(s), found {found}")]
    WrongSeparatorCount {
        /// `srv` or `action`.
        extension: &'static str,
        /// How many it needs.
        expected: usize,
        /// How many there are.
        found: usize,
    },
    /// A `.msg` file containing a `---` separator.
    #[error("a .msg file cannot contain a '---' separator")]
    SeparatorInMessage,
    /// The interface's own name (from its file name) is not a valid message name.
    #[error("'{name}' is not a valid interface name ([A-Z][A-Za-z0-9]*)")]
    BadInterfaceName {
        /// The name.
        name: String,
    },
    /// The package name is not valid.
    #[error(
        "'{name}' is not a valid package name ([a-z][a-z0-9_]*, no '__', not ending with '_')"
    )]
    BadPackageName {
        /// The name.
        name: String,
    },
}

/// Why a type string is not a valid type.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum TypeProblem {
    /// It ends with `]` but has no `[`.
    UnmatchedBracket,
    /// More than one `/`.
    TooManySlashes,
    /// The package part is not a valid package name.
    BadPackageName(String),
    /// The type part is not a valid message name (`[A-Z][A-Za-z0-9]*`): this is also
    /// what a misspelt primitive (`int33`, `float`) becomes.
    BadMessageName(String),
    /// `duration` / `time`: ROS 1 types that ROS 2's IDL does not have
    /// (use `builtin_interfaces/Duration` / `builtin_interfaces/Time`).
    Ros1Type,
}

impl fmt::Display for TypeProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::UnmatchedBracket => f.write_str("it ends with ']' but has no '['"),
            Self::TooManySlashes => f.write_str("a type is 'Type' or 'package/Type'"),
            Self::BadPackageName(p) => write!(
                f,
                "'{p}' is not a valid package name ([a-z][a-z0-9_]*, no '__', not ending with '_')"
            ),
            Self::BadMessageName(m) => write!(
                f,
                "'{m}' is neither a primitive type nor a valid message name ([A-Z][A-Za-z0-9]*)"
            ),
            Self::Ros1Type => f.write_str(
                "ROS 2 has no 'duration'/'time' primitives: use builtin_interfaces/Duration or builtin_interfaces/Time",
            ),
        }
    }
}
