//! ROS 2 message values as JSON (what `topic echo --json` prints and `topic pub` takes,
//! YAML being read into the same form): [`to_json`] from a decoded [`CdrValue`],
//! [`from_json`] to one, fields left out taking their ROS 2 defaults (the file's default
//! value, else zero, `false`, empty), an unknown field or a value of the wrong type a
//! [`FieldError`] naming the field.
//!
//! Floats that JSON cannot write (NaN, ±infinity) are the strings `nan`, `inf`, `-inf`
//! (also read as `.nan`, `.inf`, `-.inf`, YAML's spelling).

use std::fmt;

use horus_idl::cdr::{CdrValue, MAX_DEPTH};
use horus_idl::{
    ArrayKind, DefaultValue, Member, Primitive, Resolved, ResolvedBase, ResolvedType, TypeName,
    Value as IdlValue, PLACEHOLDER_MEMBER,
};
use serde_json::{Map, Number, Value};

/// Most elements the defaults of fixed arrays may make in one message, nested arrays
/// multiplied (a hostile definition could ask for 2^32 - 1 of a structure holding as
/// many); more than a topic's default 1 MiB body holds.
const MAX_DEFAULT_ELEMENTS: u64 = 1 << 21;

/// A value that does not fit its field: the field's dotted path and why.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct FieldError {
    /// `pose.position.x`, `ranges.3`, or empty for the message itself.
    pub(crate) path: String,
    /// What is wrong.
    pub(crate) problem: String,
}

impl fmt::Display for FieldError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.path.is_empty() {
            write!(f, "the message: {}", self.problem)
        } else {
            write!(f, "field '{}': {}", self.path, self.problem)
        }
    }
}

impl std::error::Error for FieldError {}

/// A decoded value as JSON (objects list the fields of a structure; the placeholder
/// member ROS 2 gives structures without fields is left out).
pub(crate) fn to_json(v: &CdrValue) -> Value {
    match v {
        CdrValue::Bool(b) => Value::Bool(*b),
        CdrValue::Int(i) => Value::from(*i),
        CdrValue::UInt(u) => Value::from(*u),
        CdrValue::Float32(f) => float_json(f64_of_f32(*f)),
        CdrValue::Float64(f) => float_json(*f),
        CdrValue::String(s) | CdrValue::WString(s) => Value::String(s.clone()),
        CdrValue::Bytes(b) => Value::Array(b.iter().map(|x| Value::from(*x)).collect()),
        CdrValue::Array(a) => Value::Array(a.iter().map(to_json).collect()),
        CdrValue::Struct(fields) => Value::Object(
            fields
                .iter()
                .filter(|(n, _)| !is_placeholder(fields, n))
                .map(|(n, v)| (n.clone(), to_json(v)))
                .collect::<Map<_, _>>(),
        ),
    }
}

/// Whether `name` is the placeholder member of a structure without fields.
pub(crate) fn is_placeholder(fields: &[(String, CdrValue)], name: &str) -> bool {
    fields.len() == 1 && name == PLACEHOLDER_MEMBER
}

/// The f64 an f32 prints as (`0.1f32` → `0.1`, not `0.10000000149011612`).
fn f64_of_f32(f: f32) -> f64 {
    if f.is_finite() {
        f.to_string().parse().unwrap_or(f64::from(f))
    } else {
        f64::from(f)
    }
}

fn float_json(f: f64) -> Value {
    match Number::from_f64(f) {
        Some(n) => Value::Number(n),
        None if f.is_nan() => Value::String("nan".into()),
        None if f > 0.0 => Value::String("inf".into()),
        None => Value::String("-inf".into()),
    }
}

/// A message of type `root` from its JSON (or YAML) form.
pub(crate) fn from_json(
    resolved: &Resolved,
    root: &TypeName,
    v: &Value,
) -> Result<CdrValue, FieldError> {
    let b = Builder {
        resolved,
        defaulted: std::cell::Cell::new(0),
    };
    b.structure(root, Some(v), "", 0)
}

struct Builder<'a> {
    resolved: &'a Resolved,
    /// Elements made for fixed arrays' defaults so far.
    defaulted: std::cell::Cell<u64>,
}

fn err(path: &str, problem: impl Into<String>) -> FieldError {
    FieldError {
        path: path.to_owned(),
        problem: problem.into(),
    }
}

fn join(path: &str, name: &str) -> String {
    if path.is_empty() {
        name.to_owned()
    } else {
        format!("{path}.{name}")
    }
}

fn kind_of(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a bool",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "a mapping",
    }
}

fn is_byte_like(p: Primitive) -> bool {
    matches!(p, Primitive::Byte | Primitive::Char | Primitive::UInt8)
}

