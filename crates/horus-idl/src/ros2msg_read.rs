//! Reading a complete `ros2msg` definition (MCAP's schema encoding, rosbag2's
//! `docs/message_definition_encoding.md`, [`crate::Resolved::ros2msg_definition`]) back
//! into an [`InterfaceSet`], so that a tool decodes any ROS-typed topic or recording
//! channel from its definition alone.
//!
//! The root type's `.msg` text comes first; each further section is a line of exactly 80
//! `=`, a header line and the section's text:
//! - `MSG: pkg/msg/Type` or `MSG: pkg/Type` (ROS 1-style tools write this form): a `.msg`
//!   text. `MSG: pkg/srv/Foo_Request`, `MSG: pkg/action/Bar_Goal`, … give a structure of
//!   a service or action in `.msg` form (as [`crate::Resolved::ros2msg_definition`] writes
//!   them); a field written `pkg/Foo_Request` then means that structure when the
//!   definition has no `pkg/msg/Foo_Request`.
//! - `SRV: pkg/srv/Foo` (or `SRV: pkg/Foo`): a whole `.srv` text, as rosbag2 writes
//!   service event topics (whose root text is empty).
//! - `ACTION: pkg/action/Foo` (or `ACTION: pkg/Foo`): a whole `.action` text.
//!
//! `IDL:` sections (the `ros2idl` encoding) are refused. A section repeated with the same
//! text is read once. `service_msgs/msg/ServiceEventInfo`, `builtin_interfaces/msg/Time`
//! and `unique_identifier_msgs/msg/UUID`, which the types ROS 2 implies for services and
//! actions use, come from the compiled-in standard set when a `SRV:`/`ACTION:` section
//! needs them and the definition does not have them (rosbag2 does not write them).
//!
//! Bounded: at most [`MAX_FILE_BYTES`] bytes and [`MAX_ROS2MSG_SECTIONS`] sections; every
//! section is parsed by [`crate::parse_interface`] with its limits; line numbers in errors
//! (and in the parsed positions) count from the definition's first line.

use std::collections::BTreeMap;

use crate::ast::{InterfaceKind, InterfaceSpec, MessageSpec};
use crate::embedded::standard_file;
use crate::interface_set::{AddError, InterfaceSet};
use crate::limits::{MAX_FILE_BYTES, MAX_LINE_BYTES, MAX_ROS2MSG_SECTIONS};
use crate::names::{is_valid_message_name, is_valid_package_name};
use crate::parse_error::ParseError;
use crate::parser::{parse_interface, split_lines};
use crate::resolve_error::ResolveError;
use crate::type_name::TypeName;
use crate::Resolved;

/// The line before each section's header: exactly 80 `=`.
pub const ROS2MSG_DELIMITER: &str =
    "================================================================================";

/// Longest name quoted back in an error (a hostile header line can be long).
const QUOTE_LIMIT: usize = 120;

