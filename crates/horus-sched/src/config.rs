//! Per-node configuration given to [`Scheduler::add`](crate::Scheduler::add).

use std::time::Duration;

use crate::frequency::Frequency;
use crate::policy::{FailurePolicy, MissPolicy, WatchdogAction};
use crate::readiness::Readiness;

/// Longest node name, in bytes (it must fit the shared-memory stats record).
pub const MAX_NODE_NAME: usize = 63;

/// Where and how a node's ticks run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ExecClass {
    /// On the scheduler's main thread, one after another in `order`. Cheapest;
    /// a slow node delays the others on this thread.
    #[default]
    Main,
    /// On a dedicated thread, with `SCHED_FIFO` at `priority` (1–99) when the
    /// process may; otherwise normal priority, with a one-time warning and the
    /// fallback recorded in the stats.
    RealTime {
        /// The `SCHED_FIFO` priority requested.
        priority: u8,
    },
    /// On the scheduler's worker pool: for heavier work that must not delay
    /// the main thread. A release that comes while the previous tick is still
    /// running is skipped (and counted as skipped and as a deadline miss).
    Compute,
    /// On a dedicated thread, whenever its [`Readiness`] source says so.
    Event,
}

/// How a node is scheduled. Every setter is optional; the defaults are: the
/// node's own name, the scheduler's tick rate, order 0, main thread, no budget,
/// deadline = period, [`MissPolicy::Warn`], [`FailurePolicy::Fatal`], no
/// watchdog, no final spin.
#[derive(Default)]
pub struct NodeConfig {
    pub(crate) name: Option<String>,
    pub(crate) rate: Option<Frequency>,
    pub(crate) order: i32,
    pub(crate) core: Option<usize>,
    pub(crate) budget: Option<Duration>,
    pub(crate) deadline: Option<Duration>,
    pub(crate) miss: MissPolicy,
    pub(crate) failure: FailurePolicy,
    pub(crate) watchdog: Option<(Duration, WatchdogAction)>,
    pub(crate) class: ExecClass,
    pub(crate) readiness: Option<Box<dyn Readiness>>,
    pub(crate) spin: Duration,
}

impl NodeConfig {
    /// The defaults listed on [`NodeConfig`].
    pub fn new() -> NodeConfig {
        NodeConfig::default()
    }

    /// Overrides [`Node::name`](crate::Node::name). Names are unique within a
    /// scheduler, at most [`MAX_NODE_NAME`] bytes.
    pub fn name(mut self, name: impl Into<String>) -> Self {
        self.name = Some(name.into());
        self
    }

    /// Tick rate; releases are at `start + k / rate`. For an event-driven node
    /// this is a ceiling (at most one tick per period).
    pub fn rate(mut self, rate: Frequency) -> Self {
        self.rate = Some(rate);
        self
    }

    /// Among nodes due at the same instant on the same thread, lower `order`
    /// ticks first (then insertion order). Fixes the execution order in
    /// deterministic mode too.
    pub fn order(mut self, order: i32) -> Self {
        self.order = order;
        self
    }

    /// Pins the node's dedicated thread to CPU `core` (real-time and
    /// event-driven nodes only: main and compute nodes share threads).
    pub fn core(mut self, core: usize) -> Self {
        self.core = Some(core);
        self
    }

    /// Worst-case execution time allowed for one tick; longer is an overrun
    /// handled by the miss policy.
    pub fn budget(mut self, budget: Duration) -> Self {
        self.budget = Some(budget);
        self
    }

    /// A tick must end within `deadline` of its release; later is a miss
    /// handled by the miss policy. Defaults to the period.
    pub fn deadline(mut self, deadline: Duration) -> Self {
        self.deadline = Some(deadline);
        self
    }

    /// What to do on a deadline miss or budget overrun.
    pub fn on_miss(mut self, policy: MissPolicy) -> Self {
        self.miss = policy;
        self
    }

    /// What to do when `tick` returns an error or panics.
    pub fn on_failure(mut self, policy: FailurePolicy) -> Self {
        self.failure = policy;
        self
    }

    /// Arms a watchdog: if the node spends longer than `timeout` in one tick,
    /// or its releases stop being processed for longer than `timeout` (plus
    /// one period), a monitor thread reports it and applies `action`.
    pub fn watchdog(mut self, timeout: Duration, action: WatchdogAction) -> Self {
        self.watchdog = Some((timeout, action));
        self
    }

    /// Runs the node on a dedicated real-time thread, see [`ExecClass::RealTime`].
    pub fn realtime(mut self, priority: u8) -> Self {
        self.class = ExecClass::RealTime { priority };
        self
    }

