//! The launch file as written: what serde reads, before arguments are substituted and
//! includes resolved. Every struct refuses unknown keys, so a typo is an error with its
//! position rather than a setting silently ignored.

use std::collections::BTreeMap;
use std::fmt;

use serde::de::{self, Deserializer, Visitor};
use serde::Deserialize;

/// One launch file.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawFile {
    /// Arguments the file accepts, with their defaults (`null`: the caller must give it).
    #[serde(default)]
    pub(crate) args: BTreeMap<String, Option<Scalar>>,
    /// `HORUS_NAMESPACE` of every process of this file that sets none of its own.
    pub(crate) namespace: Option<String>,
    /// Environment of every process of this file.
    #[serde(default)]
    pub(crate) env: BTreeMap<String, Scalar>,
    /// Seconds between SIGTERM and SIGKILL at shutdown, for processes that set none.
    pub(crate) stop_grace: Option<f64>,
    /// Seconds to wait for an `after_topic:` publisher, for processes that set none.
    pub(crate) after_topic_timeout: Option<f64>,
    /// Other launch files whose processes join this system.
    #[serde(default)]
    pub(crate) include: Vec<RawInclude>,
    /// The processes.
    #[serde(default)]
    pub(crate) processes: Vec<RawProcess>,
}

/// `include:` entry.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawInclude {
    /// Path of the included file, relative to the including file.
    pub(crate) file: String,
    /// Values of the included file's arguments.
    #[serde(default)]
    pub(crate) args: BTreeMap<String, Scalar>,
    /// Namespace for the included processes (overrides the included file's own).
    pub(crate) namespace: Option<String>,
}

/// `processes:` entry.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawProcess {
    /// Unique name: output prefix, `after:` target, summary line.
    pub(crate) name: String,
    /// A program (found on `PATH`, or a path) with optional arguments.
    pub(crate) command: Option<OneOrMany>,
    /// A Python module, run as `python -u -m MODULE`.
    pub(crate) module: Option<String>,
    /// A Python script, run as `python -u SCRIPT`.
    pub(crate) script: Option<String>,
    /// A shell command line, run as `sh -c LINE NAME ARGS...`.
    pub(crate) shell: Option<String>,
    /// Interpreter for `module`/`script` (default: `$HORUS_PYTHON`, else `python3`).
    pub(crate) python: Option<String>,
    /// Arguments appended to the command.
    #[serde(default)]
    pub(crate) args: Vec<Scalar>,
    /// Environment of this process (over the file's).
    #[serde(default)]
    pub(crate) env: BTreeMap<String, Scalar>,
    /// `HORUS_NAMESPACE` of this process.
    pub(crate) namespace: Option<String>,
    /// Working directory, relative to the launch file.
    pub(crate) cwd: Option<String>,
    /// Start only once these processes have started.
    #[serde(default)]
    pub(crate) after: OneOrMany,
    /// Start only once these topics (in this process's namespace) have a live publisher.
    #[serde(default)]
    pub(crate) after_topic: OneOrMany,
    /// Seconds to wait for `after_topic:` before the launch fails.
    pub(crate) after_topic_timeout: Option<f64>,
    /// `never` (default), `on-failure` or `always`.
    #[serde(default)]
    pub(crate) restart: RestartKind,
    /// Most restarts (default 5 for `on-failure`, unlimited for `always`).
    pub(crate) max_restarts: Option<u32>,
    /// Seconds before the first restart; doubles with each restart.
    pub(crate) backoff: Option<f64>,
    /// Longest delay between restarts, seconds.
    pub(crate) backoff_max: Option<f64>,
    /// Seconds between SIGTERM and SIGKILL at shutdown.
    pub(crate) stop_grace: Option<f64>,
    /// When this process ends for good, the whole launch shuts down.
    #[serde(default)]
    pub(crate) required: bool,
}

/// `restart:` values.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub(crate) enum RestartKind {
    /// Never restarted.
    #[default]
    Never,
    /// Restarted when it exits non-zero or is killed by a signal.
    OnFailure,
    /// Restarted whenever it exits.
    Always,
}

/// A string, or a number or boolean taken as its text (`--seconds: 5`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Scalar(pub(crate) String);

impl<'de> Deserialize<'de> for Scalar {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = Scalar;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a string, number or boolean")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Scalar, E> {
                Ok(Scalar(v.to_owned()))
            }
            fn visit_bool<E: de::Error>(self, v: bool) -> Result<Scalar, E> {
                Ok(Scalar(v.to_string()))
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Scalar, E> {
                Ok(Scalar(v.to_string()))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Scalar, E> {
                Ok(Scalar(v.to_string()))
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<Scalar, E> {
                Ok(Scalar(v.to_string()))
            }
        }
        d.deserialize_any(V)
    }
}

/// One string or a list of them (`after: a` or `after: [a, b]`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct OneOrMany(pub(crate) Vec<Scalar>);

impl<'de> Deserialize<'de> for OneOrMany {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = OneOrMany;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a string or a list of strings")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<OneOrMany, E> {
                Ok(OneOrMany(vec![Scalar(v.to_owned())]))
            }
            fn visit_seq<A: de::SeqAccess<'de>>(self, mut seq: A) -> Result<OneOrMany, A::Error> {
                let mut out = Vec::new();
                while let Some(s) = seq.next_element::<Scalar>()? {
                    out.push(s);
                }
                Ok(OneOrMany(out))
            }
        }
        d.deserialize_any(V)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_are_taken_as_text_and_unknown_keys_refused() {
        let f: RawFile = serde_yaml::from_str(
            "processes:\n  - name: a\n    command: [x, 5, true]\n    after: b\n",
        )
        .unwrap();
        let p = &f.processes[0];
        let cmd: Vec<_> = p.command.as_ref().unwrap().0.iter().map(|s| &s.0).collect();
        assert_eq!(cmd, ["x", "5", "true"]);
        assert_eq!(p.after.0, [Scalar("b".into())]);
        let e = serde_yaml::from_str::<RawFile>("processes:\n  - name: a\n    comand: x\n")
            .unwrap_err();
        assert!(e.to_string().contains("unknown field `comand`"), "{e}");
        assert_eq!(e.location().unwrap().line(), 3);
    }
}
