//! CDR bytes checked against a type without building a value: what [`super::decode_prefix`]
//! accepts, at the cost of walking the bytes once and allocating nothing.
//!
//! A bridge or recorder that only needs to know that untrusted bytes are a well-formed
//! message of the type (and where it ends) should not build a [`super::CdrValue`] tree per
//! message (a 1 MiB point cloud copied, a 720-range scan as 720 boxed values). A
//! [`CdrCheck`] is made once per type (it computes every structure's minimum wire size up
//! front, the only allocation), then [`CdrCheck::check_prefix`] walks the bytes with the
//! same rules as the decoder: the encapsulation header, alignment, every count checked
//! against the bytes left before it is used, bounds, `bool` 0/1, strings terminated, free of
//! NUL and UTF-8, wide strings UTF-16, nesting at most [`MAX_DEPTH`]. Arrays of non-`bool`
//! primitives are skipped in one step (they are valid whatever their bytes).
//!
//! On bad input the error is the decoder's own (with the field path): the bytes are decoded
//! once more to make it, so only bad input pays for an error message. The fuzz target
//! `cdr_check` holds the two to the same verdict and the same end.

use std::collections::HashMap;

use super::decode::decode_prefix;
use super::error::{CdrError, CdrErrorKind};
use super::layout::{padding_for, primitive_size, Path, Types, MAX_DEPTH};
use crate::ast::{ArrayKind, Primitive};
use crate::resolved::{ResolvedBase, ResolvedType};
use crate::resolved_set::Resolved;
use crate::type_name::TypeName;

/// A type's CDR checker: made once, then [`CdrCheck::check_prefix`] per message.
#[derive(Debug, Clone)]
pub struct CdrCheck {
    resolved: Resolved,
    root: TypeName,
    /// Fewest wire bytes of each structure (those whose nesting is within [`MAX_DEPTH`]).
    min_sizes: HashMap<TypeName, u64>,
}

/// The walk failed; the caller asks the decoder why.
struct Bad;

type Step = Result<(), Bad>;

impl CdrCheck {
    /// A checker of messages of type `root` (one of `resolved`'s structures).
    pub fn new(resolved: Resolved, root: TypeName) -> CdrCheck {
        let mut min_sizes = HashMap::new();
        {
            let mut types = Types::new(&resolved);
            let path = Path::default();
            for def in resolved.structs() {
                // A structure nested too deep has no entry: a message reaching it is
                // refused (the decoder says why).
                if let Ok(size) = types.min_struct_size(&def.name, &path, 1) {
                    min_sizes.insert(def.name.clone(), size);
                }
            }
        }
        CdrCheck {
            resolved,
            root,
            min_sizes,
        }
    }

    /// The type it checks.
    pub fn root(&self) -> &TypeName {
        &self.root
    }

    /// Checks the message at the start of `bytes` (encapsulation header included) and
    /// says where it ends, exactly as [`decode_prefix`] would, without building a value
    /// or allocating (bytes after the message are not read).
    pub fn check_prefix(&self, bytes: &[u8]) -> Result<usize, CdrError> {
        let ok = matches!(bytes.get(..4), Some([0x00, 0x01, _, _]));
        let mut w = Walk {
            check: self,
            data: bytes.get(4..).unwrap_or(&[]),
            pos: 0,
        };
        match ok.then(|| w.structure(&self.root, 0)) {
            Some(Ok(())) => Ok(4 + w.pos),
            _ => Err(self.why(bytes)),
        }
    }

    /// The decoder's error for bytes the walk refused.
    fn why(&self, bytes: &[u8]) -> CdrError {
        match decode_prefix(&self.resolved, &self.root, bytes) {
            Err(e) => e,
            // The walk and the decoder follow the same rules (held together by the fuzz
            // target `cdr_check`); should they ever differ, the bytes stay refused.
            Ok(_) => Path::default().error(CdrErrorKind::UnknownType(format!(
                "{} (checker and decoder disagree)",
                self.root
            ))),
        }
    }
}

/// One message being walked.
struct Walk<'c, 'b> {
    check: &'c CdrCheck,
    data: &'b [u8],
    pos: usize,
}

