//! The zero-copy view of a ROS 2 structure: `FooView<'a>`, checked once when made,
//! with infallible accessors, and its conversion into the owned type.

use std::fmt::Write;

use horus_idl::{ArrayKind, Member, StructDef};

use crate::context::Ctx;
use crate::docs::{comment_lines, doc_attrs};
use crate::emit_blocks::{local, read_stmts};
use crate::emit_struct::fields;
use crate::error::GenError;
use crate::names::{field_ident, type_ident};
use crate::types::{bound_lit, msg_type_text, primitive_rust, primitive_size, seq_bound, Elem};

/// The view type of one element (as a `SeqView` element, or a single member).
fn elem_view_type(ctx: &Ctx<'_>, elem: Elem<'_>) -> Result<String, GenError> {
    let rt = &ctx.rt;
    Ok(match elem {
        Elem::Num(p) => primitive_rust(p).to_string(),
        Elem::Bool => "bool".into(),
        Elem::Str(_) => "&'a str".into(),
        Elem::WStr(_) => format!("{rt}::WStrView<'a>"),
        Elem::Nested(n) => format!("{}<'a>", ctx.type_path(n, true)?),
    })
}

/// The view type of a member.
fn view_type(ctx: &Ctx<'_>, m: &Member) -> Result<String, GenError> {
    let elem = Elem::of(m);
    let t = elem_view_type(ctx, elem)?;
    Ok(match (m.member_type.array, elem) {
        (ArrayKind::Single, _) => t,
        (_, Elem::Num(_)) => format!("&'a [{t}]"),
        // Not `&[bool]`: bytes in shared memory rewritten after the check must not
        // become invalid `bool`s.
        (_, Elem::Bool) => format!("{}::BoolsView<'a>", ctx.rt),
        (_, _) => format!("{}::SeqView<'a, {t}>", ctx.rt),
    })
}

/// Whether the view type borrows (names `'a`).
fn borrows(ctx: &Ctx<'_>, m: &Member) -> Result<bool, GenError> {
    Ok(view_type(ctx, m)?.contains("'a"))
}

/// An expression reading one element's view; bounded strings are checked here.
fn read_elem_view(ctx: &Ctx<'_>, elem: Elem<'_>) -> Result<String, GenError> {
    let rt = &ctx.rt;
    Ok(match elem {
        Elem::Num(_) => "r.read()?".into(),
        Elem::Bool => "r.read_bool()?".into(),
        Elem::Str(b) => format!("r.read_str({})?", bound_lit(b)),
        Elem::WStr(b) => format!("r.read_wstr({})?", bound_lit(b)),
        Elem::Nested(n) => format!(
            "<{}<'a> as {rt}::RosView<'a>>::read_view(r)?",
            ctx.type_path(n, true)?
        ),
    })
}

fn read_member_view(ctx: &Ctx<'_>, m: &Member) -> Result<String, GenError> {
    let rt = &ctx.rt;
    let elem = Elem::of(m);
    let array = m.member_type.array;
    let n = match array {
        ArrayKind::Single => return read_elem_view(ctx, elem),
        ArrayKind::Fixed(n) => format!("let n = {n}usize;"),
        _ => {
            let min = match elem {
                Elem::Num(p) => primitive_size(p),
                _ => ctx.min_elem_size(elem),
            };
            format!(
                "let n = r.read_count({min}, {})?;",
                bound_lit(seq_bound(array))
            )
        }
    };
    Ok(match elem {
        Elem::Num(p) => format!("{{ {n} r.read_slice::<{}>(n)? }}", primitive_rust(p)),
        Elem::Bool => format!("{{ {n} r.read_bools(n)? }}"),
        // Bounded string elements: the sequence view reads elements without their
        // bound, so the bound is checked first on a copy of the reader.
        Elem::Str(Some(_)) | Elem::WStr(Some(_)) => format!(
            "{{ {n} let mut probe = *r; for _ in 0..n {{ {}; }} {rt}::SeqView::read(r, n)? }}",
            read_elem_view(ctx, elem)?.replacen("r.", "probe.", 1)
        ),
        _ => format!("{{ {n} {rt}::SeqView::read(r, n)? }}"),
    })
}

