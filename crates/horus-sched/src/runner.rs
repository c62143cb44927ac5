//! One node under the scheduler's control: runs a release (tick, or a
//! deliberate skip), times it, and applies the miss and failure policies.
//! Every execution class (main thread, real-time thread, worker pool, event
//! thread, deterministic stepping) goes through [`NodeRunner::on_release`], so
//! the policies behave the same everywhere.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::clock::monotonic_ns;
use crate::config::ExecClass;
use crate::estop::{Control, EmergencyStopReason};
use crate::events::SchedulerEvent;
use crate::histogram::bump;
use crate::node::{Node, NodeError, TickContext};
use crate::policy::{FailurePolicy, MissPolicy};
use crate::readiness::Readiness;
use crate::stats::{NodeShared, NodeState};

/// Minimum time between two deadline-miss events of one node.
const MISS_REPORT_INTERVAL_NS: u64 = 1_000_000_000;

/// A node plus everything the threads that run it need.
pub(crate) struct NodeSlot {
    pub(crate) runner: Mutex<NodeRunner>,
    pub(crate) shared: Arc<NodeShared>,
    pub(crate) order: i32,
    pub(crate) class: ExecClass,
    pub(crate) core: Option<usize>,
    pub(crate) spin_ns: u64,
    pub(crate) readiness: Option<Box<dyn Readiness>>,
    /// A compute node's tick is queued or running on the pool.
    pub(crate) busy: AtomicBool,
}

impl NodeSlot {
    /// Locks the runner. A poisoned lock only means a panic escaped the
    /// runner's own `catch_unwind` (impossible by construction); the runner
    /// is still consistent, so carry on.
    pub(crate) fn lock(&self) -> std::sync::MutexGuard<'_, NodeRunner> {
        self.runner.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// The node's policy state between ticks.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Mode {
    Active,
    /// Restart pending: re-`init` at the first release after `until_ns`.
    Backoff {
        until_ns: u64,
    },
    /// Circuit breaker open until `until_ns`.
    Suspended {
        until_ns: u64,
    },
    /// Fatal failure: no more ticks.
    Failed,
}

/// Settings the runner needs, resolved from the `NodeConfig`.
pub(crate) struct RunnerConfig {
    pub(crate) period_ns: Option<u64>,
    pub(crate) periodic: bool,
    pub(crate) deadline_ns: Option<u64>,
    pub(crate) budget_ns: Option<u64>,
    pub(crate) miss: MissPolicy,
    pub(crate) failure: FailurePolicy,
}

/// See the module docs.
pub(crate) struct NodeRunner {
    node: Box<dyn Node>,
    shared: Arc<NodeShared>,
    control: Arc<Control>,
    cfg: RunnerConfig,
    simulated: bool,
    mode: Mode,
    initialized: bool,
    ticks: u64,
    consecutive_failures: u32,
    restarts: u32,
    skip_next: bool,
    last_miss_report_ns: Option<u64>,
    suppressed_misses: u64,
}

/// Runs `f`, turning a panic into [`NodeError::Panicked`].
fn guarded<R>(f: impl FnOnce() -> Result<R, NodeError>) -> Result<R, NodeError> {
    catch_unwind(AssertUnwindSafe(f)).unwrap_or_else(|p| Err(NodeError::from_panic(p)))
}

impl NodeRunner {
    pub(crate) fn new(
        node: Box<dyn Node>,
        shared: Arc<NodeShared>,
        control: Arc<Control>,
        cfg: RunnerConfig,
    ) -> NodeRunner {
        let simulated = control.clock.is_simulated();
        NodeRunner {
            node,
            shared,
            control,
            cfg,
            simulated,
            mode: Mode::Active,
            initialized: false,
            ticks: 0,
            consecutive_failures: 0,
            restarts: 0,
            skip_next: false,
            last_miss_report_ns: None,
            suppressed_misses: 0,
        }
    }

    pub(crate) fn is_initialized(&self) -> bool {
        self.initialized
    }

    /// Calls the node's `init` (first start).
    pub(crate) fn init(&mut self) -> Result<(), NodeError> {
        guarded(|| self.node.init())?;
        self.initialized = true;
        self.shared.set_state(NodeState::Running);
        Ok(())
    }

