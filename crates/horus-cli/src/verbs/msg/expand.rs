//! `horus msg show --all`: each field of a nested type followed by that type's
//! definition, indented by one tab per level, nested definitions without comments or
//! blank lines — the output of `ros2 interface show`.
//!
//! Iterative (a user package may nest types deeply) and cut at [`MAX_LINES`] lines (a
//! type using another twice at every level doubles per level).

use std::collections::BTreeMap;
use std::rc::Rc;

use horus_idl::{parse_interface, BaseType, InterfaceKind, InterfaceSpec, MessageSpec, TypeName};

use super::Catalog;

/// Most lines `--all` prints.
pub(super) const MAX_LINES: usize = 100_000;

/// One line of a definition, and the type its field nests, if any.
type Lines = Rc<Vec<(String, Option<TypeName>)>>;

/// `text` (the definition of `name`) with nested types expanded.
pub(super) fn expand(catalog: &Catalog, name: &TypeName, text: &str) -> anyhow::Result<String> {
    let mut cache: BTreeMap<TypeName, Lines> = BTreeMap::new();
    let top = annotate(catalog, name, text)?;
    let mut out = String::new();
    let mut printed = 0usize;
    // (lines, next index, depth)
    let mut stack: Vec<(Lines, usize, usize)> = vec![(top, 0, 0)];
    while let Some(frame) = stack.last_mut() {
        let (lines, i, depth) = (Rc::clone(&frame.0), frame.1, frame.2);
        let Some((line, nested)) = lines.get(i) else {
            stack.pop();
            continue;
        };
        frame.1 += 1;
        let shown = if depth == 0 {
            Some(line.trim_end().to_owned())
        } else {
            without_comment(line)
        };
        let Some(shown) = shown else { continue };
        if printed == MAX_LINES {
            out.push_str(&format!("... (cut at {MAX_LINES} lines)\n"));
            break;
        }
        printed += 1;
        for _ in 0..depth {
            out.push('\t');
        }
        out.push_str(&shown);
        out.push('\n');
        if let Some(nested) = nested {
            let lines = match cache.get(nested) {
                Some(l) => Rc::clone(l),
                None => {
                    let text = nested_text(catalog, nested)?;
                    let l = annotate(catalog, nested, &text)?;
                    cache.insert(nested.clone(), Rc::clone(&l));
                    l
                }
            };
            stack.push((lines, 0, depth + 1));
        }
    }
    Ok(out)
}

/// The `.msg` text of a nested structure: its file, or the text of its section or of
/// the members ROS 2 implies.
fn nested_text(catalog: &Catalog, name: &TypeName) -> anyhow::Result<String> {
    if catalog.set.contains(name) {
        if let Some(t) = catalog.file_text(name)? {
            return Ok(t);
        }
    }
    catalog
        .resolved
        .msg_text(name)
        .ok_or_else(|| anyhow::anyhow!("{name} has no text"))
}

/// A nested line without its comment: `None` for blank and comment lines; a field or
/// constant with its trailing comment removed (a `#` inside a quoted value stays).
fn without_comment(line: &str) -> Option<String> {
    let mut quote: Option<char> = None;
    let mut end = line.len();
    for (i, c) in line.char_indices() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (None, '"' | '\'') => quote = Some(c),
            (None, '#') => {
                end = i;
                break;
            }
            _ => {}
        }
    }
    let kept = line[..end].trim();
    (!kept.is_empty()).then(|| kept.to_owned())
}

/// The lines of `text` (defining `name`), each with the structure its field nests.
fn annotate(catalog: &Catalog, name: &TypeName, text: &str) -> anyhow::Result<Lines> {
    let kind = if catalog.set.contains(name) {
        name.namespace
    } else {
        InterfaceKind::Message
    };
    // The parser checks the interface name as ROS 2 does; a structure ROS 2 implies
    // (`Foo_Event`) is known to be valid, so its first part stands for it.
    let parse_name = name.name.split('_').next().unwrap_or_default();
    let spec = parse_interface(
        &name.to_string(),
        &name.package,
        parse_name,
        kind,
        text.as_bytes(),
    )?;
    let sections: Vec<&MessageSpec> = match &spec {
        InterfaceSpec::Message(m) => vec![m],
        InterfaceSpec::Service(s) => vec![&s.request, &s.response],
        InterfaceSpec::Action(a) => vec![&a.goal, &a.result, &a.feedback],
    };
    let mut nested_at: BTreeMap<usize, TypeName> = BTreeMap::new();
    for field in sections.iter().flat_map(|s| &s.fields) {
        if let BaseType::Named(n) = &field.field_type.base {
            let package = n.package.as_deref().unwrap_or(&name.package);
            nested_at.insert(field.position.line, structure(catalog, package, &n.name));
        }
    }
    Ok(Rc::new(
        text.lines()
            .enumerate()
            .map(|(i, l)| (l.to_owned(), nested_at.get(&(i + 1)).cloned()))
            .collect(),
    ))
}

/// The structure a field's `pkg/Name` means: the message, else (in texts of implied
/// structures) the service's or action's structure of that name.
fn structure(catalog: &Catalog, package: &str, name: &str) -> TypeName {
    [
        InterfaceKind::Message,
        InterfaceKind::Service,
        InterfaceKind::Action,
    ]
    .into_iter()
    .map(|k| TypeName::new(package, k, name))
    .find(|t| catalog.resolved.get_struct(t).is_some())
    .unwrap_or_else(|| TypeName::msg(package, name))
}
