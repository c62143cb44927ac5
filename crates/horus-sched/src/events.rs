//! Things worth telling the operator: misses, failures, restarts, watchdog
//! expiries, real-time fallbacks, emergency stops.
//!
//! Events go to one sink per scheduler ([`Scheduler::on_event`](crate::Scheduler::on_event));
//! the default prints them to stderr. Deadline-miss events are rate-limited to
//! one per node per second (the rest are counted in `suppressed` and, like
//! every miss, in the statistics).

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use crate::estop::EmergencyStopEvent;
use crate::policy::{MissPolicy, WatchdogAction};

/// Something the scheduler noticed.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub enum SchedulerEvent {
    /// A tick ended after its deadline or overran its budget.
    DeadlineMiss {
        /// The node.
        node: Arc<str>,
        /// How far past the deadline the tick ended (zero for a pure budget overrun).
        late_by: Duration,
        /// The tick's execution time.
        exec: Duration,
        /// Whether the execution time exceeded the budget.
        budget_overrun: bool,
        /// Releases never served because the node was more than a period
        /// late (0 when a tick ended late).
        releases_dropped: u64,
        /// Misses not reported since the previous event of this node.
        suppressed: u64,
        /// The policy being applied.
        policy: MissPolicy,
    },
    /// `tick` returned an error or panicked.
    TickFailed {
        /// The node.
        node: Arc<str>,
        /// The error or panic message.
        error: String,
    },
    /// The node will be shut down and re-initialised after `after`.
    NodeRestarting {
        /// The node.
        node: Arc<str>,
        /// Which restart this is (1-based).
        attempt: u32,
        /// The back-off before re-`init`.
        after: Duration,
    },
    /// The node failed `failures` times in a row and is suspended.
    NodeSuspended {
        /// The node.
        node: Arc<str>,
        /// Consecutive failures.
        failures: u32,
        /// For how long.
        cooldown: Duration,
    },
    /// The node's watchdog expired.
    WatchdogExpired {
        /// The node.
        node: Arc<str>,
        /// Time since its last sign of progress.
        silent_for: Duration,
        /// Whether it is stuck inside `tick` (rather than not being run).
        in_tick: bool,
        /// What the scheduler does about it.
        action: WatchdogAction,
    },
    /// A real-time node could not get what it asked for (SCHED_FIFO, memory
    /// locking or CPU pinning) and runs with what it got.
    RtFallback {
        /// The node.
        node: Arc<str>,
        /// What was refused and why.
        reason: String,
    },
    /// An emergency stop was triggered.
    EmergencyStop(EmergencyStopEvent),
    /// `init` during a restart, `shutdown`, or `enter_safe_state` failed.
    LifecycleFailed {
        /// The node.
        node: Arc<str>,
        /// Which call.
        call: &'static str,
        /// The error or panic message.
        error: String,
    },
    /// The node was still stuck in `tick` when the shutdown grace period ran
    /// out, so its `shutdown` could not run; its thread is left behind.
    NodeHung {
        /// The node.
        node: Arc<str>,
    },
}

impl fmt::Display for SchedulerEvent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SchedulerEvent::DeadlineMiss {
                node,
                late_by,
                exec,
                budget_overrun,
                releases_dropped,
                suppressed,
                policy,
            } => {
                if *releases_dropped > 0 {
                    write!(
                        f,
                        "node {node} missed {releases_dropped} release(s): \
                         more than a period late, {late_by:?} past the first deadline \
                         (policy {policy:?})"
                    )?;
                } else {
                    let what = if *budget_overrun {
                        "overran its budget"
                    } else {
                        "missed its deadline"
                    };
                    write!(
                        f,
                        "node {node} {what}: ended {late_by:?} late, ran {exec:?} (policy {policy:?})"
                    )?;
                }
                if *suppressed > 0 {
                    write!(f, "; {suppressed} more misses since the last report")?;
                }
                Ok(())
            }
            SchedulerEvent::TickFailed { node, error } => {
                write!(f, "node {node} tick failed: {error}")
            }
            SchedulerEvent::NodeRestarting {
                node,
                attempt,
                after,
            } => write!(f, "node {node}: restart #{attempt} in {after:?}"),
            SchedulerEvent::NodeSuspended {
                node,
                failures,
                cooldown,
            } => write!(
                f,
                "node {node}: {failures} consecutive failures, suspended for {cooldown:?}"
            ),
            SchedulerEvent::WatchdogExpired {
                node,
                silent_for,
                in_tick,
                action,
            } => {
                let where_ = if *in_tick {
                    "stuck in tick"
                } else {
                    "not being run"
                };
                write!(
                    f,
                    "watchdog: node {node} {where_} for {silent_for:?} (action {action:?})"
                )
            }
            SchedulerEvent::RtFallback { node, reason } => {
                write!(f, "node {node}: real-time request not granted: {reason}")
            }
            SchedulerEvent::EmergencyStop(e) => write!(f, "{e}"),
            SchedulerEvent::LifecycleFailed { node, call, error } => {
                write!(f, "node {node}: {call} failed: {error}")
            }
            SchedulerEvent::NodeHung { node } => write!(
                f,
                "node {node} is still stuck in tick after the grace period; its shutdown did not run"
            ),
        }
    }
}

/// Receives [`SchedulerEvent`]s. Called on the thread that noticed the event
/// (possibly a real-time thread): keep it short and non-blocking.
pub type EventSink = Arc<dyn Fn(&SchedulerEvent) + Send + Sync>;

/// The default sink: one line per event on stderr, prefixed with the
/// scheduler's name.
pub(crate) fn stderr_sink(scheduler: &str) -> EventSink {
    let prefix = format!("horus-sched[{scheduler}]");
    Arc::new(move |e: &SchedulerEvent| eprintln!("{prefix}: {e}"))
}
