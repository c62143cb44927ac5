//! Stopping: clean stop requests, the emergency stop, and the sink that
//! tells the rest of the robot about an emergency stop.
//!
//! An emergency stop sets the stop flag every scheduler thread checks before
//! each tick (so no node starts another tick; ticks in flight finish), calls the
//! [`EmergencyStopSink`] once, and makes the shutdown sequence call every
//! node's `enter_safe_state` before its `shutdown`.

use std::fmt;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, RwLock};
use std::time::Duration;

use crate::clock::Clock;
use crate::events::{EventSink, SchedulerEvent};

/// Why an emergency stop happened.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum EmergencyStopReason {
    /// Someone asked: a node through its [`TickContext`](crate::TickContext)
    /// or the application through a [`StopHandle`].
    Requested {
        /// The node name, or `"application"`.
        by: String,
        /// The reason given.
        reason: String,
    },
    /// A node with [`MissPolicy::Stop`](crate::MissPolicy::Stop) missed its
    /// deadline or overran its budget.
    DeadlineMiss {
        /// The node.
        node: String,
    },
    /// A node failed under [`FailurePolicy::Fatal`](crate::FailurePolicy::Fatal)
    /// (or ran out of restarts).
    NodeFailed {
        /// The node.
        node: String,
        /// The error or panic message.
        error: String,
    },
    /// A node's watchdog expired under
    /// [`WatchdogAction::EmergencyStop`](crate::WatchdogAction::EmergencyStop).
    Watchdog {
        /// The node.
        node: String,
        /// Time since its last sign of progress.
        silent_for: Duration,
    },
}

impl fmt::Display for EmergencyStopReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            EmergencyStopReason::Requested { by, reason } => {
                write!(f, "requested by {by}: {reason}")
            }
            EmergencyStopReason::DeadlineMiss { node } => {
                write!(f, "node {node} missed its deadline (MissPolicy::Stop)")
            }
            EmergencyStopReason::NodeFailed { node, error } => {
                write!(f, "node {node} failed: {error}")
            }
            EmergencyStopReason::Watchdog { node, silent_for } => {
                write!(f, "watchdog of node {node} expired after {silent_for:?}")
            }
        }
    }
}

/// What an [`EmergencyStopSink`] is told.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EmergencyStopEvent {
    /// The scheduler that stopped.
    pub scheduler: String,
    /// Why.
    pub reason: EmergencyStopReason,
    /// When, since the scheduler started, on its clock.
    pub at: Duration,
}

impl fmt::Display for EmergencyStopEvent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "EMERGENCY STOP at {:?}: {}", self.at, self.reason)
    }
}

/// Receives the emergency stop (for example to publish an `EmergencyStop`
/// message so other processes halt too). Called exactly once per scheduler
/// run, on the thread that triggered the stop; a panic in it is caught.
pub trait EmergencyStopSink: Send + Sync {
    /// The scheduler has halted all nodes because of `event`.
    fn emergency_stop(&self, event: &EmergencyStopEvent);
}

impl<F: Fn(&EmergencyStopEvent) + Send + Sync> EmergencyStopSink for F {
    fn emergency_stop(&self, event: &EmergencyStopEvent) {
        self(event)
    }
}

/// Why [`Scheduler::run`](crate::Scheduler::run) returned.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum StopReason {
    /// The duration given to `run_for` elapsed.
    Elapsed,
    /// A stop was requested (a node, a [`StopHandle`]).
    Requested,
    /// SIGINT or SIGTERM arrived.
    Signal,
    /// An emergency stop.
    EmergencyStop(EmergencyStopReason),
}

/// The stop state shared by the scheduler, its threads and its handles.
pub(crate) struct Control {
    /// Set once to stop every thread; Release/Acquire so that the reason is
    /// visible to whoever observes the flag.
    stop: AtomicBool,
    reason: Mutex<Option<StopReason>>,
    estop_sink: Mutex<Option<Arc<dyn EmergencyStopSink>>>,
    events: RwLock<EventSink>,
    wake: (Mutex<bool>, Condvar),
    pub(crate) scheduler: String,
    pub(crate) clock: Clock,
    /// Clock time at which the scheduler started (0 before).
    pub(crate) origin_ns: AtomicU64,
}

