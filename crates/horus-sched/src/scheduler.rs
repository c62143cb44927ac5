//! The [`Scheduler`]: builder, node registration, lifecycle.
//! The running itself is in [`crate::run`].

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use std::time::Duration;

use crate::clock::Clock;
use crate::config::{AddNodeError, ExecClass, NodeConfig};
use crate::estop::{Control, EmergencyStopSink, StopHandle, StopReason};
use crate::events::{stderr_sink, SchedulerEvent};
use crate::frequency::Frequency;
use crate::histogram::AtomicHistogram;
use crate::node::{Node, NodeError};
use crate::runner::{NodeRunner, NodeSlot, RunnerConfig};
use crate::stats::{NodeShared, SchedulerStats, StatsHandle, StatsSource};
use crate::stats_file::{namespace, stats_path, StatsFileError};
use crate::step::Stepper;

/// Why running the scheduler failed (as opposed to stopping, see [`StopReason`]).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RunError {
    /// The scheduler already shut down; it runs once.
    #[error("the scheduler has already shut down")]
    Finished,
    /// The scheduler was stopped (a stop request or an emergency stop during
    /// `tick_once`); call [`Scheduler::shutdown`].
    #[error("the scheduler was stopped ({0:?}); call shutdown()")]
    Stopped(StopReason),
    /// A node's `init` failed; the nodes initialised before it were shut down.
    #[error("node {node} failed to initialise: {error}")]
    InitFailed {
        /// The node.
        node: String,
        /// Its error.
        error: NodeError,
    },
    /// The statistics file could not be created (disable it with
    /// [`Scheduler::publish_stats`]).
    #[error(transparent)]
    StatsFile(#[from] StatsFileError),
    /// A scheduler thread could not be spawned.
    #[error("spawning a scheduler thread failed: {0}")]
    Spawn(#[source] std::io::Error),
    /// The SIGINT/SIGTERM handlers could not be installed.
    #[error("installing the signal handlers failed: {0}")]
    Signals(#[source] std::io::Error),
}

pub(crate) enum Phase {
    Configuring,
    Started(Stepper),
    Finished,
}

/// Runs [`Node`]s at their rates; see the [crate docs](crate) for an example.
///
/// Builder methods (those taking `self`) configure the scheduler; call them
/// before [`add`](Scheduler::add)ing nodes.
pub struct Scheduler {
    pub(crate) name: String,
    pub(crate) namespace: Option<String>,
    pub(crate) tick_rate: Frequency,
    pub(crate) handle_signals: bool,
    pub(crate) publish_stats: bool,
    pub(crate) stats_interval: Duration,
    pub(crate) workers: usize,
    pub(crate) lock_memory: Option<bool>,
    pub(crate) shutdown_grace: Duration,
    custom_events: bool,
    pub(crate) safe_state_done: bool,
    /// When the current stop's grace period ends (set once stopping starts).
    pub(crate) grace_deadline: Option<std::time::Instant>,
    pub(crate) control: Arc<Control>,
    pub(crate) stats: Arc<StatsSource>,
    /// Nodes in insertion order.
    pub(crate) slots: Vec<Arc<NodeSlot>>,
    pub(crate) phase: Phase,
}

impl Default for Scheduler {
    fn default() -> Self {
        Scheduler::new()
    }
}

fn default_name() -> String {
    static N: AtomicUsize = AtomicUsize::new(0);
    let n = N.fetch_add(1, Ordering::Relaxed);
    format!("sched-{}-{n}", std::process::id())
}

fn new_stats(name: &str, control: &Arc<Control>) -> Arc<StatsSource> {
    Arc::new(StatsSource {
        scheduler: name.to_owned(),
        nodes: RwLock::new(Vec::new()),
        rounds: AtomicHistogram::new(),
        memory_lock: AtomicU64::new(0),
        control: control.clone(),
    })
}

impl Scheduler {
    /// A scheduler on the real clock: tick rate 100 Hz, named
    /// `sched-<pid>-<n>`, handling SIGINT/SIGTERM, publishing statistics.
    pub fn new() -> Scheduler {
        let name = default_name();
        let control = Arc::new(Control::new(
            name.clone(),
            Clock::real(),
            stderr_sink(&name),
        ));
        Scheduler {
            stats: new_stats(&name, &control),
            name,
            namespace: None,
            tick_rate: Frequency::from_hz(100.0),
            handle_signals: true,
            publish_stats: true,
            stats_interval: Duration::from_millis(200),
            workers: 0,
            lock_memory: None,
            shutdown_grace: Duration::from_secs(1),
            custom_events: false,
            safe_state_done: false,
            grace_deadline: None,
            control,
            slots: Vec::new(),
            phase: Phase::Configuring,
        }
    }

    /// Rebuilds the shared state after a change of name or clock.
    fn rebuild(mut self, clock: Clock) -> Self {
        assert!(
            self.slots.is_empty() && Arc::strong_count(&self.control) == 2,
            "Scheduler::name and ::deterministic must be called before adding nodes \
             or taking handles"
        );
        let events = if self.custom_events {
            self.control.events()
        } else {
            stderr_sink(&self.name)
        };
        let control = Arc::new(Control::new(self.name.clone(), clock, events));
        if let Some(sink) = self.control.estop_sink() {
            control.set_estop_sink(sink);
        }
        self.stats = new_stats(&self.name, &control);
        self.control = control;
        self
    }

    /// Names the scheduler (in events and its statistics file; 1–63 bytes of
    /// `[A-Za-z0-9_.-]`). Two schedulers in one namespace need distinct names.
    ///
    /// # Panics
    /// If called after nodes were added or handles taken.
    pub fn name(mut self, name: impl Into<String>) -> Self {
        self.name = name.into();
        let clock = self.control.clock.clone();
        self.rebuild(clock)
    }

    /// The namespace of the statistics file, overriding `HORUS_NAMESPACE`
    /// (tests use a unique one each, so parallel runs never collide).
    pub fn namespace(mut self, namespace: impl Into<String>) -> Self {
        self.namespace = Some(namespace.into());
        self
    }

    /// The default rate of nodes whose config sets none (default 100 Hz); in
    /// deterministic mode also the longest simulated step (so event nodes are
    /// polled at least that often).
    pub fn tick_rate(mut self, rate: Frequency) -> Self {
        self.tick_rate = rate;
        self
    }

    /// Deterministic mode: a simulated clock that jumps from release to
    /// release, every node ticked on the calling thread in one fixed order
    /// (`order`, then insertion), whatever its class. Ticks take no simulated
    /// time, so deadlines are never missed (wall-clock execution times are
    /// still recorded) and watchdogs are off. `run_for(d)` runs `d` of
    /// simulated time, as fast as the nodes allow.
    ///
    /// # Panics
    /// If called after nodes were added or handles taken.
    pub fn deterministic(self, on: bool) -> Self {
        let clock = if on {
            Clock::simulated()
        } else {
            Clock::real()
        };
        self.rebuild(clock)
    }

    /// Whether `run` turns SIGINT/SIGTERM into a clean stop (default true).
    pub fn handle_signals(mut self, on: bool) -> Self {
        self.handle_signals = on;
        self
    }

    /// Whether `run` publishes statistics to
    /// `/dev/shm/horus.<namespace>.sched.<name>` (default true).
    pub fn publish_stats(mut self, on: bool) -> Self {
        self.publish_stats = on;
        self
    }

    /// How often the statistics file is rewritten (default 200 ms).
    pub fn stats_interval(mut self, interval: Duration) -> Self {
        self.stats_interval = interval.max(Duration::from_millis(1));
        self
    }

    /// Worker threads for compute nodes (default: one per CPU, at most one
    /// per compute node).
    pub fn workers(mut self, n: usize) -> Self {
        self.workers = n;
        self
    }

    /// Whether to `mlockall` when real-time nodes exist (default: yes when
    /// the process may; see [`MemoryLock`](crate::MemoryLock)).
    pub fn lock_memory(mut self, on: bool) -> Self {
        self.lock_memory = Some(on);
        self
    }

    /// How long stopping waits for nodes stuck in a tick before giving up on
    /// them (their `shutdown` then does not run). Default 1 s.
    pub fn shutdown_grace(mut self, grace: Duration) -> Self {
        self.shutdown_grace = grace;
        self
    }

    /// Where the emergency stop is announced (for example a publisher of
    /// `EmergencyStop` messages).
    pub fn on_emergency_stop(self, sink: impl EmergencyStopSink + 'static) -> Self {
        self.control.set_estop_sink(Arc::new(sink));
        self
    }

    /// Receives every [`SchedulerEvent`] instead of the default stderr printer.
    pub fn on_event(mut self, sink: impl Fn(&SchedulerEvent) + Send + Sync + 'static) -> Self {
        self.control.set_events(Arc::new(sink));
        self.custom_events = true;
        self
    }

    /// Adds `node`, scheduled as `config` says.
    pub fn add(
        &mut self,
        node: impl Node + 'static,
        config: NodeConfig,
    ) -> Result<(), AddNodeError> {
        if !matches!(self.phase, Phase::Configuring) {
            return Err(AddNodeError::AlreadyStarted);
        }
        let name = config
            .name
            .clone()
            .unwrap_or_else(|| node.name().to_owned());
        config.validate(&name)?;
        if self.slots.iter().any(|s| *s.shared.name == *name) {
            return Err(AddNodeError::DuplicateName(name));
        }
        let event = config.class == ExecClass::Event;
        let rate = config.rate.or((!event).then_some(self.tick_rate));
        let period_ns = rate.map(|r| r.period_ns());
        let shared = Arc::new(NodeShared::new(
            &name,
            config.class,
            rate.map(|r| r.as_hz()),
            period_ns,
            config.watchdog.map(|(t, a)| (t.as_nanos() as u64, a)),
        ));
        let runner = NodeRunner::new(
            Box::new(node),
            shared.clone(),
            self.control.clone(),
            RunnerConfig {
                period_ns,
                periodic: !event,
                deadline_ns: config.deadline.map(|d| d.as_nanos() as u64),
                budget_ns: config.budget.map(|d| d.as_nanos() as u64),
                miss: config.miss,
                failure: config.failure,
            },
        );
        self.stats
            .nodes
            .write()
            .unwrap_or_else(|p| p.into_inner())
            .push(shared.clone());
        self.slots.push(Arc::new(NodeSlot {
            runner: Mutex::new(runner),
            shared,
            order: config.order,
            class: config.class,
            core: config.core,
            spin_ns: config.spin.as_nanos() as u64,
            readiness: config.readiness,
            busy: AtomicBool::new(false),
        }));
        Ok(())
    }

    /// Stops the scheduler from other threads.
    pub fn stop_handle(&self) -> StopHandle {
        StopHandle {
            control: self.control.clone(),
        }
    }

    /// Reads statistics from other threads while `run` blocks.
    pub fn stats_handle(&self) -> StatsHandle {
        StatsHandle {
            source: self.stats.clone(),
        }
    }

    /// Current statistics.
    pub fn stats(&self) -> SchedulerStats {
        self.stats.snapshot()
    }

    /// The scheduler's clock (simulated in deterministic mode).
    pub fn clock(&self) -> Clock {
        self.control.clock.clone()
    }

    /// Where `run` publishes statistics.
    pub fn stats_path(&self) -> PathBuf {
        stats_path(&self.namespace_in_force(), &self.name)
    }

    pub(crate) fn namespace_in_force(&self) -> String {
        self.namespace.clone().unwrap_or_else(namespace)
    }

    /// Nodes in execution order: by `order`, then insertion.
    pub(crate) fn exec_order(&self) -> Vec<Arc<NodeSlot>> {
        let mut v = self.slots.clone();
        v.sort_by_key(|s| s.order); // stable: insertion order breaks ties
        v
    }

    /// Initialises every node (in execution order) and fixes the origin.
    pub(crate) fn start(&mut self) -> Result<(), RunError> {
        match self.phase {
            Phase::Configuring => {}
            Phase::Started(_) => return Ok(()),
            Phase::Finished => return Err(RunError::Finished),
        }
        let origin = self.control.clock.now_ns();
        self.control.origin_ns.store(origin, Ordering::Relaxed);
        let order = self.exec_order();
        for slot in &order {
            let result = slot.lock().init();
            if let Err(error) = result {
                for done in order.iter().rev() {
                    done.lock().finish();
                }
                self.phase = Phase::Finished;
                return Err(RunError::InitFailed {
                    node: slot.shared.name.to_string(),
                    error,
                });
            }
        }
        let max_step = self.tick_rate.period_ns();
        self.phase = Phase::Started(Stepper::new(&order, origin, max_step));
        Ok(())
    }

    /// Runs one round on the calling thread: waits for the next release
    /// (jumps to it in deterministic mode), then ticks every due node and
    /// every ready event node, whatever their class, in execution order.
    /// `init` runs on the first call. No statistics file, no signal handling.
    pub fn tick_once(&mut self) -> Result<(), RunError> {
        self.start()?;
        if let Some(reason) = self.control.reason() {
            return Err(RunError::Stopped(reason));
        }
        if let Phase::Started(stepper) = &mut self.phase {
            stepper.round(&self.control.clock, &self.control);
        }
        Ok(())
    }

    /// Stops (if running under `tick_once`) and shuts every node down: after
    /// an emergency stop, every node's `enter_safe_state` first. Idempotent;
    /// also done on drop.
    pub fn shutdown(&mut self) -> StopReason {
        if matches!(self.phase, Phase::Started(_)) {
            self.control.stop_with(StopReason::Requested);
            self.finish_nodes(std::time::Instant::now() + self.shutdown_grace);
        }
        self.phase = Phase::Finished;
        self.control.reason().unwrap_or(StopReason::Requested)
    }
}

impl Drop for Scheduler {
    fn drop(&mut self) {
        self.shutdown();
    }
}
