//! Per-node timing statistics: recorded on every tick without allocation or
//! locks, read as [`SchedulerStats`] snapshots in-process or (through
//! [`read_stats`](crate::read_stats)) from another process.
//!
//! Every counter has one writer at a time (see [`crate::histogram`] for why
//! that allows plain relaxed stores), except `skipped` and the miss counters,
//! which the main loop and a compute node's worker both touch, and so use
//! `fetch_add`.

use std::sync::atomic::{AtomicU64, AtomicU8, Ordering::Relaxed};
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use crate::config::ExecClass;
use crate::histogram::{bump, AtomicHistogram};
use crate::policy::WatchdogAction;
use crate::rt::{MemoryLock, RtMode};

/// Length of the window behind the "last window" figures.
pub const STATS_WINDOW: Duration = Duration::from_secs(1);

/// Where a node is in its life.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[repr(u8)]
pub enum NodeState {
    /// Added, not initialised yet.
    #[default]
    Created = 0,
    /// Initialised and ticking.
    Running = 1,
    /// Failed; waiting out its back-off before re-`init`.
    Restarting = 2,
    /// Failed repeatedly; suspended for its cooldown.
    Suspended = 3,
    /// Failed fatally (or out of restarts); no longer ticks.
    Failed = 4,
    /// `shutdown` ran.
    ShutDown = 5,
    /// Stuck in `tick` when the scheduler stopped; `shutdown` could not run.
    Hung = 6,
}

impl NodeState {
    pub(crate) fn decode(v: u64) -> Option<NodeState> {
        Some(match v {
            0 => NodeState::Created,
            1 => NodeState::Running,
            2 => NodeState::Restarting,
            3 => NodeState::Suspended,
            4 => NodeState::Failed,
            5 => NodeState::ShutDown,
            6 => NodeState::Hung,
            _ => return None,
        })
    }
}

/// Summary of a distribution of durations. Percentiles come from a
/// log-linear histogram: within ±3.2 % of the exact value (min and max exact).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Percentiles {
    /// Number of samples.
    pub samples: u64,
    /// Smallest sample.
    pub min: Duration,
    /// Median.
    pub p50: Duration,
    /// 99th percentile.
    pub p99: Duration,
    /// 99.9th percentile.
    pub p999: Duration,
    /// Largest sample.
    pub max: Duration,
    /// Sum of all samples (mean = total / samples).
    pub total: Duration,
}

impl Percentiles {
    fn of(h: &AtomicHistogram) -> Percentiles {
        let (min, [p50, p99, p999], max) = h.quantiles([0.5, 0.99, 0.999]);
        let d = Duration::from_nanos;
        Percentiles {
            samples: h.count(),
            min: d(min),
            p50: d(p50),
            p99: d(p99),
            p999: d(p999),
            max: d(max),
            total: d(h.sum()),
        }
    }

    /// The mean, or zero without samples.
    pub fn mean(&self) -> Duration {
        if self.samples == 0 {
            Duration::ZERO
        } else {
            Duration::from_nanos((self.total.as_nanos() / u128::from(self.samples)) as u64)
        }
    }
}

/// Statistics of one node.
#[derive(Clone, Debug, PartialEq)]
pub struct NodeStats {
    /// The node's name.
    pub name: String,
    /// How it is executed.
    pub class: ExecClass,
    /// Its lifecycle state.
    pub state: NodeState,
    /// The real-time policy its thread actually got.
    pub rt_mode: RtMode,
    /// The CPU its thread is pinned to, if pinning was requested and granted.
    pub core: Option<usize>,
    /// The configured rate (`None` for an uncapped event-driven node).
    pub target_hz: Option<f64>,
    /// Ticks run (successful or not).
    pub ticks: u64,
    /// Rate achieved over the whole run: (ticks − 1) / (last start − first start).
    pub achieved_hz: f64,
    /// Ticks started in the last completed [`STATS_WINDOW`].
    pub window_ticks: u64,
    /// Deadline misses in the last completed [`STATS_WINDOW`].
    pub window_deadline_misses: u64,
    /// Execution time of `tick`.
    pub exec: Percentiles,
    /// Start time minus intended release time (the ideal `start + k·period`,
    /// not the previous tick). Zero samples for event-driven nodes.
    pub jitter: Percentiles,
    /// Deadline misses in total: ticks that ended after their deadline, plus
    /// releases never served because the node was more than a period late
    /// (its thread stalled, or a compute node was still busy).
    pub deadline_misses: u64,
    /// Ticks whose execution time exceeded the budget.
    pub budget_overruns: u64,
    /// Ticks that returned an error or panicked.
    pub failures: u64,
    /// Restarts performed by [`FailurePolicy::Restart`](crate::FailurePolicy::Restart).
    pub restarts: u64,
    /// Releases not ticked: dropped because the node was more than a period
    /// late or still busy (these are also deadline misses), or skipped on
    /// purpose (miss policy `Skip`, suspended, restarting).
    pub skipped: u64,
    /// Times its watchdog expired.
    pub watchdog_expiries: u64,
}

