//! How each ROS 2 member type maps to Rust: owned type, view type, wire facts.

use horus_idl::{ArrayKind, Member, Primitive, ResolvedBase, TypeName};

/// The element of a member, as the generator needs it.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Elem<'r> {
    /// A numeric primitive (not `bool`).
    Num(Primitive),
    /// `bool`
    Bool,
    /// `string` / `string<=N`
    Str(Option<u32>),
    /// `wstring` / `wstring<=N`
    WStr(Option<u32>),
    /// A nested structure.
    Nested(&'r TypeName),
}

impl<'r> Elem<'r> {
    pub(crate) fn of(m: &'r Member) -> Self {
        match &m.member_type.base {
            ResolvedBase::Primitive(Primitive::Bool) => Elem::Bool,
            ResolvedBase::Primitive(p) => Elem::Num(*p),
            ResolvedBase::String { bound } => Elem::Str(*bound),
            ResolvedBase::WString { bound } => Elem::WStr(*bound),
            ResolvedBase::Nested(n) => Elem::Nested(n),
        }
    }

    /// Whether sequences of it are plain bytes/numbers (`&[T]` views, block copies).
    pub(crate) fn is_plain(self) -> bool {
        matches!(self, Elem::Num(_) | Elem::Bool)
    }
}

/// The Rust type of a numeric primitive or `bool`.
pub(crate) fn primitive_rust(p: Primitive) -> &'static str {
    match p {
        Primitive::Bool => "bool",
        Primitive::Byte | Primitive::Char | Primitive::UInt8 => "u8",
        Primitive::Int8 => "i8",
        Primitive::Int16 => "i16",
        Primitive::UInt16 => "u16",
        Primitive::Int32 => "i32",
        Primitive::UInt32 => "u32",
        Primitive::Int64 => "i64",
        Primitive::UInt64 => "u64",
        Primitive::Float32 => "f32",
        Primitive::Float64 => "f64",
    }
}

/// Size (and alignment) of a primitive on the wire.
pub(crate) fn primitive_size(p: Primitive) -> usize {
    match p {
        Primitive::Bool
        | Primitive::Byte
        | Primitive::Char
        | Primitive::Int8
        | Primitive::UInt8 => 1,
        Primitive::Int16 | Primitive::UInt16 => 2,
        Primitive::Int32 | Primitive::UInt32 | Primitive::Float32 => 4,
        Primitive::Int64 | Primitive::UInt64 | Primitive::Float64 => 8,
    }
}

/// A bound as the run-time functions take it: `None` or `Some(N)`.
pub(crate) fn bound_lit(bound: Option<u32>) -> String {
    match bound {
        None => "::core::option::Option::None".into(),
        Some(n) => format!("::core::option::Option::Some({n})"),
    }
}

/// The bound of a sequence (`None` for unbounded; fixed arrays have no count).
pub(crate) fn seq_bound(array: ArrayKind) -> Option<u32> {
    match array {
        ArrayKind::Bounded(n) => Some(n),
        _ => None,
    }
}

/// The member's type as a `.msg` file writes it, for documentation.
pub(crate) fn msg_type_text(m: &Member) -> String {
    let mut t = match &m.member_type.base {
        ResolvedBase::Primitive(p) => p.msg_name().to_string(),
        ResolvedBase::String { bound: None } => "string".into(),
        ResolvedBase::String { bound: Some(n) } => format!("string<={n}"),
        ResolvedBase::WString { bound: None } => "wstring".into(),
        ResolvedBase::WString { bound: Some(n) } => format!("wstring<={n}"),
        ResolvedBase::Nested(n) => format!("{}/{}", n.package, n.name),
    };
    match m.member_type.array {
        ArrayKind::Single => {}
        ArrayKind::Fixed(n) => t.push_str(&format!("[{n}]")),
        ArrayKind::Bounded(n) => t.push_str(&format!("[<={n}]")),
        ArrayKind::Unbounded => t.push_str("[]"),
    }
    t
}
