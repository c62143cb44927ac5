//! The verbs of `horus`, one module each.

use crate::output::Output;
use clap::Subcommand;
use std::process::ExitCode;

/// Every verb `horus` knows.
#[derive(Debug, Subcommand)]
pub(crate) enum Verb {}

/// Runs one verb.
pub(crate) fn run(verb: Verb, out: &Output) -> anyhow::Result<ExitCode> {
    let _ = out;
    match verb {}
}
