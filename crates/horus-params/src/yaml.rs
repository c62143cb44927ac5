//! Loading parameters from and dumping them to YAML.
//!
//! The file is one mapping `name: value`. Values are YAML booleans, integers,
//! floats (an integer is accepted for an `f64` parameter), strings, or
//! sequences of those for arrays. Every key must be a declared parameter
//! and every value must pass the same checks as a live set; the first
//! problem is a [`YamlError::At`] with the 1-based line and column of the
//! offending key or value, and nothing is applied (a file loads entirely or
//! not at all). Keys absent from the file keep their current values.
//!
//! Files are read up to [`MAX_YAML_BYTES`](crate::yaml_bound::MAX_YAML_BYTES) and a document
//! must expand to at most [`MAX_YAML_NODES`](crate::yaml_bound::MAX_YAML_NODES) nodes with its
//! aliases replayed ([`crate::yaml_bound`]).

use std::collections::HashSet;
use std::fmt;

use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};

use crate::decl::ParamDecl;
use crate::error::YamlError;
use crate::registry::Parameters;
use crate::value::{ParamKind, ParamValue};

impl Parameters {
    /// Loads values from YAML text; returns the names set, in file order.
    pub fn load_yaml_str(&mut self, text: &str) -> Result<Vec<(String, ParamValue)>, YamlError> {
        crate::yaml_bound::check_nodes(text)?;
        let decls: Vec<ParamDecl> = self.decls().cloned().collect();
        let seed = FileSeed { decls: &decls };
        let values = seed
            .deserialize(serde_yaml::Deserializer::from_str(text))
            .map_err(convert)?;
        for (name, value) in &values {
            // Already checked against the same declaration: cannot fail.
            self.set(name, value.clone())
                .map_err(|e| YamlError::Other {
                    message: e.to_string(),
                })?;
        }
        Ok(values)
    }

    /// Loads values from the YAML file at `path` (see [`Parameters::load_yaml_str`]).
    pub fn load_yaml_file(
        &mut self,
        path: impl AsRef<std::path::Path>,
    ) -> Result<Vec<(String, ParamValue)>, YamlError> {
        let path = path.as_ref();
        let text = crate::yaml_bound::read_file(path).map_err(|e| match e {
            crate::yaml_bound::YamlBoundError::Io { path, source } => {
                YamlError::Io { path, source }
            }
            e => YamlError::Bound(e),
        })?;
        self.load_yaml_str(&text)
    }

    /// Every parameter as YAML, in declaration order, each preceded by a
    /// comment with its description, kind and range. Loads back unchanged.
    pub fn dump_yaml(&self) -> String {
        let mut out = String::new();
        for e in self.entries() {
            let d = &e.decl;
            out.push_str("# ");
            if !d.description.is_empty() {
                out.push_str(&d.description);
                out.push(' ');
            }
            out.push_str(&format!("({}", d.kind()));
            match d.range {
                Some(crate::Range::I64 { min, max }) => out.push_str(&format!(", {min}..={max}")),
                Some(crate::Range::F64 { min, max }) => {
                    out.push_str(&format!(", {min:?}..={max:?}"))
                }
                None => {}
            }
            out.push_str(")\n");
            let mut map = serde_yaml::Mapping::new();
            map.insert(d.name.clone().into(), to_yaml(&e.value));
            // Serialising a mapping of plain values cannot fail.
            out.push_str(&serde_yaml::to_string(&map).unwrap_or_default());
        }
        out
    }

    /// Writes [`Parameters::dump_yaml`] to `path`.
    pub fn dump_yaml_file(&self, path: impl AsRef<std::path::Path>) -> Result<(), YamlError> {
        let path = path.as_ref();
        std::fs::write(path, self.dump_yaml()).map_err(|source| YamlError::Io {
            path: path.display().to_string(),
            source,
        })
    }
}

fn to_yaml(v: &ParamValue) -> serde_yaml::Value {
    use serde_yaml::Value as Y;
    let seq = |items: Vec<Y>| Y::Sequence(items);
    match v {
        ParamValue::Bool(b) => Y::Bool(*b),
        ParamValue::I64(i) => Y::Number((*i).into()),
        ParamValue::F64(f) => Y::Number((*f).into()),
        ParamValue::Str(s) => Y::String(s.clone()),
        ParamValue::BoolArray(vs) => seq(vs.iter().map(|b| Y::Bool(*b)).collect()),
        ParamValue::I64Array(vs) => seq(vs.iter().map(|i| Y::Number((*i).into())).collect()),
        ParamValue::F64Array(vs) => seq(vs.iter().map(|f| Y::Number((*f).into())).collect()),
        ParamValue::StrArray(vs) => seq(vs.iter().map(|s| Y::String(s.clone())).collect()),
    }
}

