//! The JSON the rclpy side writes for a message's fields → the [`CdrValue`] horus encodes.
//!
//! Fields appear as rclpy's `get_fields_and_field_types()` lists them: numbers, booleans,
//! strings, objects for nested structures, lists for arrays and sequences; sequences and
//! arrays of `byte`, `char` and `uint8` as a hex string (large ones stay small in JSON).
//! rclpy has no field for the placeholder member ROS 2 adds to an empty structure: it is 0.

use anyhow::{anyhow, bail, Context, Result};
use horus_idl::cdr::CdrValue;
use horus_idl::{ArrayKind, Primitive, Resolved, ResolvedBase, ResolvedType, TypeName};
use serde_json::Value as Json;

/// Whether a sequence of this primitive is [`CdrValue::Bytes`].
fn byte_like(p: Primitive) -> bool {
    matches!(p, Primitive::Byte | Primitive::Char | Primitive::UInt8)
}

/// Bytes from lowercase or uppercase hex.
pub(crate) fn from_hex(text: &str) -> Result<Vec<u8>> {
    if !text.len().is_multiple_of(2) {
        bail!("hex text of odd length {}", text.len());
    }
    (0..text.len())
        .step_by(2)
        .map(|i| {
            text.get(i..i + 2)
                .and_then(|pair| u8::from_str_radix(pair, 16).ok())
                .ok_or_else(|| anyhow!("not hex at offset {i}"))
        })
        .collect()
}

/// Lowercase hex of `bytes`.
pub(crate) fn to_hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut out = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        out.push(DIGITS[usize::from(b >> 4)] as char);
        out.push(DIGITS[usize::from(b & 15)] as char);
    }
    out
}

/// A float: a JSON number, or `"inf"`, `"-inf"` or `"nan"` (Python's quiet NaN) that JSON
/// numbers cannot be.
fn float(j: &Json) -> Option<f64> {
    match j.as_str() {
        Some("inf") => Some(f64::INFINITY),
        Some("-inf") => Some(f64::NEG_INFINITY),
        Some("nan") => Some(f64::NAN),
        Some(_) => None,
        None => j.as_f64(),
    }
}

fn primitive(p: Primitive, j: &Json) -> Result<CdrValue> {
    let v = match p {
        Primitive::Bool => j.as_bool().map(CdrValue::Bool),
        Primitive::Float32 => match float(j) {
            Some(f) if f as f32 as f64 == f || f.is_nan() => Some(CdrValue::Float32(f as f32)),
            Some(f) => bail!("float32 value {f} is not a float32"),
            None => None,
        },
        Primitive::Float64 => float(j).map(CdrValue::Float64),
        Primitive::Int8 | Primitive::Int16 | Primitive::Int32 | Primitive::Int64 => {
            j.as_i64().map(CdrValue::Int)
        }
        Primitive::Byte
        | Primitive::Char
        | Primitive::UInt8
        | Primitive::UInt16
        | Primitive::UInt32
        | Primitive::UInt64 => j.as_u64().map(CdrValue::UInt),
    };
    v.ok_or_else(|| anyhow!("{p:?} field holds {j}"))
}

fn element(r: &Resolved, base: &ResolvedBase, j: &Json) -> Result<CdrValue> {
    Ok(match base {
        ResolvedBase::Primitive(p) => primitive(*p, j)?,
        ResolvedBase::String { .. } => CdrValue::String(
            j.as_str()
                .ok_or_else(|| anyhow!("string field holds {j}"))?
                .to_string(),
        ),
        ResolvedBase::WString { .. } => CdrValue::WString(
            j.as_str()
                .ok_or_else(|| anyhow!("wstring field holds {j}"))?
                .to_string(),
        ),
        ResolvedBase::Nested(name) => structure(r, name, j)?,
    })
}

fn member(r: &Resolved, t: &ResolvedType, j: &Json) -> Result<CdrValue> {
    if t.array == ArrayKind::Single {
        return element(r, &t.base, j);
    }
    if let ResolvedBase::Primitive(p) = t.base {
        if byte_like(p) {
            let hex = j
                .as_str()
                .ok_or_else(|| anyhow!("byte sequence is not a hex string: {j}"))?;
            return Ok(CdrValue::Bytes(from_hex(hex)?));
        }
    }
    let items = j
        .as_array()
        .ok_or_else(|| anyhow!("array field holds {j}"))?;
    let values = items
        .iter()
        .enumerate()
        .map(|(i, x)| element(r, &t.base, x).with_context(|| format!("[{i}]")))
        .collect::<Result<_>>()?;
    Ok(CdrValue::Array(values))
}

/// The value of a structure `name` that `j` (a JSON object of its fields) stands for.
pub(crate) fn structure(r: &Resolved, name: &TypeName, j: &Json) -> Result<CdrValue> {
    let def = r
        .get_struct(name)
        .ok_or_else(|| anyhow!("{name} is not a standard type"))?;
    let obj = j
        .as_object()
        .ok_or_else(|| anyhow!("{name} value is not an object: {j}"))?;
    let expected = def.members.iter().filter(|m| !m.placeholder).count();
    if obj.len() != expected {
        bail!(
            "{name}: rclpy has fields {:?}, horus {:?}",
            obj.keys().collect::<Vec<_>>(),
            def.members.iter().map(|m| &m.name).collect::<Vec<_>>()
        );
    }
    let fields = def
        .members
        .iter()
        .map(|m| {
            let v = if m.placeholder {
                CdrValue::UInt(0)
            } else {
                let field = obj
                    .get(&m.name)
                    .ok_or_else(|| anyhow!("{name}: rclpy has no field {}", m.name))?;
                member(r, &m.member_type, field).with_context(|| format!(".{}", m.name))?
            };
            Ok((m.name.clone(), v))
        })
        .collect::<Result<_>>()?;
    Ok(CdrValue::Struct(fields))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn non_finite_floats_come_as_text_with_python_s_bits() {
        let f64_of = |t: &str| match primitive(Primitive::Float64, &Json::from(t)).unwrap() {
            CdrValue::Float64(f) => f.to_bits(),
            v => panic!("{v:?}"),
        };
        assert_eq!(f64_of("inf"), f64::INFINITY.to_bits());
        assert_eq!(f64_of("-inf"), f64::NEG_INFINITY.to_bits());
        assert_eq!(f64_of("nan"), 0x7ff8_0000_0000_0000);
        match primitive(Primitive::Float32, &Json::from("nan")).unwrap() {
            CdrValue::Float32(f) => assert_eq!(f.to_bits(), 0x7fc0_0000),
            v => panic!("{v:?}"),
        }
        assert!(primitive(Primitive::Float64, &Json::from("infinity")).is_err());
    }

    #[test]
    fn hex_round_trips_and_refuses_odd_or_foreign_text() {
        let bytes: Vec<u8> = (0..=255).collect();
        assert_eq!(from_hex(&to_hex(&bytes)).unwrap(), bytes);
        assert!(from_hex("abc").is_err());
        assert!(from_hex("zz").is_err());
        assert!(from_hex("é1").is_err());
    }
}
