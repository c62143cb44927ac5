//! A set of parsed interface files from any number of packages, and its resolution
//! into structures, services and actions.

use std::collections::BTreeMap;

use crate::ast::{
    ArrayKind, BaseType, Field, InterfaceKind, InterfaceSpec, MessageSpec, Position, Primitive,
};
use crate::comments::Comment;
use crate::parse_error::ParseError;
use crate::parser::parse_interface;
use crate::resolve_error::ResolveError;
use crate::resolved::{
    ActionDef, Member, ResolvedBase, ResolvedType, ServiceDef, StructDef, PLACEHOLDER_MEMBER,
};
use crate::ros2msg_definition::definition_texts;
use crate::type_name::TypeName;
use crate::Resolved;

/// Interface files of one or more packages, parsed but not yet resolved.
///
/// Standard and user packages are added the same way ([`InterfaceSet::add_source`],
/// or [`InterfaceSet::add_package_dir`]); [`InterfaceSet::resolve`] then checks every
/// type reference across all of them.
#[derive(Debug, Clone, Default)]
pub struct InterfaceSet {
    interfaces: BTreeMap<TypeName, SourceInterface>,
    /// References written `pkg/Name` that mean a structure of a service or action
    /// (`pkg/srv/Name`, `pkg/action/Name`) rather than `pkg/msg/Name`: set by the ros2msg
    /// reader, whose sections may name such structures; empty for files.
    pub(crate) aliases: BTreeMap<TypeName, TypeName>,
}

/// One parsed file.
#[derive(Debug, Clone)]
pub(crate) struct SourceInterface {
    pub(crate) file: String,
    pub(crate) spec: InterfaceSpec,
    /// The file's text (for `ros2msg` definitions).
    pub(crate) text: String,
}

/// Why an interface could not be added.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum AddError {
    /// The file is malformed.
    #[error(transparent)]
    Parse(#[from] ParseError),
    /// The set already has an interface of that name.
    #[error("{file}: {type_name} is already defined by {first_file}")]
    Duplicate {
        /// The file being added.
        file: String,
        /// The interface's name.
        type_name: String,
        /// The file that defined it first.
        first_file: String,
    },
}

impl InterfaceSet {
    /// An empty set.
    pub fn new() -> Self {
        Self::default()
    }

    /// Parses one interface file and adds it: `file` names it in errors, `package` is
    /// its package, `name` the interface name (the file stem) and `kind` its extension.
    pub fn add_source(
        &mut self,
        file: &str,
        package: &str,
        name: &str,
        kind: InterfaceKind,
        source: &[u8],
    ) -> Result<TypeName, AddError> {
        let spec = parse_interface(file, package, name, kind, source)?;
        let type_name = TypeName::new(package, kind, name);
        // The parser accepted it, so it is UTF-8.
        let text = String::from_utf8_lossy(source).into_owned();
        self.insert_parsed(type_name.clone(), file, spec, text)?;
        Ok(type_name)
    }

    /// Adds an interface parsed elsewhere (the ros2msg reader) under `type_name`.
    pub(crate) fn insert_parsed(
        &mut self,
        type_name: TypeName,
        file: &str,
        spec: InterfaceSpec,
        text: String,
    ) -> Result<(), AddError> {
        if let Some(first) = self.interfaces.get(&type_name) {
            return Err(AddError::Duplicate {
                file: file.to_string(),
                type_name: type_name.to_string(),
                first_file: first.file.clone(),
            });
        }
        self.interfaces.insert(
            type_name,
            SourceInterface {
                file: file.to_string(),
                spec,
                text,
            },
        );
        Ok(())
    }

    /// Whether the set has an interface (a file, or a ros2msg section) of that name.
    pub fn contains(&self, type_name: &TypeName) -> bool {
        self.interfaces.contains_key(type_name)
    }

    /// The interfaces added so far, by name, with their parsed content.
    pub fn interfaces(&self) -> impl Iterator<Item = (&TypeName, &InterfaceSpec)> {
        self.interfaces.iter().map(|(n, s)| (n, &s.spec))
    }

    /// How many interfaces (files) the set holds.
    pub fn len(&self) -> usize {
        self.interfaces.len()
    }

    /// Whether the set is empty.
    pub fn is_empty(&self) -> bool {
        self.interfaces.is_empty()
    }

