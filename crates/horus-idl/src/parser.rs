//! The `.msg` / `.srv` / `.action` parser. It accepts exactly what ROS 2's
//! `rosidl_adapter` accepts (same line rules, name rules and value rules), bounded by
//! [`crate::limits`], and reports the first problem with its line and column.

use crate::ast::{
    ActionSpec, ArrayKind, BaseType, Constant, ConstantType, DefaultValue, Field, FieldType,
    InterfaceKind, InterfaceSpec, MessageSpec, NamedType, Position, Primitive, ServiceSpec, Value,
};
use crate::comments::{process_comment, split_comment, Comment};
use crate::limits::{MAX_BOUND, MAX_FILE_BYTES, MAX_LINE_BYTES, MAX_MEMBERS};
use crate::names::{
    is_valid_constant_name, is_valid_field_name, is_valid_message_name, is_valid_package_name,
};
use crate::parse_error::{ParseError, ParseErrorKind, TypeProblem};
use crate::value::{parse_primitive, parse_string, split_string_array};

/// The line that separates the sections of `.srv` and `.action` files.
const SEPARATOR: &str = "---";

/// Parses one interface file.
///
/// `file` names the file in errors; `package` is the package it belongs to (bare type
/// names in it refer to this package); `name` is the interface name (the file stem,
/// e.g. `Image`); `kind` says whether it is a `.msg`, `.srv` or `.action` file.
pub fn parse_interface(
    file: &str,
    package: &str,
    name: &str,
    kind: InterfaceKind,
    source: &[u8],
) -> Result<InterfaceSpec, ParseError> {
    let whole_file = |kind| ParseError {
        file: file.to_string(),
        line: 0,
        column: 0,
        kind,
    };
    if source.len() > MAX_FILE_BYTES {
        return Err(whole_file(ParseErrorKind::FileTooLarge {
            size: source.len(),
            limit: MAX_FILE_BYTES,
        }));
    }
    if !is_valid_package_name(package) {
        return Err(whole_file(ParseErrorKind::BadPackageName {
            name: package.to_string(),
        }));
    }
    if !is_valid_message_name(name) {
        return Err(whole_file(ParseErrorKind::BadInterfaceName {
            name: name.to_string(),
        }));
    }
    let text = std::str::from_utf8(source).map_err(|e| {
        let good = &source[..e.valid_up_to()];
        let line = good.iter().filter(|b| **b == b'\n').count() + 1;
        let line_start = good.iter().rposition(|b| *b == b'\n').map_or(0, |i| i + 1);
        let column = String::from_utf8_lossy(&good[line_start..]).chars().count() + 1;
        ParseError {
            file: file.to_string(),
            line,
            column,
            kind: ParseErrorKind::NotUtf8,
        }
    })?;
    let lines = split_lines(text);
    for (i, line) in lines.iter().enumerate() {
        if line.len() > MAX_LINE_BYTES {
            return Err(ParseError {
                file: file.to_string(),
                line: i + 1,
                column: 0,
                kind: ParseErrorKind::LineTooLong {
                    length: line.len(),
                    limit: MAX_LINE_BYTES,
                },
            });
        }
    }
    let numbered: Vec<(usize, &str)> = lines.iter().enumerate().map(|(i, l)| (i + 1, *l)).collect();
    let separators: Vec<usize> = numbered
        .iter()
        .enumerate()
        .filter(|(_, (_, l))| *l == SEPARATOR)
        .map(|(i, _)| i)
        .collect();
    let ctx = Context { file, package };
    let section = |range: std::ops::Range<usize>| ctx.parse_section(&numbered[range]);
    let wrong_count = |extension, expected| {
        whole_file(ParseErrorKind::WrongSeparatorCount {
            extension,
            expected,
            found: separators.len(),
        })
    };
    match kind {
        InterfaceKind::Message => {
            if let Some(&i) = separators.first() {
                return Err(ParseError {
                    file: file.to_string(),
                    line: numbered[i].0,
                    column: 1,
                    kind: ParseErrorKind::SeparatorInMessage,
                });
            }
            Ok(InterfaceSpec::Message(section(0..numbered.len())?))
        }
        InterfaceKind::Service => {
            let [s] = separators[..] else {
                return Err(wrong_count("srv", 1));
            };
            Ok(InterfaceSpec::Service(ServiceSpec {
                request: section(0..s)?,
                response: section(s + 1..numbered.len())?,
            }))
        }
        InterfaceKind::Action => {
            let [s0, s1] = separators[..] else {
                return Err(wrong_count("action", 2));
            };
            Ok(InterfaceSpec::Action(ActionSpec {
                goal: section(0..s0)?,
                result: section(s0 + 1..s1)?,
                feedback: section(s1 + 1..numbered.len())?,
            }))
        }
    }
}

