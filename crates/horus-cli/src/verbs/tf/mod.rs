//! `horus tf`: the transforms broadcast on `tf` / `tf_static` — the frame tree (`frames`)
//! and one transform followed live (`echo`). The logic lives in `horus-tf`; this only
//! wires arguments and prints.

mod dot;
mod echo;
mod frames;

use std::process::ExitCode;

use clap::{Args, Subcommand};

pub(crate) use horus_monitor::text::stamp_text;

use crate::output::Output;

/// Transforms: frames, echo.
#[derive(Debug, Args)]
pub(crate) struct TfCmd {
    #[command(subcommand)]
    verb: TfVerb,
}

#[derive(Debug, Subcommand)]
enum TfVerb {
    /// The frame tree: each frame's parent, rate, last stamp and publisher (`--dot`: Graphviz).
    Frames(frames::Frames),
    /// One transform followed live: TARGET <- SOURCE, its rate and age.
    Echo(echo::Echo),
}

pub(crate) fn run(cmd: TfCmd, out: &Output) -> anyhow::Result<ExitCode> {
    match cmd.verb {
        TfVerb::Frames(a) => frames::run(a, out),
        TfVerb::Echo(a) => echo::run(a, out),
    }
}
