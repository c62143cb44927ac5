//! `horus launch` files on arbitrary text: parsed, substituted and checked into a plan, and
//! nothing run.
//!
//! The launch code lives in the `horus` binary crate, which a fuzz target cannot depend on,
//! so its loading modules (`crates/horus-cli/src/launch/`: load, locate, model, process,
//! restart, spec, subst, validate) are compiled here as they are (`#[path]`); what runs
//! processes is not. The bytes are the top-level file (an anonymous memfd opened through
//! `/proc/self/fd`, so nothing is left behind; an include names other files, which mostly
//! do not exist). Loading must give a plan or a typed `LoadError` in bounded time and
//! memory: the limits of `load.rs` (include depth, files loaded, processes, substituted
//! bytes) and `horus_params::yaml_bound` (file size, YAML nodes with aliases replayed).
#![no_main]
#![allow(dead_code, unreachable_pub, clippy::all)]

use std::collections::BTreeMap;

use horus_fuzz::file_input::with_file;
use libfuzzer_sys::fuzz_target;

#[path = "../../../horus-cli/src/launch/load.rs"]
mod load;
#[path = "../../../horus-cli/src/launch/locate.rs"]
mod locate;
#[path = "../../../horus-cli/src/launch/model.rs"]
mod model;
#[path = "../../../horus-cli/src/launch/process.rs"]
mod process;
#[path = "../../../horus-cli/src/launch/restart.rs"]
mod restart;
#[path = "../../../horus-cli/src/launch/spec.rs"]
mod spec;
#[path = "../../../horus-cli/src/launch/subst.rs"]
mod subst;
#[path = "../../../horus-cli/src/launch/validate.rs"]
mod validate;

fuzz_target!(|data: &[u8]| {
    with_file(data, |path| {
        match load::load(path, &BTreeMap::new(), None) {
            Ok(plan) => {
                assert!(plan.processes.len() <= load::MAX_PROCESSES);
                let _ = format!("{plan:?}");
            }
            Err(e) => {
                let _ = e.to_string();
            }
        }
    });
});
