//! Doc comments from the comments of `.msg` files.

use horus_idl::Comment;

/// `#[doc = "…"]` lines (indented by `indent`) for `lines`. Each line's leading
/// whitespace is dropped and a leading fence (```` ``` ````, `~~~`) escaped, so that a
/// ROS comment never turns into a Markdown code block (which rustdoc would compile as a
/// doctest).
pub(crate) fn doc_attrs(lines: &[String], indent: &str) -> String {
    let mut out = String::new();
    for line in lines {
        let mut l = line.trim_start().to_string();
        if l.starts_with("```") || l.starts_with("~~~") {
            l.insert(0, '\\');
        }
        let text = if l.is_empty() {
            String::new()
        } else {
            format!(" {l}")
        };
        out.push_str(&format!("{indent}#[doc = {text:?}]\n"));
    }
    out
}

/// The lines of a comment, its unit as a last line.
pub(crate) fn comment_lines(c: &Comment) -> Vec<String> {
    let mut lines = c.lines.clone();
    if let Some(unit) = &c.unit {
        lines.push(format!("Unit: {unit}."));
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn comments_never_become_code_blocks() {
        let lines = vec![
            "a".to_string(),
            String::new(),
            "    code?".to_string(),
            "```rust".to_string(),
        ];
        assert_eq!(
            doc_attrs(&lines, ""),
            "#[doc = \" a\"]\n#[doc = \"\"]\n#[doc = \" code?\"]\n#[doc = \" \\\\```rust\"]\n"
        );
    }
}
