//! The resolved ROS 2 types compiled for the Python codec: every structure as a list of
//! fields with their wire kind, the Python attribute name (interned) and the structure's
//! minimum wire size (to check counts before allocating).

use std::collections::HashMap;
use std::sync::Mutex;

use super::slots::SlotCache;
use horus_idl::{ArrayKind, Primitive, Resolved, ResolvedBase, StructDef};
use pyo3::prelude::*;
use pyo3::types::{PyString, PyType};

/// Python keywords a ROS field name may collide with (ROS names are lower case), the
/// methods of `horus.interfaces._base.RosMessage` and the builtins annotations name; the
/// attribute gets a trailing `_`, as rosidl_generator_py does for keywords.
const PY_KEYWORDS: &[&str] = &[
    "to_cdr",
    "from_cdr",
    "ros_type_name",
    "ros_type_hash",
    "ros_definition",
    "get_fields_and_field_types",
    // Builtins the generated annotations name (a field `int: int` would shadow it).
    "bool",
    "int",
    "float",
    "str",
    "and",
    "as",
    "assert",
    "async",
    "await",
    "break",
    "class",
    "continue",
    "def",
    "del",
    "elif",
    "else",
    "except",
    "finally",
    "for",
    "from",
    "global",
    "if",
    "import",
    "in",
    "is",
    "lambda",
    "nonlocal",
    "not",
    "or",
    "pass",
    "raise",
    "return",
    "try",
    "while",
    "with",
    "yield",
    "match",
    "case",
    "print",
    "exec",
];

/// The Python attribute name of a ROS field.
pub(crate) fn py_field_name(ros: &str) -> String {
    if PY_KEYWORDS.contains(&ros) {
        format!("{ros}_")
    } else {
        ros.to_owned()
    }
}

/// The element type of a field.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Elem {
    Prim(Primitive),
    Str {
        bound: Option<u32>,
    },
    WStr {
        bound: Option<u32>,
    },
    /// Index of the structure in [`Plans::structs`].
    Nested(usize),
}

/// One field of a structure.
pub(crate) struct FieldPlan {
    /// The ROS field name (error paths).
    pub(crate) name: String,
    /// The Python attribute name, interned.
    pub(crate) attr: Py<PyString>,
    pub(crate) elem: Elem,
    pub(crate) array: ArrayKind,
    /// The `uint8` ROS 2 adds to a structure without fields: on the wire (a zero), not
    /// in Python (as in rclpy).
    pub(crate) placeholder: bool,
}

/// One structure.
pub(crate) struct StructPlan {
    /// `pkg/msg/Name`.
    pub(crate) name: String,
    pub(crate) fields: Vec<FieldPlan>,
    /// Fewest bytes it takes on the wire (padding not counted), saturating.
    pub(crate) min_size: u64,
    /// The Python class decoded values get; `None` until a module binds one (a
    /// reloaded module binds its new class).
    pub(crate) class: Mutex<Option<Py<PyType>>>,
    /// Where its fields live in an instance of the bound class (the decoder's cache).
    pub(crate) slots: SlotCache,
}

impl StructPlan {
    /// The bound class, if any.
    pub(crate) fn class(&self, py: Python<'_>) -> Option<Py<PyType>> {
        let g = match self.class.lock() {
            Ok(g) => g,
            Err(p) => p.into_inner(),
        };
        g.as_ref().map(|c| c.clone_ref(py))
    }

    /// Binds `cls`.
    pub(crate) fn bind(&self, cls: Py<PyType>) {
        let mut g = match self.class.lock() {
            Ok(g) => g,
            Err(p) => p.into_inner(),
        };
        *g = Some(cls);
    }
}

/// Every structure of a resolved set.
#[derive(Default)]
pub(crate) struct Plans {
    pub(crate) structs: Vec<StructPlan>,
    pub(crate) index: HashMap<String, usize>,
}

