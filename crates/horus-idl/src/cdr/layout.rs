//! What encoder and decoder share: sizes and alignment of CDR items, the minimum wire
//! size of a type (to check counts before allocating), and field paths for errors.

use std::collections::HashMap;

use super::error::{CdrError, CdrErrorKind};
use crate::ast::{ArrayKind, Primitive};
use crate::resolved::{ResolvedBase, ResolvedType, StructDef};
use crate::resolved_set::Resolved;
use crate::type_name::TypeName;

/// The encapsulation header ROS 2 writes before a little-endian CDR payload.
pub const ENCAPSULATION_CDR_LE: [u8; 4] = [0x00, 0x01, 0x00, 0x00];

/// Most structures nested in one another (the standard messages need at most 6).
pub const MAX_DEPTH: usize = 64;

/// The size (and alignment) of a primitive on the wire.
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

/// Whether arrays of this primitive are [`super::CdrValue::Bytes`].
pub(crate) fn is_byte_like(p: Primitive) -> bool {
    matches!(p, Primitive::Byte | Primitive::Char | Primitive::UInt8)
}

/// Padding needed at payload offset `offset` for an item of alignment `align`.
pub(crate) fn padding_for(offset: usize, align: usize) -> usize {
    (align - offset % align) % align
}

/// One step of a field path.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Seg<'a> {
    Field(&'a str),
    Index(usize),
}

/// The path to the item being worked on, rendered only when an error is made.
#[derive(Debug, Default)]
pub(crate) struct Path<'a> {
    segs: Vec<Seg<'a>>,
}

impl<'a> Path<'a> {
    pub(crate) fn push(&mut self, s: Seg<'a>) {
        self.segs.push(s);
    }

    pub(crate) fn pop(&mut self) {
        self.segs.pop();
    }

    /// An error at this path.
    pub(crate) fn error(&self, kind: CdrErrorKind) -> CdrError {
        let mut path = String::new();
        for s in &self.segs {
            match s {
                Seg::Field(name) => {
                    if !path.is_empty() {
                        path.push('.');
                    }
                    path.push_str(name);
                }
                Seg::Index(i) => path.push_str(&format!("[{i}]")),
            }
        }
        CdrError { path, kind }
    }
}

/// Looks up structures and remembers their minimum wire sizes.
pub(crate) struct Types<'a> {
    resolved: &'a Resolved,
    min_sizes: HashMap<&'a TypeName, u64>,
}

impl<'a> Types<'a> {
    pub(crate) fn new(resolved: &'a Resolved) -> Self {
        Self {
            resolved,
            min_sizes: HashMap::new(),
        }
    }

    pub(crate) fn get(&self, name: &TypeName, path: &Path<'_>) -> Result<&'a StructDef, CdrError> {
        self.resolved
            .get_struct(name)
            .ok_or_else(|| path.error(CdrErrorKind::UnknownType(name.to_string())))
    }

    /// The fewest bytes one element of `base` takes on the wire (padding not counted).
    pub(crate) fn min_base_size(
        &mut self,
        base: &'a ResolvedBase,
        path: &Path<'_>,
        depth: usize,
    ) -> Result<u64, CdrError> {
        Ok(match base {
            ResolvedBase::Primitive(p) => primitive_size(*p) as u64,
            // The length alone: a length of 0 is read as the empty string (as Fast CDR
            // reads it), so a string can be 4 bytes.
            ResolvedBase::String { .. } => 4,
            ResolvedBase::WString { .. } => 4,
            ResolvedBase::Nested(name) => self.min_struct_size(name, path, depth + 1)?,
        })
    }

    /// The fewest bytes a member of type `t` takes on the wire.
    pub(crate) fn min_type_size(
        &mut self,
        t: &'a ResolvedType,
        path: &Path<'_>,
        depth: usize,
    ) -> Result<u64, CdrError> {
        Ok(match t.array {
            ArrayKind::Single => self.min_base_size(&t.base, path, depth)?,
            ArrayKind::Fixed(n) => {
                u64::from(n).saturating_mul(self.min_base_size(&t.base, path, depth)?)
            }
            ArrayKind::Bounded(_) | ArrayKind::Unbounded => 4,
        })
    }

    /// The fewest bytes a structure takes on the wire (cached).
    pub(crate) fn min_struct_size(
        &mut self,
        name: &'a TypeName,
        path: &Path<'_>,
        depth: usize,
    ) -> Result<u64, CdrError> {
        if let Some(&s) = self.min_sizes.get(name) {
            return Ok(s);
        }
        if depth > MAX_DEPTH {
            return Err(path.error(CdrErrorKind::TooDeep { limit: MAX_DEPTH }));
        }
        let def = self.get(name, path)?;
        let mut total: u64 = 0;
        for m in &def.members {
            total = total.saturating_add(self.min_type_size(&m.member_type, path, depth)?);
        }
        self.min_sizes.insert(name, total);
        Ok(total)
    }
}
