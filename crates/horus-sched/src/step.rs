//! Inline stepping on the calling thread: deterministic mode and
//! [`Scheduler::tick_once`](crate::Scheduler::tick_once).
//!
//! Every node, whatever its class, is ticked here in one fixed order
//! (`order`, then insertion). Deterministic mode jumps the simulated clock
//! from one release to the next, so a run's output depends only on the nodes'
//! inputs and the order — never on thread timing.

use std::sync::Arc;

use crate::clock::{sleep_until, Clock};
use crate::estop::Control;
use crate::grid::Grid;
use crate::runner::NodeSlot;

struct StepEntry {
    slot: Arc<NodeSlot>,
    /// `None` for event-driven nodes, polled at every step.
    grid: Option<Grid>,
}

/// The inline schedule.
pub(crate) struct Stepper {
    entries: Vec<StepEntry>,
    /// Upper bound on the simulated time between two steps, so that event
    /// nodes get polled: the scheduler's base tick period.
    max_step_ns: u64,
}

impl Stepper {
    /// `slots` must already be sorted in execution order.
    pub(crate) fn new(slots: &[Arc<NodeSlot>], origin_ns: u64, max_step_ns: u64) -> Stepper {
        let entries = slots
            .iter()
            .map(|s| StepEntry {
                slot: s.clone(),
                grid: s
                    .readiness
                    .is_none()
                    .then(|| Grid::new(origin_ns, s.shared.period_ns.unwrap_or(max_step_ns))),
            })
            .collect();
        Stepper {
            entries,
            max_step_ns,
        }
    }

    /// When the next step should happen, given the clock time `now`.
    pub(crate) fn next_step(&self, now: u64) -> u64 {
        let periodic = self
            .entries
            .iter()
            .filter_map(|e| e.grid.map(|g| g.next()))
            .min();
        let has_events = self.entries.iter().any(|e| e.grid.is_none());
        match periodic {
            Some(t) if has_events => t.min(now + self.max_step_ns),
            Some(t) => t,
            None => now + self.max_step_ns,
        }
        .max(now)
    }

    /// Serves, at clock time `now`, every due periodic release and every ready
    /// event node, in order. Returns whether anything was served.
    pub(crate) fn step(&mut self, now: u64, control: &Control) -> bool {
        let mut served = false;
        for e in &mut self.entries {
            if control.is_stopped() {
                break;
            }
            match (&mut e.grid, e.slot.readiness.as_deref()) {
                (Some(g), _) if g.next() <= now => {
                    let (release, dropped) = g.take(now);
                    e.slot.lock().on_release(release, dropped);
                    served = true;
                }
                (None, Some(source)) if source.ready() => {
                    e.slot.lock().on_release(now, 0);
                    served = true;
                }
                _ => {}
            }
        }
        served
    }

    /// One round: move to the next step time (jump the simulated clock, or
    /// sleep on the real one), then [`step`](Stepper::step). Returns `false`
    /// if a stop request interrupted the wait.
    pub(crate) fn round(&mut self, clock: &Clock, control: &Control) -> bool {
        let now = clock.now_ns();
        let next = self.next_step(now);
        if clock.is_simulated() {
            clock.advance_to(next);
        } else if !sleep_until(next, 0, control.stop_flag()) {
            return false;
        }
        self.step(clock.now_ns(), control);
        true
    }
}
