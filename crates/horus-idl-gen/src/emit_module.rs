//! Modules as ROS 2 names types (`pkg::msg`, `pkg::srv`, `pkg::action`), the marker
//! types of services and actions, and the registry.

use std::collections::BTreeSet;
use std::fmt::Write;

use horus_idl::{ActionDef, InterfaceKind, ServiceDef, StructDef};

use crate::context::Ctx;
use crate::docs::doc_attrs;
use crate::emit_codec::emit_codec;
use crate::emit_struct::emit_struct;
use crate::emit_view::emit_view;
use crate::error::GenError;
use crate::names::{module_ident, str_lit, type_ident};

/// Lints that generated code may trip (names as ROS 2 spells them, literals as the
/// files write them) or that do not apply to it.
const ALLOWS: &str =
    "#[allow(non_camel_case_types, non_snake_case, unreachable_pub, unused_imports, dead_code, \
clippy::approx_constant, clippy::excessive_precision, clippy::unreadable_literal, \
clippy::too_many_lines, clippy::derivable_impls, clippy::needless_lifetimes, \
clippy::redundant_field_names, clippy::module_inception)]";

/// Checks that every item of one module has its own name.
#[derive(Default)]
struct Names(BTreeSet<String>);

impl Names {
    fn add(&mut self, module: &str, name: String) -> Result<(), GenError> {
        if !self.0.insert(name.clone()) {
            return Err(GenError::NameClash(format!(
                "two items named {name} in module {module}"
            )));
        }
        Ok(())
    }
}

fn hash(ctx: &Ctx<'_>, type_name: &str) -> String {
    ctx.resolved
        .type_hash(type_name)
        .expect("every type has a hash")
        .to_string()
}

fn emit_service_marker(ctx: &Ctx<'_>, s: &ServiceDef, out: &mut String) -> Result<(), GenError> {
    let rt = &ctx.rt;
    let name = type_ident(&s.name.name)?;
    out.push_str(&doc_attrs(
        &[format!(
            "The ROS 2 service `{}`: ties [`{}`], [`{}`] and [`{}`] together.",
            s.name, s.request.name, s.response.name, s.event.name
        )],
        "    ",
    ));
    writeln!(
        out,
        "    #[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]"
    )
    .unwrap();
    writeln!(out, "    pub struct {name};").unwrap();
    writeln!(out, "    impl {rt}::RosService for {name} {{").unwrap();
    writeln!(
        out,
        "        const SERVICE_NAME: &'static str = {};",
        str_lit(&s.name.to_string())
    )
    .unwrap();
    writeln!(
        out,
        "        const TYPE_HASH: &'static str = {};",
        str_lit(&hash(ctx, &s.name.to_string()))
    )
    .unwrap();
    writeln!(
        out,
        "        type Request = {};",
        type_ident(&s.request.name)?
    )
    .unwrap();
    writeln!(
        out,
        "        type Response = {};",
        type_ident(&s.response.name)?
    )
    .unwrap();
    writeln!(out, "        type Event = {};", type_ident(&s.event.name)?).unwrap();
    out.push_str("    }\n");
    Ok(())
}

fn emit_action_marker(ctx: &Ctx<'_>, a: &ActionDef, out: &mut String) -> Result<(), GenError> {
    let rt = &ctx.rt;
    let name = type_ident(&a.name.name)?;
    out.push_str(&doc_attrs(
        &[format!(
            "The ROS 2 action `{}`: ties its goal, result and feedback messages and its two services together.",
            a.name
        )],
        "    ",
    ));
    writeln!(
        out,
        "    #[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]"
    )
    .unwrap();
    writeln!(out, "    pub struct {name};").unwrap();
    writeln!(out, "    impl {rt}::RosAction for {name} {{").unwrap();
    writeln!(
        out,
        "        const ACTION_NAME: &'static str = {};",
        str_lit(&a.name.to_string())
    )
    .unwrap();
    writeln!(
        out,
        "        const TYPE_HASH: &'static str = {};",
        str_lit(&hash(ctx, &a.name.to_string()))
    )
    .unwrap();
    for (assoc, t) in [
        ("Goal", &a.goal),
        ("Result", &a.result),
        ("Feedback", &a.feedback),
        ("SendGoal", &a.send_goal.name),
        ("GetResult", &a.get_result.name),
        ("FeedbackMessage", &a.feedback_message),
    ] {
        writeln!(out, "        type {assoc} = {};", type_ident(&t.name)?).unwrap();
    }
    out.push_str("    }\n");
    Ok(())
}

