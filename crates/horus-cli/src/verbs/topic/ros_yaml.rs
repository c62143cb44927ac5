//! A decoded ROS 2 message as YAML, laid out as `ros2 topic echo` prints it: fields in
//! their order, nested structures indented two spaces, sequences as `- item` lines at
//! their key's indentation, floats always with a decimal point (`.nan`, `.inf`), strings
//! quoted when YAML would read them otherwise.
//!
//! With a cap, sequences longer than it show their first elements and a line
//! `- '... N more'`, and strings longer than [`MAX_STRING`] characters are cut with `...`.

use horus_idl::cdr::CdrValue;

use super::ros_json::is_placeholder;

/// Longest string printed whole when a cap is set (as `ros2 topic echo`'s
/// `--truncate-length` default).
pub(super) const MAX_STRING: usize = 128;

/// `fields` (a message's members) as YAML, each line ending with `\n`.
pub(super) fn to_yaml(fields: &[(String, CdrValue)], cap: Option<usize>) -> String {
    let mut out = String::new();
    write_struct(fields, 0, cap, &mut out);
    if out.is_empty() {
        out.push_str("{}\n");
    }
    out
}

fn write_struct(
    fields: &[(String, CdrValue)],
    indent: usize,
    cap: Option<usize>,
    out: &mut String,
) {
    let pad = "  ".repeat(indent);
    for (name, v) in fields {
        if is_placeholder(fields, name) {
            continue;
        }
        match v {
            CdrValue::Struct(inner) if inner.iter().all(|(n, _)| is_placeholder(inner, n)) => {
                out.push_str(&format!("{pad}{name}: {{}}\n"));
            }
            CdrValue::Struct(inner) => {
                out.push_str(&format!("{pad}{name}:\n"));
                write_struct(inner, indent + 1, cap, out);
            }
            CdrValue::Array(items) if items.is_empty() => {
                out.push_str(&format!("{pad}{name}: []\n"))
            }
            CdrValue::Bytes(b) if b.is_empty() => out.push_str(&format!("{pad}{name}: []\n")),
            CdrValue::Array(items) => {
                out.push_str(&format!("{pad}{name}:\n"));
                write_items(
                    items.len(),
                    |i, out| write_item(&items[i], indent, cap, out),
                    indent,
                    cap,
                    out,
                );
            }
            CdrValue::Bytes(b) => {
                out.push_str(&format!("{pad}{name}:\n"));
                write_items(
                    b.len(),
                    |i, out| out.push_str(&format!("{pad}- {}\n", b[i])),
                    indent,
                    cap,
                    out,
                );
            }
            scalar => out.push_str(&format!("{pad}{name}: {}\n", scalar_text(scalar, cap))),
        }
    }
}

/// The first `cap` of `len` items (all without a cap), then how many were left out.
fn write_items(
    len: usize,
    mut item: impl FnMut(usize, &mut String),
    indent: usize,
    cap: Option<usize>,
    out: &mut String,
) {
    let shown = cap.map_or(len, |c| len.min(c));
    for i in 0..shown {
        item(i, out);
    }
    if shown < len {
        out.push_str(&format!(
            "{}- '... {} more'\n",
            "  ".repeat(indent),
            len - shown
        ));
    }
}

/// One element of a sequence: `- scalar`, or a structure whose first line follows `- `.
fn write_item(v: &CdrValue, indent: usize, cap: Option<usize>, out: &mut String) {
    let pad = "  ".repeat(indent);
    match v {
        CdrValue::Struct(inner) => {
            let mut body = String::new();
            write_struct(inner, indent + 1, cap, &mut body);
            if body.is_empty() {
                out.push_str(&format!("{pad}- {{}}\n"));
                return;
            }
            // The first line's indentation (one level deeper) becomes `- `.
            out.push_str(&pad);
            out.push_str("- ");
            out.push_str(&body[pad.len() + 2..]);
        }
        scalar => out.push_str(&format!("{pad}- {}\n", scalar_text(scalar, cap))),
    }
}