/// The size (and alignment) of a primitive on the wire.
pub(crate) fn prim_size(p: Primitive) -> usize {
    match p {
        Primitive::Bool
        | Primitive::Byte
        | Primitive::Char
        | Primitive::UInt8
        | Primitive::Int8 => 1,
        Primitive::Int16 | Primitive::UInt16 => 2,
        Primitive::Int32 | Primitive::UInt32 | Primitive::Float32 => 4,
        Primitive::Int64 | Primitive::UInt64 | Primitive::Float64 => 8,
    }
}

/// Whether arrays of the primitive are raw bytes (`byte`, `char`, `uint8`).
pub(crate) fn byte_like(p: Primitive) -> bool {
    matches!(p, Primitive::Byte | Primitive::Char | Primitive::UInt8)
}

impl Plans {
    /// Compiles every structure of `resolved`; classes bound in `old` (by type name)
    /// stay bound.
    pub(crate) fn build(py: Python<'_>, resolved: &Resolved, old: Option<&Plans>) -> Self {
        let defs: Vec<&StructDef> = resolved.structs().collect();
        let index: HashMap<String, usize> = defs
            .iter()
            .enumerate()
            .map(|(i, d)| (d.name.to_string(), i))
            .collect();
        let mut structs: Vec<StructPlan> = defs
            .iter()
            .map(|d| {
                let name = d.name.to_string();
                let class = old.and_then(|o| o.get(&name)).and_then(|s| s.class(py));
                StructPlan {
                    fields: d
                        .members
                        .iter()
                        .map(|m| FieldPlan {
                            name: m.name.clone(),
                            attr: PyString::intern(py, &py_field_name(&m.name)).unbind(),
                            elem: match &m.member_type.base {
                                ResolvedBase::Primitive(p) => Elem::Prim(*p),
                                ResolvedBase::String { bound } => Elem::Str { bound: *bound },
                                ResolvedBase::WString { bound } => Elem::WStr { bound: *bound },
                                ResolvedBase::Nested(n) => Elem::Nested(
                                    *index.get(&n.to_string()).expect("references are resolved"),
                                ),
                            },
                            array: m.member_type.array,
                            placeholder: m.placeholder,
                        })
                        .collect(),
                    name,
                    min_size: u64::MAX,
                    class: Mutex::new(class),
                    slots: SlotCache::default(),
                }
            })
            .collect();
        // Minimum sizes: the type graph has no cycles (resolution checks it), so
        // repeating "recompute from the members" as many times as there are structures
        // settles every value; most settle in a few rounds.
        for _ in 0..=structs.len() {
            let mut changed = false;
            for i in 0..structs.len() {
                let mut total: u64 = 0;
                for f in &structs[i].fields {
                    total = total.saturating_add(min_field_size(&structs, f));
                }
                if total != structs[i].min_size {
                    structs[i].min_size = total;
                    changed = true;
                }
            }
            if !changed {
                break;
            }
        }
        Plans { structs, index }
    }

    /// The structure of that name.
    pub(crate) fn get(&self, name: &str) -> Option<&StructPlan> {
        self.index.get(name).map(|&i| &self.structs[i])
    }
}

/// Fewest bytes one element of `elem` takes.
pub(crate) fn min_elem_size(structs: &[StructPlan], elem: Elem) -> u64 {
    match elem {
        Elem::Prim(p) => prim_size(p) as u64,
        // Length and NUL.
        Elem::Str { .. } => 5,
        Elem::WStr { .. } => 4,
        Elem::Nested(i) => structs[i].min_size,
    }
}

fn min_field_size(structs: &[StructPlan], f: &FieldPlan) -> u64 {
    match f.array {
        ArrayKind::Single => min_elem_size(structs, f.elem),
        ArrayKind::Fixed(n) => u64::from(n).saturating_mul(min_elem_size(structs, f.elem)),
        ArrayKind::Bounded(_) | ArrayKind::Unbounded => 4,
    }
}
