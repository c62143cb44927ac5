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

use std::io::{Seek, Write};
use std::os::fd::FromRawFd;

use horus_sched::{read_stats, ReadStatsError};
use libfuzzer_sys::fuzz_target;

fn memfd() -> std::fs::File {
    // SAFETY: a NUL-terminated name and no flags; the result is checked.
    let fd = unsafe { libc::memfd_create(c"horus-fuzz-stats".as_ptr(), 0) };
    assert!(fd >= 0, "memfd_create: {}", std::io::Error::last_os_error());
    // SAFETY: fd is a fresh descriptor we own.
    unsafe { std::fs::File::from_raw_fd(fd) }
}

fuzz_target!(|data: &[u8]| {
    thread_local! {
        static FILE: std::fs::File = memfd();
    }
    FILE.with(|f| {
        let mut f = f;
        f.set_len(0).expect("truncate");
        f.rewind().expect("rewind");
        f.write_all(data).expect("write");
        let path = format!("/proc/self/fd/{}", std::os::fd::AsRawFd::as_raw_fd(f));
        match read_stats(&path) {
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
