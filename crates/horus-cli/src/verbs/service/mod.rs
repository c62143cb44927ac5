//! `horus service`: the services of a namespace, found by scanning its service tables in
//! `/dev/shm` (`horus.<ns>.sv.<service>`).
//!
//! Read-only: the tables are only loaded from (dead endpoints are reported, not reclaimed),
//! so listing changes nothing a client or server observes.

mod call;
mod list;

use std::process::ExitCode;

use clap::{Args, Subcommand};

use crate::output::Output;

/// List and call the services of a namespace.
#[derive(Debug, Args)]
pub(crate) struct ServiceCmd {
    #[command(subcommand)]
    verb: ServiceVerb,
}

#[derive(Debug, Subcommand)]
enum ServiceVerb {
    /// Every service: request and response types, servers, clients, counters.
    List(list::List),
    /// Call a service with a request given as YAML or JSON; print the response.
    Call(call::Call),
}

pub(crate) fn run(cmd: ServiceCmd, out: &Output) -> anyhow::Result<ExitCode> {
    match cmd.verb {
        ServiceVerb::List(args) => list::run(args, out),
        ServiceVerb::Call(args) => call::run(args, out),
    }
}
