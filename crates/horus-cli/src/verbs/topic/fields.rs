//! `--field a.b` selection and the abbreviation of long arrays for `echo`'s text output.

use serde_json::{Map, Value};

/// The value at a dotted path (`pose.position.x`, `ranges.3`), if present.
pub(super) fn select<'v>(v: &'v Value, path: &str) -> Option<&'v Value> {
    path.split('.').try_fold(v, |v, key| match v {
        Value::Object(m) => m.get(key),
        Value::Array(a) => key.parse::<usize>().ok().and_then(|i| a.get(i)),
        _ => None,
    })
}

/// Arrays longer than `keep` elements, shortened to their first `keep` and a note of how
/// many were left out.
pub(super) fn abbreviate(v: &Value, keep: usize) -> Value {
    match v {
        Value::Object(m) => Value::Object(
            m.iter()
                .map(|(k, v)| (k.clone(), abbreviate(v, keep)))
                .collect::<Map<_, _>>(),
        ),
        Value::Array(a) if a.len() > keep => {
            let mut short: Vec<Value> = a[..keep].iter().map(|v| abbreviate(v, keep)).collect();
            short.push(Value::String(format!("… {} more", a.len() - keep)));
            Value::Array(short)
        }
        Value::Array(a) => Value::Array(a.iter().map(|v| abbreviate(v, keep)).collect()),
        other => other.clone(),
    }
}

/// A value as YAML-like text: one `key: value` per line, nested objects indented, arrays of
/// scalars on one line.
pub(super) fn to_text(v: &Value, indent: usize, out: &mut String) {
    let pad = "  ".repeat(indent);
    match v {
        Value::Object(m) => {
            for (k, v) in m {
                match v {
                    Value::Object(_) => {
                        out.push_str(&format!("{pad}{k}:\n"));
                        to_text(v, indent + 1, out);
                    }
                    Value::Array(a) if a.iter().any(|x| x.is_object()) => {
                        out.push_str(&format!("{pad}{k}:\n"));
                        for x in a {
                            out.push_str(&format!("{pad}-\n"));
                            to_text(x, indent + 1, out);
                        }
                    }
                    _ => out.push_str(&format!("{pad}{k}: {}\n", scalar_text(v))),
                }
            }
        }
        other => out.push_str(&format!("{pad}{}\n", scalar_text(other))),
    }
}

fn scalar_text(v: &Value) -> String {
    match v {
        Value::Array(a) => format!(
            "[{}]",
            a.iter().map(scalar_text).collect::<Vec<_>>().join(", ")
        ),
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn paths_reach_nested_fields_and_array_elements() {
        let v = json!({"pose": {"position": {"x": 1.5}}, "ranges": [1, 2, 3]});
        assert_eq!(select(&v, "pose.position.x"), Some(&json!(1.5)));
        assert_eq!(select(&v, "ranges.2"), Some(&json!(3)));
        assert_eq!(select(&v, "ranges.9"), None);
        assert_eq!(select(&v, "nope"), None);
    }

    #[test]
    fn long_arrays_are_abbreviated_short_ones_kept() {
        let v = json!({"a": [1, 2, 3, 4], "b": [1]});
        assert_eq!(
            abbreviate(&v, 2),
            json!({"a": [1, 2, "… 2 more"], "b": [1]})
        );
    }
}
