//! Parameter values from the command line (YAML) and to JSON.

use horus_params::{ParamKind, ParamValue};
use serde_json::Value;
use serde_yaml::Value as Yaml;

/// Reads `text` as a YAML scalar or flat list, for a parameter declared `kind`.
///
/// The value keeps the type YAML gives it, so the node judges it and a mismatch is its typed
/// `WrongType` error. Two conversions a user means every time are made first: an integer
/// given for an `f64` (or an `f64[]` element) becomes a float, and a bare scalar given for a
/// `string` is taken as its text (`42` for a string parameter is `"42"`). An empty list takes
/// the declared kind. Anything else that is not a scalar or a list of scalars of one type is
/// refused here, before anything is sent.
pub(super) fn parse(text: &str, kind: ParamKind) -> Result<ParamValue, String> {
    let y: Yaml = serde_yaml::from_str(text).map_err(|e| format!("{text:?} is not YAML: {e}"))?;
    if kind == ParamKind::Str {
        return Ok(match y {
            Yaml::String(s) => ParamValue::Str(s),
            Yaml::Bool(_) | Yaml::Number(_) | Yaml::Null => ParamValue::Str(text.trim().to_owned()),
            other => natural(&other, kind)?,
        });
    }
    natural(&y, kind)
}

fn natural(y: &Yaml, kind: ParamKind) -> Result<ParamValue, String> {
    let want_float = matches!(kind, ParamKind::F64 | ParamKind::F64Array);
    Ok(match y {
        Yaml::Sequence(items) => sequence(items, kind)?,
        other => match scalar(other, want_float)? {
            Scalar::Bool(b) => ParamValue::Bool(b),
            Scalar::Int(i) => ParamValue::I64(i),
            Scalar::Float(f) => ParamValue::F64(f),
            Scalar::Str(s) => ParamValue::Str(s),
        },
    })
}

enum Scalar {
    Bool(bool),
    Int(i64),
    Float(f64),
    Str(String),
}

fn scalar(y: &Yaml, want_float: bool) -> Result<Scalar, String> {
    match y {
        Yaml::Bool(b) => Ok(Scalar::Bool(*b)),
        Yaml::Number(n) => match (n.as_i64(), n.as_f64()) {
            (Some(i), _) if !want_float => Ok(Scalar::Int(i)),
            (_, Some(f)) => Ok(Scalar::Float(f)),
            _ => Err(format!("{n} is not a number horus can hold")),
        },
        Yaml::String(s) => Ok(Scalar::Str(s.clone())),
        Yaml::Null => Err("an empty value is not a parameter value".into()),
        Yaml::Sequence(_) => Err("lists of lists are not parameter values".into()),
        Yaml::Mapping(_) => Err("a mapping is not a parameter value".into()),
        Yaml::Tagged(_) => Err("tagged YAML values are not parameter values".into()),
    }
}

fn sequence(items: &[Yaml], kind: ParamKind) -> Result<ParamValue, String> {
    let want_float = matches!(kind, ParamKind::F64 | ParamKind::F64Array);
    let scalars = items
        .iter()
        .map(|y| scalar(y, want_float))
        .collect::<Result<Vec<_>, _>>()?;
    if scalars.is_empty() {
        return Ok(match kind {
            ParamKind::BoolArray | ParamKind::Bool => ParamValue::BoolArray(Vec::new()),
            ParamKind::I64Array | ParamKind::I64 => ParamValue::I64Array(Vec::new()),
            ParamKind::F64Array | ParamKind::F64 => ParamValue::F64Array(Vec::new()),
            ParamKind::StrArray | ParamKind::Str => ParamValue::StrArray(Vec::new()),
        });
    }
    let all = |f: fn(&Scalar) -> bool| scalars.iter().all(f);
    if all(|s| matches!(s, Scalar::Bool(_))) {
        return Ok(ParamValue::BoolArray(
            scalars
                .iter()
                .filter_map(|s| match s {
                    Scalar::Bool(b) => Some(*b),
                    _ => None,
                })
                .collect(),
        ));
    }
    if all(|s| matches!(s, Scalar::Int(_))) {
        return Ok(ParamValue::I64Array(
            scalars
                .iter()
                .filter_map(|s| match s {
                    Scalar::Int(i) => Some(*i),
                    _ => None,
                })
                .collect(),
        ));
    }
    if all(|s| matches!(s, Scalar::Int(_) | Scalar::Float(_))) {
        return Ok(ParamValue::F64Array(
            scalars
                .iter()
                .filter_map(|s| match s {
                    Scalar::Int(i) => Some(*i as f64),
                    Scalar::Float(f) => Some(*f),
                    _ => None,
                })
                .collect(),
        ));
    }
    if all(|s| matches!(s, Scalar::Str(_))) || kind == ParamKind::StrArray {
        // Any scalars for a string list are taken as their text.
        return Ok(ParamValue::StrArray(
            items
                .iter()
                .map(|y| match y {
                    Yaml::String(s) => s.clone(),
                    other => serde_yaml::to_string(other)
                        .unwrap_or_default()
                        .trim()
                        .to_owned(),
                })
                .collect(),
        ));
    }
    Err("a list mixes values of different types".into())
}

/// A value as JSON (a non-finite float is `null`).
pub(super) fn to_json(v: &ParamValue) -> Value {
    let f = |x: f64| serde_json::Number::from_f64(x).map_or(Value::Null, Value::Number);
    match v {
        ParamValue::Bool(b) => Value::Bool(*b),
        ParamValue::I64(i) => Value::from(*i),
        ParamValue::F64(x) => f(*x),
        ParamValue::Str(s) => Value::String(s.clone()),
        ParamValue::BoolArray(v) => v.iter().map(|b| Value::Bool(*b)).collect(),
        ParamValue::I64Array(v) => v.iter().map(|i| Value::from(*i)).collect(),
        ParamValue::F64Array(v) => v.iter().map(|x| f(*x)).collect(),
        ParamValue::StrArray(v) => v.iter().map(|s| Value::String(s.clone())).collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_keep_their_yaml_type_with_the_two_friendly_conversions() {
        assert_eq!(parse("1.5", ParamKind::F64), Ok(ParamValue::F64(1.5)));
        assert_eq!(parse("2", ParamKind::F64), Ok(ParamValue::F64(2.0)));
        assert_eq!(parse("2", ParamKind::I64), Ok(ParamValue::I64(2)));
        assert_eq!(parse("true", ParamKind::Bool), Ok(ParamValue::Bool(true)));
        // Wrong types go to the node as what they are: it says WrongType.
        assert_eq!(
            parse("fast", ParamKind::I64),
            Ok(ParamValue::Str("fast".into()))
        );
        assert_eq!(parse("1.5", ParamKind::I64), Ok(ParamValue::F64(1.5)));
        assert_eq!(
            parse("42", ParamKind::Str),
            Ok(ParamValue::Str("42".into()))
        );
        assert_eq!(
            parse("[1, 2.5]", ParamKind::F64Array),
            Ok(ParamValue::F64Array(vec![1.0, 2.5]))
        );
        assert_eq!(
            parse("[left, right]", ParamKind::StrArray),
            Ok(ParamValue::StrArray(vec!["left".into(), "right".into()]))
        );
        assert_eq!(
            parse("[]", ParamKind::I64Array),
            Ok(ParamValue::I64Array(vec![]))
        );
        assert!(parse("[1, true]", ParamKind::I64Array).is_err());
        assert!(parse("{a: 1}", ParamKind::I64).is_err());
        assert!(parse("[[1]]", ParamKind::I64Array).is_err());
    }
}
