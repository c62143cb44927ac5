//! `horus msg`: the ROS 2 interface types horus knows — the standard packages compiled
//! into the binary (no source tree or ROS install needed) and users' packages given with
//! `--package-dir NAME=DIR` — listed, shown as their files are written, and hashed
//! (RIHS01) as ROS 2 hashes them; Rust generated for users' packages (`gen`).

mod catalog;
mod expand;
mod generate;
mod hash;
mod list;
mod show;

use std::process::ExitCode;

use clap::{Args, Subcommand};

pub(crate) use catalog::{Catalog, PackageDirs};

use crate::output::Output;

/// ROS 2 interface types: list, show, hash, gen.
#[derive(Debug, Args)]
pub(crate) struct MsgCmd {
    #[command(subcommand)]
    verb: MsgVerb,
}

#[derive(Debug, Subcommand)]
enum MsgVerb {
    /// Every interface (message, service, action) of the standard and given packages.
    List(list::List),
    /// An interface's definition as its file writes it (like `ros2 interface show`).
    Show(show::Show),
    /// A type's RIHS01 hash, as ROS 2 computes it.
    Hash(hash::Hash),
    /// Rust types (structs, zero-copy views, CDR codecs) for your packages, in one file.
    Gen(generate::Gen),
}

pub(crate) fn run(cmd: MsgCmd, out: &Output) -> anyhow::Result<ExitCode> {
    match cmd.verb {
        MsgVerb::List(a) => list::run(a, out),
        MsgVerb::Show(a) => show::run(a, out),
        MsgVerb::Hash(a) => hash::run(a, out),
        MsgVerb::Gen(a) => generate::run(a, out),
    }
}