impl Control {
    pub(crate) fn new(scheduler: String, clock: Clock, events: EventSink) -> Control {
        Control {
            stop: AtomicBool::new(false),
            reason: Mutex::new(None),
            estop_sink: Mutex::new(None),
            events: RwLock::new(events),
            wake: (Mutex::new(false), Condvar::new()),
            scheduler,
            clock,
            origin_ns: AtomicU64::new(0),
        }
    }

    /// The flag scheduler threads poll.
    pub(crate) fn stop_flag(&self) -> &AtomicBool {
        &self.stop
    }

    pub(crate) fn is_stopped(&self) -> bool {
        self.stop.load(Ordering::Acquire)
    }

    pub(crate) fn set_events(&self, sink: EventSink) {
        *self.events.write().unwrap_or_else(|p| p.into_inner()) = sink;
    }

    pub(crate) fn events(&self) -> EventSink {
        self.events
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    pub(crate) fn estop_sink(&self) -> Option<Arc<dyn EmergencyStopSink>> {
        lock(&self.estop_sink).clone()
    }

    pub(crate) fn set_estop_sink(&self, sink: Arc<dyn EmergencyStopSink>) {
        *lock(&self.estop_sink) = Some(sink);
    }

    /// Delivers `event` to the event sink (a panicking sink is ignored).
    pub(crate) fn emit(&self, event: SchedulerEvent) {
        let sink = self.events();
        let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| sink(&event)));
    }

    /// Stops with `reason` unless already stopping; returns whether this call
    /// was the one that stopped.
    pub(crate) fn stop_with(&self, reason: StopReason) -> bool {
        let first = {
            let mut r = lock(&self.reason);
            if r.is_none() {
                *r = Some(reason);
                true
            } else {
                false
            }
        };
        self.stop.store(true, Ordering::Release);
        self.notify();
        first
    }

    pub(crate) fn request_stop(&self) {
        self.stop_with(StopReason::Requested);
    }

    /// Triggers the emergency stop (once; later calls while stopping are
    /// ignored, and a clean stop already under way is not upgraded).
    pub(crate) fn emergency_stop(&self, reason: EmergencyStopReason) {
        if !self.stop_with(StopReason::EmergencyStop(reason.clone())) {
            return;
        }
        let now = self.clock.now_ns();
        let origin = self.origin_ns.load(Ordering::Relaxed);
        let event = EmergencyStopEvent {
            scheduler: self.scheduler.clone(),
            reason,
            at: Duration::from_nanos(now.saturating_sub(origin)),
        };
        let sink = lock(&self.estop_sink).clone();
        if let Some(sink) = sink {
            let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                sink.emergency_stop(&event)
            }));
        }
        self.emit(SchedulerEvent::EmergencyStop(event));
    }

    pub(crate) fn reason(&self) -> Option<StopReason> {
        lock(&self.reason).clone()
    }

    pub(crate) fn is_emergency(&self) -> bool {
        matches!(self.reason(), Some(StopReason::EmergencyStop(_)))
    }

    /// Wakes the supervisor.
    pub(crate) fn notify(&self) {
        let (m, cv) = &self.wake;
        *lock(m) = true;
        cv.notify_all();
    }

    /// Sleeps the supervisor until notified or `timeout`.
    pub(crate) fn wait(&self, timeout: Duration) {
        let (m, cv) = &self.wake;
        let mut woken = lock(m);
        if !*woken {
            woken = match cv.wait_timeout(woken, timeout) {
                Ok((g, _)) => g,
                Err(p) => p.into_inner().0,
            };
        }
        *woken = false;
    }
}

/// Stops a running scheduler from another thread (or a signal-free context).
/// Cheap to clone.
#[derive(Clone)]
pub struct StopHandle {
    pub(crate) control: Arc<Control>,
}

impl StopHandle {
    /// Asks the scheduler to stop cleanly (every node's `shutdown` runs).
    pub fn request_stop(&self) {
        self.control.request_stop();
    }

    /// Triggers an emergency stop: no node starts another tick, the
    /// [`EmergencyStopSink`] is called once, then every node enters its safe
    /// state and shuts down.
    pub fn emergency_stop(&self, reason: &str) {
        self.control.emergency_stop(EmergencyStopReason::Requested {
            by: "application".to_owned(),
            reason: reason.to_owned(),
        });
    }

    /// Whether a stop (clean or emergency) is under way or done.
    pub fn is_stopped(&self) -> bool {
        self.control.is_stopped()
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}
