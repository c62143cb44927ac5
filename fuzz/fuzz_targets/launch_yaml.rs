//! `horus launch` files on arbitrary text: parsed, substituted and checked into a plan, and
//! nothing run.
//!
//! Through the loader of `horus launch` (`horus_launch::load`). The bytes are the top-level
//! file (an anonymous memfd opened through `/proc/self/fd`, so nothing is left behind; an
//! include names other files, which mostly do not exist). Loading must give a plan or a typed `LoadError` in bounded time and
//! memory: the limits of `horus_launch` (include depth, files loaded, processes, substituted
//! bytes) and `horus_params::yaml_bound` (file size, YAML nodes with aliases replayed).
#![no_main]

use std::collections::BTreeMap;

use horus_fuzz::file_input::with_file;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    with_file(data, |path| {
        match horus_launch::load(path, &BTreeMap::new(), None) {
            Ok(plan) => {
                assert!(plan.processes.len() <= horus_launch::MAX_PROCESSES);
                let _ = format!("{plan:?}");
            }
            Err(e) => {
                let _ = e.to_string();
            }
        }
    });
});
