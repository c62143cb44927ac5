//! A thread that moves one topic's or service's traffic until told to stop: the stop flag and
//! the join, shared by every kind of worker the bridge runs.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;

/// A running worker thread; dropping it stops it and waits for it.
pub(crate) struct Worker {
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

/// What a worker's loop checks.
#[derive(Clone)]
pub(crate) struct StopFlag(Arc<AtomicBool>);

impl StopFlag {
    /// Whether the worker has been told to stop. Relaxed: a flag read in a loop; nothing is
    /// published through it (the join orders everything else).
    pub(crate) fn is_set(&self) -> bool {
        self.0.load(Ordering::Relaxed)
    }
}

impl Worker {
    /// Starts `body` on a thread named `name`.
    pub(crate) fn spawn(
        name: String,
        body: impl FnOnce(StopFlag) + Send + 'static,
    ) -> Result<Worker, String> {
        let stop = Arc::new(AtomicBool::new(false));
        let flag = StopFlag(Arc::clone(&stop));
        let thread = std::thread::Builder::new()
            .name(name)
            .spawn(move || body(flag))
            .map_err(|e| format!("thread: {e}"))?;
        Ok(Worker {
            stop,
            thread: Some(thread),
        })
    }
}

impl Worker {
    /// Tells the worker to stop without waiting for it (it is blocked somewhere it will
    /// return from on its own, e.g. a put that Zenoh ends when it gives up on a link).
    pub(crate) fn detach(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        self.thread.take();
    }
}

impl Drop for Worker {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}
