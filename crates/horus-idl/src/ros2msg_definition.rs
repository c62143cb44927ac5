//! The complete definition of a type in the `ros2msg` form that rosbag2 and MCAP use
//! (rosbag2's `docs/message_definition_encoding.md`): the type's own `.msg` text, then
//! each type it uses, transitively, once, after a line of 80 `=` and a line
//! `MSG: pkg/msg/Type`.

use std::collections::{BTreeMap, BTreeSet};

use crate::ast::{ArrayKind, InterfaceKind, InterfaceSpec};
use crate::parser::split_lines;
use crate::resolved::{ResolvedBase, StructDef};
use crate::type_name::TypeName;
use crate::Resolved;

/// The line before each dependency's `MSG:` line.
const DELIMITER: &str =
    "================================================================================";

/// The `.msg` text of every structure that comes from a file: a message's whole file,
/// each section of a `.srv` (`_Request`, `_Response`) or `.action` (`_Goal`, `_Result`,
/// `_Feedback`) file, split at the `---` lines as the parser splits them.
pub(crate) fn definition_texts<'a>(
    interfaces: impl Iterator<Item = (&'a TypeName, &'a InterfaceSpec, &'a String)>,
) -> BTreeMap<TypeName, String> {
    let mut texts = BTreeMap::new();
    for (name, spec, text) in interfaces {
        let sections = sections(text);
        let suffixes: &[&str] = match spec.kind() {
            InterfaceKind::Message => &[""],
            InterfaceKind::Service => &["_Request", "_Response"],
            InterfaceKind::Action => &["_Goal", "_Result", "_Feedback"],
        };
        if sections.len() != suffixes.len() {
            // The parser checked the separators; nothing else can reach here.
            continue;
        }
        for (suffix, section) in suffixes.iter().zip(sections) {
            texts.insert(name.with_suffix(suffix), section);
        }
    }
    texts
}

/// The text between `---` lines, line breaks made `\n`, without trailing line breaks.
fn sections(text: &str) -> Vec<String> {
    let mut out = vec![Vec::new()];
    for line in split_lines(text) {
        if line == "---" {
            out.push(Vec::new());
        } else {
            out.last_mut().expect("never empty").push(line);
        }
    }
    out.into_iter()
        .map(|lines| lines.join("\n").trim_end_matches('\n').to_string())
        .collect()
}

/// A member's type as a `.msg` file writes it (nested types as `pkg/Type`).
fn msg_type(base: &ResolvedBase, array: ArrayKind) -> String {
    let mut t = match base {
        ResolvedBase::Primitive(p) => p.msg_name().to_string(),
        ResolvedBase::String { bound: None } => "string".into(),
        ResolvedBase::String { bound: Some(n) } => format!("string<={n}"),
        ResolvedBase::WString { bound: None } => "wstring".into(),
        ResolvedBase::WString { bound: Some(n) } => format!("wstring<={n}"),
        ResolvedBase::Nested(n) => format!("{}/{}", n.package, n.name),
    };
    match array {
        ArrayKind::Single => {}
        ArrayKind::Fixed(n) => t.push_str(&format!("[{n}]")),
        ArrayKind::Bounded(n) => t.push_str(&format!("[<={n}]")),
        ArrayKind::Unbounded => t.push_str("[]"),
    }
    t
}

/// The `.msg` text of a structure no file defines (the `_Event` of a service, an
/// action's `_SendGoal_Request`, `_FeedbackMessage`, …): one line per member,
/// `pkg/Type name` as a `.msg` file would write it.
fn reconstructed_text(def: &StructDef) -> String {
    def.members
        .iter()
        .filter(|m| !m.placeholder)
        .map(|m| {
            format!(
                "{} {}",
                msg_type(&m.member_type.base, m.member_type.array),
                m.name
            )
        })
        .collect::<Vec<_>>()
        .join("\n")
}

impl Resolved {
    pub(crate) fn with_definition_texts(mut self, texts: BTreeMap<TypeName, String>) -> Self {
        self.texts = texts;
        self
    }

    /// The `.msg` text of one structure: its file or its section of a `.srv`/`.action`
    /// file (line breaks as `\n`, no trailing line break), or, for a structure ROS 2
    /// implies (`Foo_Event`, `Bar_SendGoal_Request`, `Bar_FeedbackMessage`, …), its
    /// members written one per line as `pkg/Type name`.
    pub fn msg_text(&self, type_name: &TypeName) -> Option<String> {
        let def = self.get_struct(type_name)?;
        Some(match self.texts.get(type_name) {
            Some(text) => text.clone(),
            None => reconstructed_text(def),
        })
    }

    /// The complete definition of a structure in MCAP's / rosbag2's `ros2msg` form: its
    /// own `.msg` text ([`Resolved::msg_text`]), then every type it uses, transitively,
    /// each once, depth-first in order of first use, each after a line of exactly 80 `=`
    /// and a line `MSG: pkg/msg/Type` (`pkg/srv/Foo_Request` … for the structures of
    /// services and actions). Texts are joined with `\n`; the result has no trailing
    /// line break. `None` if `type_name` (`pkg/msg/Type`) is not a known structure.
    pub fn ros2msg_definition(&self, type_name: &str) -> Option<String> {
        let root = TypeName::parse(type_name)?;
        let mut out = self.msg_text(&root)?;
        let mut seen: BTreeSet<&TypeName> = BTreeSet::new();
        // Depth-first, without recursion: (structure, index of its next member).
        let mut stack: Vec<(&StructDef, usize)> = vec![(self.get_struct(&root)?, 0)];
        while let Some(top) = stack.last_mut() {
            let (def, next) = (top.0, top.1);
            let Some(member) = def.members.get(next) else {
                stack.pop();
                continue;
            };
            top.1 += 1;
            let ResolvedBase::Nested(nested) = &member.member_type.base else {
                continue;
            };
            if *nested == root || !seen.insert(nested) {
                continue;
            }
            let nested_def = self.get_struct(nested).expect("references were resolved");
            out.push('\n');
            out.push_str(DELIMITER);
            out.push_str("\nMSG: ");
            out.push_str(&nested.to_string());
            out.push('\n');
            out.push_str(&self.msg_text(nested).expect("the structure exists"));
            stack.push((nested_def, 0));
        }
        Some(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sections_split_at_separator_lines() {
        assert_eq!(sections("a\n---\nb\r\nc\n\n"), vec!["a", "b\nc"]);
        assert_eq!(sections("---\n"), vec!["", ""]);
        assert_eq!(sections(""), vec![""]);
    }

    #[test]
    fn member_types_as_a_msg_file_writes_them() {
        use crate::ast::Primitive;
        let nested = ResolvedBase::Nested(TypeName::msg("std_msgs", "Header"));
        assert_eq!(
            msg_type(&nested, ArrayKind::Bounded(1)),
            "std_msgs/Header[<=1]"
        );
        let s = ResolvedBase::String { bound: Some(5) };
        assert_eq!(msg_type(&s, ArrayKind::Fixed(3)), "string<=5[3]");
        let f = ResolvedBase::Primitive(Primitive::Float64);
        assert_eq!(msg_type(&f, ArrayKind::Unbounded), "float64[]");
    }
}
