//! Polling that gives the CPU away between polls.

use std::time::Instant;

use super::{passed, Ticks, WaitStrategy, Waitable};

/// Polls up to `polls` times (`u32::MAX`: until the deadline), yielding the
/// CPU between polls. When the thread that makes the condition true shares
/// our CPU, a spin cannot see it (it cannot run while we spin) and a sleep
/// costs a wake-up per event; a yield lets it run on.
#[derive(Clone, Copy, Debug)]
pub struct Yield {
    /// Polls before giving up.
    pub polls: u32,
}

impl WaitStrategy for Yield {
    fn wait<W: Waitable>(&self, w: &mut W, deadline: Option<Instant>) -> Option<W::Ready> {
        let mut ticks = Ticks::new(w, Instant::now());
        for _ in 0..self.polls {
            if let Some(r) = w.poll() {
                return Some(r);
            }
            let now = Instant::now();
            if passed(deadline, now) {
                return None;
            }
            ticks.run_due(w, now);
            crate::sync::yield_now();
        }
        None
    }
}