/// Splits lines at the same line boundaries as Python's `str.splitlines()`.
pub(crate) fn split_lines(text: &str) -> Vec<&str> {
    let mut lines = Vec::new();
    let mut start = 0;
    let mut chars = text.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        let is_break = matches!(
            c,
            '\n' | '\r'
                | '\x0b'
                | '\x0c'
                | '\x1c'
                | '\x1d'
                | '\x1e'
                | '\u{85}'
                | '\u{2028}'
                | '\u{2029}'
        );
        if is_break {
            lines.push(&text[start..i]);
            let mut end = i + c.len_utf8();
            if c == '\r' {
                if let Some((j, '\n')) = chars.peek().copied() {
                    chars.next();
                    end = j + 1;
                }
            }
            start = end;
        }
    }
    if start < text.len() {
        lines.push(&text[start..]);
    }
    lines
}

/// What every line of one file is parsed against.
struct Context<'a> {
    file: &'a str,
    package: &'a str,
}

/// An error inside a line: what, and the byte offset in the line where it is.
type LineError = (ParseErrorKind, usize);

/// The definition a line added.
#[derive(Clone, Copy)]
enum Added {
    Field(usize),
    Constant(usize),
}

impl Added {
    fn comment_of(self, spec: &mut MessageSpec) -> &mut Vec<String> {
        match self {
            Self::Field(i) => &mut spec.fields[i].comment.lines,
            Self::Constant(i) => &mut spec.constants[i].comment.lines,
        }
    }
}