/// Why a `ros2msg` definition could not be read.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum Ros2MsgError {
    /// The definition is larger than [`MAX_FILE_BYTES`].
    #[error("the definition is {size} bytes, more than the limit of {limit}")]
    TooLarge {
        /// Its size.
        size: usize,
        /// The limit.
        limit: usize,
    },
    /// The definition is not UTF-8 (the line of the first bad byte).
    #[error("line {line}: the definition is not valid UTF-8")]
    NotUtf8 {
        /// 1-based line.
        line: usize,
    },
    /// More sections than [`MAX_ROS2MSG_SECTIONS`].
    #[error("line {line}: more than {limit} sections")]
    TooManySections {
        /// The line of the section past the limit.
        line: usize,
        /// The limit.
        limit: usize,
    },
    /// The root type name is not `pkg/msg/Type`, `pkg/Type` or `pkg/srv|action/Type`.
    #[error("'{name}' is not a type name (pkg/msg/Type or pkg/Type)")]
    BadRootName {
        /// The name as given.
        name: String,
    },
    /// A delimiter line not followed by a `MSG:`, `SRV:` or `ACTION:` header.
    #[error("line {line}: expected 'MSG: <type>' after the line of '=', found '{found}'")]
    MissingHeader {
        /// The line where the header should be.
        line: usize,
        /// What is there (shortened).
        found: String,
    },
    /// A header whose type name is not valid for its kind of section.
    #[error("line {line}: '{name}' is not a valid type name for a {header} section")]
    BadSectionName {
        /// The header line.
        line: usize,
        /// `MSG`, `SRV` or `ACTION`.
        header: &'static str,
        /// The name (shortened).
        name: String,
    },
    /// An `IDL:` section (the `ros2idl` encoding).
    #[error("line {line}: IDL sections (ros2idl) are not supported")]
    IdlSection {
        /// The header line.
        line: usize,
    },
    /// A type defined twice with different texts (or as a structure and again by its
    /// service's or action's section).
    #[error("line {line}: {type_name} is defined again, differently (first at line {first_line})")]
    Conflict {
        /// The second definition's header line.
        line: usize,
        /// The first definition's header line (0: the root text).
        first_line: usize,
        /// The type.
        type_name: String,
    },
    /// A section is malformed (its line numbers count from the definition's first line).
    #[error("section {section}: {error}")]
    Parse {
        /// The section's type.
        section: String,
        /// What is wrong, and where.
        error: Box<ParseError>,
    },
    /// Resolution failed: a type used but not defined, a recursive type, …
    #[error(transparent)]
    Resolve(Box<ResolveError>),
    /// The definition does not define the root type as a structure.
    #[error("the definition does not define {root}")]
    RootNotDefined {
        /// The root type.
        root: String,
    },
}

/// What a section holds.
#[derive(Clone, Copy, PartialEq)]
enum SectionKind {
    /// One structure in `.msg` form (a message, or a structure of a service/action).
    Struct,
    /// A whole `.srv` text.
    Service,
    /// A whole `.action` text.
    Action,
}

impl SectionKind {
    fn header(self) -> &'static str {
        match self {
            Self::Struct => "MSG",
            Self::Service => "SRV",
            Self::Action => "ACTION",
        }
    }
}

/// One section: its type, kind, header line (0 for the root text) and lines.
struct Section<'a> {
    name: TypeName,
    kind: SectionKind,
    header_line: usize,
    /// 1-based line number of `lines[0]`.
    first_line: usize,
    lines: &'a [&'a str],
}

fn shorten(text: &str) -> String {
    match text.char_indices().nth(QUOTE_LIMIT) {
        Some((i, _)) => format!("{}…", &text[..i]),
        None => text.to_string(),
    }
}

/// Whether `name` is a structure name: a message name, or one ROS 2 implies
/// (`Foo_Request`, `Foo_Event`, `Bar_SendGoal_Request`, `Bar_FeedbackMessage`, …):
/// parts separated by single `_`, each `[A-Z][A-Za-z0-9]*`.
fn is_valid_struct_name(name: &str) -> bool {
    name.split('_').all(is_valid_message_name)
}

impl TypeName {
    /// Reads a type name as tools take it: `pkg/msg/Type`, `pkg/srv/Foo_Request`,
    /// `pkg/action/Bar_Goal`, … or `pkg/Type` (a message, as ROS 1 and some ROS 2 tools
    /// write it). `None` unless the package and name are valid.
    pub fn parse_lenient(text: &str) -> Option<Self> {
        let name = match text.split('/').count() {
            2 => {
                let (package, name) = text.split_once('/')?;
                Self::msg(package, name)
            }
            3 => Self::parse(text)?,
            _ => return None,
        };
        (is_valid_package_name(&name.package) && is_valid_struct_name(&name.name)).then_some(name)
    }
}

