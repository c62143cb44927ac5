//! JSON → message bytes (for `horus topic pub`), the inverse of
//! [`decode_message`](super::decode_message).
//!
//! The input is an object with the message's fields. A field left out is zero; an unknown
//! field, a number that does not fit its type (range, or a fraction for an integer), a string
//! longer than its byte array or an array longer than the field is an error naming the field.
//! Arrays may be shorter than the field (the rest is zero). Floats also accept `"NaN"`,
//! `"inf"` and `"-inf"`. `"_tail"` is accepted only as printed for an empty tail: `pub` does
//! not send tails.

use horus_msgs::{FieldKind, MessageDescription, Scalar, TypeDescription};
use serde_json::Value;

/// Why a JSON value is not a message of the described type.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{path}: {reason}")]
pub struct EncodeError {
    /// Dotted path of the offending field (`twist.linear.x`, `ranges.3`).
    pub path: String,
    /// What is wrong.
    pub reason: String,
}

/// Encodes `value` as a message of the described type (its fixed part; no tail).
pub fn encode_message(
    description: &MessageDescription,
    value: &Value,
) -> Result<Vec<u8>, EncodeError> {
    let root = description.root();
    let mut out = vec![0u8; root.size];
    encode_type(description, root, value, &mut out, "")?;
    Ok(out)
}

fn err(path: &str, reason: impl Into<String>) -> EncodeError {
    EncodeError {
        path: if path.is_empty() {
            "message".into()
        } else {
            path.into()
        },
        reason: reason.into(),
    }
}

fn join(path: &str, name: &str) -> String {
    if path.is_empty() {
        name.to_owned()
    } else {
        format!("{path}.{name}")
    }
}

fn encode_type(
    d: &MessageDescription,
    t: &TypeDescription,
    v: &Value,
    out: &mut [u8],
    path: &str,
) -> Result<(), EncodeError> {
    let Value::Object(m) = v else {
        return Err(err(
            path,
            format!("expected an object with the fields of {}", t.name),
        ));
    };
    for (key, value) in m {
        if path.is_empty() && key == "_tail" {
            let empty = value.get("bytes").and_then(Value::as_u64) == Some(0);
            if !empty {
                return Err(err("_tail", "publishing a tail is not supported"));
            }
            continue;
        }
        let Some(f) = t.fields.iter().find(|f| &f.name == key) else {
            let known: Vec<_> = t.fields.iter().map(|f| f.name.as_str()).collect();
            return Err(err(
                &join(path, key),
                format!(
                    "{} has no such field (fields: {})",
                    t.name,
                    known.join(", ")
                ),
            ));
        };
        let slot = &mut out[f.offset..f.offset + f.size];
        encode_kind(d, &f.kind, value, slot, &join(path, key))?;
    }
    Ok(())
}

fn encode_kind(
    d: &MessageDescription,
    kind: &FieldKind,
    v: &Value,
    out: &mut [u8],
    path: &str,
) -> Result<(), EncodeError> {
    match kind {
        FieldKind::Scalar(s) => scalar(*s, v, out, path),
        FieldKind::Array { of, len } => {
            if let (Value::String(text), FieldKind::Scalar(Scalar::U8)) = (v, &**of) {
                if text.len() > *len {
                    return Err(err(
                        path,
                        format!("{} bytes do not fit in {len}", text.len()),
                    ));
                }
                if text.contains('\0') {
                    return Err(err(path, "text contains a NUL byte"));
                }
                out[..text.len()].copy_from_slice(text.as_bytes());
                return Ok(());
            }
            let Value::Array(items) = v else {
                return Err(err(
                    path,
                    format!("expected an array of at most {len} elements"),
                ));
            };
            if items.len() > *len {
                return Err(err(
                    path,
                    format!("{} elements do not fit in {len}", items.len()),
                ));
            }
            let step = if *len == 0 { 0 } else { out.len() / len };
            for (i, item) in items.iter().enumerate() {
                let slot = &mut out[i * step..(i + 1) * step];
                encode_kind(d, of, item, slot, &format!("{path}.{i}"))?;
            }
            Ok(())
        }
        FieldKind::Message(name) => match d.get(name) {
            Some(t) => encode_type(d, t, v, out, path),
            None => Err(err(path, format!("undescribed type {name}"))),
        },
    }
}

fn scalar(s: Scalar, v: &Value, out: &mut [u8], path: &str) -> Result<(), EncodeError> {
    let bytes: Vec<u8> = if s.is_float() {
        let x = match v {
            Value::Number(n) => n.as_f64().ok_or_else(|| err(path, "not a number"))?,
            Value::String(t) if t == "NaN" => f64::NAN,
            Value::String(t) if t == "inf" => f64::INFINITY,
            Value::String(t) if t == "-inf" => f64::NEG_INFINITY,
            _ => return Err(err(path, format!("expected a number, found {v}"))),
        };
        if s == Scalar::F32 {
            if x.is_finite() && x.abs() > f64::from(f32::MAX) {
                return Err(err(path, format!("{x} is out of range for f32")));
            }
            (x as f32).to_le_bytes().to_vec()
        } else {
            x.to_le_bytes().to_vec()
        }
    } else {
        let Value::Number(n) = v else {
            return Err(err(path, format!("expected an integer, found {v}")));
        };
        let fits = |lo: i128, hi: i128| -> Result<i128, EncodeError> {
            let x = n
                .as_i64()
                .map(i128::from)
                .or_else(|| n.as_u64().map(i128::from))
                .ok_or_else(|| err(path, format!("{n} is not an integer")))?;
            if x < lo || x > hi {
                return Err(err(
                    path,
                    format!("{x} is out of range for {s:?}").to_lowercase(),
                ));
            }
            Ok(x)
        };
        let size = s.size();
        let bits = 8 * size as u32;
        let (lo, hi) = if s.is_signed() {
            (-(1i128 << (bits - 1)), (1i128 << (bits - 1)) - 1)
        } else {
            (0, (1i128 << bits) - 1)
        };
        let x = fits(lo, hi)?;
        (x as u64).to_le_bytes()[..size].to_vec()
    };
    out.copy_from_slice(&bytes[..out.len()]);
    Ok(())
}