/// Timing of the main thread's rounds (one round = wake up, tick every due
/// node, compute the next wake-up).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LoopStats {
    /// Duration of the rounds that ticked at least one node; `total` is the
    /// main thread's busy time.
    pub round: Percentiles,
}

/// A snapshot of a scheduler's statistics.
#[derive(Clone, Debug, PartialEq)]
pub struct SchedulerStats {
    /// The scheduler's name.
    pub scheduler: String,
    /// Its process.
    pub pid: u32,
    /// When the snapshot was taken (for a file: when it was last published).
    pub taken_at: SystemTime,
    /// Time since the scheduler started, on its clock.
    pub uptime: Duration,
    /// Whether it runs on the simulated clock (deterministic mode).
    pub simulated: bool,
    /// Whether process memory is locked.
    pub memory_lock: MemoryLock,
    /// The main thread's rounds.
    pub main_loop: LoopStats,
    /// One entry per node, in the order they were added.
    pub nodes: Vec<NodeStats>,
}

/// Everything about one node that other threads may look at: identity,
/// statistics and watchdog state.
pub(crate) struct NodeShared {
    pub(crate) name: Arc<str>,
    pub(crate) class: ExecClass,
    pub(crate) target_hz: Option<f64>,
    pub(crate) period_ns: Option<u64>,
    pub(crate) watchdog: Option<(u64, WatchdogAction)>,
    pub(crate) state: AtomicU8,
    pub(crate) rt_mode: AtomicU64,
    /// Pinned CPU + 1, or 0.
    pub(crate) core: AtomicU64,
    pub(crate) exec: AtomicHistogram,
    pub(crate) jitter: AtomicHistogram,
    pub(crate) first_start_ns: AtomicU64,
    pub(crate) last_start_ns: AtomicU64,
    window_start_ns: AtomicU64,
    window_ticks: AtomicU64,
    window_misses: AtomicU64,
    pub(crate) last_window_ticks: AtomicU64,
    pub(crate) last_window_misses: AtomicU64,
    pub(crate) deadline_misses: AtomicU64,
    pub(crate) budget_overruns: AtomicU64,
    pub(crate) failures: AtomicU64,
    pub(crate) restarts: AtomicU64,
    pub(crate) skipped: AtomicU64,
    pub(crate) watchdog_expiries: AtomicU64,
    /// Monotonic time of the last sign of progress (watchdog feed).
    pub(crate) last_feed_ns: AtomicU64,
    /// Monotonic time the current tick started, 0 when not in a tick.
    pub(crate) in_tick_since_ns: AtomicU64,
}

impl NodeShared {
    pub(crate) fn new(
        name: &str,
        class: ExecClass,
        target_hz: Option<f64>,
        period_ns: Option<u64>,
        watchdog: Option<(u64, WatchdogAction)>,
    ) -> NodeShared {
        let z = || AtomicU64::new(0);
        NodeShared {
            name: Arc::from(name),
            class,
            target_hz,
            period_ns,
            watchdog,
            state: AtomicU8::new(NodeState::Created as u8),
            rt_mode: z(),
            core: z(),
            exec: AtomicHistogram::new(),
            jitter: AtomicHistogram::new(),
            first_start_ns: z(),
            last_start_ns: z(),
            window_start_ns: z(),
            window_ticks: z(),
            window_misses: z(),
            last_window_ticks: z(),
            last_window_misses: z(),
            deadline_misses: z(),
            budget_overruns: z(),
            failures: z(),
            restarts: z(),
            skipped: z(),
            watchdog_expiries: z(),
            last_feed_ns: z(),
            in_tick_since_ns: z(),
        }
    }

    pub(crate) fn set_state(&self, s: NodeState) {
        self.state.store(s as u8, Relaxed);
    }

    pub(crate) fn state(&self) -> NodeState {
        NodeState::decode(u64::from(self.state.load(Relaxed))).unwrap_or_default()
    }

