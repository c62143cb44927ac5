//! The system to run, as the supervisor needs it: every process of the launch file and of
//! its includes, with substitutions done, paths resolved and defaults applied.

use std::fmt;
use std::path::PathBuf;
use std::time::Duration;

use super::restart::Policy;

/// A position in a launch file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Origin {
    pub(crate) file: PathBuf,
    /// 1-based.
    pub(crate) line: usize,
    /// 1-based.
    pub(crate) column: usize,
}

impl fmt::Display for Origin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}:{}", self.file.display(), self.line, self.column)
    }
}

/// One process to run.
#[derive(Clone, Debug)]
pub(crate) struct ProcessSpec {
    /// Unique name.
    pub(crate) name: String,
    /// Program and arguments.
    pub(crate) argv: Vec<String>,
    /// Set in its environment (over `horus launch`'s own).
    pub(crate) env: Vec<(String, String)>,
    /// `HORUS_NAMESPACE` for it (`None`: inherited from `horus launch`).
    pub(crate) namespace: Option<String>,
    /// Working directory (`None`: that of `horus launch`).
    pub(crate) cwd: Option<PathBuf>,
    /// Processes that must have started first, each with where it is named.
    pub(crate) after: Vec<(String, Origin)>,
    /// Topics that must have a live publisher first.
    pub(crate) after_topic: Vec<String>,
    /// How long to wait for them.
    pub(crate) after_topic_timeout: Duration,
    /// Restart policy.
    pub(crate) restart: Policy,
    /// Time between SIGTERM and SIGKILL at shutdown.
    pub(crate) stop_grace: Duration,
    /// The launch shuts down when this process ends for good.
    pub(crate) required: bool,
    /// Where its entry is.
    pub(crate) origin: Origin,
    /// Where its name is.
    pub(crate) name_origin: Origin,
}

impl ProcessSpec {
    /// The namespace its topics live in (its own, else `horus launch`'s).
    pub(crate) fn effective_namespace(&self) -> String {
        self.namespace.clone().unwrap_or_else(horus::namespace)
    }
}

/// A loaded launch file.
#[derive(Clone, Debug)]
pub(crate) struct Plan {
    /// The top-level file.
    pub(crate) file: PathBuf,
    /// Every process, in declaration order (includes first, then the file's own).
    pub(crate) processes: Vec<ProcessSpec>,
}

/// Why a launch file was rejected.
#[derive(Debug)]
pub(crate) enum LoadError {
    /// A problem at a position in a file.
    At { origin: Origin, message: String },
    /// A problem with no position (the file cannot be read, a command-line argument).
    Plain(String),
}

impl fmt::Display for LoadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LoadError::At { origin, message } => write!(f, "{origin}: {message}"),
            LoadError::Plain(message) => f.write_str(message),
        }
    }
}

impl std::error::Error for LoadError {}
