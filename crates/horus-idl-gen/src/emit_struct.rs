//! The owned Rust struct of a ROS 2 structure: fields, constants, `Default`.

use std::fmt::Write;

use horus_idl::{ArrayKind, Member, StructDef};

use crate::context::Ctx;
use crate::docs::{comment_lines, doc_attrs};
use crate::error::GenError;
use crate::literal::{constant, default_expr};
use crate::names::{field_ident, type_ident};
use crate::types::{msg_type_text, primitive_rust, Elem};

/// The owned Rust type of a member.
pub(crate) fn owned_type(ctx: &Ctx<'_>, m: &Member) -> Result<String, GenError> {
    let elem = match Elem::of(m) {
        Elem::Num(p) => primitive_rust(p).to_string(),
        Elem::Bool => "bool".to_string(),
        Elem::Str(_) | Elem::WStr(_) => "::std::string::String".to_string(),
        Elem::Nested(n) => ctx.type_path(n, false)?,
    };
    Ok(match m.member_type.array {
        ArrayKind::Single => elem,
        ArrayKind::Fixed(n) => format!("[{elem}; {n}]"),
        ArrayKind::Bounded(_) | ArrayKind::Unbounded => format!("::std::vec::Vec<{elem}>"),
    })
}

/// The members that are fields (ROS 2's placeholder member of an empty structure is
/// written and read, but is not a field).
pub(crate) fn fields(def: &StructDef) -> impl Iterator<Item = &Member> {
    def.members.iter().filter(|m| !m.placeholder)
}

/// Whether `Default` must be written by hand: a default value, or an array longer than
/// the 32 elements `#[derive(Default)]` handles.
fn needs_manual_default(def: &StructDef) -> bool {
    fields(def).any(|m| {
        m.default.is_some() || matches!(m.member_type.array, ArrayKind::Fixed(n) if n > 32)
    })
}

fn field_default(m: &Member) -> String {
    let prim = match Elem::of(m) {
        Elem::Num(p) => Some(p),
        Elem::Bool => Some(horus_idl::Primitive::Bool),
        _ => None,
    };
    let seq = !matches!(m.member_type.array, ArrayKind::Single | ArrayKind::Fixed(_));
    match (&m.default, m.member_type.array) {
        (Some(d), _) => default_expr(d, prim, seq),
        (None, ArrayKind::Fixed(_)) => {
            "::core::array::from_fn(|_| ::core::default::Default::default())".into()
        }
        (None, _) => "::core::default::Default::default()".into(),
    }
}

/// The struct, its constants and its `Default`.
pub(crate) fn emit_struct(
    ctx: &Ctx<'_>,
    def: &StructDef,
    out: &mut String,
) -> Result<(), GenError> {
    let name = type_ident(&def.name.name)?;
    let mut doc = comment_lines(&def.comment);
    if !doc.is_empty() {
        doc.push(String::new());
    }
    doc.push(format!("ROS 2 type `{}`.", def.name));
    out.push_str(&doc_attrs(&doc, "    "));
    let manual_default = needs_manual_default(def);
    let derive_default = if manual_default { "" } else { ", Default" };
    writeln!(
        out,
        "    #[derive(Clone, Debug, PartialEq{derive_default})]"
    )
    .unwrap();
    if fields(def).next().is_none() {
        writeln!(out, "    pub struct {name} {{}}").unwrap();
    } else {
        writeln!(out, "    pub struct {name} {{").unwrap();
    }
    for m in fields(def) {
        let mut doc = comment_lines(&m.comment);
        if doc.is_empty() {
            doc.push(format!("`{} {}`", msg_type_text(m), m.name));
        }
        out.push_str(&doc_attrs(&doc, "        "));
        writeln!(
            out,
            "        pub {}: {},",
            field_ident(&m.name),
            owned_type(ctx, m)?
        )
        .unwrap();
    }
    if fields(def).next().is_some() {
        out.push_str("    }\n");
    }

    if !def.constants.is_empty() {
        writeln!(out, "    impl {name} {{").unwrap();
        for c in &def.constants {
            let mut doc = comment_lines(&c.comment);
            if doc.is_empty() {
                doc.push(format!("Constant `{}`.", c.name));
            }
            out.push_str(&doc_attrs(&doc, "        "));
            let (ty, value) = constant(c.constant_type, &c.value);
            writeln!(out, "        pub const {}: {ty} = {value};", c.name).unwrap();
        }
        out.push_str("    }\n");
    }

    if manual_default {
        writeln!(out, "    impl ::core::default::Default for {name} {{").unwrap();
        out.push_str("        fn default() -> Self {\n            Self {\n");
        for m in fields(def) {
            writeln!(
                out,
                "                {}: {},",
                field_ident(&m.name),
                field_default(m)
            )
            .unwrap();
        }
        out.push_str("            }\n        }\n    }\n");
    }
    Ok(())
}