fn emit_structs(
    ctx: &Ctx<'_>,
    module: &str,
    structs: &[&StructDef],
    names: &mut Names,
    out: &mut String,
) -> Result<(), GenError> {
    for def in structs {
        let name = type_ident(&def.name.name)?;
        names.add(module, name.clone())?;
        names.add(module, format!("{name}View"))?;
        emit_struct(ctx, def, out)?;
        emit_codec(ctx, def, out)?;
        emit_view(ctx, def, out)?;
    }
    Ok(())
}

/// The module of one package.
pub(crate) fn emit_package(ctx: &Ctx<'_>, package: &str, out: &mut String) -> Result<(), GenError> {
    let r = ctx.resolved;
    let pkg = module_ident(package)?;
    writeln!(
        out,
        "/// ROS 2 package `{package}`.\n{ALLOWS}\npub mod {pkg} {{"
    )
    .unwrap();
    for kind in [
        InterfaceKind::Message,
        InterfaceKind::Service,
        InterfaceKind::Action,
    ] {
        let ns = kind.namespace();
        let structs: Vec<&StructDef> = r
            .structs()
            .filter(|s| s.name.package == package && s.name.namespace == kind)
            .collect();
        if structs.is_empty() {
            continue;
        }
        let module = format!("{package}::{ns}");
        let what = match kind {
            InterfaceKind::Message => "Messages",
            InterfaceKind::Service => "Services and their request, response and event messages",
            InterfaceKind::Action => "Actions and the messages and services they imply",
        };
        writeln!(out, "/// {what} of `{package}`.\npub mod {ns} {{").unwrap();
        let mut names = Names::default();
        emit_structs(ctx, &module, &structs, &mut names, out)?;
        match kind {
            InterfaceKind::Message => {}
            InterfaceKind::Service => {
                for s in r.services().filter(|s| s.name.package == package) {
                    names.add(&module, type_ident(&s.name.name)?)?;
                    emit_service_marker(ctx, s, out)?;
                }
            }
            InterfaceKind::Action => {
                for a in r.actions().filter(|a| a.name.package == package) {
                    names.add(&module, type_ident(&a.name.name)?)?;
                    emit_action_marker(ctx, a, out)?;
                    for s in [&a.send_goal, &a.get_result] {
                        names.add(&module, type_ident(&s.name.name)?)?;
                        emit_service_marker(ctx, s, out)?;
                    }
                }
            }
        }
        out.push_str("}\n");
    }
    out.push_str("}\n");
    Ok(())
}

/// `pub static REGISTRY`: every generated message type.
pub(crate) fn emit_registry(
    ctx: &Ctx<'_>,
    structs: &[&StructDef],
    out: &mut String,
) -> Result<(), GenError> {
    let rt = &ctx.rt;
    writeln!(
        out,
        "/// Every message type generated here (also the structures of services and actions), \
         sorted by ROS 2 name: name, RIHS01 hash, `ros2msg` definition and codec functions.\n\
         #[allow(dead_code, unreachable_pub)]\n\
         pub static REGISTRY: &[{rt}::RosTypeInfo] = &["
    )
    .unwrap();
    for def in structs {
        let path = format!(
            "{}::{}::{}",
            module_ident(&def.name.package)?,
            def.name.namespace.namespace(),
            type_ident(&def.name.name)?
        );
        writeln!(out, "    {rt}::RosTypeInfo::of::<{path}>(),").unwrap();
    }
    out.push_str("];\n");
    Ok(())
}
