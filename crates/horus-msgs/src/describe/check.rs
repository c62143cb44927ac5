//! [`MessageDescription::validate`](super::MessageDescription::validate): the checks of a
//! description that may come from an untrusted peer, in time linear in its size.
//!
//! Each type is visited once: a depth-first walk over the `Message` references with three
//! colours (unvisited, on the current path, done) finds cycles, and each type's nesting
//! height is computed once and memoised, so a chain of types that each refer to the next
//! many times costs one visit per field, not one per path (which grows as fields^depth).

use std::collections::HashMap;

use super::{
    DescriptionError, FieldKind, MessageDescription, TypeDescription, MAX_ALIGN, MAX_DEPTH,
    MAX_FIELDS, MAX_TOTAL_FIELDS, MAX_TYPES, MAX_TYPE_SIZE,
};

/// Where the walk stands with a type.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Mark {
    /// Not visited yet.
    New,
    /// On the walk's current path: reaching it again is a cycle.
    OnPath,
    /// Visited: its nesting height (levels of messages and arrays below it).
    Height(usize),
}

/// The validation of one description: its types by name and the memoised heights.
pub(super) struct Checker<'a> {
    d: &'a MessageDescription,
    index: HashMap<&'a str, usize>,
    marks: Vec<Mark>,
    /// Type visits, for the linear-time test.
    pub(super) visits: usize,
}

