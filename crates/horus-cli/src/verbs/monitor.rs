//! `horus monitor`: a live terminal view of every topic and node of a namespace.

use std::process::ExitCode;

use clap::Args;

use crate::output::Output;

/// Live view of topics and nodes.
#[derive(Debug, Args)]
pub(crate) struct Monitor {
    /// Namespace (default: `HORUS_NAMESPACE`, else one per user).
    #[arg(long)]
    namespace: Option<String>,
}

pub(super) fn run(_args: Monitor, _out: &Output) -> anyhow::Result<ExitCode> {
    anyhow::bail!("horus monitor: not implemented yet")
}
