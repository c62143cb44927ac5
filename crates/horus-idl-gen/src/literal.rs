//! Constants and default values as Rust expressions.

use horus_idl::{ConstantType, DefaultValue, Primitive, Value};

use crate::names::str_lit;
use crate::types::primitive_rust;

/// A float as a Rust expression of type `f32`/`f64`: the shortest literal that reads
/// back as the same value (`f32` values rounded from the `f64` the file gives, as ROS 2
/// does), or the type's constant for infinities and NaN.
fn float_lit(v: f64, p: Primitive) -> String {
    let ty = primitive_rust(p);
    if v.is_nan() {
        return format!("{ty}::NAN");
    }
    if v.is_infinite() {
        let sign = if v > 0.0 { "" } else { "NEG_" };
        return format!("{ty}::{sign}INFINITY");
    }
    if p == Primitive::Float32 {
        format!("{:?}_f32", v as f32)
    } else {
        format!("{v:?}_f64")
    }
}

/// One value of element type `p` (a primitive) or a string.
pub(crate) fn value_expr(v: &Value, p: Option<Primitive>, owned_string: bool) -> String {
    match v {
        Value::Bool(b) => b.to_string(),
        Value::Int(i) => match p {
            Some(p @ (Primitive::Float32 | Primitive::Float64)) => float_lit(*i as f64, p),
            Some(p) => format!("{i}_{}", primitive_rust(p)),
            None => i.to_string(),
        },
        Value::Float(f) => float_lit(*f, p.unwrap_or(Primitive::Float64)),
        Value::String(s) if owned_string => {
            format!("::std::string::String::from({})", str_lit(s))
        }
        Value::String(s) => str_lit(s),
    }
}

/// A constant's Rust type and value.
pub(crate) fn constant(t: ConstantType, v: &Value) -> (String, String) {
    match t {
        ConstantType::Primitive(p) => {
            (primitive_rust(p).to_string(), value_expr(v, Some(p), false))
        }
        ConstantType::String | ConstantType::WString => {
            ("&str".to_string(), value_expr(v, None, false))
        }
    }
}

/// A member's default as a Rust expression. `prim` is the element's primitive (`None`
/// for strings); `seq` says whether the member is a sequence (`Vec`) rather than a
/// fixed array.
pub(crate) fn default_expr(d: &DefaultValue, prim: Option<Primitive>, seq: bool) -> String {
    match d {
        DefaultValue::Scalar(v) => value_expr(v, prim, true),
        DefaultValue::Array(items) => {
            let items: Vec<String> = items.iter().map(|v| value_expr(v, prim, true)).collect();
            if seq {
                format!("::std::vec![{}]", items.join(", "))
            } else {
                format!("[{}]", items.join(", "))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn literals() {
        assert_eq!(
            value_expr(&Value::Float(0.1), Some(Primitive::Float32), false),
            "0.1_f32"
        );
        assert_eq!(
            value_expr(&Value::Float(1e20), Some(Primitive::Float32), false),
            "1e20_f32"
        );
        assert_eq!(
            value_expr(&Value::Float(-0.25), Some(Primitive::Float64), false),
            "-0.25_f64"
        );
        assert_eq!(
            value_expr(
                &Value::Float(f64::NEG_INFINITY),
                Some(Primitive::Float64),
                false
            ),
            "f64::NEG_INFINITY"
        );
        assert_eq!(
            value_expr(&Value::Int(-128), Some(Primitive::Int8), false),
            "-128_i8"
        );
        assert_eq!(
            value_expr(&Value::String("a\"b".into()), None, true),
            "::std::string::String::from(\"a\\\"b\")"
        );
        assert_eq!(
            default_expr(
                &DefaultValue::Array(vec![Value::Int(1), Value::Int(2)]),
                Some(Primitive::Int32),
                true
            ),
            "::std::vec![1_i32, 2_i32]"
        );
    }
}