impl<'c> Walk<'c, '_> {
    fn remaining(&self) -> usize {
        self.data.len() - self.pos
    }

    fn take(&mut self, n: usize) -> Result<&[u8], Bad> {
        if n > self.remaining() {
            return Err(Bad);
        }
        let s = &self.data[self.pos..self.pos + n];
        self.pos += n;
        Ok(s)
    }

    fn align(&mut self, align: usize) -> Step {
        let pad = padding_for(self.pos, align);
        self.take(pad).map(|_| ())
    }

    fn u32(&mut self) -> Result<u32, Bad> {
        self.align(4)?;
        let b = self.take(4)?;
        Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }

    /// As the decoder's: `count` elements of at least `min_size` bytes (1 if less) fit.
    fn check_count(&self, count: u64, min_size: u64) -> Step {
        let min_bytes = count.saturating_mul(min_size.max(1));
        if min_bytes > self.remaining() as u64 {
            return Err(Bad);
        }
        Ok(())
    }

    fn check_bound(len: u64, bound: Option<u32>) -> Step {
        match bound {
            Some(b) if len > u64::from(b) => Err(Bad),
            _ => Ok(()),
        }
    }

    fn min_base_size(&self, base: &ResolvedBase) -> Result<u64, Bad> {
        Ok(match base {
            ResolvedBase::Primitive(p) => primitive_size(*p) as u64,
            ResolvedBase::String { .. } | ResolvedBase::WString { .. } => 4,
            ResolvedBase::Nested(name) => *self.check.min_sizes.get(name).ok_or(Bad)?,
        })
    }

    fn structure(&mut self, name: &'c TypeName, depth: usize) -> Step {
        if depth >= MAX_DEPTH {
            return Err(Bad);
        }
        let def = self.check.resolved.get_struct(name).ok_or(Bad)?;
        for m in &def.members {
            self.member(&m.member_type, depth)?;
        }
        Ok(())
    }

    fn member(&mut self, t: &'c ResolvedType, depth: usize) -> Step {
        let count = match t.array {
            ArrayKind::Single => return self.element(&t.base, depth),
            ArrayKind::Fixed(n) => n,
            ArrayKind::Bounded(b) => {
                let n = self.u32()?;
                Self::check_bound(n.into(), Some(b))?;
                n
            }
            ArrayKind::Unbounded => self.u32()?,
        };
        let min = self.min_base_size(&t.base)?;
        self.check_count(count.into(), min)?;
        match &t.base {
            // Valid whatever their bytes: aligned once, then `count` items back to back
            // (an item's size is its alignment, so none needs padding after the first).
            ResolvedBase::Primitive(p) if *p != Primitive::Bool => {
                if count > 0 {
                    let size = primitive_size(*p);
                    self.align(size)?;
                    self.take(count as usize * size)?;
                }
                Ok(())
            }
            base => {
                for _ in 0..count {
                    self.element(base, depth)?;
                }
                Ok(())
            }
        }
    }

    fn element(&mut self, base: &'c ResolvedBase, depth: usize) -> Step {
        match base {
            ResolvedBase::Primitive(p) => {
                let size = primitive_size(*p);
                self.align(size)?;
                let b = self.take(size)?;
                if *p == Primitive::Bool && b[0] > 1 {
                    return Err(Bad);
                }
                Ok(())
            }
            ResolvedBase::String { bound } => {
                let n = self.u32()?;
                self.check_count(n.into(), 1)?;
                let raw = self.take(n as usize)?;
                let text = match raw.split_last() {
                    None => &[][..],
                    Some((0, text)) => text,
                    Some(_) => return Err(Bad),
                };
                if text.contains(&0) {
                    return Err(Bad);
                }
                Self::check_bound(text.len() as u64, *bound)?;
                std::str::from_utf8(text).map_err(|_| Bad)?;
                Ok(())
            }
            ResolvedBase::WString { bound } => {
                let n = self.u32()?;
                self.check_count(n.into(), 4)?;
                Self::check_bound(n.into(), *bound)?;
                let raw = self.take(n as usize * 4)?;
                let unit = |c: &[u8]| u32::from_le_bytes([c[0], c[1], c[2], c[3]]);
                // Units above 0xFFFF, then unpaired surrogates, refused (as the decoder).
                if raw.chunks_exact(4).any(|c| unit(c) > 0xFFFF) {
                    return Err(Bad);
                }
                let units = raw.chunks_exact(4).map(|c| unit(c) as u16);
                if char::decode_utf16(units).all(|c| c.is_ok()) {
                    Ok(())
                } else {
                    Err(Bad)
                }
            }
            ResolvedBase::Nested(name) => self.structure(name, depth + 1),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::InterfaceSet;

    fn standard(name: &str) -> CdrCheck {
        let resolved = InterfaceSet::standard().unwrap().resolve().unwrap();
        CdrCheck::new(resolved, TypeName::parse(name).unwrap())
    }

    #[test]
    fn a_well_formed_message_checks_and_ends_where_the_decoder_says() {
        let c = standard("std_msgs/msg/String");
        let msg = [0, 1, 0, 0, 3, 0, 0, 0, b'o', b'k', 0, 0xee, 0xee];
        assert_eq!(c.check_prefix(&msg).unwrap(), 11);
        let (_, end) = decode_prefix(&c.resolved, &c.root, &msg).unwrap();
        assert_eq!(end, 11);
    }

    #[test]
    fn every_way_a_payload_is_malformed_is_refused_with_the_decoders_error() {
        let c = standard("std_msgs/msg/String");
        for bad in [
            &b""[..],
            &[0, 0, 0, 0, 3, 0, 0, 0, b'o', b'k', 0], // big-endian header
            &[0, 1, 0, 0, 0xf0, 0xff, 0xff, 0xff, b'x', 0], // huge length
            &[0, 1, 0, 0, 9, 0, 0, 0, b'a', b'b'],    // truncated
            &[0, 1, 0, 0, 3, 0, 0, 0, b'o', b'k', 1], // not terminated
            &[0, 1, 0, 0, 3, 0, 0, 0, b'o', 0, 0],    // NUL inside
            &[0, 1, 0, 0, 3, 0, 0, 0, 0xff, 0xfe, 0], // not UTF-8
        ] {
            let want = decode_prefix(&c.resolved, &c.root, bad).unwrap_err();
            assert_eq!(c.check_prefix(bad).unwrap_err(), want, "{bad:?}");
        }
    }

    #[test]
    fn a_huge_sequence_count_is_refused_before_anything_is_read() {
        let c = standard("sensor_msgs/msg/PointCloud2");
        // Zeros read as a valid empty cloud (a trailing run of zeros is not read).
        let mut b = vec![0, 1, 0, 0];
        b.extend_from_slice(&[0u8; 256]);
        let (_, end) = decode_prefix(&c.resolved, &c.root, &b).unwrap();
        assert_eq!(c.check_prefix(&b).unwrap(), end);
        // `data` (its count right before `is_dense`, the last byte) claims 4 Gi bytes.
        let mut huge = b[..end].to_vec();
        let at = end - 1 - 4;
        huge[at..at + 4].copy_from_slice(&u32::MAX.to_le_bytes());
        let want = decode_prefix(&c.resolved, &c.root, &huge).unwrap_err();
        assert_eq!(c.check_prefix(&huge).unwrap_err(), want);
    }

    #[test]
    fn arrays_of_numbers_and_nested_messages_check_as_the_decoder_reads_them() {
        for name in [
            "sensor_msgs/msg/LaserScan",
            "sensor_msgs/msg/Imu",
            "tf2_msgs/msg/TFMessage",
            "sensor_msgs/msg/PointCloud2",
        ] {
            let c = standard(name);
            // Every prefix of a message with content: same verdict, same end.
            let mut b = vec![0, 1, 0, 0];
            b.extend((0..600u32).map(|i| if i % 7 == 0 { 1 } else { 0 }));
            for cut in 0..b.len() {
                let want = decode_prefix(&c.resolved, &c.root, &b[..cut]).map(|(_, e)| e);
                assert_eq!(c.check_prefix(&b[..cut]), want, "{name} cut at {cut}");
            }
        }
    }
}
