//! CDR (XCDR1, little-endian: what ROS 2 and rosbag2 write) encoding of horus message bytes,
//! and decoding back to the exact bytes.
//!
//! A horus message is its fields packed without padding (checked here: the fields of every
//! type must tile it exactly), optionally followed by a tail. CDR writes the same fields in
//! declaration order, each scalar aligned to its size relative to the end of the 4-byte
//! encapsulation header, then the tail as a `uint8[]` sequence (a 4-byte aligned `uint32`
//! length and the bytes). Because every part of the fixed layout is known in advance, a
//! [`CdrPlan`] computes once per channel which byte ranges move where; encoding and decoding
//! are then a handful of copies.

use horus::msgs::{FieldKind, MessageDescription, TypeDescription};

/// Encapsulation header: CDR_LE (`0x0001`), options 0.
pub const HEADER: [u8; 4] = [0x00, 0x01, 0x00, 0x00];

/// Largest fixed part a plan accepts (a description is untrusted input).
pub const MAX_FIXED: usize = 64 << 20;

/// Largest CDR body of the fixed part (alignment and the placeholder byte of empty types make
/// it larger than the horus bytes).
pub const MAX_CDR_FIXED: usize = 4 * MAX_FIXED;

/// Most steps (a type or a field visited) a plan may take. Every array element of a nested
/// message is visited, so the work is the number of elements, not the number of bytes: an
/// array of 2^63 zero-size elements has a size of 0 and made the planner loop 2^63 times.
/// 4 Mi steps is a few tens of milliseconds; a standard message takes tens.
pub const MAX_PLAN_STEPS: usize = 4 << 20;

/// Deepest nesting a plan follows.
pub const MAX_PLAN_DEPTH: usize = 64;

/// Why a description cannot be given a CDR plan.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PlanError {
    /// The fields of a type leave gaps or overlap: the bytes could not be reproduced.
    #[error("type {0}: fields do not tile the type exactly (gaps or overlaps)")]
    NotTiled(String),
    /// The fixed part is larger than [`MAX_FIXED`].
    #[error("type {0}: fixed part larger than {MAX_FIXED} bytes")]
    TooLarge(String),
    /// A nested type is missing or nests too deep (the description was not validated).
    #[error("type {0}: unresolved or too deeply nested (validate the description first)")]
    Unresolved(String),
    /// Planning would take more than [`MAX_PLAN_STEPS`] steps (arrays of many nested
    /// elements, e.g. of a zero-size type), or the CDR body would exceed [`MAX_CDR_FIXED`].
    #[error(
        "type {0}: too many nested array elements to plan (more than {MAX_PLAN_STEPS} steps or \
         {MAX_CDR_FIXED} bytes of CDR)"
    )]
    TooComplex(String),
}

/// Why CDR bytes are not a message of the plan's type.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CdrError {
    /// Shorter than the header and fixed part.
    #[error("{got} bytes of CDR, the type needs at least {need}")]
    TooShort {
        /// Bytes given.
        got: usize,
        /// Bytes needed.
        need: usize,
    },
    /// Not little-endian plain CDR.
    #[error("encapsulation {0:#06x} is not CDR_LE (0x0001)")]
    Encapsulation(u16),
    /// The tail's length runs past the end.
    #[error("tail of {len} bytes declared, {available} present")]
    BadTail {
        /// Declared.
        len: usize,
        /// Present.
        available: usize,
    },
    /// Horus bytes of the wrong size for the type.
    #[error("{got} message bytes, the type has {need}{}", if *.tail { " plus a tail" } else { "" })]
    WrongSize {
        /// Bytes given.
        got: usize,
        /// Fixed part.
        need: usize,
        /// Whether the type has a tail.
        tail: bool,
    },
}

/// One contiguous copy between the horus bytes and the CDR body.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Span {
    horus: usize,
    cdr: usize,
    len: usize,
}

/// Where each byte of a type's fixed part goes in CDR, computed once.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CdrPlan {
    spans: Vec<Span>,
    /// Size of the horus fixed part.
    fixed: usize,
    /// CDR body bytes of the fixed part (after the header).
    cdr_fixed: usize,
    tail: bool,
}

/// Work left to a plan being computed, and the name of the root type for errors.
struct Budget<'a> {
    steps: usize,
    root: &'a str,
}

impl Budget<'_> {
    fn step(&mut self) -> Result<(), PlanError> {
        self.steps = self
            .steps
            .checked_sub(1)
            .ok_or_else(|| PlanError::TooComplex(self.root.to_owned()))?;
        Ok(())
    }

    fn too_complex(&self) -> PlanError {
        PlanError::TooComplex(self.root.to_owned())
    }
}

