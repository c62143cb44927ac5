//! Which topics and services cross: allow and deny patterns over names.
//!
//! A pattern is a name whose `/`-separated parts may be `*` (any one part) or `**` (any
//! number of parts, none included): `lidar/**`, `*/cmd_vel`. A name crosses when it matches
//! an allow pattern (or there are none) and no deny pattern. A protected pattern (see
//! [`Filter::protecting`]) refuses a name unless an allow pattern matches it.

/// A malformed pattern.
#[derive(Debug, thiserror::Error)]
#[error("pattern {pattern:?}: {reason}")]
pub struct PatternError {
    /// The pattern.
    pub pattern: String,
    /// What is wrong.
    pub reason: String,
}

/// Allow and deny patterns.
#[derive(Clone, Debug, Default)]
pub struct Filter {
    allow: Vec<Vec<String>>,
    deny: Vec<Vec<String>>,
    /// Refused unless an allow pattern matches the name.
    protected: Vec<Vec<String>>,
}

impl Filter {
    /// Parses the patterns.
    pub fn new(allow: &[String], deny: &[String]) -> Result<Filter, PatternError> {
        let parse = |ps: &[String]| ps.iter().map(|p| parse(p)).collect::<Result<Vec<_>, _>>();
        Ok(Filter {
            allow: parse(allow)?,
            deny: parse(deny)?,
            protected: Vec::new(),
        })
    }

    /// Adds patterns whose names are refused unless an allow pattern matches them: without
    /// allow patterns (everything crosses) they are refused; `allow: ['**']` opens them.
    pub fn protecting(mut self, patterns: &[&str]) -> Result<Filter, PatternError> {
        for p in patterns {
            self.protected.push(parse(p)?);
        }
        Ok(self)
    }

    /// Whether `name` crosses.
    pub fn allows(&self, name: &str) -> bool {
        let parts: Vec<&str> = name.split('/').collect();
        let allowed = self.allow.iter().any(|p| matches(p, &parts));
        let implicit = self.allow.is_empty() && !self.protected.iter().any(|p| matches(p, &parts));
        (allowed || implicit) && !self.deny.iter().any(|p| matches(p, &parts))
    }
}

fn parse(p: &str) -> Result<Vec<String>, PatternError> {
    let bad = |reason: &str| PatternError {
        pattern: p.to_owned(),
        reason: reason.to_owned(),
    };
    if p.is_empty() {
        return Err(bad("empty"));
    }
    p.split('/')
        .map(|part| {
            if part.is_empty() {
                Err(bad("empty part (two '/' in a row, or at an end)"))
            } else if part.contains('*') && part != "*" && part != "**" {
                Err(bad("'*' and '**' must be whole parts"))
            } else {
                Ok(part.to_owned())
            }
        })
        .collect()
}

/// Whether the pattern's parts match the name's. Patterns are short and come from the
/// configuration; the recursion is bounded by their length times the name's.
fn matches(pattern: &[String], name: &[&str]) -> bool {
    match pattern.split_first() {
        None => name.is_empty(),
        Some((p, rest)) if p == "**" => (0..=name.len()).any(|i| matches(rest, &name[i..])),
        Some((p, rest)) => match name.split_first() {
            Some((n, name_rest)) => (p == "*" || p == n) && matches(rest, name_rest),
            None => false,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn f(allow: &[&str], deny: &[&str]) -> Filter {
        let v = |s: &[&str]| s.iter().map(|x| x.to_string()).collect::<Vec<_>>();
        Filter::new(&v(allow), &v(deny)).unwrap()
    }

    #[test]
    fn patterns_match_parts() {
        let all = f(&[], &[]);
        assert!(all.allows("a/b/c"));
        let some = f(&["lidar/**", "*/cmd_vel"], &["**/raw"]);
        assert!(some.allows("lidar"));
        assert!(some.allows("lidar/points"));
        assert!(some.allows("base/cmd_vel"));
        assert!(!some.allows("a/b/cmd_vel"));
        assert!(!some.allows("lidar/scan/raw"));
        assert!(!some.allows("camera"));
        assert!(Filter::new(&["a//b".into()], &[]).is_err());
        assert!(Filter::new(&["a*".into()], &[]).is_err());
        assert!(Filter::new(&[String::new()], &[]).is_err());
    }
}
