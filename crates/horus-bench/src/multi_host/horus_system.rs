//! horus between the two hosts: a horus publisher on A → `horus_zenoh::Bridge` on
//! A → Zenoh → `horus_zenoh::Bridge` on B → a horus subscriber on B (services: a
//! horus client on B, the bridges, a horus server on A).
//!
//! ==================== STUB: NOT YET AVAILABLE ====================
//! Written before `horus_zenoh::Bridge::start(BridgeConfig)` was committed:
//! [`HorusSystem::available`] fails and every run records one error row per
//! round and pinning ("not yet available"). To fill it in:
//! 1. add `horus-zenoh` to horus-bench's dependencies;
//! 2. in [`HorusSystem::open`] (run inside the host's namespace, already pinned):
//!    start the host's bridge in a child process of this one (it inherits the
//!    namespace; A's bridge listens on `tcp/<addr_a>:<port>`, B's connects to it,
//!    multicast scouting off as in [`super::zenoh_system`]), open a horus
//!    namespace of its own (unique `HORUS_NAMESPACE`) shared with that bridge;
//! 3. implement [`super::HostSide`] with horus publishers/subscribers (`Block`),
//!    carrying [`super::wire`] messages, exactly as the Zenoh side does, so the
//!    rows compare like for like; make `available` return `Ok(())`.
//!
//! ==================================================================

use anyhow::bail;

use super::{HostArgs, HostSide, System, SystemName};

/// horus through its Zenoh bridge (stub).
#[derive(Debug)]
pub struct HorusSystem;

const NOT_YET: &str = "not yet available: this benchmark's horus system (horus endpoints \
    through horus_zenoh::Bridge on each host) is a stub; fill in \
    crates/horus-bench/src/multi_host/horus_system.rs";

impl System for HorusSystem {
    fn name(&self) -> SystemName {
        SystemName::Horus
    }

    fn available(&self) -> anyhow::Result<()> {
        bail!(NOT_YET)
    }

    fn settings(&self) -> String {
        format!("horus publisher → horus_zenoh::Bridge (A) → Zenoh → Bridge (B) → horus subscriber: {NOT_YET}")
    }

    fn open(&self, _args: &HostArgs) -> anyhow::Result<Box<dyn HostSide>> {
        bail!(NOT_YET)
    }
}
