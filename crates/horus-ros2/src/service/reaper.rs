//! Worker threads of closed routes that were still in a call when their route closed: the
//! bridge loop never waits for them (a call can take the whole call timeout); they are
//! joined once finished, and all of them when the bridge stops.

use std::sync::{Arc, Mutex, PoisonError};
use std::thread::JoinHandle;

/// Threads to join, shared by the services and their routes.
#[derive(Clone, Default)]
pub(crate) struct Reaper(Arc<Mutex<Vec<JoinHandle<()>>>>);

impl Reaper {
    /// Takes `h` to join later (at once if it already ended).
    pub(crate) fn adopt(&self, h: JoinHandle<()>) {
        if h.is_finished() {
            let _ = h.join();
        } else {
            self.lock().push(h);
        }
    }

    /// Joins the threads that ended; how many are still running.
    pub(crate) fn reap_finished(&self) -> usize {
        let mut v = self.lock();
        let mut i = 0;
        while i < v.len() {
            if v[i].is_finished() {
                let _ = v.swap_remove(i).join();
            } else {
                i += 1;
            }
        }
        v.len()
    }

    /// Joins every thread (each ends within one call timeout: it calls nothing after its
    /// route closed).
    pub(crate) fn join_all(&self) {
        let all = std::mem::take(&mut *self.lock());
        for h in all {
            let _ = h.join();
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<JoinHandle<()>>> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }
}
