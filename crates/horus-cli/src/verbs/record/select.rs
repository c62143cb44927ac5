//! Which topics `horus record` takes (`--topics`, `--regex`, `--exclude`), and size
//! arguments (`1M`).

use regex::Regex;

/// The topic selection.
pub(super) struct Filter {
    topics: Vec<String>,
    regex: Option<Regex>,
    exclude: Vec<Regex>,
}

impl Filter {
    pub(super) fn new(
        topics: &[String],
        regex: Option<&str>,
        exclude: &[String],
    ) -> anyhow::Result<Filter> {
        let compile =
            |flag: &str, r: &str| Regex::new(r).map_err(|e| anyhow::anyhow!("--{flag} {r:?}: {e}"));
        Ok(Filter {
            topics: topics.to_vec(),
            regex: regex.map(|r| compile("regex", r)).transpose()?,
            exclude: exclude
                .iter()
                .map(|r| compile("exclude", r))
                .collect::<Result<_, _>>()?,
        })
    }

    /// Whether `topic` is recorded: named by `--topics` or matching `--regex` (all topics
    /// when neither is given), and matching no `--exclude`.
    pub(super) fn matches(&self, topic: &str) -> bool {
        let chosen = if self.topics.is_empty() && self.regex.is_none() {
            true
        } else {
            self.topics.iter().any(|t| t == topic)
                || self.regex.as_ref().is_some_and(|r| r.is_match(topic))
        };
        chosen && !self.exclude.iter().any(|r| r.is_match(topic))
    }
}

/// `123`, `64K`, `100M`, `2G` (powers of 1024).
pub(crate) fn parse_size(s: &str) -> Result<u64, String> {
    let s = s.trim();
    let (digits, mult) = match s.chars().last().map(|c| c.to_ascii_uppercase()) {
        Some('K') => (&s[..s.len() - 1], 1u64 << 10),
        Some('M') => (&s[..s.len() - 1], 1 << 20),
        Some('G') => (&s[..s.len() - 1], 1 << 30),
        _ => (s, 1),
    };
    let n: u64 = digits
        .parse()
        .map_err(|_| format!("{s:?} is not a size (e.g. 512K, 100M, 2G)"))?;
    n.checked_mul(mult)
        .filter(|&n| n > 0)
        .ok_or_else(|| format!("{s:?} is out of range"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn selection() {
        let all = Filter::new(&[], None, &["^debug/".into()]).unwrap();
        assert!(all.matches("a/b") && !all.matches("debug/x"));
        let some = Filter::new(&["a/b".into()], Some("^cam/"), &[]).unwrap();
        assert!(some.matches("a/b") && some.matches("cam/left") && !some.matches("a/c"));
        assert!(Filter::new(&[], Some("("), &[]).is_err());
    }

    #[test]
    fn sizes() {
        assert_eq!(parse_size("64K"), Ok(65536));
        assert_eq!(parse_size("2m"), Ok(2 << 20));
        assert_eq!(parse_size("10"), Ok(10));
        assert!(parse_size("x").is_err() && parse_size("0").is_err());
    }
}