fn scalar_text(v: &CdrValue, cap: Option<usize>) -> String {
    match v {
        CdrValue::Bool(b) => b.to_string(),
        CdrValue::Int(i) => i.to_string(),
        CdrValue::UInt(u) => u.to_string(),
        CdrValue::Float32(f) => float_text(f64::from(*f), f.to_string()),
        CdrValue::Float64(f) => float_text(*f, f.to_string()),
        CdrValue::String(s) | CdrValue::WString(s) => string_text(s, cap),
        // Sequences and structures are laid out by the callers.
        CdrValue::Bytes(_) | CdrValue::Array(_) | CdrValue::Struct(_) => String::new(),
    }
}

/// A float as YAML reads it back as a float: `1.0`, `1.5e-7`, `.nan`, `-.inf`.
fn float_text(f: f64, shortest: String) -> String {
    if f.is_nan() {
        ".nan".into()
    } else if f.is_infinite() {
        if f > 0.0 { ".inf" } else { "-.inf" }.into()
    } else if shortest.contains(['.', 'e', 'E']) {
        shortest
    } else {
        format!("{shortest}.0")
    }
}

/// A string as a YAML scalar: plain when YAML reads it back as the same string, else
/// quoted; cut at [`MAX_STRING`] characters when a cap is set.
fn string_text(s: &str, cap: Option<usize>) -> String {
    let cut;
    let s = match s.char_indices().nth(MAX_STRING) {
        Some((i, _)) if cap.is_some() => {
            cut = format!("{}...", &s[..i]);
            cut.as_str()
        }
        _ => s,
    };
    let plain = s
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || "_./-".contains(c))
        && s.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_' || c == '/')
        && !matches!(
            s.to_ascii_lowercase().as_str(),
            "true" | "false" | "yes" | "no" | "on" | "off" | "null" | "y" | "n"
        );
    if s.is_empty() {
        "''".into()
    } else if plain {
        s.to_owned()
    } else {
        serde_json::to_string(s).unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn f(name: &str, v: CdrValue) -> (String, CdrValue) {
        (name.into(), v)
    }

    #[test]
    fn nested_structures_sequences_and_scalars_lay_out_as_ros2_echo_does() {
        let msg = vec![
            f(
                "header",
                CdrValue::Struct(vec![
                    f("stamp", CdrValue::Struct(vec![f("sec", CdrValue::Int(1))])),
                    f("frame_id", CdrValue::String(String::new())),
                ]),
            ),
            f("x", CdrValue::Float64(2.0)),
            f("y", CdrValue::Float32(0.1)),
            f("n", CdrValue::Float64(f64::NAN)),
            f("data", CdrValue::Bytes(vec![1, 2, 3])),
            f("empty", CdrValue::Array(vec![])),
            f(
                "points",
                CdrValue::Array(vec![CdrValue::Struct(vec![
                    f("a", CdrValue::Int(1)),
                    f("b", CdrValue::String("yes".into())),
                ])]),
            ),
        ];
        assert_eq!(
            to_yaml(&msg, None),
            "header:\n  stamp:\n    sec: 1\n  frame_id: ''\nx: 2.0\ny: 0.1\nn: .nan\n\
             data:\n- 1\n- 2\n- 3\nempty: []\npoints:\n- a: 1\n  b: \"yes\"\n"
        );
    }

    #[test]
    fn long_sequences_and_strings_are_cut_with_a_cap() {
        let msg = vec![
            f("data", CdrValue::Bytes(vec![7; 10])),
            f("s", CdrValue::String("a".repeat(200))),
        ];
        let text = to_yaml(&msg, Some(2));
        assert!(
            text.starts_with("data:\n- 7\n- 7\n- '... 8 more'\ns: "),
            "{text}"
        );
        assert!(text.contains(&format!("{}...", "a".repeat(128))));
        assert_eq!(to_yaml(&msg, None).lines().count(), 12);
    }

    #[test]
    fn message_without_fields_is_an_empty_mapping() {
        let msg = vec![f(horus_idl::PLACEHOLDER_MEMBER, CdrValue::UInt(0))];
        assert_eq!(to_yaml(&msg, None), "{}\n");
    }
}