impl<'a> Checker<'a> {
    /// Checks the sizes of the description and indexes its types by name.
    pub(super) fn new(d: &'a MessageDescription) -> Result<Checker<'a>, DescriptionError> {
        if d.types.is_empty() {
            return Err(DescriptionError::Empty);
        }
        if d.types.len() > MAX_TYPES {
            return Err(DescriptionError::TooLarge(format!(
                "{} types (at most {MAX_TYPES})",
                d.types.len()
            )));
        }
        let mut total = 0usize;
        let mut index = HashMap::with_capacity(d.types.len());
        for (i, t) in d.types.iter().enumerate() {
            if t.fields.len() > MAX_FIELDS {
                return Err(DescriptionError::TooLarge(format!(
                    "{} has {} fields (at most {MAX_FIELDS})",
                    t.name,
                    t.fields.len()
                )));
            }
            total += t.fields.len();
            if total > MAX_TOTAL_FIELDS {
                return Err(DescriptionError::TooLarge(format!(
                    "more than {MAX_TOTAL_FIELDS} fields in all"
                )));
            }
            if t.size > MAX_TYPE_SIZE {
                return Err(DescriptionError::BadType {
                    ty: t.name.clone(),
                    reason: format!("too large: {} bytes (at most {MAX_TYPE_SIZE})", t.size),
                });
            }
            if !t.align.is_power_of_two() || t.align > MAX_ALIGN {
                return Err(DescriptionError::BadType {
                    ty: t.name.clone(),
                    reason: format!("alignment {} (a power of two up to {MAX_ALIGN})", t.align),
                });
            }
            if index.insert(t.name.as_str(), i).is_some() {
                return Err(DescriptionError::Duplicate(t.name.clone()));
            }
        }
        Ok(Checker {
            d,
            marks: vec![Mark::New; d.types.len()],
            index,
            visits: 0,
        })
    }

    /// Checks every type: fields inside it with kinds of their size, references resolved,
    /// nesting bounded and acyclic, the layout hash recomputed.
    pub(super) fn check_all(&mut self) -> Result<(), DescriptionError> {
        for t in &self.d.types {
            for f in &t.fields {
                let bad = |reason: String| DescriptionError::BadField {
                    ty: t.name.clone(),
                    field: f.name.clone(),
                    reason,
                };
                let end = f.offset.checked_add(f.size);
                if end.is_none_or(|e| e > t.size) {
                    return Err(bad(format!(
                        "bytes {}+{} outside the {}-byte type",
                        f.offset, f.size, t.size
                    )));
                }
                let size = self.kind_size(t, &f.name, &f.kind)?;
                if size != f.size {
                    return Err(bad(format!(
                        "kind needs {size} bytes, field has {}",
                        f.size
                    )));
                }
                // The deepest nesting reached from a field at depth 0.
                if self.kind_height(t, &f.name, &f.kind, 0)? > MAX_DEPTH {
                    return Err(DescriptionError::TooDeep(t.name.clone()));
                }
            }
            let computed = t.computed_hash();
            if computed != t.layout_hash {
                return Err(DescriptionError::HashMismatch {
                    ty: t.name.clone(),
                    computed,
                    claimed: t.layout_hash,
                });
            }
        }
        Ok(())
    }

    fn resolve(
        &self,
        t: &TypeDescription,
        field: &str,
        name: &str,
    ) -> Result<usize, DescriptionError> {
        self.index
            .get(name)
            .copied()
            .ok_or_else(|| DescriptionError::Unresolved {
                ty: t.name.clone(),
                field: field.to_owned(),
                missing: name.to_owned(),
            })
    }

    /// Size in bytes of a value of `kind` (a nested message's stated size: its own fields
    /// are checked against it when that type is checked). Loops over nested arrays, so a
    /// hand-built kind nested arbitrarily deep costs no stack.
    fn kind_size(
        &self,
        t: &TypeDescription,
        field: &str,
        kind: &FieldKind,
    ) -> Result<usize, DescriptionError> {
        let mut factor = 1usize;
        let mut k = kind;
        let mut levels = 0usize;
        let overflow = || DescriptionError::BadField {
            ty: t.name.clone(),
            field: field.to_owned(),
            reason: "array size overflows".into(),
        };
        loop {
            match k {
                FieldKind::Scalar(s) => return factor.checked_mul(s.size()).ok_or_else(overflow),
                FieldKind::Message(name) => {
                    let size = self.d.types[self.resolve(t, field, name)?].size;
                    return factor.checked_mul(size).ok_or_else(overflow);
                }
                FieldKind::Array { of, len } => {
                    levels += 1;
                    if levels > MAX_DEPTH {
                        return Err(DescriptionError::TooDeep(t.name.clone()));
                    }
                    factor = factor.checked_mul(*len).ok_or_else(overflow)?;
                    k = of;
                }
            }
        }
    }

    /// Levels of nesting below a field of `kind` (0 for a scalar); `path` is how many
    /// types the walk is inside. Fails once the height exceeds [`MAX_DEPTH`], so the
    /// recursion (one frame per nested type) is bounded too.
    fn kind_height(
        &mut self,
        t: &TypeDescription,
        field: &str,
        kind: &FieldKind,
        path: usize,
    ) -> Result<usize, DescriptionError> {
        let mut arrays = 0usize;
        let mut k = kind;
        while let FieldKind::Array { of, .. } = k {
            arrays += 1;
            if arrays > MAX_DEPTH {
                return Err(DescriptionError::TooDeep(t.name.clone()));
            }
            k = of;
        }
        let below = match k {
            FieldKind::Message(name) => {
                let i = self.resolve(t, field, name)?;
                self.type_height(i, path + arrays + 1)?
            }
            _ => 0,
        };
        Ok(arrays + below)
    }

    /// Levels of nesting inside type `i` (1 for a type with fields, 0 for one without),
    /// memoised. `path` is the depth at which the type is reached.
    fn type_height(&mut self, i: usize, path: usize) -> Result<usize, DescriptionError> {
        let d = self.d;
        let t = &d.types[i];
        match self.marks[i] {
            Mark::Height(h) => return Ok(h),
            Mark::OnPath => return Err(DescriptionError::Cycle(t.name.clone())),
            Mark::New => {}
        }
        if path > MAX_DEPTH + 1 {
            return Err(DescriptionError::TooDeep(t.name.clone()));
        }
        self.visits += 1;
        self.marks[i] = Mark::OnPath;
        let mut h = 0;
        for f in &t.fields {
            h = h.max(1 + self.kind_height(t, &f.name, &f.kind, path)?);
            if h > MAX_DEPTH {
                return Err(DescriptionError::TooDeep(t.name.clone()));
            }
        }
        self.marks[i] = Mark::Height(h);
        Ok(h)
    }
}
