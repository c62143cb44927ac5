//! Per-node watchdogs, checked from the supervisor thread (the one that
//! called `run`), never from the threads that tick nodes — a hung node cannot
//! hide its own hang.
//!
//! Each node publishes two monotonic timestamps (see [`NodeShared`]):
//! `in_tick_since_ns` (non-zero while inside `tick`) and `last_feed_ns` (the
//! last time the scheduler processed one of its releases, ticked or skipped).
//! The watchdog expires when
//! - the node has been inside one `tick` for longer than its timeout (a hang), or
//! - no release has been processed for longer than timeout + period (its
//!   thread stalled — for example behind a hung node on the main thread);
//!   for event-driven nodes the allowance is timeout + the event thread's
//!   maximum wait slice.
//!
//! An expiry is reported once; the watchdog re-arms when the node shows
//! progress again.

use std::sync::atomic::Ordering::Relaxed;
use std::sync::Arc;
use std::time::Duration;

use crate::estop::{Control, EmergencyStopReason};
use crate::events::SchedulerEvent;
use crate::histogram::bump;
use crate::policy::WatchdogAction;
use crate::stats::{NodeShared, NodeState};

/// How long an event thread may block in `Readiness::wait` before it loops
/// (and feeds its watchdog).
pub(crate) const EVENT_WAIT_SLICE: Duration = Duration::from_millis(20);

/// Watchdog state of the nodes, owned by the supervisor.
pub(crate) struct Watchdogs {
    /// (node, timeout, silence allowance, expired-and-not-yet-rearmed)
    armed: Vec<(Arc<NodeShared>, u64, u64, WatchdogAction, bool)>,
}

impl Watchdogs {
    /// Arms the watchdogs of `nodes` at monotonic time `now_ns`.
    pub(crate) fn arm(nodes: &[Arc<NodeShared>], now_ns: u64) -> Watchdogs {
        let armed = nodes
            .iter()
            .filter_map(|n| {
                let (timeout, action) = n.watchdog?;
                let slack = n.period_ns.unwrap_or(EVENT_WAIT_SLICE.as_nanos() as u64);
                n.feed(now_ns);
                Some((n.clone(), timeout, timeout + slack, action, false))
            })
            .collect();
        Watchdogs { armed }
    }

    /// How often the supervisor should check: a quarter of the shortest
    /// timeout, between 1 ms and 10 ms.
    pub(crate) fn resolution(&self) -> Duration {
        let shortest = self.armed.iter().map(|a| a.1).min().unwrap_or(u64::MAX);
        Duration::from_nanos((shortest / 4).clamp(1_000_000, 10_000_000))
    }

    /// Checks every armed watchdog at monotonic time `now_ns`.
    pub(crate) fn check(&mut self, now_ns: u64, control: &Control) {
        for (node, timeout, allowance, action, expired) in &mut self.armed {
            // Nodes that no longer tick on purpose are not watched.
            if matches!(
                node.state(),
                NodeState::Failed | NodeState::ShutDown | NodeState::Created
            ) {
                continue;
            }
            let in_tick = node.in_tick_since_ns.load(Relaxed);
            let (silent, limit) = if in_tick != 0 {
                (now_ns.saturating_sub(in_tick), *timeout)
            } else {
                let fed = node.last_feed_ns.load(Relaxed);
                (now_ns.saturating_sub(fed), *allowance)
            };
            if silent <= limit {
                *expired = false;
                continue;
            }
            if *expired {
                continue;
            }
            *expired = true;
            // Single writer: only the supervisor touches this counter.
            bump(&node.watchdog_expiries, 1);
            let silent_for = Duration::from_nanos(silent);
            control.emit(SchedulerEvent::WatchdogExpired {
                node: node.name.clone(),
                silent_for,
                in_tick: in_tick != 0,
                action: *action,
            });
            if *action == WatchdogAction::EmergencyStop {
                control.emergency_stop(EmergencyStopReason::Watchdog {
                    node: node.name.to_string(),
                    silent_for,
                });
            }
        }
    }
}