    /// Runs the node on the worker pool, see [`ExecClass::Compute`].
    pub fn compute(mut self) -> Self {
        self.class = ExecClass::Compute;
        self
    }

    /// Makes the node event-driven: it ticks when `source` is ready.
    pub fn event(mut self, source: impl Readiness + 'static) -> Self {
        self.class = ExecClass::Event;
        self.readiness = Some(Box::new(source));
        self
    }

    /// Busy-waits the last `spin` before each release instead of sleeping
    /// through it: lower start jitter for the price of that much CPU per tick.
    pub fn spin_window(mut self, spin: Duration) -> Self {
        self.spin = spin;
        self
    }
}

/// Why [`Scheduler::add`](crate::Scheduler::add) rejected a node.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[non_exhaustive]
pub enum AddNodeError {
    /// The name is empty, too long, or has characters outside `[A-Za-z0-9_.-]`.
    #[error("invalid node name {0:?}: 1 to 63 bytes of [A-Za-z0-9_.-]")]
    InvalidName(String),
    /// Another node of this scheduler already has this name.
    #[error("a node named {0:?} was already added")]
    DuplicateName(String),
    /// `core` was set on a main-thread or compute node.
    #[error("node {0:?}: CPU pinning needs a dedicated thread (a real-time or event-driven node)")]
    CoreNeedsDedicatedThread(String),
    /// The requested CPU does not exist in a `cpu_set_t`.
    #[error("node {name:?}: CPU {core} is out of range")]
    CoreOutOfRange {
        /// The node.
        name: String,
        /// The CPU requested.
        core: usize,
    },
    /// A real-time priority outside 1–99.
    #[error("node {name:?}: SCHED_FIFO priority {priority} is outside 1..=99")]
    InvalidPriority {
        /// The node.
        name: String,
        /// The priority requested.
        priority: u8,
    },
    /// A zero budget, deadline, watchdog timeout, or `Skip { max: 0 }`.
    #[error("node {name:?}: {what} must be greater than zero")]
    Zero {
        /// The node.
        name: String,
        /// Which setting.
        what: &'static str,
    },
    /// The scheduler already ran; nodes can only be added before.
    #[error("nodes can only be added before the scheduler starts")]
    AlreadyStarted,
}

impl NodeConfig {
    /// Checks the settings for the node called `name`.
    pub(crate) fn validate(&self, name: &str) -> Result<(), AddNodeError> {
        let valid_char = |c: char| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-');
        if name.is_empty() || name.len() > MAX_NODE_NAME || !name.chars().all(valid_char) {
            return Err(AddNodeError::InvalidName(name.to_owned()));
        }
        let zero = |what| AddNodeError::Zero {
            name: name.to_owned(),
            what,
        };
        if self.budget == Some(Duration::ZERO) {
            return Err(zero("budget"));
        }
        if self.deadline == Some(Duration::ZERO) {
            return Err(zero("deadline"));
        }
        if matches!(self.watchdog, Some((t, _)) if t.is_zero()) {
            return Err(zero("watchdog timeout"));
        }
        if matches!(self.failure, FailurePolicy::Skip { max: 0, .. }) {
            return Err(zero("Skip { max }"));
        }
        if let ExecClass::RealTime { priority } = self.class {
            if !(1..=99).contains(&priority) {
                return Err(AddNodeError::InvalidPriority {
                    name: name.to_owned(),
                    priority,
                });
            }
        }
        if let Some(core) = self.core {
            if matches!(self.class, ExecClass::Main | ExecClass::Compute) {
                return Err(AddNodeError::CoreNeedsDedicatedThread(name.to_owned()));
            }
            if core >= 8 * std::mem::size_of::<libc::cpu_set_t>() {
                return Err(AddNodeError::CoreOutOfRange {
                    name: name.to_owned(),
                    core,
                });
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn validation_rejects_bad_settings() {
        assert!(NodeConfig::new().validate("ok_name-1.a").is_ok());
        assert!(matches!(
            NodeConfig::new().validate("bad name"),
            Err(AddNodeError::InvalidName(_))
        ));
        assert!(matches!(
            NodeConfig::new().core(0).validate("n"),
            Err(AddNodeError::CoreNeedsDedicatedThread(_))
        ));
        assert!(NodeConfig::new().realtime(50).core(0).validate("n").is_ok());
        assert!(matches!(
            NodeConfig::new().realtime(0).validate("n"),
            Err(AddNodeError::InvalidPriority { .. })
        ));
        assert!(matches!(
            NodeConfig::new().budget(Duration::ZERO).validate("n"),
            Err(AddNodeError::Zero { .. })
        ));
    }
}