fn align(pos: usize, a: usize) -> usize {
    pos.div_ceil(a) * a
}

/// `pos + len` as a CDR position, within [`MAX_CDR_FIXED`].
fn advance(pos: usize, len: usize, b: &Budget<'_>) -> Result<usize, PlanError> {
    pos.checked_add(len)
        .filter(|&p| p <= MAX_CDR_FIXED)
        .ok_or_else(|| b.too_complex())
}

impl CdrPlan {
    /// The plan for a validated description.
    pub fn new(d: &MessageDescription) -> Result<CdrPlan, PlanError> {
        let root = d
            .types
            .first()
            .ok_or_else(|| PlanError::Unresolved(String::new()))?;
        if root.size > MAX_FIXED {
            return Err(PlanError::TooLarge(root.name.clone()));
        }
        for t in &d.types {
            check_tiled(t)?;
        }
        let mut plan = CdrPlan {
            spans: Vec::new(),
            fixed: root.size,
            cdr_fixed: 0,
            tail: root.has_tail,
        };
        let mut pos = 0;
        let mut budget = Budget {
            steps: MAX_PLAN_STEPS,
            root: &root.name,
        };
        plan.walk_type(d, root, 0, &mut pos, 0, &mut budget)?;
        plan.cdr_fixed = pos;
        Ok(plan)
    }

    fn walk_type(
        &mut self,
        d: &MessageDescription,
        t: &TypeDescription,
        base: usize,
        pos: &mut usize,
        depth: usize,
        budget: &mut Budget<'_>,
    ) -> Result<(), PlanError> {
        if depth > MAX_PLAN_DEPTH {
            return Err(PlanError::Unresolved(t.name.clone()));
        }
        budget.step()?;
        if t.fields.is_empty() {
            // `uint8 structure_needs_at_least_one_member`: one zero byte, no horus bytes.
            *pos = advance(*pos, 1, budget)?;
        }
        for f in &t.fields {
            let at = base
                .checked_add(f.offset)
                .ok_or_else(|| PlanError::NotTiled(t.name.clone()))?;
            self.walk_kind(d, &f.kind, at, f.size, pos, depth + 1, &t.name, budget)?;
        }
        Ok(())
    }

    #[allow(clippy::too_many_arguments)]
    fn walk_kind(
        &mut self,
        d: &MessageDescription,
        kind: &FieldKind,
        at: usize,
        size: usize,
        pos: &mut usize,
        depth: usize,
        owner: &str,
        budget: &mut Budget<'_>,
    ) -> Result<(), PlanError> {
        budget.step()?;
        let (elem, count) = crate::ros2msg::flatten(kind);
        let count = count.unwrap_or(1);
        match elem {
            FieldKind::Scalar(s) => {
                // Packed scalars of one size: aligned once, then contiguous in both.
                if count.checked_mul(s.size()) != Some(size) {
                    return Err(PlanError::NotTiled(owner.to_owned()));
                }
                *pos = align(*pos, s.size());
                self.push(at, *pos, size);
                *pos = advance(*pos, size, budget)?;
            }
            FieldKind::Message(name) => {
                let t = d
                    .get(name)
                    .ok_or_else(|| PlanError::Unresolved(owner.to_owned()))?;
                if count.checked_mul(t.size) != Some(size) {
                    return Err(PlanError::NotTiled(owner.to_owned()));
                }
                // Each element costs at least one step below, so a count beyond the budget
                // (2^63 elements of a zero-size type) fails here, not after 2^63 iterations.
                if count > budget.steps {
                    return Err(budget.too_complex());
                }
                for i in 0..count {
                    // i × t.size ≤ size (checked above), and at + size is inside the root.
                    self.walk_type(d, t, at + i * t.size, pos, depth, budget)?;
                }
            }
            FieldKind::Array { .. } => unreachable!("flatten strips arrays"),
        }
        Ok(())
    }

    fn push(&mut self, horus: usize, cdr: usize, len: usize) {
        if len == 0 {
            return;
        }
        if let Some(last) = self.spans.last_mut() {
            if last.horus + last.len == horus && last.cdr + last.len == cdr {
                last.len += len;
                return;
            }
        }
        self.spans.push(Span { horus, cdr, len });
    }

    /// Size of the horus fixed part.
    pub fn fixed_size(&self) -> usize {
        self.fixed
    }