    /// Records a tick that started at clock time `start_ns`. `jitter_ns` is
    /// `None` for event-driven nodes.
    #[inline]
    pub(crate) fn record_tick(&self, start_ns: u64, exec_ns: u64, jitter_ns: Option<u64>) {
        self.exec.record(exec_ns);
        if let Some(j) = jitter_ns {
            self.jitter.record(j);
        }
        if self.exec.count() == 1 {
            self.first_start_ns.store(start_ns, Relaxed);
            self.window_start_ns.store(start_ns, Relaxed);
        }
        self.last_start_ns.store(start_ns, Relaxed);
        // Close the window if this tick starts after its end.
        let window = STATS_WINDOW.as_nanos() as u64;
        let ws = self.window_start_ns.load(Relaxed);
        if start_ns >= ws + window {
            self.last_window_ticks
                .store(self.window_ticks.load(Relaxed), Relaxed);
            self.last_window_misses
                .store(self.window_misses.load(Relaxed), Relaxed);
            self.window_ticks.store(0, Relaxed);
            self.window_misses.store(0, Relaxed);
            // Keep windows aligned to the grid of the first one.
            self.window_start_ns
                .store(ws + (start_ns - ws) / window * window, Relaxed);
        }
        bump(&self.window_ticks, 1);
    }

    /// Counts `n` deadline misses. A read-modify-write: the main loop also
    /// counts releases of a still-busy compute node. (The window counter is
    /// reset by the ticking thread, so a miss counted by the main loop at the
    /// very moment a window closes can land in either window.)
    pub(crate) fn add_deadline_misses(&self, n: u64) {
        self.deadline_misses.fetch_add(n, Relaxed);
        self.window_misses.fetch_add(n, Relaxed);
    }

    pub(crate) fn add_skipped(&self, n: u64) {
        if n > 0 {
            self.skipped.fetch_add(n, Relaxed);
        }
    }

    /// Watchdog feed: the scheduler processed a release of this node.
    #[inline]
    pub(crate) fn feed(&self, mono_ns: u64) {
        self.last_feed_ns.store(mono_ns, Relaxed);
    }

    pub(crate) fn snapshot(&self) -> NodeStats {
        let ticks = self.exec.count();
        let first = self.first_start_ns.load(Relaxed);
        let last = self.last_start_ns.load(Relaxed);
        let achieved_hz = if ticks >= 2 && last > first {
            (ticks - 1) as f64 * 1e9 / (last - first) as f64
        } else {
            0.0
        };
        let core = self.core.load(Relaxed);
        NodeStats {
            name: self.name.to_string(),
            class: self.class,
            state: self.state(),
            rt_mode: RtMode::decode(self.rt_mode.load(Relaxed)).unwrap_or_default(),
            core: core.checked_sub(1).map(|c| c as usize),
            target_hz: self.target_hz,
            ticks,
            achieved_hz,
            window_ticks: self.last_window_ticks.load(Relaxed),
            window_deadline_misses: self.last_window_misses.load(Relaxed),
            exec: Percentiles::of(&self.exec),
            jitter: Percentiles::of(&self.jitter),
            deadline_misses: self.deadline_misses.load(Relaxed),
            budget_overruns: self.budget_overruns.load(Relaxed),
            failures: self.failures.load(Relaxed),
            restarts: self.restarts.load(Relaxed),
            skipped: self.skipped.load(Relaxed),
            watchdog_expiries: self.watchdog_expiries.load(Relaxed),
        }
    }
}

/// Scheduler-wide statistics sources; `snapshot` assembles a [`SchedulerStats`].
pub(crate) struct StatsSource {
    pub(crate) scheduler: String,
    /// Grows while nodes are added; read-only once the scheduler starts.
    pub(crate) nodes: std::sync::RwLock<Vec<Arc<NodeShared>>>,
    pub(crate) rounds: AtomicHistogram,
    pub(crate) memory_lock: AtomicU64,
    pub(crate) control: Arc<crate::estop::Control>,
}

impl StatsSource {
    pub(crate) fn snapshot(&self) -> SchedulerStats {
        let c = &self.control;
        let origin = c.origin_ns.load(Relaxed);
        let uptime = if origin == 0 && !c.clock.is_simulated() {
            Duration::ZERO
        } else {
            Duration::from_nanos(c.clock.now_ns().saturating_sub(origin))
        };
        SchedulerStats {
            scheduler: self.scheduler.clone(),
            pid: std::process::id(),
            taken_at: SystemTime::now(),
            uptime,
            simulated: c.clock.is_simulated(),
            memory_lock: MemoryLock::decode(self.memory_lock.load(Relaxed)).unwrap_or_default(),
            main_loop: LoopStats {
                round: Percentiles::of(&self.rounds),
            },
            nodes: self
                .nodes
                .read()
                .unwrap_or_else(|p| p.into_inner())
                .iter()
                .map(|n| n.snapshot())
                .collect(),
        }
    }
}

/// Reads a running scheduler's statistics from any thread. Cheap to clone.
#[derive(Clone)]
pub struct StatsHandle {
    pub(crate) source: Arc<StatsSource>,
}

impl StatsHandle {
    /// The current statistics.
    pub fn snapshot(&self) -> SchedulerStats {
        self.source.snapshot()
    }
}
