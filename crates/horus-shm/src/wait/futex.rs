//! Sleeping on a futex word in shared memory: no CPU while waiting.

use std::time::Instant;

use super::{passed, Ticks, WaitStrategy, Waitable};

/// Sleeps on the waitable's futex word until it is ready or the deadline
/// passes, waking at least every [`Waitable::tick_every`] to run its tick.
///
/// Each round: read the word (the token), poll, announce, poll again, and
/// only then sleep while the word still holds the token. A waker makes the
/// condition true, then (seeing the announcement) changes the word and
/// wakes: either our second poll sees its change, or the word differs from
/// the token by the time we sleep (the kernel checks it atomically with
/// queueing us), or we are queued when it wakes. See `crate::room` for the
/// orderings this relies on.
#[derive(Clone, Copy, Debug, Default)]
pub struct Futex;

impl WaitStrategy for Futex {
    fn wait<W: Waitable>(&self, w: &mut W, deadline: Option<Instant>) -> Option<W::Ready> {
        let mut ticks = Ticks::new(w, Instant::now());
        loop {
            let token = w.token();
            if let Some(r) = w.poll() {
                return Some(r);
            }
            let now = Instant::now();
            if passed(deadline, now) {
                return None;
            }
            ticks.run_due(w, now);
            // The sleep ends at the deadline or the next tick, whichever is first.
            let until = match (deadline, ticks.next()) {
                (Some(d), Some(t)) => Some(d.min(t)),
                (d, t) => d.or(t),
            };
            w.announce();
            if let Some(r) = w.poll() {
                w.withdraw();
                return Some(r);
            }
            let timeout = until.map(|u| u.saturating_duration_since(now));
            crate::futex::wait(w.word(), token, timeout);
            w.withdraw();
        }
    }
}
