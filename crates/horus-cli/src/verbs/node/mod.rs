//! `horus node`: the nodes of every scheduler of a namespace, read from the
//! schedulers' statistics tables in `/dev/shm` (`horus.<ns>.sched.<name>`).
//!
//! Read-only: the tables are mapped read-only and only loaded from, so
//! running these verbs changes nothing a scheduler or its nodes observe.

mod info;
mod list;

use std::process::ExitCode;

use clap::{Args, Subcommand};

pub(crate) use horus_monitor::schedulers::{
    class_text, node_json, process_text, read_all, rt_text, scheduler_json, state_text,
};

use crate::output::Output;

/// List nodes or show one, from the schedulers' statistics tables.
#[derive(Debug, Args)]
pub(crate) struct NodeCmd {
    #[command(subcommand)]
    verb: NodeVerb,
}

#[derive(Debug, Subcommand)]
enum NodeVerb {
    /// Every node of every scheduler of the namespace, one line each.
    List(list::List),
    /// Everything known about one node.
    Info(info::Info),
}

pub(crate) fn run(cmd: NodeCmd, out: &Output) -> anyhow::Result<ExitCode> {
    match cmd.verb {
        NodeVerb::List(args) => list::run(args, out),
        NodeVerb::Info(args) => info::run(args, out),
    }
}