impl Context<'_> {
    fn parse_section(&self, lines: &[(usize, &str)]) -> Result<MessageSpec, ParseError> {
        let mut spec = MessageSpec::default();
        let lines: Vec<(usize, String)> = lines
            .iter()
            .map(|(n, l)| (*n, l.replace('\t', " ")))
            .collect();
        // Leading lines that start with '#' are the message's comment.
        let body_start = lines
            .iter()
            .position(|(_, l)| !l.starts_with('#'))
            .unwrap_or(lines.len());
        let message_comment = lines[..body_start]
            .iter()
            .map(|(_, l)| l.trim_start_matches('#').to_string())
            .collect();
        let mut pending: Vec<String> = Vec::new();
        let mut last: Option<Added> = None;
        for (line_no, line) in &lines[body_start..] {
            let (before, comment) = split_comment(line.trim_end());
            if let Some(comment) = comment {
                if !before.is_empty() && before.trim().is_empty() {
                    // An indented comment line continues the previous definition's comment.
                    if let Some(added) = last {
                        added.comment_of(&mut spec).push(comment.to_string());
                    }
                    continue;
                }
                pending.push(comment.to_string());
            }
            match self.parse_line(line, *line_no, &mut spec) {
                Ok(Some(added)) => {
                    added.comment_of(&mut spec).append(&mut pending);
                    last = Some(added);
                }
                Ok(None) => {}
                Err((kind, offset)) => {
                    let column = line[..offset.min(line.len())].chars().count() + 1;
                    return Err(ParseError {
                        file: self.file.to_string(),
                        line: *line_no,
                        column,
                        kind,
                    });
                }
            }
        }
        spec.comment = process_comment(message_comment);
        for f in &mut spec.fields {
            f.comment = process_comment(std::mem::take(&mut f.comment.lines));
        }
        for c in &mut spec.constants {
            c.comment = process_comment(std::mem::take(&mut c.comment.lines));
        }
        Ok(spec)
    }

    fn parse_line(
        &self,
        line: &str,
        line_no: usize,
        spec: &mut MessageSpec,
    ) -> Result<Option<Added>, LineError> {
        let mut content = line.trim_end();
        if let Some(hash) = content.find('#') {
            content = content[..hash].trim_end();
        }
        if content.trim_start().is_empty() {
            return Ok(None);
        }
        if content.starts_with(' ') {
            return Err((ParseErrorKind::Indented, 0));
        }
        if spec.fields.len() + spec.constants.len() >= MAX_MEMBERS {
            return Err((ParseErrorKind::TooManyMembers { limit: MAX_MEMBERS }, 0));
        }
        let (type_text, rest_raw) = content.split_once(' ').unwrap_or((content, ""));
        let rest = rest_raw.trim_start();
        let rest_offset = content.len() - rest.len();
        if rest.is_empty() {
            return Err((
                ParseErrorKind::MissingName {
                    text: content.to_string(),
                },
                0,
            ));
        }
        let position = Position {
            line: line_no,
            column: 1,
        };
        if let Some(eq) = rest.find('=') {
            let name = rest[..eq].trim_end();
            let value_text = rest[eq + 1..].trim_start();
            let value_offset = content.len() - value_text.len();
            let constant = self.parse_constant(
                type_text,
                name,
                value_text,
                rest_offset,
                value_offset,
                position,
            )?;
            if let Some(first) = spec.constants.iter().find(|c| c.name == constant.name) {
                return Err((
                    ParseErrorKind::DuplicateConstant {
                        name: constant.name,
                        first_line: first.position.line,
                    },
                    rest_offset,
                ));
            }
            spec.constants.push(constant);
            Ok(Some(Added::Constant(spec.constants.len() - 1)))
        } else {
            let (name, default_raw) = rest.split_once(' ').unwrap_or((rest, ""));
            let default_text = default_raw.trim_start();
            let default_offset = content.len() - default_text.len();
            let field_type = self.parse_field_type(type_text)?;
            if !is_valid_field_name(name) {
                return Err((
                    ParseErrorKind::BadFieldName {
                        name: name.to_string(),
                    },
                    rest_offset,
                ));
            }
            let default = if default_text.is_empty() {
                None
            } else {
                Some(
                    parse_default(&field_type, type_text, default_text)
                        .map_err(|k| (k, default_offset))?,
                )
            };
            if let Some(first) = spec.fields.iter().find(|f| f.name == name) {
                return Err((
                    ParseErrorKind::DuplicateField {
                        name: name.to_string(),
                        first_line: first.position.line,
                    },
                    rest_offset,
                ));
            }
            spec.fields.push(Field {
                name: name.to_string(),
                field_type,
                default,
                position,
                comment: Comment::default(),
            });
            Ok(Some(Added::Field(spec.fields.len() - 1)))
        }
    }

    fn parse_constant(
        &self,
        type_text: &str,
        name: &str,
        value_text: &str,
        name_offset: usize,
        value_offset: usize,
        position: Position,
    ) -> Result<Constant, LineError> {
        let constant_type = match type_text {
            "string" => ConstantType::String,
            "wstring" => ConstantType::WString,
            "duration" | "time" => {
                return Err((
                    ParseErrorKind::BadType {
                        text: type_text.to_string(),
                        reason: TypeProblem::Ros1Type,
                    },
                    0,
                ))
            }
            other => match Primitive::from_msg_name(other) {
                Some(p) => ConstantType::Primitive(p),
                None => {
                    return Err((
                        ParseErrorKind::BadConstantType {
                            text: type_text.to_string(),
                        },
                        0,
                    ))
                }
            },
        };
        if !is_valid_constant_name(name) {
            return Err((
                ParseErrorKind::BadConstantName {
                    name: name.to_string(),
                },
                name_offset,
            ));
        }
        let value = match constant_type {
            ConstantType::Primitive(p) => parse_primitive(p, value_text),
            ConstantType::String | ConstantType::WString => {
                parse_string(value_text, None).map(Value::String)
            }
        }
        .map_err(|reason| {
            (
                ParseErrorKind::BadValue {
                    value: value_text.to_string(),
                    type_name: type_text.to_string(),
                    reason,
                },
                value_offset,
            )
        })?;
        Ok(Constant {
            name: name.to_string(),
            constant_type,
            value,
            position,
            comment: Comment::default(),
        })
    }

    fn parse_field_type(&self, text: &str) -> Result<FieldType, LineError> {
        let bad_type = |reason| {
            (
                ParseErrorKind::BadType {
                    text: text.to_string(),
                    reason,
                },
                0,
            )
        };
        let (base_text, array) = if let Some(without) = text.strip_suffix(']') {
            let open = without
                .rfind('[')
                .ok_or_else(|| bad_type(TypeProblem::UnmatchedBracket))?;
            let inner = &without[open + 1..];
            let bad_bound = || {
                (
                    ParseErrorKind::BadArrayBound {
                        text: inner.to_string(),
                        max: MAX_BOUND,
                    },
                    open + 1,
                )
            };
            let array = if inner.is_empty() {
                ArrayKind::Unbounded
            } else if let Some(bound) = inner.strip_prefix("<=") {
                ArrayKind::Bounded(parse_bound(bound).ok_or_else(bad_bound)?)
            } else {
                ArrayKind::Fixed(parse_bound(inner).ok_or_else(bad_bound)?)
            };
            (&without[..open], array)
        } else {
            (text, ArrayKind::Single)
        };
        let base = self.parse_base_type(base_text).map_err(|e| match e {
            BaseProblem::Type(reason) => bad_type(reason),
            BaseProblem::StringBound(bound) => (
                ParseErrorKind::BadStringBound {
                    text: bound,
                    max: MAX_BOUND,
                },
                0,
            ),
        })?;
        Ok(FieldType { base, array })
    }

    fn parse_base_type(&self, text: &str) -> Result<BaseType, BaseProblem> {
        if let Some(p) = Primitive::from_msg_name(text) {
            return Ok(BaseType::Primitive(p));
        }
        match text {
            "string" => return Ok(BaseType::String { bound: None }),
            "wstring" => return Ok(BaseType::WString { bound: None }),
            "duration" | "time" => return Err(BaseProblem::Type(TypeProblem::Ros1Type)),
            _ => {}
        }
        if let Some(bound) = text.strip_prefix("string<=") {
            let bound =
                parse_bound(bound).ok_or_else(|| BaseProblem::StringBound(bound.to_string()))?;
            return Ok(BaseType::String { bound: Some(bound) });
        }
        if let Some(bound) = text.strip_prefix("wstring<=") {
            let bound =
                parse_bound(bound).ok_or_else(|| BaseProblem::StringBound(bound.to_string()))?;
            return Ok(BaseType::WString { bound: Some(bound) });
        }
        let parts: Vec<&str> = text.split('/').collect();
        let (package, name) = match parts[..] {
            [name] => (None, name),
            [package, name] => (Some(package), name),
            _ => return Err(BaseProblem::Type(TypeProblem::TooManySlashes)),
        };
        if !is_valid_package_name(package.unwrap_or(self.package)) {
            return Err(BaseProblem::Type(TypeProblem::BadPackageName(
                package.unwrap_or(self.package).to_string(),
            )));
        }
        if !is_valid_message_name(name) {
            return Err(BaseProblem::Type(TypeProblem::BadMessageName(
                name.to_string(),
            )));
        }
        Ok(BaseType::Named(NamedType {
            package: package.map(str::to_string),
            name: name.to_string(),
        }))
    }
}

