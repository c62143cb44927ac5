//! The bridge as a child process (role [`BRIDGE_ROLE`](super::BRIDGE_ROLE)): `horus_ros2`'s
//! [`Bridge`] on the session's horus namespace, DDS on loopback only, until stdin closes;
//! then one line with its drop counters.

use std::io::Read;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use anyhow::{bail, Context};
use horus_ros2::{Bridge, BridgeConfig, BridgeStatus};

use super::{BridgeDrops, BRIDGE_PREFIX, MAX_SIZE, READY};

/// Sums the drop counters of every topic route.
pub fn drops(status: &BridgeStatus) -> BridgeDrops {
    let mut d = BridgeDrops::default();
    for t in &status.topics {
        d.lost += t.counters.lost;
        d.refused += t.counters.refused;
        d.malformed += t.counters.malformed;
        d.oversize += t.counters.oversize;
        d.messages += t.counters.messages;
    }
    d
}

/// Runs the bridge: `args` = `<namespace>`.
pub fn run(args: &[String]) -> anyhow::Result<()> {
    let [namespace] = args else {
        bail!("bridge: expected the namespace");
    };
    let mut config = BridgeConfig::from_env(namespace)?;
    config.localhost_only = true;
    config.max_message_bytes = 2 * MAX_SIZE;
    let mut bridge = Bridge::start(config).context("starting the bridge")?;
    let stop = Arc::new(AtomicBool::new(false));
    let flag = Arc::clone(&stop);
    std::thread::spawn(move || {
        let _ = std::io::stdin().read_to_end(&mut Vec::new());
        // Relaxed: a flag read after each scan; nothing else is published through it.
        flag.store(true, Ordering::Relaxed);
    });
    println!("{READY}");
    let mut last = BridgeDrops::default();
    bridge.run(|status| {
        last = drops(status);
        !stop.load(Ordering::Relaxed)
    });
    println!("{BRIDGE_PREFIX}{}", serde_json::to_string(&last)?);
    Ok(())
}
