//! Rust names for ROS 2 names.

use crate::error::GenError;

/// Rust keywords (strict and reserved, all editions) that `r#` makes usable.
const KEYWORDS: &[&str] = &[
    "as", "break", "const", "continue", "else", "enum", "extern", "false", "fn", "for", "if",
    "impl", "in", "let", "loop", "match", "mod", "move", "mut", "pub", "ref", "return", "static",
    "struct", "trait", "true", "type", "unsafe", "use", "where", "while", "async", "await", "dyn",
    "abstract", "become", "box", "do", "final", "macro", "override", "priv", "typeof", "unsized",
    "virtual", "yield", "try", "gen",
];

/// Keywords that cannot be raw identifiers.
const NOT_RAW: &[&str] = &["self", "super", "crate", "Self", "_"];

/// A ROS field name as a Rust field and method name: keywords as raw identifiers
/// (`type` → `r#type`), `self`/`super`/`crate` with a trailing `_` (ROS names never end
/// in `_`, so this cannot clash).
pub(crate) fn field_ident(name: &str) -> String {
    if NOT_RAW.contains(&name) {
        format!("{name}_")
    } else if KEYWORDS.contains(&name) {
        format!("r#{name}")
    } else {
        name.to_string()
    }
}

/// A package name as a module name (`r#type` for a keyword).
pub(crate) fn module_ident(name: &str) -> Result<String, GenError> {
    if NOT_RAW.contains(&name) {
        return Err(GenError::NameClash(format!(
            "package '{name}' cannot be a Rust module name"
        )));
    }
    Ok(field_ident(name))
}

/// A type name as a Rust type name (message names are never keywords except `Self`).
pub(crate) fn type_ident(name: &str) -> Result<String, GenError> {
    if NOT_RAW.contains(&name) {
        return Err(GenError::NameClash(format!(
            "type '{name}' cannot be a Rust type name"
        )));
    }
    Ok(name.to_string())
}

/// A string as a Rust string literal.
pub(crate) fn str_lit(s: &str) -> String {
    format!("{s:?}")
}

/// A long text as a raw string literal (`r#"…"#` with enough `#`; a plain literal if it
/// holds a carriage return, which raw literals cannot).
pub(crate) fn raw_str_lit(s: &str) -> String {
    if s.contains('\r') {
        return str_lit(s);
    }
    let mut hashes = 1;
    while s.contains(&format!("\"{}", "#".repeat(hashes))) {
        hashes += 1;
    }
    let h = "#".repeat(hashes);
    format!("r{h}\"{s}\"{h}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rust_names() {
        assert_eq!(field_ident("type"), "r#type");
        assert_eq!(field_ident("self"), "self_");
        assert_eq!(field_ident("data"), "data");
        assert!(type_ident("Self").is_err());
        assert!(module_ident("crate").is_err());
        assert_eq!(raw_str_lit("a\"#b"), "r##\"a\"#b\"##");
        assert_eq!(str_lit("a\"\n"), "\"a\\\"\\n\"");
    }
}