/// Why a base type was refused.
enum BaseProblem {
    Type(TypeProblem),
    StringBound(String),
}

/// An array size or bound: decimal digits, 1..=[`MAX_BOUND`].
fn parse_bound(text: &str) -> Option<u32> {
    if text.is_empty() || !text.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let v: u64 = text.parse().ok()?;
    if v == 0 || v > MAX_BOUND {
        return None;
    }
    u32::try_from(v).ok()
}

/// Reads a field's default value for its type.
fn parse_default(
    ty: &FieldType,
    type_text: &str,
    text: &str,
) -> Result<DefaultValue, ParseErrorKind> {
    let bad = |reason: String| ParseErrorKind::BadValue {
        value: text.to_string(),
        type_name: type_text.to_string(),
        reason,
    };
    let element = |t: &str| -> Result<Value, String> {
        match &ty.base {
            BaseType::Primitive(p) => parse_primitive(*p, t),
            BaseType::String { bound } | BaseType::WString { bound } => {
                parse_string(t, *bound).map(Value::String)
            }
            BaseType::Named(_) => unreachable!("checked before"),
        }
    };
    if matches!(ty.base, BaseType::Named(_)) {
        return Err(ParseErrorKind::DefaultOnNestedType {
            type_name: type_text.to_string(),
        });
    }
    if ty.array == ArrayKind::Single {
        return element(text).map(DefaultValue::Scalar).map_err(bad);
    }
    let inner = text
        .strip_prefix('[')
        .and_then(|t| t.strip_suffix(']'))
        .ok_or_else(|| bad("array value must start with '[' and end with ']'".into()))?;
    let items: Vec<String> = match ty.base {
        BaseType::String { .. } | BaseType::WString { .. } => {
            split_string_array(inner).map_err(bad)?
        }
        _ if inner.is_empty() => Vec::new(),
        _ => inner.split(',').map(str::to_string).collect(),
    };
    match ty.array {
        ArrayKind::Fixed(n) if items.len() != n as usize => {
            return Err(bad(format!(
                "array must have exactly {n} elements, not {}",
                items.len()
            )))
        }
        ArrayKind::Bounded(n) if items.len() > n as usize => {
            return Err(bad(format!(
                "array must have not more than {n} elements, not {}",
                items.len()
            )))
        }
        _ => {}
    }
    let mut values = Vec::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        values.push(element(item.trim()).map_err(|e| bad(format!("element {i}: {e}")))?);
    }
    Ok(DefaultValue::Array(values))
}
