//! Literal values of constants and defaults: reading them as ROS 2 does (Python's
//! `int()` / `float()` rules, quote handling), and writing them as ROS 2's type
//! description does (Python's `str()` of the value).

use crate::ast::{Primitive, Value};

/// Why a literal was refused (turned into [`crate::ParseErrorKind::BadValue`] by the parser).
pub(crate) type ValueProblem = String;

/// Reads one non-array value of a primitive type.
pub(crate) fn parse_primitive(p: Primitive, text: &str) -> Result<Value, ValueProblem> {
    match p {
        Primitive::Bool => match text.to_ascii_lowercase().as_str() {
            "true" | "1" => Ok(Value::Bool(true)),
            "false" | "0" => Ok(Value::Bool(false)),
            _ => Err("must be either 'true' / '1' or 'false' / '0'".into()),
        },
        // As in ROS 2, `inf`, `-inf` and `nan` are accepted.
        Primitive::Float32 | Primitive::Float64 => parse_python_float(text)
            .map(Value::Float)
            .ok_or_else(|| "must be a floating point number using '.' as the separator".into()),
        _ => {
            let (lo, hi) = p
                .integer_range()
                .expect("every other primitive is an integer");
            let problem = || format!("must be a valid integer value >= {lo} and <= {hi}");
            let v = parse_python_int(text).ok_or_else(problem)?;
            if v < lo || v > hi {
                return Err(problem());
            }
            Ok(Value::Int(v))
        }
    }
}

/// Reads a string value: one pair of matching outer quotes (`"` or `'`) is removed,
/// inner quotes of that kind must be escaped (`\"`) and are unescaped; a value
/// without outer quotes is taken as written. `bound` is checked in characters.
pub(crate) fn parse_string(text: &str, bound: Option<u32>) -> Result<String, ValueProblem> {
    let mut value = text.to_string();
    for quote in ['"', '\''] {
        if text.starts_with(quote) && text.ends_with(quote) {
            let inner = if text.len() >= 2 {
                &text[1..text.len() - 1]
            } else {
                ""
            };
            let mut prev = None;
            for c in inner.chars() {
                if c == quote && prev != Some('\\') {
                    return Err("string inner quotes not properly escaped".into());
                }
                prev = Some(c);
            }
            value = inner.replace(&format!("\\{quote}"), &quote.to_string());
            break;
        }
    }
    if let Some(bound) = bound {
        let len = value.chars().count();
        if len > bound as usize {
            return Err(format!(
                "string must not exceed the maximum length of {bound} characters"
            ));
        }
    }
    Ok(value)
}

/// Splits the inside of a string array default (`"a,b", 'c', d`) into elements:
/// quoted elements may contain commas and escaped quotes; unquoted ones end at a comma.
pub(crate) fn split_string_array(mut rest: &str) -> Result<Vec<String>, ValueProblem> {
    let mut out = Vec::new();
    while !rest.is_empty() {
        rest = rest.trim_start_matches(' ');
        match rest.chars().next() {
            None => return Err("empty element in string array".into()),
            Some(',') => return Err(format!("unexpected ',' at beginning of [{rest}]")),
            Some(q @ ('"' | '\'')) => {
                let body = &rest[1..];
                let mut end = None;
                let mut prev = None;
                for (i, c) in body.char_indices() {
                    if c == q && prev != Some('\\') {
                        end = Some(i);
                        break;
                    }
                    prev = Some(c);
                }
                let end = end.ok_or_else(|| format!("string [{rest}] incorrectly quoted"))?;
                out.push(body[..end].replace(&format!("\\{q}"), &q.to_string()));
                rest = &body[end + 1..];
            }
            Some(_) => match rest.find(',') {
                Some(i) => {
                    out.push(rest[..i].to_string());
                    rest = &rest[i..];
                }
                None => {
                    out.push(rest.to_string());
                    rest = "";
                }
            },
        }
        rest = rest.trim_start_matches(' ');
        if let Some(after) = rest.strip_prefix(',') {
            rest = after;
        }
    }
    Ok(out)
}

