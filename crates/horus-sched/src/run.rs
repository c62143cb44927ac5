//! `run` / `run_for`: spawning the scheduler's threads, supervising them
//! (stop conditions, watchdogs, statistics publication) from the calling
//! thread, and the shutdown sequence.
//!
//! Shutdown: the stop flag is set (no node starts another tick); after an
//! emergency stop every node's `enter_safe_state` runs at once (as soon as its
//! current tick, if any, ends); the pool is closed; threads get the grace
//! period to exit; finally every node's `shutdown` runs, in reverse execution
//! order, on the calling thread. A node still stuck in `tick` when the grace
//! period (one period for the whole sequence) ends is reported as hung and
//! left behind.

use std::sync::{Arc, TryLockError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crate::clock::monotonic_ns;
use crate::config::ExecClass;
use crate::estop::StopReason;
use crate::events::SchedulerEvent;
use crate::grid::Grid;
use crate::rt::{self, MemoryLock};
use crate::runner::{NodeRunner, NodeSlot};
use crate::scheduler::{Phase, RunError, Scheduler};
use crate::signal::{self, SignalGuard};
use crate::stats::NodeState;
use crate::stats_file::StatsPublisher;
use crate::threads::{event_thread, main_loop, rt_thread, Entry};
use crate::watchdog::Watchdogs;
use crate::worker_pool::WorkerPool;

impl Scheduler {
    /// Runs until a stop request, SIGINT/SIGTERM, or an emergency stop; then
    /// shuts every node down. Returns why it stopped.
    pub fn run(&mut self) -> Result<StopReason, RunError> {
        self.run_inner(None)
    }

    /// Like [`run`](Scheduler::run), stopping after `duration` at the latest
    /// (simulated time in deterministic mode).
    pub fn run_for(&mut self, duration: Duration) -> Result<StopReason, RunError> {
        self.run_inner(Some(duration))
    }

    fn run_inner(&mut self, limit: Option<Duration>) -> Result<StopReason, RunError> {
        self.start()?;
        let result = self.run_started(limit);
        if result.is_err() {
            self.control.stop_with(StopReason::Requested);
        }
        let grace = self
            .grace_deadline
            .take()
            .unwrap_or_else(|| Instant::now() + self.shutdown_grace);
        self.finish_nodes(grace);
        self.phase = Phase::Finished;
        result?;
        Ok(self.control.reason().unwrap_or(StopReason::Requested))
    }

    fn run_started(&mut self, limit: Option<Duration>) -> Result<(), RunError> {
        let _signals = if self.handle_signals {
            Some(SignalGuard::install().map_err(RunError::Signals)?)
        } else {
            None
        };
        let publisher = if self.publish_stats {
            Some(StatsPublisher::create(
                &self.namespace_in_force(),
                &self.name,
                self.slots.len(),
            )?)
        } else {
            None
        };
        let signals_before = signal::count();
        if self.control.clock.is_simulated() {
            self.run_simulated(limit, signals_before, publisher.as_ref());
            Ok(())
        } else {
            self.run_real(limit, signals_before, publisher.as_ref())
        }
        // `publisher` drops here: the statistics file is removed.
    }

    fn run_simulated(
        &mut self,
        limit: Option<Duration>,
        signals_before: u64,
        publisher: Option<&StatsPublisher>,
    ) {
        let Phase::Started(stepper) = &mut self.phase else {
            return;
        };
        let control = &self.control;
        let clock = &control.clock;
        let end = limit.map(|d| clock.now_ns() + d.as_nanos() as u64);
        let interval = self.stats_interval.as_nanos() as u64;
        let mut last_publish = 0;
        let mut steps = 0_u64;
        loop {
            if signal::count() != signals_before {
                control.stop_with(StopReason::Signal);
            }
            if control.is_stopped() {
                return;
            }
            let next = stepper.next_step(clock.now_ns());
            if let Some(end) = end {
                if next > end {
                    clock.advance_to(end);
                    control.stop_with(StopReason::Elapsed);
                    return;
                }
            }
            clock.advance_to(next);
            stepper.step(next, control);
            steps += 1;
            if let Some(p) = publisher {
                if steps.is_multiple_of(64) && monotonic_ns() - last_publish >= interval {
                    p.publish(&self.stats.snapshot());
                    last_publish = monotonic_ns();
                }
            }
        }
    }

    fn run_real(
        &mut self,
        limit: Option<Duration>,
        signals_before: u64,
        publisher: Option<&StatsPublisher>,
    ) -> Result<(), RunError> {
        let order = self.exec_order();
        self.lock_memory_if_needed(&order);
        let origin = monotonic_ns();
        self.control
            .origin_ns
            .store(origin, std::sync::atomic::Ordering::Relaxed);
        let mut handles = Vec::new();
        let spawned = self.spawn_threads(&order, origin, &mut handles);
        let pool = match spawned {
            Ok(pool) => pool,
            Err(e) => {
                self.control.stop_with(StopReason::Requested);
                wait_threads(handles, Instant::now() + self.shutdown_grace);
                return Err(e);
            }
        };

        // Supervise from this thread.
        let shared: Vec<_> = order.iter().map(|s| s.shared.clone()).collect();
        let mut watchdogs = Watchdogs::arm(&shared, monotonic_ns());
        let tick = watchdogs.resolution();
        let end = limit.map(|d| origin + d.as_nanos() as u64);
        let interval = self.stats_interval.as_nanos() as u64;
        let mut next_publish = origin;
        loop {
            let now = monotonic_ns();
            if signal::count() != signals_before {
                self.control.stop_with(StopReason::Signal);
            }
            if end.is_some_and(|e| now >= e) {
                self.control.stop_with(StopReason::Elapsed);
            }
            if self.control.is_stopped() {
                break;
            }
            watchdogs.check(now, &self.control);
            if let Some(p) = publisher {
                if now >= next_publish {
                    p.publish(&self.stats.snapshot());
                    next_publish = now + interval;
                }
            }
            let mut wait = tick.as_nanos() as u64;
            if let Some(e) = end {
                wait = wait.min(e.saturating_sub(now));
            }
            if publisher.is_some() {
                wait = wait.min(next_publish.saturating_sub(now));
            }
            self.control.wait(Duration::from_nanos(wait.max(100_000)));
        }

        let grace = Instant::now() + self.shutdown_grace;
        self.grace_deadline = Some(grace);
        if self.control.is_emergency() {
            self.safe_state_all(&order, grace);
        }
        if let Some(pool) = &pool {
            pool.close();
        }
        wait_threads(handles, grace);
        Ok(())
    }

    fn lock_memory_if_needed(&self, order: &[Arc<NodeSlot>]) {
        let Some(rt_node) = order
            .iter()
            .find(|s| matches!(s.class, ExecClass::RealTime { .. }))
        else {
            return;
        };
        if self.lock_memory == Some(false) {
            return;
        }
        let state = match rt::lock_memory() {
            Ok(()) => MemoryLock::Locked,
            Err(reason) => {
                self.control.emit(SchedulerEvent::RtFallback {
                    node: rt_node.shared.name.clone(),
                    reason,
                });
                MemoryLock::Failed
            }
        };
        self.stats
            .memory_lock
            .store(state.encode(), std::sync::atomic::Ordering::Relaxed);
    }

    /// Spawns the main thread, the pool, and the dedicated threads.
    fn spawn_threads(
        &self,
        order: &[Arc<NodeSlot>],
        origin: u64,
        handles: &mut Vec<JoinHandle<()>>,
    ) -> Result<Option<Arc<WorkerPool>>, RunError> {
        let grid = |s: &NodeSlot| Grid::new(origin, s.shared.period_ns.unwrap_or(1));
        let computes = order
            .iter()
            .filter(|s| s.class == ExecClass::Compute)
            .count();
        let pool = if computes > 0 {
            let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
            let workers = if self.workers == 0 {
                cpus
            } else {
                self.workers
            };
            Some(Arc::new(
                WorkerPool::start(workers.min(computes), computes, handles)
                    .map_err(RunError::Spawn)?,
            ))
        } else {
            None
        };
        let mut entries: Vec<Entry> = order
            .iter()
            .filter(|s| matches!(s.class, ExecClass::Main | ExecClass::Compute))
            .map(|s| Entry {
                slot: s.clone(),
                grid: grid(s),
            })
            .collect();
        let spawn = |name: String, f: Box<dyn FnOnce() + Send>| {
            std::thread::Builder::new()
                .name(name)
                .spawn(f)
                .map_err(RunError::Spawn)
        };
        if !entries.is_empty() {
            let (control, stats, pool) = (self.control.clone(), self.stats.clone(), pool.clone());
            handles.push(spawn(
                "horus-main".into(),
                Box::new(move || main_loop(&mut entries, pool.as_deref(), &control, &stats.rounds)),
            )?);
        }
        for s in order {
            let (slot, control) = (s.clone(), self.control.clone());
            let short: String = s.shared.name.chars().take(8).collect();
            match s.class {
                ExecClass::RealTime { .. } => {
                    let g = grid(s);
                    handles.push(spawn(
                        format!("hrs-rt-{short}"),
                        Box::new(move || rt_thread(&slot, g, &control)),
                    )?);
                }
                ExecClass::Event => handles.push(spawn(
                    format!("hrs-ev-{short}"),
                    Box::new(move || event_thread(&slot, &control)),
                )?),
                ExecClass::Main | ExecClass::Compute => {}
            }
        }
        Ok(pool)
    }

    /// Every initialised node's `enter_safe_state`, once.
    fn safe_state_all(&mut self, order: &[Arc<NodeSlot>], deadline: Instant) {
        if self.safe_state_done {
            return;
        }
        self.safe_state_done = true;
        for_each_runner(order, deadline, |r| {
            if r.is_initialized() {
                r.safe_state();
            }
        });
    }

    /// The end of every run: safe states after an emergency stop, then
    /// `shutdown` of every node in reverse execution order.
    pub(crate) fn finish_nodes(&mut self, deadline: Instant) {
        let mut order = self.exec_order();
        if self.control.is_emergency() {
            self.safe_state_all(&order, deadline);
        }
        order.reverse();
        for hung in for_each_runner(&order, deadline, NodeRunner::finish) {
            hung.shared.set_state(NodeState::Hung);
            self.control.emit(SchedulerEvent::NodeHung {
                node: hung.shared.name.clone(),
            });
        }
    }
}

/// Applies `f` to every runner, retrying those locked by a tick in progress
/// until `deadline`; returns the ones still locked then (hung).
fn for_each_runner(
    slots: &[Arc<NodeSlot>],
    deadline: Instant,
    mut f: impl FnMut(&mut NodeRunner),
) -> Vec<Arc<NodeSlot>> {
    let mut pending: Vec<Arc<NodeSlot>> = slots.to_vec();
    loop {
        pending.retain(|s| match s.runner.try_lock() {
            Ok(mut r) => {
                f(&mut r);
                false
            }
            Err(TryLockError::Poisoned(p)) => {
                f(&mut p.into_inner());
                false
            }
            Err(TryLockError::WouldBlock) => true,
        });
        if pending.is_empty() || Instant::now() >= deadline {
            return pending;
        }
        std::thread::sleep(Duration::from_millis(1));
    }
}

/// Joins the threads that exit before `deadline`; the others (stuck in a
/// node's tick) are detached.
fn wait_threads(handles: Vec<JoinHandle<()>>, deadline: Instant) {
    while !handles.iter().all(|h| h.is_finished()) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(1));
    }
    for h in handles {
        if h.is_finished() {
            let _ = h.join();
        }
    }
}
