//! Comments, attached to messages, fields and constants as ROS 2's `rosidl_adapter`
//! attaches them (for documentation in generated code): leading `#` lines of a section
//! belong to the message; `#` lines before a definition and its trailing `# …` belong to
//! it; indented `#` lines after a definition are appended to it.

/// The comment of a message, field or constant, as ROS 2 keeps it.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Comment {
    /// The lines, without `#`: empty lines at either end dropped, runs of empty lines
    /// collapsed, common indentation removed, and the unit (if any) taken out.
    pub lines: Vec<String>,
    /// A unit written in brackets (`# speed [m/s]` → `m/s`), when the comment holds
    /// exactly one bracketed text without a comma, as ROS 2 reads units.
    pub unit: Option<String>,
}

/// The bracketed units (`\s*\[([^,\]]+)\]`, leftmost non-overlapping matches) in `text`:
/// (the whole match with the whitespace before it, the unit).
fn find_units(text: &str) -> Vec<(String, String)> {
    let chars: Vec<char> = text.chars().collect();
    let mut found = Vec::new();
    let (mut i, mut last_end) = (0, 0);
    while i < chars.len() {
        if chars[i] == '[' {
            let mut j = i + 1;
            while j < chars.len() && chars[j] != ',' && chars[j] != ']' {
                j += 1;
            }
            if j < chars.len() && chars[j] == ']' && j > i + 1 {
                let mut start = i;
                while start > last_end && chars[start - 1].is_whitespace() {
                    start -= 1;
                }
                found.push((
                    chars[start..=j].iter().collect(),
                    chars[i + 1..j].iter().collect(),
                ));
                last_end = j + 1;
                i = j + 1;
                continue;
            }
        }
        i += 1;
    }
    found
}

/// ROS 2's processing of collected comment lines: a single `[unit]` is taken out,
/// leading and trailing empty lines removed, runs of empty lines collapsed to one,
/// common indentation removed (Python's `textwrap.dedent`).
pub(crate) fn process_comment(mut lines: Vec<String>) -> Comment {
    let units = find_units(&lines.join("\n"));
    let mut unit = None;
    if let [(whole, u)] = &units[..] {
        unit = Some(u.clone());
        for l in &mut lines {
            *l = l.replace(whole.as_str(), "");
        }
    }
    Comment {
        lines: clean_lines(lines),
        unit,
    }
}

fn clean_lines(mut lines: Vec<String>) -> Vec<String> {
    let first = lines
        .iter()
        .position(|l| !l.is_empty())
        .unwrap_or(lines.len());
    lines.drain(..first);
    while lines.last().is_some_and(|l| l.is_empty()) {
        lines.pop();
    }
    lines.dedup_by(|b, a| a.is_empty() && b.is_empty());
    if lines.is_empty() {
        return lines;
    }
    // textwrap.dedent: whitespace-only lines become empty and do not count for the margin.
    let margin = lines
        .iter()
        .filter(|l| !l.trim().is_empty())
        .map(|l| l.len() - l.trim_start_matches([' ', '\t']).len())
        .min()
        .unwrap_or(0);
    lines
        .into_iter()
        .map(|l| {
            if l.trim().is_empty() {
                String::new()
            } else {
                l[margin..].to_string()
            }
        })
        .collect()
}

/// The comment part of a line (after the first `#`, all leading `#` removed) and the
/// part before it.
pub(crate) fn split_comment(line: &str) -> (&str, Option<&str>) {
    match line.find('#') {
        Some(i) => (&line[..i], Some(line[i..].trim_start_matches('#'))),
        None => (line, None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(v: &[&str]) -> Vec<String> {
        v.iter().map(|x| x.to_string()).collect()
    }

    #[test]
    fn cleans_as_ros2_does() {
        assert_eq!(
            clean_lines(s(&["", " a", "", "", "   b", "  ", ""])),
            // A whitespace-only last line is not "empty" when ROS 2 trims the ends, and
            // becomes empty when dedented.
            s(&["a", "", "  b", ""])
        );
        assert!(clean_lines(s(&["", ""])).is_empty());
    }

    #[test]
    fn one_unit_is_taken_out() {
        let c = process_comment(s(&[" speed [m/s]", " more"]));
        assert_eq!(c.unit.as_deref(), Some("m/s"));
        assert_eq!(c.lines, s(&["speed", "more"]));
        // Two bracketed texts, or one with a comma (a range): no unit.
        assert_eq!(process_comment(s(&[" [a] [b]"])).unit, None);
        assert_eq!(process_comment(s(&[" range [0, 1]"])).unit, None);
    }
}
