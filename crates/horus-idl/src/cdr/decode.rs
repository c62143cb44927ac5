//! CDR bytes → [`CdrValue`], bounded in time and memory by the input's length.

use super::error::{CdrError, CdrErrorKind};
use super::layout::{is_byte_like, padding_for, primitive_size, Path, Seg, Types, MAX_DEPTH};
use super::value::CdrValue;
use crate::ast::{ArrayKind, Primitive};
use crate::resolved::{ResolvedBase, ResolvedType};
use crate::resolved_set::Resolved;
use crate::type_name::TypeName;

/// Decodes ROS 2's CDR bytes (encapsulation header included) of a message of type
/// `type_name`; see [`decode_prefix`].
pub fn decode(
    resolved: &Resolved,
    type_name: &TypeName,
    bytes: &[u8],
) -> Result<CdrValue, CdrError> {
    decode_prefix(resolved, type_name, bytes).map(|(v, _)| v)
}

/// Decodes the message at the start of `bytes` and says where it ends (header
/// included).
///
/// Bytes after the message are not read: ROS 2's own buffers run on past the message
/// (rmw_fastrtps sizes them by Fast CDR's estimate, which counts alignment before empty
/// sequences that the bytes do not have, and leaves what was in memory there), and
/// Fast CDR ignores them too.
///
/// Every count is checked against the bytes left before anything is allocated (an
/// element counts at least one byte, so even zero-size elements cannot make a count
/// larger than the input).
pub fn decode_prefix(
    resolved: &Resolved,
    type_name: &TypeName,
    bytes: &[u8],
) -> Result<(CdrValue, usize), CdrError> {
    let mut d = Decoder {
        types: Types::new(resolved),
        data: bytes.get(4..).unwrap_or(&[]),
        pos: 0,
        path: Path::default(),
    };
    match bytes.get(..4) {
        Some([0x00, 0x01, _, _]) => {}
        _ => {
            let got = bytes[..bytes.len().min(4)].to_vec();
            return Err(d.err(CdrErrorKind::BadHeader(got)));
        }
    }
    let v = d.structure(type_name, 0)?;
    Ok((v, 4 + d.pos))
}

struct Decoder<'a, 'b> {
    types: Types<'a>,
    data: &'b [u8],
    pos: usize,
    path: Path<'a>,
}

impl<'a, 'b> Decoder<'a, 'b> {
    fn err(&self, kind: CdrErrorKind) -> CdrError {
        self.path.error(kind)
    }

    fn remaining(&self) -> usize {
        self.data.len() - self.pos
    }