impl Builder<'_> {
    /// A structure from a JSON object (`None`: all defaults).
    fn structure(
        &self,
        name: &TypeName,
        v: Option<&Value>,
        path: &str,
        depth: usize,
    ) -> Result<CdrValue, FieldError> {
        if depth > MAX_DEPTH {
            return Err(err(path, format!("nested more than {MAX_DEPTH} deep")));
        }
        let def = self
            .resolved
            .get_struct(name)
            .ok_or_else(|| err(path, format!("unknown type {name}")))?;
        let given = match v {
            None | Some(Value::Null) if path.is_empty() => None,
            None => None,
            Some(Value::Object(m)) => Some(m),
            Some(other) => {
                return Err(err(
                    path,
                    format!(
                        "expected a mapping of the fields of {name}, found {}",
                        kind_of(other)
                    ),
                ))
            }
        };
        if let Some(m) = given {
            if let Some(unknown) = m
                .keys()
                .find(|k| !def.members.iter().any(|mem| mem.name == **k))
            {
                let names: Vec<&str> = def
                    .members
                    .iter()
                    .filter(|m| !m.placeholder)
                    .map(|m| m.name.as_str())
                    .collect();
                return Err(err(
                    &join(path, unknown),
                    format!(
                        "{name} has no such field (its fields: {})",
                        names.join(", ")
                    ),
                ));
            }
        }
        let mut fields = Vec::with_capacity(def.members.len());
        for member in &def.members {
            let p = join(path, &member.name);
            let value = match given.and_then(|m| m.get(&member.name)) {
                Some(v) => self.member(&member.member_type, v, &p, depth)?,
                None => self.default(member, &p, depth)?,
            };
            fields.push((member.name.clone(), value));
        }
        Ok(CdrValue::Struct(fields))
    }

    /// A member's value from JSON.
    fn member(
        &self,
        t: &ResolvedType,
        v: &Value,
        path: &str,
        depth: usize,
    ) -> Result<CdrValue, FieldError> {
        if t.array == ArrayKind::Single {
            return self.element(&t.base, v, path, depth);
        }
        let Value::Array(items) = v else {
            return Err(err(path, format!("expected a list, found {}", kind_of(v))));
        };
        match t.array {
            ArrayKind::Fixed(n) if items.len() != n as usize => {
                return Err(err(
                    path,
                    format!("expected exactly {n} elements, found {}", items.len()),
                ))
            }
            ArrayKind::Bounded(n) if items.len() > n as usize => {
                return Err(err(
                    path,
                    format!("at most {n} elements, found {}", items.len()),
                ))
            }
            _ => {}
        }
        let elements = items
            .iter()
            .enumerate()
            .map(|(i, x)| self.element(&t.base, x, &format!("{path}.{i}"), depth))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(CdrValue::Array(elements))
    }

    /// One element (of a field or an array) from JSON.
    fn element(
        &self,
        base: &ResolvedBase,
        v: &Value,
        path: &str,
        depth: usize,
    ) -> Result<CdrValue, FieldError> {
        match base {
            ResolvedBase::Primitive(p) => primitive(*p, v, path),
            ResolvedBase::String { bound } | ResolvedBase::WString { bound } => {
                let Value::String(s) = v else {
                    return Err(err(
                        path,
                        format!("expected a string, found {}", kind_of(v)),
                    ));
                };
                if let Some(b) = bound {
                    let len = if matches!(base, ResolvedBase::String { .. }) {
                        s.len()
                    } else {
                        s.encode_utf16().count()
                    };
                    if len > *b as usize {
                        return Err(err(path, format!("longer than its bound of {b}")));
                    }
                }
                Ok(if matches!(base, ResolvedBase::String { .. }) {
                    CdrValue::String(s.clone())
                } else {
                    CdrValue::WString(s.clone())
                })
            }
            ResolvedBase::Nested(n) => self.structure(n, Some(v), path, depth + 1),
        }
    }

    /// A member's default: the file's default value, else zero / empty.
    fn default(&self, m: &Member, path: &str, depth: usize) -> Result<CdrValue, FieldError> {
        let t = &m.member_type;
        match (&m.default, t.array) {
            (Some(DefaultValue::Scalar(v)), _) => Ok(from_idl(&t.base, v)),
            (Some(DefaultValue::Array(vs)), _) => Ok(CdrValue::Array(
                vs.iter().map(|v| from_idl(&t.base, v)).collect(),
            )),
            (None, ArrayKind::Single) => self.zero(&t.base, path, depth),
            (None, ArrayKind::Fixed(n)) => {
                let before = self.defaulted.get();
                self.charge(u64::from(n), path)?;
                if let ResolvedBase::Primitive(p) = t.base {
                    if is_byte_like(p) {
                        return Ok(CdrValue::Bytes(vec![0; n as usize]));
                    }
                }
                let one = self.zero(&t.base, path, depth)?;
                // Each copy holds what the first one made.
                let inner = self.defaulted.get() - before - u64::from(n);
                self.charge(inner.saturating_mul(u64::from(n).saturating_sub(1)), path)?;
                Ok(CdrValue::Array(vec![one; n as usize]))
            }
            (None, ArrayKind::Bounded(_) | ArrayKind::Unbounded) => Ok(CdrValue::Array(Vec::new())),
        }
    }

    /// Counts `n` more default elements, refusing past [`MAX_DEFAULT_ELEMENTS`].
    fn charge(&self, n: u64, path: &str) -> Result<(), FieldError> {
        let total = self.defaulted.get().saturating_add(n);
        if total > MAX_DEFAULT_ELEMENTS {
            return Err(err(
                path,
                format!(
                    "the defaults of its fixed arrays would make more than \
                     {MAX_DEFAULT_ELEMENTS} elements: too large"
                ),
            ));
        }
        self.defaulted.set(total);
        Ok(())
    }

    fn zero(&self, base: &ResolvedBase, path: &str, depth: usize) -> Result<CdrValue, FieldError> {
        Ok(match base {
            ResolvedBase::Primitive(p) => match p {
                Primitive::Bool => CdrValue::Bool(false),
                Primitive::Float32 => CdrValue::Float32(0.0),
                Primitive::Float64 => CdrValue::Float64(0.0),
                Primitive::Int8 | Primitive::Int16 | Primitive::Int32 | Primitive::Int64 => {
                    CdrValue::Int(0)
                }
                _ => CdrValue::UInt(0),
            },
            ResolvedBase::String { .. } => CdrValue::String(String::new()),
            ResolvedBase::WString { .. } => CdrValue::WString(String::new()),
            ResolvedBase::Nested(n) => self.structure(n, None, path, depth + 1)?,
        })
    }
}