    /// Encodes one horus message (fixed part and tail) as CDR, header included.
    pub fn encode(&self, bytes: &[u8], out: &mut Vec<u8>) -> Result<(), CdrError> {
        if bytes.len() < self.fixed || (!self.tail && bytes.len() != self.fixed) {
            return Err(CdrError::WrongSize {
                got: bytes.len(),
                need: self.fixed,
                tail: self.tail,
            });
        }
        out.clear();
        out.extend_from_slice(&HEADER);
        out.resize(4 + self.cdr_fixed, 0);
        let body = &mut out[4..];
        for s in &self.spans {
            body[s.cdr..s.cdr + s.len].copy_from_slice(&bytes[s.horus..s.horus + s.len]);
        }
        if self.tail {
            let tail = &bytes[self.fixed..];
            out.resize(4 + align(self.cdr_fixed, 4), 0);
            out.extend_from_slice(&(tail.len() as u32).to_le_bytes());
            out.extend_from_slice(tail);
        }
        Ok(())
    }

    /// Decodes CDR (header included) back into the exact horus bytes.
    pub fn decode(&self, cdr: &[u8], out: &mut Vec<u8>) -> Result<(), CdrError> {
        let need = 4 + self.cdr_fixed;
        if cdr.len() < need {
            return Err(CdrError::TooShort {
                got: cdr.len(),
                need,
            });
        }
        let enc = u16::from_be_bytes([cdr[0], cdr[1]]);
        if enc != 0x0001 {
            return Err(CdrError::Encapsulation(enc));
        }
        let body = &cdr[4..];
        out.clear();
        out.resize(self.fixed, 0);
        for s in &self.spans {
            out[s.horus..s.horus + s.len].copy_from_slice(&body[s.cdr..s.cdr + s.len]);
        }
        if self.tail {
            let at = align(self.cdr_fixed, 4);
            let Some(len_bytes) = body.get(at..at + 4) else {
                return Err(CdrError::TooShort {
                    got: cdr.len(),
                    need: 4 + at + 4,
                });
            };
            let len = u32::from_le_bytes(len_bytes.try_into().expect("4 bytes")) as usize;
            let tail = body
                .get(at + 4..)
                .filter(|t| t.len() >= len)
                .ok_or(CdrError::BadTail {
                    len,
                    available: body.len().saturating_sub(at + 4),
                })?;
            out.extend_from_slice(&tail[..len]);
        }
        Ok(())
    }
}

