//! Substitutions in the strings of a launch file:
//!
//! - `$(arg NAME)`: the value of one of the file's arguments (`args:`), as given by the
//!   including file or on the command line (`NAME:=VALUE`), else its default;
//! - `$(env NAME)`: an environment variable of `horus launch` (an error if unset), and
//!   `$(env NAME DEFAULT)`: the same with a default;
//! - `$(dirname)`: the directory of the launch file the string is in;
//! - `$$`: a literal `$`.
//!
//! A value is substituted once: what a substitution produces is not scanned again. A
//! substituted string is at most [`MAX_SUBSTITUTED`] bytes: arguments passed down a chain of
//! includes as `"$(arg a)$(arg a)"` would otherwise double at every level.
//! Argument defaults may use `$(env ...)` and `$(dirname)` but not `$(arg ...)`.

use std::collections::BTreeMap;
use std::path::Path;

/// What a string's substitutions refer to.
pub(crate) struct Scope<'a> {
    /// Argument values of this file (after defaults).
    pub(crate) args: &'a BTreeMap<String, String>,
    /// Directory of this file.
    pub(crate) dir: &'a Path,
}

/// Longest string a substitution may produce (64 KiB).
pub const MAX_SUBSTITUTED: usize = 64 << 10;

/// Replaces every substitution of `s`; the error says which one failed and why.
pub(crate) fn substitute(s: &str, scope: &Scope<'_>) -> Result<String, String> {
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(at) = rest.find('$') {
        if out.len() > MAX_SUBSTITUTED {
            break;
        }
        out.push_str(&rest[..at]);
        rest = &rest[at..];
        if let Some(after) = rest.strip_prefix("$$") {
            out.push('$');
            rest = after;
            continue;
        }
        let Some(body) = rest.strip_prefix("$(") else {
            out.push('$');
            rest = &rest[1..];
            continue;
        };
        let end = body
            .find(')')
            .ok_or_else(|| format!("unterminated substitution in {s:?}"))?;
        out.push_str(&expand(&body[..end], scope)?);
        rest = &body[end + 1..];
    }
    out.push_str(rest);
    if out.len() > MAX_SUBSTITUTED {
        return Err(format!(
            "substituted value longer than {MAX_SUBSTITUTED} bytes (arguments doubled through \
             includes?)"
        ));
    }
    Ok(out)
}

fn expand(inner: &str, scope: &Scope<'_>) -> Result<String, String> {
    let mut words = inner.split_whitespace();
    match (words.next(), words.next()) {
        (Some("arg"), Some(name)) if words.next().is_none() => {
            scope.args.get(name).cloned().ok_or_else(|| {
                let known: Vec<&str> = scope.args.keys().map(String::as_str).collect();
                format!(
                    "$(arg {name}): no argument `{name}` is declared in `args:` (declared: {})",
                    if known.is_empty() {
                        "none".to_owned()
                    } else {
                        known.join(", ")
                    }
                )
            })
        }
        (Some("env"), Some(name)) => {
            let default: Vec<&str> = words.collect();
            match std::env::var(name) {
                Ok(v) => Ok(v),
                Err(_) if !default.is_empty() => Ok(default.join(" ")),
                Err(_) => Err(format!(
                    "$(env {name}): the environment variable {name} is not set"
                )),
            }
        }
        (Some("dirname"), None) => Ok(scope.dir.display().to_string()),
        _ => Err(format!(
            "unknown substitution $({inner}) (known: $(arg NAME), $(env NAME [DEFAULT]), $(dirname), $$)"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn substitutes_args_env_dirname_and_dollars() {
        let args = BTreeMap::from([("rate".to_owned(), "10".to_owned())]);
        let scope = Scope {
            args: &args,
            dir: Path::new("/robot"),
        };
        let s = |x: &str| substitute(x, &scope);
        assert_eq!(
            s("--rate=$(arg rate) $$HOME $x").unwrap(),
            "--rate=10 $HOME $x"
        );
        assert_eq!(s("$(dirname)/a.py").unwrap(), "/robot/a.py");
        assert_eq!(
            s("$(env HORUS_SURELY_UNSET_VAR fall back)").unwrap(),
            "fall back"
        );
        assert!(s("$(arg speed)").unwrap_err().contains("declared: rate"));
        assert!(s("$(env HORUS_SURELY_UNSET_VAR)").is_err());
        assert!(s("$(frob)").unwrap_err().contains("unknown substitution"));
        assert!(s("$(arg rate").unwrap_err().contains("unterminated"));
        // Not rescanned.
        let args = BTreeMap::from([("a".to_owned(), "$(arg a)".to_owned())]);
        let scope = Scope {
            args: &args,
            dir: Path::new("."),
        };
        assert_eq!(substitute("$(arg a)", &scope).unwrap(), "$(arg a)");
    }
}
