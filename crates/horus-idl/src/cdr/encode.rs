//! [`CdrValue`] → CDR bytes.

use std::ops::Range;

use super::error::{CdrError, CdrErrorKind};
use super::layout::{
    is_byte_like, padding_for, primitive_size, Path, Seg, Types, ENCAPSULATION_CDR_LE, MAX_DEPTH,
};
use super::value::CdrValue;
use crate::ast::{ArrayKind, Primitive};
use crate::resolved::{ResolvedBase, ResolvedType};
use crate::resolved_set::Resolved;
use crate::type_name::TypeName;

/// Encoded bytes and where their padding is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Encoded {
    /// Encapsulation header and payload.
    pub bytes: Vec<u8>,
    /// The alignment padding bytes (zeros), as ranges of `bytes`, in order.
    pub padding: Vec<Range<usize>>,
}

/// Encodes `value`, a message of type `type_name`, as ROS 2's CDR bytes (with the
/// encapsulation header).
pub fn encode(
    resolved: &Resolved,
    type_name: &TypeName,
    value: &CdrValue,
) -> Result<Vec<u8>, CdrError> {
    encode_with_padding(resolved, type_name, value).map(|e| e.bytes)
}

/// [`encode`], also saying which bytes are alignment padding.
pub fn encode_with_padding(
    resolved: &Resolved,
    type_name: &TypeName,
    value: &CdrValue,
) -> Result<Encoded, CdrError> {
    let mut e = Encoder {
        types: Types::new(resolved),
        out: ENCAPSULATION_CDR_LE.to_vec(),
        padding: Vec::new(),
        path: Path::default(),
    };
    e.structure(type_name, value, 0)?;
    Ok(Encoded {
        bytes: e.out,
        padding: e.padding,
    })
}

struct Encoder<'a> {
    types: Types<'a>,
    out: Vec<u8>,
    padding: Vec<Range<usize>>,
    path: Path<'a>,
}

fn mismatch(expected: &'static str, got: &CdrValue) -> CdrErrorKind {
    CdrErrorKind::TypeMismatch {
        expected,
        got: got.kind_name(),
    }
}

impl<'a> Encoder<'a> {
    fn err(&self, kind: CdrErrorKind) -> CdrError {
        self.path.error(kind)
    }

    fn align(&mut self, align: usize) {
        let pad = padding_for(self.out.len() - ENCAPSULATION_CDR_LE.len(), align);
        if pad > 0 {
            let start = self.out.len();
            self.out.resize(start + pad, 0);
            self.padding.push(start..start + pad);
        }
    }

    fn u32(&mut self, v: u32) {
        self.align(4);
        self.out.extend_from_slice(&v.to_le_bytes());
    }

    fn length(&mut self, len: usize) -> Result<u32, CdrError> {
        u32::try_from(len).map_err(|_| self.err(CdrErrorKind::TooLong(len)))
    }

    fn check_bound(&self, len: usize, bound: Option<u32>) -> Result<(), CdrError> {
        match bound {
            Some(b) if len as u64 > u64::from(b) => Err(self.err(CdrErrorKind::OverBound {
                len: len as u64,
                bound: b,
            })),
            _ => Ok(()),
        }
    }

    fn structure(
        &mut self,
        name: &TypeName,
        value: &CdrValue,
        depth: usize,
    ) -> Result<(), CdrError> {
        if depth >= MAX_DEPTH {
            return Err(self.err(CdrErrorKind::TooDeep { limit: MAX_DEPTH }));
        }
        let def = self.types.get(name, &self.path)?;
        let CdrValue::Struct(fields) = value else {
            return Err(self.err(mismatch("structure", value)));
        };
        if fields.len() != def.members.len() {
            // Either one is missing (reported below) or one is extra.
            if let Some((n, _)) = fields
                .iter()
                .find(|(n, _)| !def.members.iter().any(|m| &m.name == n))
            {
                return Err(self.err(CdrErrorKind::UnknownField(n.clone())));
            }
        }
        for m in &def.members {
            self.path.push(Seg::Field(&m.name));
            let Some((_, v)) = fields.iter().find(|(n, _)| n == &m.name) else {
                let e = CdrErrorKind::MissingField(m.name.clone());
                self.path.pop();
                return Err(self.err(e));
            };
            self.member(&m.member_type, v, depth)?;
            self.path.pop();
        }
        if fields.len() != def.members.len() {
            // Every member was found, so some name is given twice.
            return Err(self.err(CdrErrorKind::UnknownField(
                fields.last().map(|(n, _)| n.clone()).unwrap_or_default(),
            )));
        }
        Ok(())
    }