/// Every byte of `t` belongs to exactly one field.
fn check_tiled(t: &TypeDescription) -> Result<(), PlanError> {
    let mut ranges: Vec<(usize, usize)> = t.fields.iter().map(|f| (f.offset, f.size)).collect();
    ranges.sort_unstable();
    let mut end = 0usize;
    for (off, size) in ranges {
        if off != end {
            return Err(PlanError::NotTiled(t.name.clone()));
        }
        end = off
            .checked_add(size)
            .ok_or_else(|| PlanError::NotTiled(t.name.clone()))?;
    }
    if end != t.size {
        return Err(PlanError::NotTiled(t.name.clone()));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use horus::msgs::{CmdVel, FieldKind, Imu, Message, PointCloud};

    fn pattern(n: usize) -> Vec<u8> {
        (0..n).map(|i| (i * 7 + 3) as u8).collect()
    }

    #[test]
    fn cmd_vel_aligns_after_the_header() {
        // u64 stamp, f32 linear, f32 angular (+ whatever else): the u64 starts at body 0.
        let plan = CdrPlan::new(&MessageDescription::of::<CmdVel>()).unwrap();
        let bytes = pattern(CmdVel::SCHEMA.size() as usize);
        let mut cdr = Vec::new();
        plan.encode(&bytes, &mut cdr).unwrap();
        assert_eq!(&cdr[..4], &HEADER);
        assert_eq!(&cdr[4..12], &bytes[..8]);
        let mut back = Vec::new();
        plan.decode(&cdr, &mut back).unwrap();
        assert_eq!(back, bytes);
    }

    #[test]
    fn nested_and_tail_round_trip() {
        for d in [
            MessageDescription::of::<Imu>(),
            MessageDescription::of::<PointCloud>(),
        ] {
            let plan = CdrPlan::new(&d).unwrap();
            let mut bytes = pattern(d.root().size);
            if d.root().has_tail {
                bytes.extend(pattern(37));
            }
            let mut cdr = Vec::new();
            plan.encode(&bytes, &mut cdr).unwrap();
            let mut back = Vec::new();
            plan.decode(&cdr, &mut back).unwrap();
            assert_eq!(back, bytes, "{}", d.root().name);
            // Cut anywhere: an error, never a panic.
            for cut in 0..cdr.len() {
                let _ = plan.decode(&cdr[..cut], &mut back);
            }
        }
    }

    /// A type of `fields` (name, kind, size) laid end to end, with its true layout hash.
    fn ty(name: &str, fields: &[(&str, FieldKind, usize)]) -> TypeDescription {
        let mut offset = 0;
        let mut t = TypeDescription {
            name: name.into(),
            version: 1,
            size: 0,
            align: 1,
            has_tail: false,
            layout_hash: 0,
            fields: fields
                .iter()
                .map(|(n, kind, size)| {
                    let f = horus::msgs::FieldDescription {
                        name: (*n).into(),
                        ty: String::new(),
                        offset,
                        size: *size,
                        kind: kind.clone(),
                    };
                    offset += size;
                    f
                })
                .collect(),
        };
        t.size = offset;
        t.layout_hash = t.computed_hash();
        t
    }

    fn array_of(name: &str, len: usize) -> FieldKind {
        FieldKind::Array {
            of: Box::new(FieldKind::Message(name.into())),
            len,
        }
    }

    #[test]
    fn zero_size_nested_type_does_not_loop() {
        // `[Empty; 2^63]` has size 0, so it tiles a 0-byte field; the planner visited every
        // element (2^63 iterations). Now: refused at once, as is a product of counts each
        // under the budget.
        let d = MessageDescription {
            types: vec![
                ty("t/Root", &[("e", array_of("t/Empty", 1 << 63), 0)]),
                ty("t/Empty", &[]),
            ],
            ros2: None,
        };
        d.validate()
            .expect("a valid description: sizes and hashes agree");
        assert_eq!(
            CdrPlan::new(&d),
            Err(PlanError::TooComplex("t/Root".into()))
        );
        let d = MessageDescription {
            types: vec![
                ty("t/Root", &[("e", array_of("t/Mid", 1 << 20), 0)]),
                ty("t/Mid", &[("e", array_of("t/Empty", 1 << 20), 0)]),
                ty("t/Empty", &[]),
            ],
            ros2: None,
        };
        d.validate().unwrap();
        assert_eq!(
            CdrPlan::new(&d),
            Err(PlanError::TooComplex("t/Root".into()))
        );
        // A few empty elements are fine: one placeholder byte each.
        let d = MessageDescription {
            types: vec![
                ty("t/Root", &[("e", array_of("t/Empty", 3), 0)]),
                ty("t/Empty", &[]),
            ],
            ros2: None,
        };
        let plan = CdrPlan::new(&d).unwrap();
        let mut cdr = Vec::new();
        plan.encode(&[], &mut cdr).unwrap();
        assert_eq!(cdr, [0, 1, 0, 0, 0, 0, 0]);
        let mut back = vec![9];
        plan.decode(&cdr, &mut back).unwrap();
        assert!(back.is_empty());
    }

    #[test]
    fn sequence_count_larger_than_bytes_is_an_error() {
        let plan = CdrPlan::new(&MessageDescription::of::<PointCloud>()).unwrap();
        let mut bytes = pattern(plan.fixed_size());
        bytes.extend(pattern(40));
        let mut cdr = Vec::new();
        plan.encode(&bytes, &mut cdr).unwrap();
        let count_at = cdr.len() - 40 - 4;
        let mut out = Vec::new();
        for count in [41u32, 1 << 20, u32::MAX] {
            cdr[count_at..count_at + 4].copy_from_slice(&count.to_le_bytes());
            assert_eq!(
                plan.decode(&cdr, &mut out),
                Err(CdrError::BadTail {
                    len: count as usize,
                    available: 40
                })
            );
            // Nothing was allocated for the claimed count.
            assert!(out.capacity() < 1 << 20);
        }
    }

    #[test]
    fn an_empty_description_is_an_error() {
        let d = MessageDescription {
            types: Vec::new(),
            ros2: None,
        };
        assert!(matches!(CdrPlan::new(&d), Err(PlanError::Unresolved(_))));
    }

    #[test]
    fn gaps_are_refused() {
        let mut d = MessageDescription::of::<CmdVel>();
        d.types[0].fields.pop();
        assert!(matches!(CdrPlan::new(&d), Err(PlanError::NotTiled(_))));
    }

    #[test]
    fn wrong_sizes_and_encapsulation_are_errors() {
        let plan = CdrPlan::new(&MessageDescription::of::<CmdVel>()).unwrap();
        let mut out = Vec::new();
        assert!(plan.encode(&[0; 3], &mut out).is_err());
        let mut cdr = Vec::new();
        plan.encode(&pattern(plan.fixed_size()), &mut cdr).unwrap();
        cdr[1] = 0; // CDR_BE
        assert_eq!(plan.decode(&cdr, &mut out), Err(CdrError::Encapsulation(0)));
    }
}
