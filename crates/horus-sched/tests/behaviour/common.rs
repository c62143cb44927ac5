//! Helpers shared by the behaviour tests.

use std::sync::{Arc, Mutex};

use horus_sched::{Scheduler, SchedulerEvent};

/// Events captured from a scheduler.
#[derive(Clone, Default)]
pub(crate) struct Events(pub(crate) Arc<Mutex<Vec<SchedulerEvent>>>);

impl Events {
    pub(crate) fn count(&self, pred: impl Fn(&SchedulerEvent) -> bool) -> usize {
        self.0.lock().unwrap().iter().filter(|e| pred(e)).count()
    }
}

/// A unique namespace for `test` (per process, per test).
pub(crate) fn namespace(test: &str) -> String {
    format!("t{}-{test}", std::process::id())
}

/// A real-clock scheduler for `test`: its own namespace, no signal handling
/// (tests share a process), events captured instead of printed.
pub(crate) fn scheduler(test: &str) -> (Scheduler, Events) {
    let events = Events::default();
    let sink = events.0.clone();
    let s = Scheduler::new()
        .name(test)
        .namespace(namespace(test))
        .handle_signals(false)
        // mlockall would pin the whole test process; the fixture process
        // (sigterm test) exercises it instead.
        .lock_memory(false)
        .on_event(move |e| sink.lock().unwrap().push(e.clone()));
    (s, events)
}

/// A shared counter/flag cell for nodes to write and the test to read.
pub(crate) fn shared<T: Default>() -> Arc<Mutex<T>> {
    Arc::new(Mutex::new(T::default()))
}
