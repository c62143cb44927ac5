//! horus launch files: a system of processes from a YAML file (format: `docs/launch.md`),
//! loaded and checked completely before anything starts, then started, supervised and
//! stopped in order. The `horus launch` verb parses its arguments and calls [`load`] and
//! [`run`]; the other long-running verbs share [`signals`].
//!
//! - `model`: the file as written (serde, unknown keys refused);
//! - `locate`, `subst`, `load`, `process`, `validate`: from text to a checked [`Plan`], every
//!   error with its file, line and column, before anything starts;
//! - `listing`: what `--check` shows of a plan;
//! - `child`, `output`, `topic_wait`, `restart`, `signals`, `supervisor`: running it;
//! - `summary`: how each process ended and the exit status.
//!
//! # Example
//!
//! Load and check a file without starting anything (`horus launch --check`):
//!
//! ```
//! use std::collections::BTreeMap;
//!
//! let dir = std::env::temp_dir().join(format!("horus-launch-doc-{}", std::process::id()));
//! std::fs::create_dir_all(&dir)?;
//! let file = dir.join("robot.yaml");
//! std::fs::write(
//!     &file,
//!     "args:\n  rate: 10\nprocesses:\n  - name: talker\n    command: [echo, \"$(arg rate)\"]\n",
//! )?;
//! let values = horus_launch::parse_values(&["rate:=20".to_owned()])?;
//! let plan = horus_launch::load(&file, &values, None)?;
//! assert_eq!(plan.processes[0].argv, ["echo", "20"]);
//! assert!(plan.check_text().ends_with("ok, 1 processes"));
//!
//! // A malformed file is refused with its position.
//! std::fs::write(&file, "processes:\n  - name: talker\n    comand: [echo]\n")?;
//! let err = horus_launch::load(&file, &BTreeMap::new(), None).unwrap_err();
//! assert!(matches!(err, horus_launch::LoadError::At { ref origin, .. } if origin.line == 3));
//! std::fs::remove_dir_all(&dir)?;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! Running a plan ([`run`]) blocks until the system has stopped and returns its [`Summary`]:
//! `horus launch`'s end-of-run table ([`Summary::text`]), JSON ([`Summary::json`]) and exit
//! status ([`Summary::exit_code`]).

#![warn(missing_docs)]

mod child;
mod listing;
mod load;
mod locate;
mod model;
mod output;
mod process;
mod restart;
pub mod signals;
mod spec;
mod subst;
mod summary;
mod supervisor;
mod topic_wait;
mod validate;

pub use load::{
    load, parse_values, MAX_FILES_LOADED, MAX_INCLUDE_DEPTH, MAX_PROCESSES, MAX_SUBSTITUTED_TOTAL,
};
pub use restart::{Backoff, Policy};
pub use spec::{LoadError, Origin, Plan, ProcessSpec};
pub use subst::MAX_SUBSTITUTED;
pub use summary::{Ending, ProcessReport, Summary};
pub use supervisor::{run, RunError};
