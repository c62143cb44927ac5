//! `horus launch`: a system of processes from a YAML file (format: `docs/launch.md`).
//!
//! - `model`: the file as written (serde, unknown keys refused);
//! - `locate`, `subst`, `load`, `process`, `validate`: from text to a checked [`spec::Plan`], every
//!   error with its file, line and column, before anything starts;
//! - `child`, `output`, `topic_wait`, `restart`, `signals`, `supervisor`: running it;
//! - `summary`: how each process ended and the exit status.

mod child;
mod load;
mod locate;
mod model;
mod output;
mod process;
mod restart;
pub(crate) mod signals;
mod spec;
mod subst;
mod summary;
mod supervisor;
mod topic_wait;
mod validate;

pub(crate) use load::load;
pub(crate) use spec::{LoadError, Plan};
pub(crate) use supervisor::run;