    /// Resolves every type reference, builds the types ROS 2 implies for services and
    /// actions, and checks that no message contains itself.
    pub fn resolve(&self) -> Result<Resolved, ResolveError> {
        let mut b = Builder {
            aliases: &self.aliases,
            structs: BTreeMap::new(),
            services: BTreeMap::new(),
            actions: BTreeMap::new(),
        };
        for (name, source) in &self.interfaces {
            let file = source.file.as_str();
            match &source.spec {
                InterfaceSpec::Message(m) => b.add_struct(name.clone(), m, file),
                InterfaceSpec::Service(s) => {
                    let def = b.add_service(name.clone(), file, |b, req, resp| {
                        b.add_struct(req, &s.request, file);
                        b.add_struct(resp, &s.response, file);
                    });
                    b.services.insert(name.clone(), def);
                }
                InterfaceSpec::Action(a) => {
                    let def = b.add_action(name, a, file);
                    b.actions.insert(name.clone(), def);
                }
            }
        }
        b.check_references()?;
        b.check_recursion()?;
        let texts = definition_texts(self.interfaces.iter().map(|(n, s)| (n, &s.spec, &s.text)));
        Ok(Resolved::new(b.structs, b.services, b.actions).with_definition_texts(texts))
    }
}

/// Message types that ROS 2's implied service and action types refer to.
const SERVICE_EVENT_INFO: (&str, &str) = ("service_msgs", "ServiceEventInfo");
const UUID: (&str, &str) = ("unique_identifier_msgs", "UUID");
const TIME: (&str, &str) = ("builtin_interfaces", "Time");

struct Builder<'a> {
    aliases: &'a BTreeMap<TypeName, TypeName>,
    structs: BTreeMap<TypeName, StructDef>,
    services: BTreeMap<TypeName, ServiceDef>,
    actions: BTreeMap<TypeName, ActionDef>,
}

/// A member ROS 2 implies (no position in any file).
fn implied(name: &str, base: ResolvedBase, array: ArrayKind) -> Member {
    Member {
        name: name.to_string(),
        member_type: ResolvedType { base, array },
        default: None,
        placeholder: false,
        position: Position::default(),
        comment: Comment::default(),
    }
}

fn nested(name: &TypeName) -> ResolvedBase {
    ResolvedBase::Nested(name.clone())
}

fn external(t: (&str, &str)) -> ResolvedBase {
    ResolvedBase::Nested(TypeName::msg(t.0, t.1))
}

