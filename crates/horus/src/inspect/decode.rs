//! Message bytes → JSON, driven by a validated [`MessageDescription`].
//!
//! Integers are JSON integers (exact, including `u64`); `f32` values print as their shortest
//! decimal form (so `0.1f32` prints `0.1` and reads back as the same `f32`); non-finite floats
//! print as the strings `"NaN"`, `"inf"` and `"-inf"`. A `[u8; N]` array that holds UTF-8 text
//! padded with NUL bytes prints as a string; other byte arrays as arrays of numbers. A tail
//! (point data, pixels) is summarised as `"_tail": {"bytes": N}`. What this prints,
//! [`encode_message`](super::encode_message) accepts back.

use horus_msgs::{FieldKind, MessageDescription, Scalar, TypeDescription};
use serde_json::{Map, Number, Value};

/// Why bytes could not be decoded as a message.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DecodeError {
    /// Fewer bytes than the message's fixed part.
    #[error("message of {got} bytes, the type needs at least {need}")]
    TooShort {
        /// Bytes received.
        got: usize,
        /// Size of the fixed part.
        need: usize,
    },
    /// More bytes than the fixed part, for a type without a tail.
    #[error("message of {got} bytes, the type has exactly {need} and no tail")]
    TooLong {
        /// Bytes received.
        got: usize,
        /// Size of the message.
        need: usize,
    },
}

/// Decodes one message (fixed part and any tail) into JSON.
///
/// `description` must have passed [`MessageDescription::validate`] (every offset in bounds,
/// every reference resolved, nesting bounded); [`TopicView::description`] returns only such.
///
/// [`TopicView::description`]: super::TopicView::description
pub fn decode_message(
    description: &MessageDescription,
    bytes: &[u8],
) -> Result<Value, DecodeError> {
    let root = description.root();
    if bytes.len() < root.size {
        return Err(DecodeError::TooShort {
            got: bytes.len(),
            need: root.size,
        });
    }
    if !root.has_tail && bytes.len() > root.size {
        return Err(DecodeError::TooLong {
            got: bytes.len(),
            need: root.size,
        });
    }
    let mut v = decode_type(description, root, &bytes[..root.size]);
    if root.has_tail {
        if let Value::Object(m) = &mut v {
            let mut tail = Map::new();
            tail.insert("bytes".into(), Value::from(bytes.len() - root.size));
            m.insert("_tail".into(), Value::Object(tail));
        }
    }
    Ok(v)
}

fn decode_type(d: &MessageDescription, t: &TypeDescription, bytes: &[u8]) -> Value {
    let mut m = Map::new();
    for f in &t.fields {
        // Validated: offset + size ≤ t.size = bytes.len().
        let b = &bytes[f.offset..f.offset + f.size];
        m.insert(f.name.clone(), decode_kind(d, &f.kind, b));
    }
    Value::Object(m)
}

fn decode_kind(d: &MessageDescription, kind: &FieldKind, b: &[u8]) -> Value {
    match kind {
        FieldKind::Scalar(s) => scalar(*s, b),
        FieldKind::Array { of, len } => {
            if **of == FieldKind::Scalar(Scalar::U8) {
                if let Some(text) = padded_text(b) {
                    return Value::String(text.to_owned());
                }
            }
            let step = if *len == 0 { 0 } else { b.len() / len };
            Value::Array(
                (0..*len)
                    .map(|i| decode_kind(d, of, &b[i * step..(i + 1) * step]))
                    .collect(),
            )
        }
        FieldKind::Message(name) => match d.get(name) {
            Some(t) => decode_type(d, t, b),
            // Unreachable after validation; never panic on a description.
            None => Value::Null,
        },
    }
}

/// UTF-8 text followed only by NUL bytes (at least one byte of text, no control characters).
pub(super) fn padded_text(b: &[u8]) -> Option<&str> {
    let end = b.iter().position(|&x| x == 0).unwrap_or(b.len());
    if end == 0 || b[end..].iter().any(|&x| x != 0) {
        return None;
    }
    let s = std::str::from_utf8(&b[..end]).ok()?;
    (!s.chars().any(char::is_control)).then_some(s)
}

fn scalar(s: Scalar, b: &[u8]) -> Value {
    let mut w = [0u8; 8];
    w[..b.len().min(8)].copy_from_slice(&b[..b.len().min(8)]);
    let u = u64::from_le_bytes(w);
    match s {
        Scalar::U8 | Scalar::U16 | Scalar::U32 | Scalar::U64 => Value::from(u),
        Scalar::I8 => Value::from(u as u8 as i8),
        Scalar::I16 => Value::from(u as u16 as i16),
        Scalar::I32 => Value::from(u as u32 as i32),
        Scalar::I64 => Value::from(u as i64),
        Scalar::F32 => {
            let x = f32::from_bits(u as u32);
            // The shortest decimal that reads back as this f32.
            float(
                x.is_finite().then(|| x.to_string().parse().ok()).flatten(),
                x.into(),
            )
        }
        Scalar::F64 => {
            let x = f64::from_bits(u);
            float(x.is_finite().then_some(x), x)
        }
    }
}

fn float(finite: Option<f64>, x: f64) -> Value {
    match finite.and_then(Number::from_f64) {
        Some(n) => Value::Number(n),
        None if x.is_nan() => Value::String("NaN".into()),
        None if x > 0.0 => Value::String("inf".into()),
        None => Value::String("-inf".into()),
    }
}
