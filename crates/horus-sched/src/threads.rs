//! The loops of the scheduler's threads in real-time (non-deterministic)
//! runs: the main thread (main-class nodes, and dispatch of compute nodes to
//! the pool), one thread per real-time node, one thread per event node.
//!
//! Every periodic loop sleeps until an absolute release time taken from the
//! node's [`Grid`] — never "sleep one period after the tick".

use std::sync::Arc;

use crate::clock::{monotonic_ns, sleep_until};
use crate::config::ExecClass;
use crate::estop::Control;
use crate::events::SchedulerEvent;
use crate::grid::Grid;
use crate::histogram::AtomicHistogram;
use crate::rt::{self, RtMode};
use crate::runner::NodeSlot;
use crate::watchdog::EVENT_WAIT_SLICE;
use crate::worker_pool::{Job, WorkerPool};

/// A periodic node on the main thread's schedule.
pub(crate) struct Entry {
    pub(crate) slot: Arc<NodeSlot>,
    pub(crate) grid: Grid,
}

/// The main thread: each round serves every due release in `entries` order
/// (ticking main nodes inline, handing compute nodes to the pool), then
/// sleeps until the earliest next release. `rounds` records each round's
/// duration (wake-up to next sleep) when it served at least one release.
pub(crate) fn main_loop(
    entries: &mut [Entry],
    pool: Option<&WorkerPool>,
    control: &Control,
    rounds: &AtomicHistogram,
) {
    rt::minimize_timer_slack();
    loop {
        if control.is_stopped() {
            return;
        }
        let now = monotonic_ns();
        let mut served = false;
        let mut next = u64::MAX;
        let mut spin = 0;
        for e in entries.iter_mut() {
            if e.grid.next() <= now {
                let (release, dropped) = e.grid.take(now);
                served = true;
                match (e.slot.class, pool) {
                    (ExecClass::Compute, Some(pool)) => {
                        e.slot.shared.feed(now);
                        pool.submit(Job {
                            slot: e.slot.clone(),
                            release_ns: release,
                            dropped,
                        });
                    }
                    _ => e.slot.lock().on_release(release, dropped),
                }
            }
            let n = e.grid.next();
            if n < next {
                next = n;
                spin = e.slot.spin_ns;
            }
        }
        if served {
            rounds.record(monotonic_ns() - now);
        }
        if next == u64::MAX || !sleep_until(next, spin, control.stop_flag()) {
            return;
        }
    }
}

/// Applies a dedicated thread's settings (timer slack, CPU pinning,
/// SCHED_FIFO) and records what was granted in the node's stats.
pub(crate) fn apply_thread_settings(slot: &NodeSlot, control: &Control) {
    rt::minimize_timer_slack();
    let fallback = |reason: String| {
        control.emit(SchedulerEvent::RtFallback {
            node: slot.shared.name.clone(),
            reason,
        })
    };
    if let Some(core) = slot.core {
        match rt::pin_current_thread(core) {
            Ok(()) => slot
                .shared
                .core
                .store(core as u64 + 1, std::sync::atomic::Ordering::Relaxed),
            Err(e) => fallback(format!("pinning to CPU {core} failed: {e}; not pinned")),
        }
    }
    if let ExecClass::RealTime { priority } = slot.class {
        rt::prefault_stack();
        let mode = match rt::set_fifo(priority) {
            Ok(()) => RtMode::Fifo { priority },
            Err(e) => {
                if rt::first_fallback() {
                    fallback(rt::fallback_hint(&e));
                }
                RtMode::Fallback {
                    requested: priority,
                }
            }
        };
        slot.shared
            .rt_mode
            .store(mode.encode(), std::sync::atomic::Ordering::Relaxed);
    }
}

/// A real-time node's own thread.
pub(crate) fn rt_thread(slot: &NodeSlot, mut grid: Grid, control: &Control) {
    apply_thread_settings(slot, control);
    while sleep_until(grid.next(), slot.spin_ns, control.stop_flag()) {
        let (release, dropped) = grid.take(monotonic_ns());
        slot.lock().on_release(release, dropped);
    }
}

/// An event-driven node's own thread: waits on its readiness source and
/// ticks once per `ready()`; a configured rate caps it to one tick per period.
pub(crate) fn event_thread(slot: &NodeSlot, control: &Control) {
    apply_thread_settings(slot, control);
    let Some(source) = slot.readiness.as_deref() else {
        return;
    };
    let cap = slot.shared.period_ns;
    let mut next_allowed = 0;
    while !control.is_stopped() {
        let now = monotonic_ns();
        slot.shared.feed(now);
        if cap.is_some() && now < next_allowed {
            sleep_until(next_allowed, 0, control.stop_flag());
            continue;
        }
        if source.ready() {
            slot.lock().on_release(now, 0);
            if let Some(p) = cap {
                next_allowed = now + p;
            }
        } else {
            source.wait(EVENT_WAIT_SLICE);
        }
    }
}
