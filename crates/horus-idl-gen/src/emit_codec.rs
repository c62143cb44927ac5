//! `impl RosMessage`: identity constants and the CDR writer and reader of the owned type.

use std::fmt::Write;

use horus_idl::{ArrayKind, Member, StructDef};

use crate::context::Ctx;
use crate::emit_blocks::{local, read_stmts, write_stmts};
use crate::error::GenError;
use crate::names::{field_ident, raw_str_lit, str_lit, type_ident};
use crate::types::{bound_lit, primitive_rust, primitive_size, seq_bound, Elem};

/// Statement(s) writing one element `e` (an expression of type `&T`, or `T` for plain
/// elements).
fn write_elem(ctx: &Ctx<'_>, elem: Elem<'_>, field: &str, e: &str) -> String {
    let rt = &ctx.rt;
    match elem {
        Elem::Num(_) => format!("w.write({e})?;"),
        Elem::Bool => format!("w.write_bool({e})?;"),
        Elem::Str(b) => format!(
            "w.write_string({}, {e}, {})?;",
            str_lit(field),
            bound_lit(b)
        ),
        Elem::WStr(b) => format!(
            "w.write_wstring({}, {e}, {})?;",
            str_lit(field),
            bound_lit(b)
        ),
        Elem::Nested(_) => format!("{rt}::RosMessage::write_cdr({e}, w)?;"),
    }
}

fn write_member(ctx: &Ctx<'_>, m: &Member) -> String {
    let elem = Elem::of(m);
    let f = format!("self.{}", field_ident(&m.name));
    let name = &m.name;
    let mut s = String::new();
    if m.placeholder {
        return "w.write(0u8)?;".into();
    }
    let array = m.member_type.array;
    if array == ArrayKind::Single {
        let e = if elem.is_plain() { f } else { format!("&{f}") };
        return write_elem(ctx, elem, name, &e);
    }
    if !matches!(array, ArrayKind::Fixed(_)) {
        s.push_str(&format!(
            "w.write_count({}, {f}.len(), {})?; ",
            str_lit(name),
            bound_lit(seq_bound(array))
        ));
    }
    match elem {
        Elem::Num(_) => s.push_str(&format!("w.write_slice(&{f}[..])?;")),
        Elem::Bool => s.push_str(&format!("w.write_bool_slice(&{f}[..])?;")),
        _ => s.push_str(&format!(
            "for e in {f}.iter() {{ {} }}",
            write_elem(ctx, elem, name, "e")
        )),
    }
    s
}

/// An expression reading one owned element.
fn read_elem(ctx: &Ctx<'_>, elem: Elem<'_>) -> Result<String, GenError> {
    let rt = &ctx.rt;
    Ok(match elem {
        Elem::Num(_) => "r.read()?".into(),
        Elem::Bool => "r.read_bool()?".into(),
        Elem::Str(b) => format!(
            "::std::borrow::ToOwned::to_owned(r.read_str({})?)",
            bound_lit(b)
        ),
        Elem::WStr(b) => format!("r.read_wstring({})?", bound_lit(b)),
        Elem::Nested(n) => format!(
            "<{} as {rt}::RosMessage>::read_cdr(r)?",
            ctx.type_path(n, false)?
        ),
    })
}

fn read_member(ctx: &Ctx<'_>, m: &Member) -> Result<String, GenError> {
    let elem = Elem::of(m);
    let array = m.member_type.array;
    let count = |min: usize| {
        format!(
            "let n = r.read_count({min}, {})?;",
            bound_lit(seq_bound(array))
        )
    };
    Ok(match (array, elem) {
        (ArrayKind::Single, _) => read_elem(ctx, elem)?,
        (ArrayKind::Fixed(n), Elem::Num(p)) => format!("r.read_array::<{}, {n}>()?", primitive_rust(p)),
        (ArrayKind::Fixed(n), Elem::Bool) => format!(
            "{{ let mut a = [false; {n}]; for x in a.iter_mut() {{ *x = r.read_bool()?; }} a }}"
        ),
        (ArrayKind::Fixed(n), _) => format!(
            "{{ let mut a: [_; {n}] = ::core::array::from_fn(|_| ::core::default::Default::default()); \
             for x in a.iter_mut() {{ *x = {}; }} a }}",
            read_elem(ctx, elem)?
        ),
        (_, Elem::Num(p)) => format!(
            "{{ {} r.read_vec::<{}>(n)? }}",
            count(primitive_size(p)),
            primitive_rust(p)
        ),
        (_, Elem::Bool) => format!("{{ {} r.read_bool_vec(n)? }}", count(1)),
        (_, _) => format!(
            "{{ {} let mut v = ::std::vec::Vec::with_capacity(n); for _ in 0..n {{ v.push({}); }} v }}",
            count(ctx.min_elem_size(elem)),
            read_elem(ctx, elem)?
        ),
    })
}

/// `impl RosMessage for T`.
pub(crate) fn emit_codec(ctx: &Ctx<'_>, def: &StructDef, out: &mut String) -> Result<(), GenError> {
    let rt = &ctx.rt;
    let name = type_ident(&def.name.name)?;
    let type_name = def.name.to_string();
    let hash = ctx
        .resolved
        .type_hash(&type_name)
        .expect("every structure has a hash")
        .to_string();
    let definition = ctx
        .resolved
        .ros2msg_definition(&type_name)
        .expect("every structure has a definition");
    writeln!(out, "    impl {rt}::RosMessage for {name} {{").unwrap();
    writeln!(
        out,
        "        const TYPE_NAME: &'static str = {};",
        str_lit(&type_name)
    )
    .unwrap();
    writeln!(
        out,
        "        const TYPE_HASH: &'static str = {};",
        str_lit(&hash)
    )
    .unwrap();
    writeln!(
        out,
        "        const DEFINITION: &'static str = {};",
        raw_str_lit(&definition)
    )
    .unwrap();
    writeln!(out, "        type View<'a> = {name}View<'a>;").unwrap();
    writeln!(
        out,
        "        #[inline]\n        fn write_cdr(&self, w: &mut {rt}::CdrWriter<'_>) -> ::core::result::Result<(), {rt}::EncodeError> {{"
    )
    .unwrap();
    for stmt in write_stmts(def, |m| write_member(ctx, m)) {
        writeln!(out, "            {stmt}").unwrap();
    }
    out.push_str("            ::core::result::Result::Ok(())\n        }\n");
    writeln!(
        out,
        "        fn read_cdr(r: &mut {rt}::CdrReader<'_>) -> ::core::result::Result<Self, {rt}::DecodeError> {{"
    )
    .unwrap();
    for stmt in read_stmts(rt, def, |m| read_member(ctx, m))? {
        writeln!(out, "            {stmt}").unwrap();
    }
    out.push_str("            ::core::result::Result::Ok(Self {\n");
    for m in def.members.iter().filter(|m| !m.placeholder) {
        writeln!(
            out,
            "                {}: {},",
            field_ident(&m.name),
            local(m)
        )
        .unwrap();
    }
    out.push_str("            })\n        }\n    }\n");
    Ok(())
}
