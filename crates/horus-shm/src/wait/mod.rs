//! How a thread waits for something another thread or process makes ready:
//! one trait, [`WaitStrategy`], with one implementation per file — [`Spin`]
//! (poll with a CPU spin hint), [`Yield`] (poll, giving the CPU away between
//! polls) and [`Futex`] (sleep on a 32-bit word in shared memory that the
//! other side bumps and wakes). A wait chains them: a subscriber's blocking
//! receive and a `Block` publisher waiting for room both spin briefly, yield
//! a few times, then sleep on the futex; a busy-poll subscriber only spins.
//!
//! What is waited for is a [`Waitable`]: a condition to poll, and for the
//! futex the word and the announcement a waker checks (see `crate::room` and
//! `crate::protocol` for the two handshakes). The conformance suite in
//! `tests.rs` runs against every strategy.

use std::time::{Duration, Instant};

use crate::sync::AtomicU32;

mod futex;
mod spin;
mod yielding;

#[cfg(test)]
mod tests;

pub use futex::Futex;
pub use spin::Spin;
pub use yielding::Yield;

/// Something a thread waits for.
pub trait Waitable {
    /// What the wait returns once the condition holds.
    type Ready;

    /// Checks the condition once; `Some` ends the wait.
    fn poll(&mut self) -> Option<Self::Ready>;

    /// The futex word a waker bumps before waking sleepers.
    fn word(&self) -> &AtomicU32;

    /// The value of [`word`](Self::word) to sleep on, read before the poll
    /// that decides to sleep. Acquire: pairs with the waker's Release bump,
    /// so that poll sees what the waker made ready before bumping.
    fn token(&self) -> u32 {
        self.word().load(crate::sync::Ordering::Acquire)
    }

    /// About to sleep on [`word`](Self::word): make wakers see it (with the
    /// fence of the handshake). The strategy polls once more after this.
    fn announce(&self);

    /// Done sleeping (woken, timed out, or ready on the re-check).
    fn withdraw(&self);

    /// Longest the strategy may go without calling [`tick`](Self::tick)
    /// (and, for [`Futex`], longest single sleep). `None`: no limit.
    fn tick_every(&self) -> Option<Duration> {
        None
    }

    /// Periodic work while waiting (a liveness check that may make the
    /// condition true, such as reclaiming a dead subscriber's cursor).
    fn tick(&mut self) {}
}

/// A way of waiting for a [`Waitable`].
pub trait WaitStrategy {
    /// Waits until `w` is ready (`Some`), this strategy's own budget runs
    /// out, or `deadline` passes (`None` in both cases; `deadline: None` is
    /// no deadline).
    fn wait<W: Waitable>(&self, w: &mut W, deadline: Option<Instant>) -> Option<W::Ready>;
}

/// When a waiting loop runs the waitable's next tick.
pub(crate) struct Ticks {
    every: Option<Duration>,
    next: Option<Instant>,
}

impl Ticks {
    pub(crate) fn new<W: Waitable>(w: &W, now: Instant) -> Ticks {
        let every = w.tick_every();
        Ticks {
            every,
            next: every.map(|e| now + e),
        }
    }

    /// Runs `w.tick()` if one is due at `now`.
    pub(crate) fn run_due<W: Waitable>(&mut self, w: &mut W, now: Instant) {
        if let (Some(every), Some(next)) = (self.every, self.next) {
            if now >= next {
                w.tick();
                self.next = Some(now + every);
            }
        }
    }

    /// The next tick, if any.
    pub(crate) fn next(&self) -> Option<Instant> {
        self.next
    }
}

/// Whether `deadline` has passed at `now`.
#[inline]
pub(crate) fn passed(deadline: Option<Instant>, now: Instant) -> bool {
    deadline.is_some_and(|d| now >= d)
}