/// serde_yaml attaches the position of the node being read to errors
/// raised while reading it; split it out of the message.
fn convert(e: serde_yaml::Error) -> YamlError {
    let text = e.to_string();
    match e.location() {
        Some(loc) => {
            let message = match text.rfind(" at line ") {
                Some(i) => text[..i].to_owned(),
                None => text,
            };
            YamlError::At {
                line: loc.line(),
                column: loc.column(),
                message,
            }
        }
        None => YamlError::Other { message: text },
    }
}

struct FileSeed<'a> {
    decls: &'a [ParamDecl],
}

impl<'de> DeserializeSeed<'de> for FileSeed<'_> {
    type Value = Vec<(String, ParamValue)>;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for FileSeed<'_> {
    type Value = Vec<(String, ParamValue)>;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a mapping of parameter names to values")
    }
    fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
        Ok(Vec::new()) // an empty file
    }
    fn visit_none<E: de::Error>(self) -> Result<Self::Value, E> {
        Ok(Vec::new()) // an empty file
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut seen = HashSet::new();
        let mut out = Vec::new();
        while let Some(name) = map.next_key::<String>()? {
            // Key problems are reported while reading the value: serde_yaml
            // attaches the value's position (a key error would carry the
            // position of the whole mapping).
            let problem = match self.decls.iter().find(|d| d.name == name) {
                None => Err(format!("unknown parameter `{name}`")),
                Some(_) if !seen.insert(name.clone()) => {
                    Err(format!("parameter `{name}` given twice"))
                }
                Some(decl) => Ok(decl),
            };
            match problem {
                Ok(decl) => out.push((name, map.next_value_seed(ValueSeed { decl })?)),
                Err(message) => {
                    map.next_value_seed(Reject { message })?;
                }
            }
        }
        Ok(out)
    }
}

/// Fails on whatever value it is given, with `message` at its position.
struct Reject {
    message: String,
}

impl<'de> DeserializeSeed<'de> for Reject {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        // Reading the value as `IgnoredAny` then failing would lose the
        // position; failing inside `deserialize_any` keeps it.
        d.deserialize_any(self)
    }
}

macro_rules! reject_all {
    ($($f:ident: $t:ty),*) => {
        $(fn $f<E: de::Error>(self, _: $t) -> Result<(), E> {
            Err(E::custom(self.message))
        })*
    };
}

impl<'de> Visitor<'de> for Reject {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
    reject_all!(visit_bool: bool, visit_i64: i64, visit_u64: u64, visit_f64: f64, visit_str: &str);
    fn visit_unit<E: de::Error>(self) -> Result<(), E> {
        Err(E::custom(self.message))
    }
    fn visit_none<E: de::Error>(self) -> Result<(), E> {
        Err(E::custom(self.message))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, _: A) -> Result<(), A::Error> {
        Err(de::Error::custom(self.message))
    }
    fn visit_map<A: MapAccess<'de>>(self, _: A) -> Result<(), A::Error> {
        Err(de::Error::custom(self.message))
    }
}

/// One scalar as read from YAML, before checking it against a declaration.
enum Scalar {
    Bool(bool),
    Int(i64),
    Float(f64),
    Str(String),
}

impl Scalar {
    fn describe(&self) -> &'static str {
        match self {
            Scalar::Bool(_) => "a boolean",
            Scalar::Int(_) => "an integer",
            Scalar::Float(_) => "a float",
            Scalar::Str(_) => "a string",
        }
    }
}

/// Reads a scalar of the element kind `want` (a scalar kind).
fn scalar_to<E: de::Error>(name: &str, want: ParamKind, s: Scalar) -> Result<ParamValue, E> {
    Ok(match (want, s) {
        (ParamKind::Bool, Scalar::Bool(b)) => ParamValue::Bool(b),
        (ParamKind::I64, Scalar::Int(i)) => ParamValue::I64(i),
        (ParamKind::F64, Scalar::Float(f)) => ParamValue::F64(f),
        (ParamKind::F64, Scalar::Int(i)) => ParamValue::F64(i as f64),
        (ParamKind::Str, Scalar::Str(s)) => ParamValue::Str(s),
        (want, s) => {
            return Err(E::custom(format!(
                "parameter `{name}` is {want}, got {}",
                s.describe()
            )))
        }
    })
}