    /// Serves the release at `release_ns` (clock time): ticks the node, or
    /// skips the release if the node is restarting, suspended, failed, or
    /// must skip by policy. `dropped` releases before this one were not
    /// served because the node was more than a period late: they count as
    /// deadline misses (and skipped), and the miss policy applies.
    pub(crate) fn on_release(&mut self, release_ns: u64, mut dropped: u64) {
        let now = self.control.clock.now_ns();
        if !self.simulated {
            self.shared.feed(now);
        }
        match self.mode {
            Mode::Failed => return,
            Mode::Backoff { until_ns } | Mode::Suspended { until_ns } if now < until_ns => {
                // Deliberately not running: skipped, not missed.
                return self.shared.add_skipped(1 + dropped);
            }
            Mode::Backoff { .. } => {
                self.shared.add_skipped(std::mem::take(&mut dropped));
                if !self.restart(now) {
                    return;
                }
            }
            Mode::Suspended { .. } => {
                self.shared.add_skipped(std::mem::take(&mut dropped));
                self.mode = Mode::Active;
                self.shared.set_state(NodeState::Running);
            }
            Mode::Active => {}
        }
        if dropped > 0 {
            self.missed_releases(release_ns, dropped, now);
        }
        if self.skip_next {
            self.skip_next = false;
            return self.shared.add_skipped(1);
        }
        if self.control.is_stopped() {
            return;
        }
        self.tick(release_ns);
    }

    /// `dropped` releases before `release_ns` were never served.
    fn missed_releases(&mut self, release_ns: u64, dropped: u64, now: u64) {
        self.shared.add_skipped(dropped);
        self.shared.add_deadline_misses(dropped);
        let period = self.cfg.period_ns.unwrap_or(0);
        let deadline = self.cfg.deadline_ns.unwrap_or(period);
        let first = release_ns.saturating_sub(dropped * period);
        let late_by = now.saturating_sub(first + deadline);
        self.report_miss(now, late_by, 0, false, dropped);
        self.apply_miss_policy();
    }

    /// One timed, panic-safe tick.
    fn tick(&mut self, release_ns: u64) {
        let clock = &self.control.clock;
        // Two clock reads per tick. On the real clock, the monotonic reading
        // is also the scheduler time; the simulated clock does not move
        // during a tick, but the wall-clock execution time is still recorded.
        let t0 = monotonic_ns();
        let start = if self.simulated { clock.now_ns() } else { t0 };
        if !self.simulated {
            self.shared.in_tick_since_ns.store(t0, Relaxed);
        }
        let ctx = TickContext {
            name: &self.shared.name,
            clock,
            origin_ns: self.control.origin_ns.load(Relaxed),
            release_ns,
            tick: self.ticks,
            period_ns: self.cfg.period_ns,
            control: &self.control,
        };
        let node = &mut self.node;
        let result = guarded(|| node.tick(&ctx));
        let t1 = monotonic_ns();
        let end = if self.simulated { clock.now_ns() } else { t1 };
        if !self.simulated {
            self.shared.in_tick_since_ns.store(0, Relaxed);
            self.shared.feed(t1);
        }
        self.ticks += 1;
        let exec = t1.saturating_sub(t0);
        let jitter = self.cfg.periodic.then(|| start.saturating_sub(release_ns));
        self.shared.record_tick(start, exec, jitter);
        if !self.simulated {
            // Deterministic mode never misses: ticks take no simulated time,
            // and acting on wall-clock time would break replay.
            self.check_timing(release_ns, end, exec);
        }
        match result {
            Ok(()) => self.consecutive_failures = 0,
            Err(e) => self.fail(e, end),
        }
    }

    /// Budget and deadline checks, then the miss policy.
    fn check_timing(&mut self, release_ns: u64, end_ns: u64, exec_ns: u64) {
        let overrun = self.cfg.budget_ns.is_some_and(|b| exec_ns > b);
        let deadline = self
            .cfg
            .deadline_ns
            .or(self.cfg.period_ns.filter(|_| self.cfg.periodic));
        let response = end_ns.saturating_sub(release_ns);
        let late = deadline.is_some_and(|d| response > d);
        if !(overrun || late) {
            return;
        }
        if overrun {
            bump(&self.shared.budget_overruns, 1);
        }
        if late {
            self.shared.add_deadline_misses(1);
        }
        let late_by = response.saturating_sub(deadline.unwrap_or(u64::MAX));
        self.report_miss(end_ns, late_by, exec_ns, overrun, 0);
        self.apply_miss_policy();
    }

    fn apply_miss_policy(&mut self) {
        match self.cfg.miss {
            MissPolicy::Warn => {}
            MissPolicy::Skip => self.skip_next = true,
            MissPolicy::SafeState => self.safe_state(),
            MissPolicy::Stop => self
                .control
                .emergency_stop(EmergencyStopReason::DeadlineMiss {
                    node: self.shared.name.to_string(),
                }),
        }
    }