impl Builder<'_> {
    fn add_struct(&mut self, name: TypeName, spec: &MessageSpec, file: &str) {
        let mut members: Vec<Member> = spec
            .fields
            .iter()
            .map(|f| resolve_field(f, &name.package, self.aliases))
            .collect();
        if members.is_empty() {
            let mut m = implied(
                PLACEHOLDER_MEMBER,
                ResolvedBase::Primitive(Primitive::UInt8),
                ArrayKind::Single,
            );
            m.placeholder = true;
            members.push(m);
        }
        self.insert(StructDef {
            name,
            members,
            constants: spec.constants.clone(),
            file: file.to_string(),
            comment: spec.comment.clone(),
        });
    }

    fn insert(&mut self, def: StructDef) {
        self.structs.insert(def.name.clone(), def);
    }

    /// Adds `…_Request`, `…_Response` (through `add_parts`) and `…_Event`.
    fn add_service(
        &mut self,
        name: TypeName,
        file: &str,
        add_parts: impl FnOnce(&mut Self, TypeName, TypeName),
    ) -> ServiceDef {
        let def = ServiceDef {
            request: name.with_suffix("_Request"),
            response: name.with_suffix("_Response"),
            event: name.with_suffix("_Event"),
            name,
        };
        add_parts(self, def.request.clone(), def.response.clone());
        let one = ArrayKind::Bounded(1);
        self.insert(StructDef {
            name: def.event.clone(),
            members: vec![
                implied("info", external(SERVICE_EVENT_INFO), ArrayKind::Single),
                implied("request", nested(&def.request), one),
                implied("response", nested(&def.response), one),
            ],
            constants: Vec::new(),
            file: file.to_string(),
            comment: Comment::default(),
        });
        def
    }

    fn add_action(&mut self, name: &TypeName, a: &crate::ast::ActionSpec, file: &str) -> ActionDef {
        let goal = name.with_suffix("_Goal");
        let result = name.with_suffix("_Result");
        let feedback = name.with_suffix("_Feedback");
        self.add_struct(goal.clone(), &a.goal, file);
        self.add_struct(result.clone(), &a.result, file);
        self.add_struct(feedback.clone(), &a.feedback, file);
        let single = ArrayKind::Single;
        let implied_struct = |name: TypeName, members: Vec<Member>| StructDef {
            name,
            members,
            constants: Vec::new(),
            file: file.to_string(),
            comment: Comment::default(),
        };
        let send_goal = self.add_service(name.with_suffix("_SendGoal"), file, |b, req, resp| {
            b.insert(implied_struct(
                req,
                vec![
                    implied("goal_id", external(UUID), single),
                    implied("goal", nested(&goal), single),
                ],
            ));
            b.insert(implied_struct(
                resp,
                vec![
                    implied("accepted", ResolvedBase::Primitive(Primitive::Bool), single),
                    implied("stamp", external(TIME), single),
                ],
            ));
        });
        let get_result = self.add_service(name.with_suffix("_GetResult"), file, |b, req, resp| {
            b.insert(implied_struct(
                req,
                vec![implied("goal_id", external(UUID), single)],
            ));
            b.insert(implied_struct(
                resp,
                vec![
                    implied("status", ResolvedBase::Primitive(Primitive::Int8), single),
                    implied("result", nested(&result), single),
                ],
            ));
        });
        let feedback_message = name.with_suffix("_FeedbackMessage");
        self.insert(implied_struct(
            feedback_message.clone(),
            vec![
                implied("goal_id", external(UUID), single),
                implied("feedback", nested(&feedback), single),
            ],
        ));
        ActionDef {
            name: name.clone(),
            goal,
            result,
            feedback,
            send_goal,
            get_result,
            feedback_message,
        }
    }

    fn check_references(&self) -> Result<(), ResolveError> {
        for def in self.structs.values() {
            for m in &def.members {
                let ResolvedBase::Nested(target) = &m.member_type.base else {
                    continue;
                };
                if self.structs.contains_key(target) {
                    continue;
                }
                return Err(if m.position.line == 0 {
                    ResolveError::MissingImpliedType {
                        file: def.file.clone(),
                        type_name: target.to_string(),
                        owner: def.name.to_string(),
                    }
                } else {
                    ResolveError::UnknownType {
                        file: def.file.clone(),
                        line: m.position.line,
                        column: m.position.column,
                        type_name: target.to_string(),
                        field: m.name.clone(),
                        owner: def.name.to_string(),
                    }
                });
            }
        }
        Ok(())
    }

    /// Depth-first search over "contains" edges (iterative: no recursion on input depth).
    fn check_recursion(&self) -> Result<(), ResolveError> {
        #[derive(Clone, Copy, PartialEq)]
        enum Mark {
            InProgress,
            Done,
        }
        let mut marks: BTreeMap<&TypeName, Mark> = BTreeMap::new();
        for root in self.structs.keys() {
            if marks.contains_key(root) {
                continue;
            }
            // Stack of (type, index of the next member to visit).
            let mut stack: Vec<(&TypeName, usize)> = vec![(root, 0)];
            marks.insert(root, Mark::InProgress);
            while let Some(top) = stack.last_mut() {
                let (name, next) = (top.0, top.1);
                let def = &self.structs[name];
                let Some(member) = def.members.get(next) else {
                    marks.insert(name, Mark::Done);
                    stack.pop();
                    continue;
                };
                top.1 += 1;
                let ResolvedBase::Nested(target) = &member.member_type.base else {
                    continue;
                };
                let (target, _) = self
                    .structs
                    .get_key_value(target)
                    .expect("references were checked");
                match marks.get(target) {
                    Some(Mark::Done) => {}
                    Some(Mark::InProgress) => {
                        let start = stack
                            .iter()
                            .position(|(n, _)| *n == target)
                            .expect("in-progress types are on the stack");
                        let mut cycle: Vec<String> =
                            stack[start..].iter().map(|(n, _)| n.to_string()).collect();
                        cycle.push(target.to_string());
                        let (first, first_next) = stack[start];
                        let first_def = &self.structs[first];
                        let closing = &first_def.members[first_next - 1];
                        return Err(ResolveError::Recursive {
                            file: first_def.file.clone(),
                            line: closing.position.line,
                            column: closing.position.column,
                            cycle,
                        });
                    }
                    None => {
                        marks.insert(target, Mark::InProgress);
                        stack.push((target, 0));
                    }
                }
            }
        }
        Ok(())
    }
}

/// A field with its type name made full: `Type` → `own_package/msg/Type`,
/// `pkg/Type` → `pkg/msg/Type` (only messages can be nested).
fn resolve_field(f: &Field, own_package: &str, aliases: &BTreeMap<TypeName, TypeName>) -> Member {
    let base = match &f.field_type.base {
        BaseType::Primitive(p) => ResolvedBase::Primitive(*p),
        BaseType::String { bound } => ResolvedBase::String { bound: *bound },
        BaseType::WString { bound } => ResolvedBase::WString { bound: *bound },
        BaseType::Named(n) => {
            let name = TypeName::msg(n.package.as_deref().unwrap_or(own_package), &n.name);
            ResolvedBase::Nested(aliases.get(&name).cloned().unwrap_or(name))
        }
    };
    Member {
        name: f.name.clone(),
        member_type: ResolvedType {
            base,
            array: f.field_type.array,
        },
        default: f.default.clone(),
        placeholder: false,
        position: f.position,
        comment: f.comment.clone(),
    }
}
