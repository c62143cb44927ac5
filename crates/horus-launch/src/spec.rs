//! The system to run, as the supervisor needs it: every process of the launch file and of
//! its includes, with substitutions done, paths resolved and defaults applied.

use std::fmt;
use std::path::PathBuf;
use std::time::Duration;

use crate::restart::Policy;

/// A position in a launch file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Origin {
    /// The file, as named by the command line or its includer.
    pub file: PathBuf,
    /// 1-based.
    pub line: usize,
    /// 1-based.
    pub column: usize,
}

impl fmt::Display for Origin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}:{}", self.file.display(), self.line, self.column)
    }
}

/// One process to run.
#[derive(Clone, Debug)]
pub struct ProcessSpec {
    /// Unique name.
    pub name: String,
    /// Program and arguments.
    pub argv: Vec<String>,
    /// Set in its environment (over `horus launch`'s own).
    pub env: Vec<(String, String)>,
    /// `HORUS_NAMESPACE` for it (`None`: inherited from `horus launch`).
    pub namespace: Option<String>,
    /// Working directory (`None`: that of `horus launch`).
    pub cwd: Option<PathBuf>,
    /// Processes that must have started first, each with where it is named.
    pub after: Vec<(String, Origin)>,
    /// Topics that must have a live publisher first.
    pub after_topic: Vec<String>,
    /// How long to wait for them.
    pub after_topic_timeout: Duration,
    /// Restart policy.
    pub restart: Policy,
    /// Time between SIGTERM and SIGKILL at shutdown.
    pub stop_grace: Duration,
    /// The launch shuts down when this process ends for good.
    pub required: bool,
    /// Where its entry is.
    pub origin: Origin,
    /// Where its name is.
    pub name_origin: Origin,
}

impl ProcessSpec {
    /// The namespace its topics live in (its own, else `horus launch`'s).
    pub fn effective_namespace(&self) -> String {
        self.namespace.clone().unwrap_or_else(horus::namespace)
    }
}

/// A loaded launch file.
#[derive(Clone, Debug)]
pub struct Plan {
    /// The top-level file.
    pub file: PathBuf,
    /// Every process, in declaration order (includes first, then the file's own).
    pub processes: Vec<ProcessSpec>,
}

/// Why a launch file was rejected by [`load`](crate::load) (nothing is started then).
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    /// A problem at a position in a file.
    #[error("{origin}: {message}")]
    At {
        /// Where in which file.
        origin: Origin,
        /// What is wrong there.
        message: String,
    },
    /// A problem with no position (the file cannot be read, a command-line argument).
    #[error("{0}")]
    Plain(String),
}
