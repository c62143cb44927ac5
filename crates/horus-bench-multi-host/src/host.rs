//! The host child process: enters its network namespace, pins itself if asked,
//! opens its side of the system, then runs one cell per command line from the
//! parent until [`Cmd::Quit`]. A failed cell ends the process with its error (the
//! parent then starts a fresh pair of hosts for the next cell).

use std::io::BufRead;

use anyhow::{bail, Context};

use super::{Cmd, HostArgs, Reply};
use horus_bench_core::affinity::pin_current_thread;
use horus_bench_core::child::{self, ChildArgs};

/// Entry point of [`super::HOST_ROLE`]: one JSON argument, [`HostArgs`].
pub fn host_child(mut args: ChildArgs) -> anyhow::Result<()> {
    let a: HostArgs = serde_json::from_str(&args.next::<String>("host json")?)?;
    // First, while this is the only thread: every thread started later (the
    // system's runtime included) inherits the namespace and the CPU.
    horus_netns::enter_current_thread(&a.netns)?;
    if let Some(cpu) = a.cpu {
        pin_current_thread(cpu).with_context(|| format!("pinning host to CPU {cpu}"))?;
    }
    let mut side = crate::system(a.system).open(&a)?;
    child::signal_ready()?;
    for line in std::io::stdin().lock().lines() {
        let line = line.context("reading the parent's command")?;
        let cmd: Cmd = serde_json::from_str(&line).with_context(|| format!("command {line:?}"))?;
        let reply = match cmd {
            Cmd::Publish(c) => Reply::Published(side.publish(&c)?),
            Cmd::Subscribe(c) => Reply::Received(side.subscribe(&c)?),
            Cmd::Ping(e) => Reply::RoundTrips(side.ping(&e)?),
            Cmd::Echo(e) => Reply::Answered {
                count: side.echo(&e)?,
            },
            Cmd::Flood(f) => Reply::Flooded {
                start_ns: side.flood(&f)?,
            },
            Cmd::Sink(f) => Reply::Sunk(side.sink(&f)?),
            Cmd::Serve(e) => Reply::Answered {
                count: side.serve(&e)?,
            },
            Cmd::Call(e) => Reply::RoundTrips(side.call(&e)?),
            Cmd::Quit => {
                side.close()?;
                return child::send_result(&Reply::Bye);
            }
        };
        child::send_result(&reply)?;
    }
    bail!("the parent closed stdin without sending quit")
}