    fn member(
        &mut self,
        t: &'a ResolvedType,
        value: &CdrValue,
        depth: usize,
    ) -> Result<(), CdrError> {
        let (bound, counted) = match t.array {
            ArrayKind::Single => return self.element(&t.base, value, depth),
            ArrayKind::Fixed(n) => (Some(n), false),
            ArrayKind::Bounded(n) => (Some(n), true),
            ArrayKind::Unbounded => (None, true),
        };
        let len = match value {
            CdrValue::Bytes(b) => b.len(),
            CdrValue::Array(a) => a.len(),
            other => return Err(self.err(mismatch("array", other))),
        };
        if counted {
            self.check_bound(len, bound)?;
            let n = self.length(len)?;
            self.u32(n);
        } else if let Some(n) = bound {
            if len as u64 != u64::from(n) {
                return Err(self.err(CdrErrorKind::FixedArrayLength {
                    expected: n,
                    got: len,
                }));
            }
        }
        match (value, &t.base) {
            (CdrValue::Bytes(b), ResolvedBase::Primitive(p)) if is_byte_like(*p) => {
                self.out.extend_from_slice(b);
                Ok(())
            }
            (CdrValue::Bytes(_), _) => Err(self.err(mismatch("array of non-bytes", value))),
            (CdrValue::Array(items), base) => {
                for (i, item) in items.iter().enumerate() {
                    self.path.push(Seg::Index(i));
                    self.element(base, item, depth)?;
                    self.path.pop();
                }
                Ok(())
            }
            _ => unreachable!("checked above"),
        }
    }

    fn element(
        &mut self,
        base: &'a ResolvedBase,
        value: &CdrValue,
        depth: usize,
    ) -> Result<(), CdrError> {
        match base {
            ResolvedBase::Primitive(p) => self.primitive(*p, value),
            ResolvedBase::String { bound } => {
                let CdrValue::String(s) = value else {
                    return Err(self.err(mismatch("string", value)));
                };
                self.check_bound(s.len(), *bound)?;
                if let Some(i) = s.bytes().position(|b| b == 0) {
                    return Err(self.err(CdrErrorKind::StringContainsNul(i)));
                }
                let n = self.length(s.len() + 1)?;
                self.u32(n);
                self.out.extend_from_slice(s.as_bytes());
                self.out.push(0);
                Ok(())
            }
            ResolvedBase::WString { bound } => {
                let CdrValue::WString(s) = value else {
                    return Err(self.err(mismatch("wstring", value)));
                };
                let units = s.encode_utf16().count();
                self.check_bound(units, *bound)?;
                let n = self.length(units)?;
                self.u32(n);
                for u in s.encode_utf16() {
                    self.out.extend_from_slice(&u32::from(u).to_le_bytes());
                }
                Ok(())
            }
            ResolvedBase::Nested(name) => self.structure(name, value, depth + 1),
        }
    }

    fn primitive(&mut self, p: Primitive, value: &CdrValue) -> Result<(), CdrError> {
        self.align(primitive_size(p));
        let int = |v: &CdrValue| -> Option<i128> {
            match v {
                CdrValue::Int(i) => Some((*i).into()),
                CdrValue::UInt(u) => Some((*u).into()),
                _ => None,
            }
        };
        match (p, value) {
            (Primitive::Bool, CdrValue::Bool(b)) => self.out.push(u8::from(*b)),
            (Primitive::Bool, v) => return Err(self.err(mismatch("bool", v))),
            (Primitive::Float32, CdrValue::Float32(f)) => {
                self.out.extend_from_slice(&f.to_le_bytes())
            }
            (Primitive::Float32, v) => return Err(self.err(mismatch("float32", v))),
            (Primitive::Float64, CdrValue::Float64(f)) => {
                self.out.extend_from_slice(&f.to_le_bytes())
            }
            (Primitive::Float64, v) => return Err(self.err(mismatch("float64", v))),
            (p, v) => {
                let Some(i) = int(v) else {
                    return Err(self.err(mismatch("integer", v)));
                };
                let (lo, hi) = p.integer_range().expect("integer primitive");
                if i < lo || i > hi {
                    return Err(self.err(CdrErrorKind::IntOutOfRange {
                        value: i,
                        primitive: p.msg_name(),
                    }));
                }
                let bytes = (i as u64).to_le_bytes();
                self.out.extend_from_slice(&bytes[..primitive_size(p)]);
            }
        }
        Ok(())
    }
}
