//! Test fixture (not a user tool): a scheduler process with nodes of every
//! execution class (two real-time ones), for the process tests in
//! `tests/behaviour/sigterm.rs`. It locks memory when permitted (default).
//!
//! Usage: `sched_fixture MARKER_DIR` with `HORUS_NAMESPACE` set. Prints the
//! statistics file path, runs until a signal, and writes
//! `MARKER_DIR/<node>.shutdown` from each node's `shutdown`, then prints the
//! stop reason.

use std::path::PathBuf;
use std::time::Duration;

use horus_sched::prelude::*;
use horus_sched::Trigger;

fn marker_node(dir: PathBuf, name: &'static str) -> impl Node + 'static {
    node_fn(name, |_ctx| Ok(())).on_shutdown(move || {
        std::fs::write(dir.join(format!("{name}.shutdown")), b"ok")?;
        Ok(())
    })
}

fn main() -> anyhow::Result<()> {
    let dir = PathBuf::from(
        std::env::args()
            .nth(1)
            .ok_or_else(|| anyhow::anyhow!("usage: sched_fixture MARKER_DIR"))?,
    );
    let mut sched = Scheduler::new()
        .name("fixture")
        .stats_interval(Duration::from_millis(20));
    sched.add(
        marker_node(dir.clone(), "main"),
        NodeConfig::new().rate(200.hz()),
    )?;
    sched.add(
        marker_node(dir.clone(), "compute"),
        NodeConfig::new().rate(50.hz()).compute(),
    )?;
    sched.add(
        marker_node(dir.clone(), "realtime"),
        NodeConfig::new().rate(100.hz()).realtime(10),
    )?;
    sched.add(
        marker_node(dir.clone(), "realtime2"),
        NodeConfig::new().rate(100.hz()).realtime(11),
    )?;
    sched.add(
        marker_node(dir, "event"),
        NodeConfig::new().event(Trigger::new()),
    )?;
    println!("{}", sched.stats_path().display());
    let reason = sched.run()?;
    println!("stopped: {reason:?}");
    Ok(())
}
