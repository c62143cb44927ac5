//! Busy-polling with a spin-loop hint: the lowest latency, one core busy.

use std::time::Instant;

use super::{passed, Ticks, WaitStrategy, Waitable};

/// Polls up to `polls` times (`u32::MAX`: until the deadline), with a CPU
/// spin hint between polls. Reads the clock (deadline, ticks) only every
/// [`Spin::CLOCK_EVERY`] polls, so a short spin costs no clock reads.
#[derive(Clone, Copy, Debug)]
pub struct Spin {
    /// Polls before giving up.
    pub polls: u32,
}

impl Spin {
    /// Polls between two clock reads.
    pub const CLOCK_EVERY: u32 = 256;
}

impl WaitStrategy for Spin {
    fn wait<W: Waitable>(&self, w: &mut W, deadline: Option<Instant>) -> Option<W::Ready> {
        let mut ticks: Option<Ticks> = None;
        for i in 0..self.polls {
            if let Some(r) = w.poll() {
                return Some(r);
            }
            if i % Self::CLOCK_EVERY == Self::CLOCK_EVERY - 1 {
                let now = Instant::now();
                if passed(deadline, now) {
                    return None;
                }
                ticks
                    .get_or_insert_with(|| Ticks::new(w, now))
                    .run_due(w, now);
            }
            crate::sync::spin_hint();
        }
        None
    }
}
