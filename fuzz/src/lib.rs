//! Shared pieces of the horus fuzz targets: the input decoders (also used by
//! `examples/make_seeds.rs` to write valid seeds) and per-process fixtures.
//!
//! Every target plays a hostile or corrupt peer process: the fuzzer's bytes
//! go where such a peer could write (a segment file, ring slots, descriptor
//! words, a tensor descriptor, a statistics file) and the real reading code
//! runs on them. It must return a value or a typed error and stay in bounds;
//! a panic, a crash or a hang (libFuzzer `-timeout`) is a finding.

pub mod file_input;
pub mod input;
pub mod ring_input;

#[cfg(fuzzing)]
pub mod fixture;

/// A name for this process's scratch objects in `/dev/shm`.
pub fn scratch_name(tag: &str) -> String {
    format!("/horus.fuzz-{}.{tag}", std::process::id())
}