/// A section header's type: `pkg/<ns>/Name` or `pkg/Name` (namespace `default_ns`).
fn section_name(text: &str, kind: SectionKind) -> Option<TypeName> {
    let name = match kind {
        SectionKind::Struct => TypeName::parse_lenient(text)?,
        SectionKind::Service | SectionKind::Action => {
            let ns = if kind == SectionKind::Service {
                InterfaceKind::Service
            } else {
                InterfaceKind::Action
            };
            let parts: Vec<&str> = text.split('/').collect();
            let (package, name) = match parts[..] {
                [p, n] => (p, n),
                [p, s, n] if s == ns.namespace() => (p, n),
                _ => return None,
            };
            if !is_valid_package_name(package) || !is_valid_message_name(name) {
                return None;
            }
            TypeName::new(package, ns, name)
        }
    };
    Some(name)
}

/// Splits the definition into sections.
fn split_sections<'a>(
    root: &TypeName,
    lines: &'a [&'a str],
) -> Result<Vec<Section<'a>>, Ros2MsgError> {
    let delimiters: Vec<usize> = lines
        .iter()
        .enumerate()
        .filter(|(_, l)| **l == ROS2MSG_DELIMITER)
        .map(|(i, _)| i)
        .collect();
    let mut sections = Vec::new();
    let root_end = delimiters.first().copied().unwrap_or(lines.len());
    let root_lines = &lines[..root_end];
    for (n, &d) in delimiters.iter().enumerate() {
        if n + 1 >= MAX_ROS2MSG_SECTIONS {
            return Err(Ros2MsgError::TooManySections {
                line: d + 1,
                limit: MAX_ROS2MSG_SECTIONS,
            });
        }
        let header_line = d + 2;
        let end = delimiters.get(n + 1).copied().unwrap_or(lines.len());
        let Some(header) = lines.get(d + 1).filter(|_| d + 1 < end) else {
            return Err(Ros2MsgError::MissingHeader {
                line: header_line,
                found: String::new(),
            });
        };
        let (tag, rest) = header.split_once(':').unwrap_or(("", header));
        let kind = match tag {
            "MSG" => SectionKind::Struct,
            "SRV" => SectionKind::Service,
            "ACTION" => SectionKind::Action,
            "IDL" => return Err(Ros2MsgError::IdlSection { line: header_line }),
            _ => {
                return Err(Ros2MsgError::MissingHeader {
                    line: header_line,
                    found: shorten(header),
                })
            }
        };
        let raw_name = rest.trim();
        let bad_name = || Ros2MsgError::BadSectionName {
            line: header_line,
            header: kind.header(),
            name: shorten(raw_name),
        };
        if header.len() > MAX_LINE_BYTES || !rest.starts_with(char::is_whitespace) {
            return Err(bad_name());
        }
        let name = section_name(raw_name, kind).ok_or_else(bad_name)?;
        sections.push(Section {
            name,
            kind,
            header_line,
            first_line: d + 3,
            lines: &lines[d + 2..end],
        });
    }
    // An empty root text before sections is rosbag2's form for services (`SRV:` first)
    // and the form of tools that give the root a section of its own; otherwise the root
    // text is the root structure (possibly empty: a message without fields).
    let root_blank = root_lines.iter().all(|l| l.trim().is_empty());
    let root_has_section = sections
        .first()
        .is_some_and(|s| s.kind != SectionKind::Struct || s.name == *root);
    if !(root_blank && root_has_section) {
        sections.insert(
            0,
            Section {
                name: root.clone(),
                kind: SectionKind::Struct,
                header_line: 0,
                first_line: 1,
                lines: root_lines,
            },
        );
    }
    Ok(sections)
}

/// Adds `offset` to every line number in a parsed section.
fn shift_positions(spec: &mut InterfaceSpec, offset: usize) {
    let shift = |m: &mut MessageSpec| {
        for f in &mut m.fields {
            f.position.line += offset;
        }
        for c in &mut m.constants {
            c.position.line += offset;
        }
    };
    match spec {
        InterfaceSpec::Message(m) => shift(m),
        InterfaceSpec::Service(s) => {
            shift(&mut s.request);
            shift(&mut s.response);
        }
        InterfaceSpec::Action(a) => {
            shift(&mut a.goal);
            shift(&mut a.result);
            shift(&mut a.feedback);
        }
    }
}