    /// Emits a deadline-miss event, at most one per node per second.
    fn report_miss(&mut self, now: u64, late_by: u64, exec: u64, overrun: bool, dropped: u64) {
        if let Some(last) = self.last_miss_report_ns {
            if now.saturating_sub(last) < MISS_REPORT_INTERVAL_NS {
                self.suppressed_misses += 1;
                return;
            }
        }
        self.last_miss_report_ns = Some(now);
        let suppressed = std::mem::take(&mut self.suppressed_misses);
        self.control.emit(SchedulerEvent::DeadlineMiss {
            node: self.shared.name.clone(),
            late_by: Duration::from_nanos(late_by),
            exec: Duration::from_nanos(exec),
            budget_overrun: overrun,
            releases_dropped: dropped,
            suppressed,
            policy: self.cfg.miss,
        });
    }

    /// A failed tick (or re-`init`): tell the node, report, apply the policy.
    fn fail(&mut self, error: NodeError, now: u64) {
        bump(&self.shared.failures, 1);
        self.consecutive_failures += 1;
        let message = error.to_string();
        let node = &mut self.node;
        if let Err(e) = guarded(|| {
            node.on_error(&error);
            Ok(())
        }) {
            self.lifecycle_failed("on_error", &e);
        }
        self.control.emit(SchedulerEvent::TickFailed {
            node: self.shared.name.clone(),
            error: message.clone(),
        });
        match self.cfg.failure {
            FailurePolicy::Ignore => {}
            FailurePolicy::Fatal => self.fatal(message),
            FailurePolicy::Restart { max, .. } if self.restarts >= max => {
                self.fatal(format!("{message} (after {max} restarts)"))
            }
            FailurePolicy::Restart { backoff, .. } => {
                self.mode = Mode::Backoff {
                    until_ns: now + backoff.as_nanos() as u64,
                };
                self.shared.set_state(NodeState::Restarting);
                self.control.emit(SchedulerEvent::NodeRestarting {
                    node: self.shared.name.clone(),
                    attempt: self.restarts + 1,
                    after: backoff,
                });
            }
            FailurePolicy::Skip { max, cooldown } => {
                if self.consecutive_failures >= max {
                    self.mode = Mode::Suspended {
                        until_ns: now + cooldown.as_nanos() as u64,
                    };
                    self.shared.set_state(NodeState::Suspended);
                    self.control.emit(SchedulerEvent::NodeSuspended {
                        node: self.shared.name.clone(),
                        failures: self.consecutive_failures,
                        cooldown,
                    });
                    self.consecutive_failures = 0;
                }
            }
        }
    }

    fn fatal(&mut self, error: String) {
        self.mode = Mode::Failed;
        self.shared.set_state(NodeState::Failed);
        self.control
            .emergency_stop(EmergencyStopReason::NodeFailed {
                node: self.shared.name.to_string(),
                error,
            });
    }

    /// `shutdown` then `init`; on an `init` failure the failure policy
    /// applies again. Returns whether the node is active again.
    fn restart(&mut self, now: u64) -> bool {
        self.restarts += 1;
        bump(&self.shared.restarts, 1);
        let node = &mut self.node;
        if let Err(e) = guarded(|| node.shutdown()) {
            self.lifecycle_failed("shutdown", &e);
        }
        let node = &mut self.node;
        match guarded(|| node.init()) {
            Ok(()) => {
                self.mode = Mode::Active;
                self.shared.set_state(NodeState::Running);
                true
            }
            Err(e) => {
                self.fail(e, now);
                false
            }
        }
    }

    /// Calls `enter_safe_state`, reporting a panic.
    pub(crate) fn safe_state(&mut self) {
        let node = &mut self.node;
        if let Err(e) = guarded(|| {
            node.enter_safe_state();
            Ok(())
        }) {
            self.lifecycle_failed("enter_safe_state", &e);
        }
    }

    /// Final `shutdown`. Nodes that were never initialised are left alone.
    pub(crate) fn finish(&mut self) {
        if !self.initialized {
            return;
        }
        let node = &mut self.node;
        if let Err(e) = guarded(|| node.shutdown()) {
            self.lifecycle_failed("shutdown", &e);
        }
        self.initialized = false;
        self.shared.set_state(NodeState::ShutDown);
    }

    fn lifecycle_failed(&self, call: &'static str, error: &NodeError) {
        self.control.emit(SchedulerEvent::LifecycleFailed {
            node: self.shared.name.clone(),
            call,
            error: error.to_string(),
        });
    }
}