    fn take(&mut self, n: usize) -> Result<&'b [u8], CdrError> {
        if n > self.remaining() {
            return Err(self.err(CdrErrorKind::Truncated {
                offset: self.pos,
                needed: n,
                remaining: self.remaining(),
            }));
        }
        let s = &self.data[self.pos..self.pos + n];
        self.pos += n;
        Ok(s)
    }

    fn align(&mut self, align: usize) -> Result<(), CdrError> {
        let pad = padding_for(self.pos, align);
        self.take(pad).map(|_| ())
    }

    fn u32(&mut self) -> Result<u32, CdrError> {
        self.align(4)?;
        let b = self.take(4)?;
        Ok(u32::from_le_bytes(b.try_into().expect("4 bytes")))
    }

    /// Fails unless `count` elements of at least `min_size` bytes (1 if less) fit in
    /// what is left.
    fn check_count(&self, count: u64, min_size: u64) -> Result<(), CdrError> {
        let min_bytes = count.saturating_mul(min_size.max(1));
        if min_bytes > self.remaining() as u64 {
            return Err(self.err(CdrErrorKind::CountTooLarge {
                count,
                min_bytes,
                remaining: self.remaining(),
            }));
        }
        Ok(())
    }

    fn check_bound(&self, len: u64, bound: Option<u32>) -> Result<(), CdrError> {
        match bound {
            Some(b) if len > u64::from(b) => {
                Err(self.err(CdrErrorKind::OverBound { len, bound: b }))
            }
            _ => Ok(()),
        }
    }

    fn structure(&mut self, name: &TypeName, depth: usize) -> Result<CdrValue, CdrError> {
        if depth >= MAX_DEPTH {
            return Err(self.err(CdrErrorKind::TooDeep { limit: MAX_DEPTH }));
        }
        let def = self.types.get(name, &self.path)?;
        let mut fields = Vec::with_capacity(def.members.len());
        for m in &def.members {
            self.path.push(Seg::Field(&m.name));
            let v = self.member(&m.member_type, depth)?;
            self.path.pop();
            fields.push((m.name.clone(), v));
        }
        Ok(CdrValue::Struct(fields))
    }

    fn member(&mut self, t: &'a ResolvedType, depth: usize) -> Result<CdrValue, CdrError> {
        let count = match t.array {
            ArrayKind::Single => return self.element(&t.base, depth),
            ArrayKind::Fixed(n) => n,
            ArrayKind::Bounded(b) => {
                let n = self.u32()?;
                self.check_bound(n.into(), Some(b))?;
                n
            }
            ArrayKind::Unbounded => self.u32()?,
        };
        let min = self.types.min_base_size(&t.base, &self.path, depth)?;
        self.check_count(count.into(), min)?;
        let count = count as usize;
        if let ResolvedBase::Primitive(p) = t.base {
            if is_byte_like(p) {
                return Ok(CdrValue::Bytes(self.take(count)?.to_vec()));
            }
        }
        let mut items = Vec::with_capacity(count);
        for i in 0..count {
            self.path.push(Seg::Index(i));
            items.push(self.element(&t.base, depth)?);
            self.path.pop();
        }
        Ok(CdrValue::Array(items))
    }

    fn element(&mut self, base: &'a ResolvedBase, depth: usize) -> Result<CdrValue, CdrError> {
        match base {
            ResolvedBase::Primitive(p) => self.primitive(*p),
            ResolvedBase::String { bound } => {
                let n = self.u32()?;
                self.check_count(n.into(), 1)?;
                let raw = self.take(n as usize)?;
                let text = match raw.split_last() {
                    // Fast CDR reads a length of 0 as the empty string.
                    None => &[][..],
                    Some((0, text)) => text,
                    Some(_) => return Err(self.err(CdrErrorKind::StringNotTerminated)),
                };
                if let Some(i) = text.iter().position(|&b| b == 0) {
                    return Err(self.err(CdrErrorKind::StringContainsNul(i)));
                }
                self.check_bound(text.len() as u64, *bound)?;
                let s = std::str::from_utf8(text)
                    .map_err(|e| self.err(CdrErrorKind::StringNotUtf8(e.valid_up_to())))?;
                Ok(CdrValue::String(s.to_string()))
            }
            ResolvedBase::WString { bound } => {
                let n = self.u32()?;
                self.check_count(n.into(), 4)?;
                self.check_bound(n.into(), *bound)?;
                let raw = self.take(n as usize * 4)?;
                let mut units = Vec::with_capacity(n as usize);
                for c in raw.chunks_exact(4) {
                    let u = u32::from_le_bytes(c.try_into().expect("4 bytes"));
                    let u =
                        u16::try_from(u).map_err(|_| self.err(CdrErrorKind::WStringNotUtf16))?;
                    units.push(u);
                }
                let s = String::from_utf16(&units)
                    .map_err(|_| self.err(CdrErrorKind::WStringNotUtf16))?;
                Ok(CdrValue::WString(s))
            }
            ResolvedBase::Nested(name) => self.structure(name, depth + 1),
        }
    }

    fn primitive(&mut self, p: Primitive) -> Result<CdrValue, CdrError> {
        let size = primitive_size(p);
        self.align(size)?;
        let b = self.take(size)?;
        let mut le = [0u8; 8];
        le[..size].copy_from_slice(b);
        let raw = u64::from_le_bytes(le);
        Ok(match p {
            Primitive::Bool => match raw {
                0 => CdrValue::Bool(false),
                1 => CdrValue::Bool(true),
                other => return Err(self.err(CdrErrorKind::InvalidBool(other as u8))),
            },
            Primitive::Float32 => CdrValue::Float32(f32::from_bits(raw as u32)),
            Primitive::Float64 => CdrValue::Float64(f64::from_bits(raw)),
            Primitive::Int8 => CdrValue::Int((raw as u8 as i8).into()),
            Primitive::Int16 => CdrValue::Int((raw as u16 as i16).into()),
            Primitive::Int32 => CdrValue::Int((raw as u32 as i32).into()),
            Primitive::Int64 => CdrValue::Int(raw as i64),
            Primitive::Byte
            | Primitive::Char
            | Primitive::UInt8
            | Primitive::UInt16
            | Primitive::UInt32
            | Primitive::UInt64 => CdrValue::UInt(raw),
        })
    }
}