/// An expression converting view member `v` (of member `m`) into the owned member.
fn to_owned_member(ctx: &Ctx<'_>, m: &Member, v: &str) -> Result<String, GenError> {
    let elem = Elem::of(m);
    // A function from one element's view to the owned element.
    let mapper = match elem {
        Elem::Num(_) | Elem::Bool => String::new(),
        Elem::Str(_) => "::std::borrow::ToOwned::to_owned".to_string(),
        Elem::WStr(_) => "|e| ::std::string::ToString::to_string(&e)".to_string(),
        Elem::Nested(n) => format!(
            "<{} as ::core::convert::From<_>>::from",
            ctx.type_path(n, false)?
        ),
    };
    Ok(match (m.member_type.array, elem) {
        (ArrayKind::Single, Elem::Num(_) | Elem::Bool) => v.to_string(),
        (ArrayKind::Single, Elem::WStr(_)) => format!("::std::string::ToString::to_string(&{v})"),
        (ArrayKind::Single, _) => format!("{mapper}({v})"),
        (ArrayKind::Fixed(n), Elem::Num(_)) => format!(
            "{{ let mut a = [::core::default::Default::default(); {n}]; \
             for (x, y) in a.iter_mut().zip({v}.iter()) {{ *x = *y; }} a }}"
        ),
        (ArrayKind::Fixed(n), Elem::Bool) => format!(
            "{{ let mut a = [false; {n}]; \
             for (x, y) in a.iter_mut().zip({v}.iter()) {{ *x = y; }} a }}"
        ),
        (ArrayKind::Fixed(_), _) => format!(
            "{{ let mut it = {v}.iter().map({mapper}); \
             ::core::array::from_fn(|_| it.next().unwrap_or_default()) }}"
        ),
        (_, Elem::Num(_) | Elem::Bool) => format!("{v}.to_vec()"),
        (_, _) => format!("{v}.iter().map({mapper}).collect()"),
    })
}

/// The view struct, its accessors, `impl RosView` and `From<FooView> for Foo`.
pub(crate) fn emit_view(ctx: &Ctx<'_>, def: &StructDef, out: &mut String) -> Result<(), GenError> {
    let rt = &ctx.rt;
    let name = type_ident(&def.name.name)?;
    let view = format!("{name}View");
    out.push_str(&doc_attrs(
        &[
            format!(
                "A zero-copy view of a [`{name}`] message's CDR bytes (`{}`).",
                def.name
            ),
            String::new(),
            "Every member was checked when the view was made; the accessors cannot fail.".into(),
        ],
        "    ",
    ));
    writeln!(out, "    #[derive(Clone, Copy, Debug)]").unwrap();
    writeln!(out, "    pub struct {view}<'a> {{").unwrap();
    for m in fields(def) {
        writeln!(
            out,
            "        {}: {},",
            field_ident(&m.name),
            view_type(ctx, m)?
        )
        .unwrap();
    }
    out.push_str("        _bytes: ::core::marker::PhantomData<&'a [u8]>,\n    }\n");

    let any_borrow = fields(def)
        .map(|m| borrows(ctx, m))
        .collect::<Result<Vec<_>, _>>()?
        .into_iter()
        .any(|b| b);
    if fields(def).next().is_some() {
        if any_borrow {
            writeln!(out, "    impl<'a> {view}<'a> {{").unwrap();
        } else {
            writeln!(out, "    impl {view}<'_> {{").unwrap();
        }
        for m in fields(def) {
            let mut doc = comment_lines(&m.comment);
            if doc.is_empty() {
                doc.push(format!("`{} {}`", msg_type_text(m), m.name));
            }
            out.push_str(&doc_attrs(&doc, "        "));
            let f = field_ident(&m.name);
            writeln!(
                out,
                "        #[inline]\n        pub fn {f}(&self) -> {} {{ self.{f} }}",
                view_type(ctx, m)?
            )
            .unwrap();
        }
        out.push_str("    }\n");
    }

    writeln!(out, "    impl<'a> {rt}::RosView<'a> for {view}<'a> {{").unwrap();
    writeln!(
        out,
        "        #[inline]\n        fn read_view(r: &mut {rt}::CdrReader<'a>) -> ::core::result::Result<Self, {rt}::DecodeError> {{"
    )
    .unwrap();
    for stmt in read_stmts(rt, def, |m| read_member_view(ctx, m))? {
        writeln!(out, "            {stmt}").unwrap();
    }
    out.push_str("            ::core::result::Result::Ok(Self {\n");
    for m in fields(def) {
        writeln!(
            out,
            "                {}: {},",
            field_ident(&m.name),
            local(m)
        )
        .unwrap();
    }
    out.push_str(
        "                _bytes: ::core::marker::PhantomData,\n            })\n        }\n    }\n",
    );

    writeln!(
        out,
        "    impl ::core::convert::From<{view}<'_>> for {name} {{"
    )
    .unwrap();
    let v = if fields(def).next().is_some() {
        "v"
    } else {
        "_v"
    };
    writeln!(
        out,
        "        fn from({v}: {view}<'_>) -> Self {{\n            Self {{"
    )
    .unwrap();
    for m in fields(def) {
        let f = field_ident(&m.name);
        writeln!(
            out,
            "                {f}: {},",
            to_owned_member(ctx, m, &format!("v.{f}"))?
        )
        .unwrap();
    }
    out.push_str("            }\n        }\n    }\n");
    Ok(())
}