/// Python's `int(text)`, falling back to `int(text, 0)` (`0x`, `0o`, `0b` prefixes):
/// surrounding whitespace, a sign, and single underscores between digits are allowed.
/// Values beyond `i128` are `None` (out of every primitive's range anyway).
pub(crate) fn parse_python_int(text: &str) -> Option<i128> {
    let t = text.trim();
    let (negative, t) = match t.as_bytes().first() {
        Some(b'-') => (true, &t[1..]),
        Some(b'+') => (false, &t[1..]),
        _ => (false, t),
    };
    let lower = t.to_ascii_lowercase();
    let (radix, digits) = if let Some(d) = lower.strip_prefix("0x") {
        (16, d.strip_prefix('_').unwrap_or(d))
    } else if let Some(d) = lower.strip_prefix("0o") {
        (8, d.strip_prefix('_').unwrap_or(d))
    } else if let Some(d) = lower.strip_prefix("0b") {
        (2, d.strip_prefix('_').unwrap_or(d))
    } else {
        (10, lower.as_str())
    };
    let digits = strip_digit_underscores(digits, |c| c.is_digit(radix))?;
    let magnitude = i128::from_str_radix(&digits, radix).ok()?;
    Some(if negative { -magnitude } else { magnitude })
}

/// Python's `float(text)` for finite and non-finite spellings alike.
pub(crate) fn parse_python_float(text: &str) -> Option<f64> {
    let t = text.trim();
    let body = t.trim_start_matches(['+', '-']);
    if t.len() - body.len() > 1 {
        return None;
    }
    let lower = body.to_ascii_lowercase();
    if matches!(lower.as_str(), "inf" | "infinity" | "nan") {
        return t.parse::<f64>().ok();
    }
    if !lower
        .bytes()
        .all(|b| b.is_ascii_digit() || matches!(b, b'.' | b'e' | b'+' | b'-' | b'_'))
    {
        return None;
    }
    // Underscores are allowed between digits only (Python's rule).
    let b = t.as_bytes();
    for (i, &c) in b.iter().enumerate() {
        if c == b'_' {
            let before = i
                .checked_sub(1)
                .map(|j| b[j].is_ascii_digit())
                .unwrap_or(false);
            let after = b.get(i + 1).map(|c| c.is_ascii_digit()).unwrap_or(false);
            if !before || !after {
                return None;
            }
        }
    }
    t.replace('_', "").parse::<f64>().ok()
}

/// Digits with single underscores between them (Python's rule), underscores removed.
fn strip_digit_underscores(digits: &str, is_digit: impl Fn(char) -> bool) -> Option<String> {
    if digits.is_empty()
        || digits.starts_with('_')
        || digits.ends_with('_')
        || digits.contains("__")
    {
        return None;
    }
    let mut out = String::with_capacity(digits.len());
    for c in digits.chars() {
        if c == '_' {
            continue;
        }
        if !is_digit(c) {
            return None;
        }
        out.push(c);
    }
    Some(out)
}

/// Python's `str()` of a value as ROS 2's type description writes a default.
pub(crate) fn python_str(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        other => python_repr(other),
    }
}

/// Python's `repr()` of a value (how array defaults are written, as a tuple).
pub(crate) fn python_repr(value: &Value) -> String {
    match value {
        Value::Bool(true) => "True".into(),
        Value::Bool(false) => "False".into(),
        Value::Int(i) => i.to_string(),
        Value::Float(f) => python_float_repr(*f),
        Value::String(s) => python_str_repr(s),
    }
}

/// Python's `repr(tuple(values))`: `()`, `(x,)`, `(x, y)`.
pub(crate) fn python_tuple_repr(values: &[Value]) -> String {
    let items: Vec<String> = values.iter().map(python_repr).collect();
    match items.len() {
        1 => format!("({},)", items[0]),
        _ => format!("({})", items.join(", ")),
    }
}

/// Python's `repr()` of a float: the shortest digits that read back the same value,
/// in positional notation for decimal exponents from -4 to 15, else scientific.
pub(crate) fn python_float_repr(f: f64) -> String {
    if f.is_nan() {
        return "nan".into();
    }
    if f.is_infinite() {
        return if f > 0.0 { "inf".into() } else { "-inf".into() };
    }
    if f == 0.0 {
        return if f.is_sign_negative() {
            "-0.0".into()
        } else {
            "0.0".into()
        };
    }
    // Rust's `{:e}` gives the shortest round-trip digits, as Python's repr does.
    let sci = format!("{:e}", f.abs());
    let (mantissa, exp) = sci.split_once('e').expect("{:e} always has an exponent");
    let exp: i32 = exp.parse().expect("{:e} exponent is an integer");
    let digits: String = mantissa.chars().filter(|c| *c != '.').collect();
    let sign = if f < 0.0 { "-" } else { "" };
    if (-4..16).contains(&exp) {
        let body = if exp >= 0 {
            let int_len = exp as usize + 1;
            if digits.len() <= int_len {
                format!("{digits}{}.0", "0".repeat(int_len - digits.len()))
            } else {
                format!("{}.{}", &digits[..int_len], &digits[int_len..])
            }
        } else {
            format!("0.{}{digits}", "0".repeat((-exp - 1) as usize))
        };
        format!("{sign}{body}")
    } else {
        let mant = if digits.len() == 1 {
            digits
        } else {
            format!("{}.{}", &digits[..1], &digits[1..])
        };
        let esign = if exp < 0 { '-' } else { '+' };
        format!("{sign}{mant}e{esign}{:02}", exp.abs())
    }
}

