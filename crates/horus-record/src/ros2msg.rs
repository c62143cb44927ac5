//! `ros2msg` schema text generated from a horus [`MessageDescription`], in the form rosbag2
//! writes into MCAP: the root type's fields, then every nested type after a line of 80 `=`
//! and a `MSG: pkg/Name` header.
//!
//! Mapping: scalars → `uint8` … `float64`; `[T; N]` → `T[N]` (nested arrays flattened into
//! one, since ROS has no arrays of arrays and the bytes are the same); a nested message →
//! `pkg/Name` with its own section; a tail (point data, pixels) → a trailing `uint8[] tail`
//! sequence. Names are made valid ROS names (packages `[a-z][a-z0-9_]*`, types
//! `[A-Z][A-Za-z0-9]*`, fields `[a-z][a-z0-9_]*` without `__` or a trailing `_`), and kept
//! unique; the exact horus names travel in the channel metadata.

use std::collections::HashMap;
use std::fmt::Write as _;

use horus::msgs::{FieldKind, MessageDescription, Scalar};

/// The schema encoding name MCAP uses for this text.
pub const ENCODING: &str = "ros2msg";

/// Name of the sequence holding a message's tail.
pub const TAIL_FIELD: &str = "tail";

const SEPARATOR: &str =
    "================================================================================";

/// A horus description as ROS 2 message definitions.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Ros2Schema {
    /// The root type's name as rosbag2 spells it (`pkg/msg/Name`).
    pub name: String,
    /// The definition text (root first, then each nested type).
    pub text: String,
}

/// The ROS name (`pkg/Name`) of every type of `d`, unique.
fn type_names(d: &MessageDescription) -> HashMap<&str, (String, String)> {
    let mut out: HashMap<&str, (String, String)> = HashMap::new();
    for t in &d.types {
        let (pkg, name) = match t.name.rsplit_once('/') {
            Some((p, n)) => (package_name(p), type_name(n)),
            None => ("horus_user".to_owned(), type_name(&t.name)),
        };
        let mut candidate = name.clone();
        let mut i = 2;
        while out.values().any(|(p, n)| *p == pkg && *n == candidate) {
            candidate = format!("{name}{i}");
            i += 1;
        }
        out.insert(&t.name, (pkg, candidate));
    }
    out
}

/// A valid ROS package name from any text.
fn package_name(s: &str) -> String {
    let mut p = snake(s);
    if p.is_empty() {
        p = "horus_user".into();
    }
    p
}

/// `[a-z][a-z0-9_]*`, no `__`, no trailing `_`.
fn snake(s: &str) -> String {
    let mut out = String::new();
    for c in s.chars() {
        let c = c.to_ascii_lowercase();
        let c = if c.is_ascii_alphanumeric() { c } else { '_' };
        if c == '_' && (out.is_empty() || out.ends_with('_')) {
            continue;
        }
        out.push(c);
    }
    while out.ends_with('_') {
        out.pop();
    }
    if out.starts_with(|c: char| c.is_ascii_digit()) {
        out.insert_str(0, "f_");
    }
    out
}

/// `[A-Z][A-Za-z0-9]*` from any text.
fn type_name(s: &str) -> String {
    let mut out = String::new();
    for part in s.split(|c: char| !c.is_ascii_alphanumeric()) {
        let mut cs = part.chars();
        if let Some(first) = cs.next() {
            out.push(first.to_ascii_uppercase());
            out.extend(cs);
        }
    }
    if !out.starts_with(|c: char| c.is_ascii_uppercase()) {
        out.insert(0, 'M');
    }
    out
}

/// Field names of one type, valid and unique (`tail` reserved for the root's tail).
fn field_names<'a>(fields: impl Iterator<Item = &'a str>, reserve_tail: bool) -> Vec<String> {
    // A set: a description may repeat one name in all its fields (4096, untrusted), and a
    // linear search per candidate made that cubic.
    let mut taken: std::collections::HashSet<String> = std::collections::HashSet::new();
    if reserve_tail {
        taken.insert(TAIL_FIELD.into());
    }
    let mut out = Vec::new();
    for f in fields {
        let mut base = snake(f);
        if base.is_empty() {
            base = "field".into();
        }
        let mut name = base.clone();
        let mut i = 2;
        while taken.contains(&name) {
            name = format!("{base}_{i}");
            i += 1;
        }
        taken.insert(name.clone());
        out.push(name);
    }
    out
}

