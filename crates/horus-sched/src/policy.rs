//! What the scheduler does when a node is late, fails, or goes silent.

use std::time::Duration;

/// What happens when a tick misses its deadline or overruns its budget.
///
/// A *deadline miss* is a tick that ends later than `release + deadline`
/// (the deadline defaults to the period), or a release never served because
/// the node was more than a period late — whatever the policy, a late node
/// never bursts to catch up: the releases it can no longer make are dropped
/// and counted. A *budget overrun* is a tick whose own execution time exceeds
/// the budget (WCET). All are counted in the statistics whatever the policy.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum MissPolicy {
    /// Report it (rate-limited to one event per node per second) and carry on.
    #[default]
    Warn,
    /// Report it and skip the node's next release to shed load, then resume on
    /// the original grid.
    Skip,
    /// Report it and call the node's
    /// [`enter_safe_state`](crate::Node::enter_safe_state); the node keeps
    /// ticking (it knows it is in a safe state).
    SafeState,
    /// Report it and trigger an emergency stop of the whole scheduler.
    Stop,
}

/// What happens when `tick` returns an error or panics.
///
/// A panic is always caught: a failing node never takes the scheduler down
/// unless its policy says so.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FailurePolicy {
    /// Trigger an emergency stop of the whole scheduler.
    Fatal,
    /// Shut the node down and `init` it again after `backoff` (the node does
    /// not tick meanwhile). After `max` restarts the next failure is fatal.
    Restart {
        /// Restarts allowed before a failure becomes fatal.
        max: u32,
        /// Pause between the failure and the re-`init`.
        backoff: Duration,
    },
    /// Circuit breaker: after `max` consecutive failures the node is suspended
    /// for `cooldown`, then ticks again with the count reset. A successful
    /// tick resets the count. Never stops the scheduler.
    Skip {
        /// Consecutive failures that open the breaker (at least 1).
        max: u32,
        /// How long the node is suspended.
        cooldown: Duration,
    },
    /// Report the failure and keep ticking.
    Ignore,
}

impl Default for FailurePolicy {
    /// [`FailurePolicy::Fatal`]: an unexpected failure stops the robot unless
    /// the application chose otherwise.
    fn default() -> Self {
        FailurePolicy::Fatal
    }
}

/// What happens when a node's watchdog expires (it hangs in `tick`, or the
/// thread running it stops processing its releases).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum WatchdogAction {
    /// Report it (once per expiry) and carry on.
    Warn,
    /// Trigger an emergency stop of the whole scheduler.
    #[default]
    EmergencyStop,
}
