//! Readiness sources for event-driven nodes, and [`Trigger`], a simple one.

use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

/// Tells the scheduler when an event-driven node has work (for example, a
/// topic subscriber with unread messages).
///
/// The scheduler calls [`ready`](Readiness::ready) once before each potential
/// tick and ticks the node when it returns `true`; a source that counts events
/// may consume one per `true`. Between checks it calls
/// [`wait`](Readiness::wait); override that with a real blocking wait (futex,
/// condvar) so that an idle event node costs no CPU.
pub trait Readiness: Send + Sync {
    /// Whether the node should tick now.
    fn ready(&self) -> bool;

    /// Blocks until the source is probably ready or `timeout` passes; returns
    /// whether it is probably ready (the scheduler confirms with `ready`).
    ///
    /// The default blocks on nothing: it sleeps for `min(timeout, 1 ms)` and
    /// returns `true`, so a source without a real wait is polled at up to
    /// 1 kHz and its latency is up to a millisecond.
    fn wait(&self, timeout: Duration) -> bool {
        std::thread::sleep(timeout.min(Duration::from_millis(1)));
        true
    }
}

impl<R: Readiness + ?Sized> Readiness for Arc<R> {
    fn ready(&self) -> bool {
        (**self).ready()
    }
    fn wait(&self, timeout: Duration) -> bool {
        (**self).wait(timeout)
    }
}

/// A counting event source: every [`notify`](Trigger::notify) makes the node
/// tick once. Clones share the count.
#[derive(Clone, Default)]
pub struct Trigger {
    inner: Arc<(Mutex<u64>, Condvar)>,
}

impl Trigger {
    /// A trigger with nothing pending.
    pub fn new() -> Trigger {
        Trigger::default()
    }

    /// Requests one more tick of the node waiting on this trigger.
    pub fn notify(&self) {
        let (count, cv) = &*self.inner;
        *lock(count) += 1;
        cv.notify_all();
    }

    /// Ticks requested but not yet started.
    pub fn pending(&self) -> u64 {
        *lock(&self.inner.0)
    }
}

impl Readiness for Trigger {
    fn ready(&self) -> bool {
        let mut count = lock(&self.inner.0);
        if *count > 0 {
            *count -= 1;
            true
        } else {
            false
        }
    }

    fn wait(&self, timeout: Duration) -> bool {
        let (count, cv) = &*self.inner;
        let deadline = Instant::now() + timeout;
        let mut guard = lock(count);
        while *guard == 0 {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return false;
            }
            guard = match cv.wait_timeout(guard, left) {
                Ok((g, _)) => g,
                Err(poisoned) => poisoned.into_inner().0,
            };
        }
        true
    }
}

/// Locks `m`, ignoring poisoning (the counter cannot be left inconsistent).
fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trigger_counts_notifications() {
        let t = Trigger::new();
        assert!(!t.ready());
        t.notify();
        t.notify();
        assert_eq!(t.pending(), 2);
        assert!(t.ready());
        assert!(t.ready());
        assert!(!t.ready());
    }

    #[test]
    fn trigger_wait_wakes_on_notify() {
        let t = Trigger::new();
        let t2 = t.clone();
        let h = std::thread::spawn(move || t2.wait(Duration::from_secs(10)));
        std::thread::sleep(Duration::from_millis(10));
        t.notify();
        assert!(h.join().unwrap());
        assert!(!Trigger::new().wait(Duration::from_millis(1)));
    }
}