/// A default value written in the file, as a value of its element type.
fn from_idl(base: &ResolvedBase, v: &IdlValue) -> CdrValue {
    match (base, v) {
        (_, IdlValue::Bool(b)) => CdrValue::Bool(*b),
        (ResolvedBase::Primitive(Primitive::Float32), IdlValue::Float(f)) => {
            CdrValue::Float32(*f as f32)
        }
        (ResolvedBase::Primitive(Primitive::Float32), IdlValue::Int(i)) => {
            CdrValue::Float32(*i as f32)
        }
        (_, IdlValue::Float(f)) => CdrValue::Float64(*f),
        (ResolvedBase::Primitive(Primitive::Float64), IdlValue::Int(i)) => {
            CdrValue::Float64(*i as f64)
        }
        (ResolvedBase::Primitive(p), IdlValue::Int(i))
            if p.integer_range().is_some_and(|r| r.0 < 0) =>
        {
            CdrValue::Int(*i as i64)
        }
        (_, IdlValue::Int(i)) => CdrValue::UInt(*i as u64),
        (ResolvedBase::WString { .. }, IdlValue::String(s)) => CdrValue::WString(s.clone()),
        (_, IdlValue::String(s)) => CdrValue::String(s.clone()),
    }
}

/// A primitive from JSON: bools for `bool`, integers in range for integer types,
/// numbers (or `nan`/`inf` strings) for floats.
fn primitive(p: Primitive, v: &Value, path: &str) -> Result<CdrValue, FieldError> {
    let name = p.msg_name();
    match p {
        Primitive::Bool => match v {
            Value::Bool(b) => Ok(CdrValue::Bool(*b)),
            _ => Err(err(path, format!("expected a bool, found {}", kind_of(v)))),
        },
        Primitive::Float32 | Primitive::Float64 => {
            let f = match v {
                Value::Number(n) => n.as_f64().unwrap_or(f64::NAN),
                Value::String(s) => match s.to_ascii_lowercase().as_str() {
                    "nan" | ".nan" => f64::NAN,
                    "inf" | ".inf" | "+inf" | "+.inf" => f64::INFINITY,
                    "-inf" | "-.inf" => f64::NEG_INFINITY,
                    _ => {
                        return Err(err(
                            path,
                            format!("expected a number ({name}), found '{s}'"),
                        ))
                    }
                },
                _ => {
                    return Err(err(
                        path,
                        format!("expected a number ({name}), found {}", kind_of(v)),
                    ))
                }
            };
            if p == Primitive::Float64 {
                return Ok(CdrValue::Float64(f));
            }
            let narrowed = f as f32;
            if f.is_finite() && narrowed.is_infinite() {
                return Err(err(path, format!("{f} is out of range for float32")));
            }
            Ok(CdrValue::Float32(narrowed))
        }
        _ => {
            let (lo, hi) = p.integer_range().unwrap_or((0, 0));
            let i: i128 = match v {
                Value::Number(n) => match (n.as_i64(), n.as_u64()) {
                    (Some(i), _) => i128::from(i),
                    (None, Some(u)) => i128::from(u),
                    _ => {
                        return Err(err(
                            path,
                            format!("expected an integer ({name}), found {n}"),
                        ))
                    }
                },
                _ => {
                    return Err(err(
                        path,
                        format!("expected an integer ({name}), found {}", kind_of(v)),
                    ))
                }
            };
            if i < lo || i > hi {
                return Err(err(
                    path,
                    format!("{i} is out of range for {name} ({lo}..={hi})"),
                ));
            }
            Ok(if lo < 0 {
                CdrValue::Int(i as i64)
            } else {
                CdrValue::UInt(i as u64)
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn read(definition: &str) -> (Resolved, TypeName) {
        horus_idl::resolve_ros2msg("t/msg/T", definition).unwrap()
    }

    #[test]
    fn huge_fixed_array_default_from_a_hostile_definition_is_refused() {
        let (r, t) = read("float64[4294967295] big\n");
        let e = from_json(&r, &t, &json!({})).unwrap_err();
        assert_eq!(e.path, "big");
        assert!(e.problem.contains("too large"), "{e}");
        // Given explicitly, its length is checked before anything is built.
        let e = from_json(&r, &t, &json!({"big": [1.0]})).unwrap_err();
        assert!(e.problem.contains("exactly 4294967295"), "{e}");
    }

    #[test]
    fn nested_fixed_array_defaults_multiply_into_the_budget() {
        // 2000 × 2000 elements: each array alone is small, together four million.
        let definition = format!(
            "t/Inner[2000] outer\n{}\nMSG: t/Inner\nfloat64[2000] x\n",
            "=".repeat(80)
        );
        let (r, t) = read(&definition);
        let e = from_json(&r, &t, &json!({})).unwrap_err();
        assert_eq!(e.path, "outer");
        assert!(e.problem.contains("too large"), "{e}");
        let small = format!(
            "t/Inner[20] outer\n{}\nMSG: t/Inner\nfloat64[20] x\n",
            "=".repeat(80)
        );
        let (r, t) = read(&small);
        from_json(&r, &t, &json!({})).unwrap();
    }

    #[test]
    fn floats_take_nan_and_infinity_strings_and_float32_range_is_checked() {
        let (r, t) = read("float32 a\nfloat64 b\n");
        let v = from_json(&r, &t, &json!({"a": ".inf", "b": "nan"})).unwrap();
        assert_eq!(v.field("a"), Some(&CdrValue::Float32(f32::INFINITY)));
        assert!(matches!(v.field("b"), Some(CdrValue::Float64(f)) if f.is_nan()));
        assert_eq!(to_json(&v), json!({"a": "inf", "b": "nan"}));
        let e = from_json(&r, &t, &json!({"a": 1e300})).unwrap_err();
        assert!(e.problem.contains("out of range for float32"), "{e}");
        let e = from_json(&r, &t, &json!({"a": "fast"})).unwrap_err();
        assert_eq!(e.path, "a");
    }

    #[test]
    fn defaults_from_the_file_and_zeros_fill_missing_fields() {
        let (r, t) =
            read("int8 a -3\nstring s \"hi\"\nuint8[3] bytes\nbool[] flags [true]\nint16 z\n");
        let v = from_json(&r, &t, &serde_json::Value::Null).unwrap();
        assert_eq!(
            v,
            CdrValue::Struct(vec![
                ("a".into(), CdrValue::Int(-3)),
                ("s".into(), CdrValue::String("hi".into())),
                ("bytes".into(), CdrValue::Bytes(vec![0; 3])),
                ("flags".into(), CdrValue::Array(vec![CdrValue::Bool(true)])),
                ("z".into(), CdrValue::Int(0)),
            ])
        );
        horus_idl::cdr::encode(&r, &t, &v).unwrap();
    }

    #[test]
    fn message_without_fields_is_an_empty_object() {
        let (r, t) = read("");
        let v = from_json(&r, &t, &json!({})).unwrap();
        assert_eq!(to_json(&v), json!({}));
        horus_idl::cdr::encode(&r, &t, &v).unwrap();
    }
}