/// Python's `repr()` of a `str`: single quotes unless the text contains `'` and no `"`.
fn python_str_repr(s: &str) -> String {
    let quote = if s.contains('\'') && !s.contains('"') {
        '"'
    } else {
        '\''
    };
    let mut out = String::with_capacity(s.len() + 2);
    out.push(quote);
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if c == quote => {
                out.push('\\');
                out.push(c);
            }
            c if (c as u32) < 0x20 || c as u32 == 0x7f => {
                out.push_str(&format!("\\x{:02x}", c as u32));
            }
            c => out.push(c),
        }
    }
    out.push(quote);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn python_int_rules() {
        assert_eq!(parse_python_int("42"), Some(42));
        assert_eq!(parse_python_int("-0x10"), Some(-16));
        assert_eq!(parse_python_int("0b101"), Some(5));
        assert_eq!(parse_python_int("0o17"), Some(15));
        assert_eq!(parse_python_int("1_000"), Some(1000));
        assert_eq!(parse_python_int("007"), Some(7));
        assert_eq!(parse_python_int("+5"), Some(5));
        for bad in [
            "", "-", "1__0", "_1", "1_", "1.0", "0x", "abc", "--1", "1e3",
        ] {
            assert_eq!(parse_python_int(bad), None, "{bad}");
        }
    }

    #[test]
    fn python_float_rules() {
        assert_eq!(parse_python_float("1"), Some(1.0));
        assert_eq!(parse_python_float("-.5"), Some(-0.5));
        assert_eq!(parse_python_float("1e3"), Some(1000.0));
        assert_eq!(parse_python_float("1_0.5"), Some(10.5));
        assert!(parse_python_float("inf").unwrap().is_infinite());
        for bad in ["", "1,5", "abc", "1__0", "_1", "--1", "0x10"] {
            assert_eq!(parse_python_float(bad), None, "{bad}");
        }
    }

    #[test]
    fn python_float_repr_matches_python() {
        for (f, s) in [
            (1.0, "1.0"),
            (0.0, "0.0"),
            (-2.0, "-2.0"),
            (0.1, "0.1"),
            (1.5, "1.5"),
            (1e20, "1e+20"),
            (1e-6, "1e-06"),
            (0.0001, "0.0001"),
            (123456789012345678.0, "1.2345678901234568e+17"),
            (1e15, "1000000000000000.0"),
            (1e16, "1e+16"),
            (123.456, "123.456"),
            (-1.5e-10, "-1.5e-10"),
        ] {
            assert_eq!(python_float_repr(f), s);
        }
    }

    #[test]
    fn tuple_repr() {
        assert_eq!(python_tuple_repr(&[]), "()");
        assert_eq!(python_tuple_repr(&[Value::Int(1)]), "(1,)");
        assert_eq!(
            python_tuple_repr(&[Value::String("a".into()), Value::String("it's".into())]),
            "('a', \"it's\")"
        );
    }

    #[test]
    fn string_quotes() {
        assert_eq!(parse_string("\"a b\"", None).unwrap(), "a b");
        assert_eq!(parse_string("'x\\'y'", None).unwrap(), "x'y");
        assert_eq!(parse_string("plain", None).unwrap(), "plain");
        assert!(parse_string("\"a\"b\"", None).is_err());
        assert!(parse_string("\"abcdef\"", Some(5)).is_err());
        assert_eq!(
            split_string_array("\"a,b\", 'c', d").unwrap(),
            vec!["a,b", "c", "d"]
        );
        assert!(split_string_array(",a").is_err());
        assert!(split_string_array("\"open").is_err());
    }
}