fn scalar_name(s: Scalar) -> &'static str {
    match s {
        Scalar::U8 => "uint8",
        Scalar::U16 => "uint16",
        Scalar::U32 => "uint32",
        Scalar::U64 => "uint64",
        Scalar::I8 => "int8",
        Scalar::I16 => "int16",
        Scalar::I32 => "int32",
        Scalar::I64 => "int64",
        Scalar::F32 => "float32",
        Scalar::F64 => "float64",
    }
}

/// The element kind and total count of a (possibly nested) array.
pub(crate) fn flatten(kind: &FieldKind) -> (&FieldKind, Option<usize>) {
    let mut k = kind;
    let mut count: Option<usize> = None;
    while let FieldKind::Array { of, len } = k {
        count = Some(count.unwrap_or(1).saturating_mul(*len));
        k = of;
    }
    (k, count)
}

/// Generates the `ros2msg` schema of a validated description.
pub fn generate(d: &MessageDescription) -> Ros2Schema {
    let names = type_names(d);
    let ros = |n: &str| {
        names
            .get(n)
            .map(|(p, t)| format!("{p}/{t}"))
            .unwrap_or_else(|| "horus_user/Unknown".into())
    };
    let mut text = String::new();
    for (i, t) in d.types.iter().enumerate() {
        if i > 0 {
            let _ = write!(text, "{SEPARATOR}\nMSG: {}\n", ros(&t.name));
        }
        let root_tail = i == 0 && t.has_tail;
        let fnames = field_names(t.fields.iter().map(|f| f.name.as_str()), root_tail);
        for (f, fname) in t.fields.iter().zip(&fnames) {
            let (elem, count) = flatten(&f.kind);
            let ty = match elem {
                FieldKind::Scalar(s) => scalar_name(*s).to_owned(),
                FieldKind::Message(m) => ros(m),
                FieldKind::Array { .. } => unreachable!("flatten strips arrays"),
            };
            match count {
                Some(n) => {
                    let _ = writeln!(text, "{ty}[{n}] {fname}");
                }
                None => {
                    let _ = writeln!(text, "{ty} {fname}");
                }
            }
        }
        if t.fields.is_empty() {
            // ROS 2's rule for empty structures (CDR cannot encode them).
            text.push_str("uint8 structure_needs_at_least_one_member\n");
        }
        if root_tail {
            let _ = writeln!(text, "uint8[] {TAIL_FIELD}");
        }
    }
    let (pkg, name) = names
        .get(d.root().name.as_str())
        .cloned()
        .unwrap_or_else(|| ("horus_user".into(), "Unknown".into()));
    Ros2Schema {
        name: format!("{pkg}/msg/{name}"),
        text,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use horus::msgs::{CmdVel, Odometry, PointCloud};

    #[test]
    fn cmd_vel_is_four_scalars() {
        let s = generate(&MessageDescription::of::<CmdVel>());
        assert_eq!(s.name, "horus/msg/CmdVel");
        assert!(s.text.starts_with("uint64 stamp_ns\n"), "{}", s.text);
        assert!(!s.text.contains("MSG:"));
    }

    #[test]
    fn nested_types_get_sections_and_tail_is_a_sequence() {
        let imu = generate(&MessageDescription::of::<Odometry>());
        assert!(
            imu.text.contains(&format!("{SEPARATOR}\nMSG: horus/")),
            "{}",
            imu.text
        );
        let pc = generate(&MessageDescription::of::<PointCloud>());
        assert!(pc.text.contains("uint8[] tail\n"), "{}", pc.text);
    }

    #[test]
    fn many_fields_with_one_name_get_unique_names() {
        // 4096 identical names (the most a description may have): unique, and quadratic work
        // at most (a list search per candidate was cubic, ~10^10 comparisons).
        let names = field_names(std::iter::repeat_n("x", 4096), false);
        let unique: std::collections::HashSet<_> = names.iter().collect();
        assert_eq!(unique.len(), 4096);
        assert_eq!(names[4095], "x_4096");
    }

    #[test]
    fn names_are_made_valid() {
        assert_eq!(snake("_pad"), "pad");
        assert_eq!(snake("A__b_"), "a_b");
        assert_eq!(snake("9x"), "f_9x");
        assert_eq!(type_name("wheel-ticks"), "WheelTicks");
        assert_eq!(type_name("3d"), "M3d");
        assert_eq!(
            field_names(["tail", "_pad", "pad"].into_iter(), true),
            ["tail_2", "pad", "pad_2"]
        );
    }
}