fn element_kind(kind: ParamKind) -> Option<ParamKind> {
    match kind {
        ParamKind::BoolArray => Some(ParamKind::Bool),
        ParamKind::I64Array => Some(ParamKind::I64),
        ParamKind::F64Array => Some(ParamKind::F64),
        ParamKind::StrArray => Some(ParamKind::Str),
        _ => None,
    }
}

/// Reads one parameter's value and checks it against the declaration.
struct ValueSeed<'a> {
    decl: &'a ParamDecl,
}

impl<'de> DeserializeSeed<'de> for ValueSeed<'_> {
    type Value = ParamValue;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<ParamValue, D::Error> {
        d.deserialize_any(self)
    }
}

impl ValueSeed<'_> {
    fn scalar<E: de::Error>(self, s: Scalar) -> Result<ParamValue, E> {
        let v = scalar_to(&self.decl.name, self.decl.kind(), s)?;
        self.decl.check(&v).map_err(E::custom)?;
        Ok(v)
    }
}

impl<'de> Visitor<'de> for ValueSeed<'_> {
    type Value = ParamValue;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} for parameter `{}`", self.decl.kind(), self.decl.name)
    }
    fn visit_bool<E: de::Error>(self, v: bool) -> Result<ParamValue, E> {
        self.scalar(Scalar::Bool(v))
    }
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<ParamValue, E> {
        self.scalar(Scalar::Int(v))
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<ParamValue, E> {
        let v = i64::try_from(v).map_err(|_| E::custom(format!("{v} does not fit in i64")))?;
        self.scalar(Scalar::Int(v))
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<ParamValue, E> {
        self.scalar(Scalar::Float(v))
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<ParamValue, E> {
        self.scalar(Scalar::Str(v.to_owned()))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<ParamValue, A::Error> {
        let name = &self.decl.name;
        let kind = self.decl.kind();
        let elem = element_kind(kind).ok_or_else(|| {
            de::Error::custom(format!("parameter `{name}` is {kind}, got a sequence"))
        })?;
        let mut items = Vec::new();
        let range = self.decl.range;
        while let Some(v) = seq.next_element_seed(ElemSeed {
            name,
            kind: elem,
            range,
        })? {
            items.push(v);
        }
        let value = collect(kind, items);
        self.decl.check(&value).map_err(de::Error::custom)?;
        crate::codec::check_encoded_len(name, &value).map_err(de::Error::custom)?;
        Ok(value)
    }
}

fn collect(kind: ParamKind, items: Vec<ParamValue>) -> ParamValue {
    let mut it = items.into_iter();
    match kind {
        ParamKind::BoolArray => {
            ParamValue::BoolArray(it.by_ref().filter_map(|v| v.as_bool()).collect())
        }
        ParamKind::I64Array => {
            ParamValue::I64Array(it.by_ref().filter_map(|v| v.as_i64()).collect())
        }
        ParamKind::F64Array => {
            ParamValue::F64Array(it.by_ref().filter_map(|v| v.as_f64()).collect())
        }
        _ => ParamValue::StrArray(
            it.filter_map(|v| match v {
                ParamValue::Str(s) => Some(s),
                _ => None,
            })
            .collect(),
        ),
    }
}

/// Reads one array element of scalar kind `kind`.
struct ElemSeed<'a> {
    name: &'a str,
    kind: ParamKind,
    range: Option<crate::Range>,
}

impl ElemSeed<'_> {
    /// Converts and range-checks one element, so an error points at it.
    fn elem<E: de::Error>(self, s: Scalar) -> Result<ParamValue, E> {
        let v = scalar_to(self.name, self.kind, s)?;
        if let Some(r) = self.range {
            r.check(self.name, &v).map_err(E::custom)?;
        }
        Ok(v)
    }
}

impl<'de> DeserializeSeed<'de> for ElemSeed<'_> {
    type Value = ParamValue;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<ParamValue, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for ElemSeed<'_> {
    type Value = ParamValue;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} elements for parameter `{}`", self.kind, self.name)
    }
    fn visit_bool<E: de::Error>(self, v: bool) -> Result<ParamValue, E> {
        self.elem(Scalar::Bool(v))
    }
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<ParamValue, E> {
        self.elem(Scalar::Int(v))
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<ParamValue, E> {
        let v = i64::try_from(v).map_err(|_| E::custom(format!("{v} does not fit in i64")))?;
        self.elem(Scalar::Int(v))
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<ParamValue, E> {
        self.elem(Scalar::Float(v))
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<ParamValue, E> {
        self.elem(Scalar::Str(v.to_owned()))
    }
}
