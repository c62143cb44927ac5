//! The scheduler statistics table (`horus_sched::read_stats`) on arbitrary
//! file bytes.
//!
//! The bytes are the whole file (an anonymous memfd opened through
//! `/proc/self/fd`, so nothing is left behind). `read_stats` must return the
//! figures or a typed `ReadStatsError`, without panicking, reading out of the
//! mapping or hanging (a record whose sequence stays odd is retried a
//! bounded number of times).
//!
//! Known finding F4 (docs/fuzzing.md): those retries take from milliseconds
//! to seconds depending on the machine's load, so such inputs are skipped
//! unless `HORUS_FUZZ_NO_SKIP` is set (on a loaded machine they would be
//! reported as hangs at random).
#![no_main]

use horus_fuzz::file_input::with_file;
use horus_sched::{read_stats, ReadStatsError};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    with_file(data, |path| {
        match read_stats(path) {
            Ok(stats) => {
                assert!(data.len() >= 256 + 384 * stats.nodes.len());
                let _ = format!("{stats:?}");
            }
            Err(ReadStatsError::Io { source, .. }) => {
                // Only an empty file cannot be mapped.
                panic!(
                    "I/O error on a readable file of {} bytes: {source}",
                    data.len()
                );
            }
            Err(e) => {
                let _ = e.to_string();
            }
        }
    });
});
