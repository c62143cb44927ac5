//! Which topics cross in one direction: allow and deny patterns over horus topic names.
//!
//! A pattern is a name whose `/`-separated parts may be `*` (any one part) or `**` (any
//! number of parts, none included): `lidar/**`, `*/cmd_vel` — the same patterns as
//! `horus bridge` (Zenoh). A name crosses when it matches an allow pattern (or there are
//! none) and no deny pattern.

/// A malformed pattern.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("pattern {pattern:?}: {reason}")]
pub struct PatternError {
    /// The pattern.
    pub pattern: String,
    /// What is wrong.
    pub reason: &'static str,
}

/// Allow and deny patterns for one direction.
#[derive(Clone, Debug, Default)]
pub struct Filter {
    allow: Vec<Vec<String>>,
    deny: Vec<Vec<String>>,
}

/// Longest pattern accepted, in parts (keeps matching cheap).
const MAX_PARTS: usize = 32;

impl Filter {
    /// Parses the patterns.
    pub fn new(allow: &[String], deny: &[String]) -> Result<Filter, PatternError> {
        let parse_all = |ps: &[String]| ps.iter().map(|p| parse(p)).collect::<Result<_, _>>();
        Ok(Filter {
            allow: parse_all(allow)?,
            deny: parse_all(deny)?,
        })
    }

    /// Whether horus topic `name` crosses (leading and trailing `/` ignored).
    pub fn allows(&self, name: &str) -> bool {
        let parts: Vec<&str> = name.trim_matches('/').split('/').collect();
        (self.allow.is_empty() || self.allow.iter().any(|p| matches(p, &parts)))
            && !self.deny.iter().any(|p| matches(p, &parts))
    }
}

fn parse(p: &str) -> Result<Vec<String>, PatternError> {
    let bad = |reason| PatternError {
        pattern: p.to_owned(),
        reason,
    };
    let p_trim = p.trim_matches('/');
    if p_trim.is_empty() {
        return Err(bad("empty"));
    }
    let parts: Vec<String> = p_trim.split('/').map(str::to_owned).collect();
    if parts.len() > MAX_PARTS {
        return Err(bad("more than 32 parts"));
    }
    for part in &parts {
        if part.is_empty() {
            return Err(bad("empty part (two '/' in a row)"));
        }
        if part.contains('*') && part != "*" && part != "**" {
            return Err(bad("'*' and '**' must be whole parts"));
        }
    }
    Ok(parts)
}

/// Whether the pattern's parts match the name's: dynamic programming over (pattern part,
/// name part), so time is bounded by their product whatever the `**`s.
fn matches(pattern: &[String], name: &[&str]) -> bool {
    // ok[j]: the pattern's first i parts match the name's first j parts.
    let mut ok = vec![false; name.len() + 1];
    ok[0] = true;
    for p in pattern {
        let mut next = vec![false; name.len() + 1];
        for j in 0..=name.len() {
            next[j] = match p.as_str() {
                "**" => ok[j] || (j > 0 && next[j - 1]),
                "*" => j > 0 && ok[j - 1],
                lit => j > 0 && ok[j - 1] && name[j - 1] == lit,
            };
        }
        ok = next;
    }
    ok[name.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn f(allow: &[&str], deny: &[&str]) -> Filter {
        let v = |s: &[&str]| s.iter().map(|x| x.to_string()).collect::<Vec<_>>();
        Filter::new(&v(allow), &v(deny)).unwrap()
    }

    #[test]
    fn patterns_match_whole_parts() {
        assert!(f(&[], &[]).allows("a/b/c"));
        let some = f(&["lidar/**", "*/cmd_vel"], &["**/raw"]);
        assert!(some.allows("lidar"));
        assert!(some.allows("/lidar/points"));
        assert!(some.allows("base/cmd_vel"));
        assert!(!some.allows("a/b/cmd_vel"));
        assert!(!some.allows("lidar/scan/raw"));
        assert!(!some.allows("camera"));
        assert!(f(&["a/**/z"], &[]).allows("a/z"));
        assert!(f(&["a/**/z"], &[]).allows("a/b/c/z"));
        assert!(!f(&["a/**/z"], &[]).allows("a/b/c"));
    }

    #[test]
    fn malformed_patterns_are_refused() {
        for bad in ["a//b", "a*", "", "/", &"a/".repeat(40)] {
            assert!(Filter::new(&[bad.to_string()], &[]).is_err(), "{bad}");
        }
    }
}
