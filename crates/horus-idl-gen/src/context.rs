//! What every emitter needs: the resolved types, which packages are generated here, and
//! where the others and the run-time crate live.

use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet};

use horus_idl::{ArrayKind, Resolved, StructDef, TypeName};

use crate::error::GenError;
use crate::names::{module_ident, type_ident};
use crate::options::{absolute_path, GenOptions};
use crate::types::{primitive_size, Elem};

pub(crate) struct Ctx<'r> {
    pub(crate) resolved: &'r Resolved,
    /// Packages generated in this output.
    pub(crate) local: BTreeSet<String>,
    /// Packages generated elsewhere: package → module path.
    pub(crate) external: BTreeMap<String, String>,
    /// Path of the run-time crate (`::horus_cdr`).
    pub(crate) rt: String,
    min_sizes: RefCell<BTreeMap<TypeName, usize>>,
}

impl<'r> Ctx<'r> {
    pub(crate) fn new(resolved: &'r Resolved, packages: &[&str], options: &GenOptions) -> Self {
        Ctx {
            resolved,
            local: packages.iter().map(|p| p.to_string()).collect(),
            external: options
                .extern_packages
                .iter()
                .map(|(k, v)| (k.clone(), absolute_path(v)))
                .collect(),
            rt: absolute_path(&options.runtime_crate),
            min_sizes: RefCell::new(BTreeMap::new()),
        }
    }

    /// The path of a structure's Rust type (`view`: of its view type, without `<'a>`), as
    /// written inside a generated `pkg::ns` module.
    pub(crate) fn type_path(&self, name: &TypeName, view: bool) -> Result<String, GenError> {
        let root = if self.local.contains(&name.package) {
            "super::super".to_string()
        } else if let Some(path) = self.external.get(&name.package) {
            path.clone()
        } else {
            return Err(GenError::UnmappedPackage {
                user: String::new(),
                used: name.to_string(),
                package: name.package.clone(),
            });
        };
        let suffix = if view { "View" } else { "" };
        Ok(format!(
            "{root}::{}::{}::{}{suffix}",
            module_ident(&name.package)?,
            name.namespace.namespace(),
            type_ident(&name.name)?
        ))
    }

    pub(crate) fn get(&self, name: &TypeName) -> &'r StructDef {
        self.resolved
            .get_struct(name)
            .expect("resolution checked every reference")
    }

    /// The fewest bytes a structure takes on the wire (padding not counted): the
    /// smallest size a sequence count can be checked against.
    pub(crate) fn min_size(&self, name: &TypeName) -> usize {
        if let Some(n) = self.min_sizes.borrow().get(name) {
            return *n;
        }
        let size = self
            .get(name)
            .members
            .iter()
            .map(|m| {
                let elem = match Elem::of(m) {
                    Elem::Num(p) => primitive_size(p),
                    Elem::Bool => 1,
                    Elem::Str(_) | Elem::WStr(_) => 4,
                    Elem::Nested(n) => self.min_size(n),
                };
                match m.member_type.array {
                    ArrayKind::Single => elem,
                    ArrayKind::Fixed(n) => elem.saturating_mul(n as usize),
                    ArrayKind::Bounded(_) | ArrayKind::Unbounded => 4,
                }
            })
            .fold(0usize, usize::saturating_add);
        self.min_sizes.borrow_mut().insert(name.clone(), size);
        size
    }

    /// The fewest bytes one element of a sequence of `elem` takes.
    pub(crate) fn min_elem_size(&self, elem: Elem<'_>) -> usize {
        match elem {
            Elem::Num(p) => primitive_size(p),
            Elem::Bool => 1,
            Elem::Str(_) | Elem::WStr(_) => 4,
            Elem::Nested(n) => self.min_size(n).max(1),
        }
    }
}