/// The structures a service's or action's section defines.
fn implied_structs(name: &TypeName, kind: SectionKind) -> Vec<TypeName> {
    let suffixes: &[&str] = match kind {
        SectionKind::Struct => &[],
        SectionKind::Service => &["_Request", "_Response", "_Event"],
        SectionKind::Action => &[
            "_Goal",
            "_Result",
            "_Feedback",
            "_SendGoal_Request",
            "_SendGoal_Response",
            "_SendGoal_Event",
            "_GetResult_Request",
            "_GetResult_Response",
            "_GetResult_Event",
            "_FeedbackMessage",
        ],
    };
    suffixes.iter().map(|s| name.with_suffix(s)).collect()
}

/// Message types that ROS 2's implied service and action structures use.
const IMPLIED_DEPENDENCIES: [(&str, &str); 3] = [
    ("service_msgs", "ServiceEventInfo"),
    ("builtin_interfaces", "Time"),
    ("unique_identifier_msgs", "UUID"),
];

impl InterfaceSet {
    /// The interfaces of a complete `ros2msg` definition whose root type is `root`
    /// (`pkg/msg/Type`, `pkg/Type`, or a structure of a service or action such as
    /// `pkg/srv/Foo_Event`); see the [module documentation](self) for the form accepted.
    /// [`InterfaceSet::resolve`] then checks that every type used is defined;
    /// [`resolve_ros2msg`] does both and checks the root.
    pub fn from_ros2msg(root: &str, definition: impl AsRef<[u8]>) -> Result<Self, Ros2MsgError> {
        read(root, definition.as_ref()).map(|(set, _)| set)
    }
}

/// Reads a complete `ros2msg` definition ([`InterfaceSet::from_ros2msg`]), resolves it
/// and checks that it defines `root` as a structure: what a tool needs to decode
/// messages of that type with [`crate::cdr::decode`]. Returns the resolved types and
/// the root's full name.
pub fn resolve_ros2msg(
    root: &str,
    definition: impl AsRef<[u8]>,
) -> Result<(Resolved, TypeName), Ros2MsgError> {
    let (set, root) = read(root, definition.as_ref())?;
    let resolved = set
        .resolve()
        .map_err(|e| Ros2MsgError::Resolve(Box::new(e)))?;
    if resolved.get_struct(&root).is_none() {
        return Err(Ros2MsgError::RootNotDefined {
            root: root.to_string(),
        });
    }
    Ok((resolved, root))
}

