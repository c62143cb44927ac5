//! The thread that moves one topic route's messages (one per route and direction), and
//! what it shares with the bridge loop.
//!
//! Each route blocks on its own wake source — the horus subscriber's futex wait (to ROS 2),
//! the DDS reader's readiness through a `mio` poll (from ROS 2) — so a message crosses as
//! soon as it arrives, an idle route costs no CPU, and a route that waits (a `Block` horus
//! topic's full ring, a reliable ROS 2 reader's full send window) holds only itself, never
//! the other routes or the bridge loop's scans.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::Duration;

use crate::status::RouteCounters;

/// A route's counters, shared by its thread (which adds to them) and the bridge (which
/// reports them). They outlive the route: a topic's counters run since the bridge started.
#[derive(Clone, Default)]
pub(crate) struct SharedCounters(Arc<Mutex<RouteCounters>>);

impl SharedCounters {
    /// The counters, locked (a poisoned lock still holds valid counts: they are plain
    /// integers updated one field at a time).
    pub(crate) fn lock(&self) -> MutexGuard<'_, RouteCounters> {
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// A copy of the counters now.
    pub(crate) fn get(&self) -> RouteCounters {
        self.lock().clone()
    }
}

/// The horus publisher place of the bridge's own publisher on a topic (the ROS 2 → horus
/// route's), so that the horus → ROS 2 route of the same topic does not send it back.
/// [`NO_PLACE`] while no such route is open.
#[derive(Clone)]
pub(crate) struct OwnPlace(Arc<AtomicUsize>);

/// No publisher place: nothing to skip.
const NO_PLACE: usize = usize::MAX;

impl Default for OwnPlace {
    fn default() -> OwnPlace {
        OwnPlace(Arc::new(AtomicUsize::new(NO_PLACE)))
    }
}

impl OwnPlace {
    /// Sets the place (`None`: the route closed).
    // Release/Acquire: the place is stored before the inbound route's thread publishes its
    // first message, and the outbound thread's load is ordered before it reads messages.
    pub(crate) fn set(&self, place: Option<usize>) {
        self.0.store(place.unwrap_or(NO_PLACE), Ordering::Release);
    }

    /// Clears the place if it is still `place`: a route that stops clears its own, never
    /// the one a route opened anew since has stored (the old thread may stop after the
    /// new route opened, e.g. held in a `Block` publish: found in review).
    // Release: as `set`.
    pub(crate) fn clear_if(&self, place: usize) {
        let _ = self
            .0
            .compare_exchange(place, NO_PLACE, Ordering::Release, Ordering::Relaxed);
    }

    /// The place, if the bridge publishes on the topic now.
    pub(crate) fn get(&self) -> Option<usize> {
        Some(self.0.load(Ordering::Acquire)).filter(|p| *p != NO_PLACE)
    }
}

/// Asks a route thread to stop; cloned into the thread.
#[derive(Clone, Default)]
pub(crate) struct StopFlag(Arc<AtomicBool>);

impl StopFlag {
    /// Whether the route was asked to stop.
    // Relaxed: a flag polled between waits; nothing else is published through it.
    pub(crate) fn is_set(&self) -> bool {
        self.0.load(Ordering::Relaxed)
    }

    fn set(&self) {
        self.0.store(true, Ordering::Relaxed);
    }
}

/// How long a route thread waits at most before it looks at its stop flag again when no
/// other wake source interrupts it (the horus subscriber's wait cannot be interrupted from
/// outside; a DDS reader's poll is woken at once).
pub(crate) const STOP_POLL: Duration = Duration::from_millis(100);

/// A running route thread. Dropping it asks the thread to stop and does not wait: the
/// thread finishes its current wait on its own (bounded: [`STOP_POLL`], a DDS write's
/// `max_blocking_time`, a `Block` topic's timeout). [`RouteThread::stop`] hands back the
/// handle for whoever must join it (the bridge, before its DDS participant goes).
pub(crate) struct RouteThread {
    stop: StopFlag,
    /// Wakes the thread's poll, if it has one.
    waker: Option<Arc<mio::Waker>>,
    handle: Option<JoinHandle<()>>,
}

impl RouteThread {
    /// Spawns `body` as thread `name`, handing it the stop flag.
    pub(crate) fn spawn(
        name: String,
        waker: Option<Arc<mio::Waker>>,
        body: impl FnOnce(StopFlag) + Send + 'static,
    ) -> std::io::Result<RouteThread> {
        let stop = StopFlag::default();
        let flag = stop.clone();
        let handle = std::thread::Builder::new()
            .name(name)
            .spawn(move || body(flag))?;
        Ok(RouteThread {
            stop,
            waker,
            handle: Some(handle),
        })
    }

    /// Asks the thread to stop and returns its handle (to join off the loop).
    pub(crate) fn stop(mut self) -> Option<JoinHandle<()>> {
        self.signal();
        self.handle.take()
    }

    fn signal(&self) {
        self.stop.set();
        if let Some(w) = &self.waker {
            let _ = w.wake();
        }
    }
}

impl Drop for RouteThread {
    fn drop(&mut self) {
        self.signal();
    }
}

/// Threads of closed routes still finishing their last wait. The bridge loop never joins a
/// running one (a `Block` topic may hold it for its timeout); finished ones are collected
/// on each scan, and the rest are joined when the bridge stops, before its DDS participant.
#[derive(Default)]
pub(crate) struct Stopping(Vec<JoinHandle<()>>);

impl Stopping {
    /// Adds a stopping thread.
    pub(crate) fn add(&mut self, handle: Option<JoinHandle<()>>) {
        self.0.extend(handle);
    }

    /// Joins the threads that have finished.
    pub(crate) fn collect(&mut self) {
        let (done, running): (Vec<_>, Vec<_>) = self.0.drain(..).partition(|h| h.is_finished());
        self.0 = running;
        for h in done {
            let _ = h.join();
        }
    }

    /// Joins every thread.
    pub(crate) fn join_all(&mut self) {
        for h in self.0.drain(..) {
            let _ = h.join();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::OwnPlace;

    /// A route that stops after a route opened anew on the topic stored its own place
    /// clears only its own: was, it cleared the new one, and the other direction sent the
    /// bridge's own messages back to ROS 2 (review).
    #[test]
    fn a_stopping_route_clears_only_its_own_place() {
        let p = OwnPlace::default();
        p.set(Some(1));
        p.set(Some(2)); // a route opened anew while the first one's thread still runs
        p.clear_if(1); // the first one's thread stops
        assert_eq!(p.get(), Some(2));
        p.clear_if(2);
        assert_eq!(p.get(), None);
    }
}