fn read(root_text: &str, bytes: &[u8]) -> Result<(InterfaceSet, TypeName), Ros2MsgError> {
    if bytes.len() > MAX_FILE_BYTES {
        return Err(Ros2MsgError::TooLarge {
            size: bytes.len(),
            limit: MAX_FILE_BYTES,
        });
    }
    let root = TypeName::parse_lenient(root_text).ok_or_else(|| Ros2MsgError::BadRootName {
        name: shorten(root_text),
    })?;
    let text = std::str::from_utf8(bytes).map_err(|e| Ros2MsgError::NotUtf8 {
        line: bytes[..e.valid_up_to()]
            .iter()
            .filter(|b| **b == b'\n')
            .count()
            + 1,
    })?;
    let lines = split_lines(text);
    let sections = split_sections(&root, &lines)?;
    let file = format!("ros2msg definition of {root}");

    // Every structure defined, with the header line of its section, to find conflicts.
    let mut defined: BTreeMap<TypeName, (usize, SectionKind, String)> = BTreeMap::new();
    let mut set = InterfaceSet::new();
    let mut needs_implied_dependencies = false;
    for s in &sections {
        let source = s.lines.join("\n");
        if let Some((first_line, first_kind, first_text)) = defined.get(&s.name) {
            if *first_kind == s.kind && *first_text == source {
                continue;
            }
            return Err(Ros2MsgError::Conflict {
                line: s.header_line,
                first_line: *first_line,
                type_name: s.name.to_string(),
            });
        }
        for implied in implied_structs(&s.name, s.kind) {
            if let Some((first_line, ..)) = defined.get(&implied) {
                return Err(Ros2MsgError::Conflict {
                    line: s.header_line,
                    first_line: *first_line,
                    type_name: implied.to_string(),
                });
            }
            defined.insert(implied, (s.header_line, s.kind, String::new()));
        }
        let kind = match s.kind {
            SectionKind::Struct => InterfaceKind::Message,
            SectionKind::Service => InterfaceKind::Service,
            SectionKind::Action => InterfaceKind::Action,
        };
        needs_implied_dependencies |= kind != InterfaceKind::Message;
        // The parser checks the interface name against ROS 2's message-name rule; a
        // structure ROS 2 implies (`Foo_Event`) is checked by the header's own rule.
        let parse_name = s.name.name.split('_').next().unwrap_or_default();
        let offset = s.first_line - 1;
        let mut spec = parse_interface(&file, &s.name.package, parse_name, kind, source.as_bytes())
            .map_err(|mut error| {
                if error.line > 0 {
                    error.line += offset;
                }
                Ros2MsgError::Parse {
                    section: s.name.to_string(),
                    error: Box::new(error),
                }
            })?;
        shift_positions(&mut spec, offset);
        let added = set.insert_parsed(s.name.clone(), &file, spec, source.clone());
        if let Err(AddError::Duplicate { .. }) = added {
            // Checked above through `defined`; nothing else adds to this set.
            return Err(Ros2MsgError::Conflict {
                line: s.header_line,
                first_line: s.header_line,
                type_name: s.name.to_string(),
            });
        }
        defined.insert(s.name.clone(), (s.header_line, s.kind, source));
    }
    if needs_implied_dependencies {
        add_implied_dependencies(&mut set);
    }
    set.aliases = aliases(&set);
    Ok((set, root))
}

/// Adds the standard types ROS 2's implied structures use, where the definition lacks them.
fn add_implied_dependencies(set: &mut InterfaceSet) {
    for (package, name) in IMPLIED_DEPENDENCIES {
        let type_name = TypeName::msg(package, name);
        if set.contains(&type_name) {
            continue;
        }
        let Some(f) = standard_file(&type_name) else {
            continue;
        };
        // The vendored files parse (tests/embedded_standard.rs); were one not to, the
        // type would be reported missing by resolution.
        let _ = set.add_source(&f.file_name(), f.package, f.name, f.kind, f.text.as_bytes());
    }
}

/// For every `pkg/msg/Name` the set does not define but whose package defines exactly
/// one structure `pkg/srv/Name` or `pkg/action/Name`: that structure.
fn aliases(set: &InterfaceSet) -> BTreeMap<TypeName, TypeName> {
    let mut candidates: BTreeMap<TypeName, Vec<TypeName>> = BTreeMap::new();
    for (name, spec) in set.interfaces() {
        let structs = match spec {
            InterfaceSpec::Message(_) if name.namespace != InterfaceKind::Message => {
                vec![name.clone()]
            }
            InterfaceSpec::Message(_) => Vec::new(),
            InterfaceSpec::Service(_) => implied_structs(name, SectionKind::Service),
            InterfaceSpec::Action(_) => implied_structs(name, SectionKind::Action),
        };
        for s in structs {
            let as_msg = TypeName::msg(&s.package, &s.name);
            if !set.contains(&as_msg) {
                candidates.entry(as_msg).or_default().push(s);
            }
        }
    }
    candidates
        .into_iter()
        .filter_map(|(k, mut v)| (v.len() == 1).then(|| (k, v.remove(0))))
        .collect()
}
