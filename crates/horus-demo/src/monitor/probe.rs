//! The monitor's probes: one event-driven node per topic, ticking when its
//! subscriber has data (through `Subscriber::readiness`, i.e. a futex wait
//! on the topic), that drains the subscriber and records each message's
//! one-way latency.

use std::sync::{Arc, Mutex, MutexGuard};

use horus::prelude::*;

use crate::topics::now_ns;

/// Messages that carry a send time.
pub(crate) trait Stamped: Message {
    /// `stamp_ns` of the message.
    fn stamp_ns(&self) -> u64;
}

macro_rules! stamped {
    ($($t:ty),*) => {$(
        impl Stamped for $t {
            fn stamp_ns(&self) -> u64 {
                self.stamp_ns
            }
        }
    )*};
}
stamped!(LaserScan, Imu, CmdVel, EmergencyStop);

/// What a probe saw since the window was last taken.
pub(crate) struct Window<T> {
    /// One-way latency of each message received, ns.
    pub(crate) latencies_ns: Vec<u64>,
    /// The newest message received (ever, not only in this window).
    pub(crate) last: Option<T>,
}

impl<T> Default for Window<T> {
    fn default() -> Self {
        Window {
            latencies_ns: Vec::with_capacity(2048),
            last: None,
        }
    }
}

/// The probe's window, shared with the reporter.
pub(crate) struct Shared<T>(Arc<Mutex<Window<T>>>);

impl<T> Clone for Shared<T> {
    fn clone(&self) -> Self {
        Shared(Arc::clone(&self.0))
    }
}

impl<T: Copy> Shared<T> {
    fn lock(&self) -> MutexGuard<'_, Window<T>> {
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Takes the latencies recorded so far, leaving an empty window.
    pub(crate) fn take(&self) -> Vec<u64> {
        std::mem::take(&mut self.lock().latencies_ns)
    }

    /// The newest message received.
    pub(crate) fn last(&self) -> Option<T> {
        self.lock().last
    }
}

/// An event-driven node draining one subscriber.
pub(crate) struct Probe<T> {
    name: String,
    sub: Subscriber<T>,
    window: Shared<T>,
    batch: Vec<u64>,
}

impl<T: Stamped> Probe<T> {
    /// A probe on `sub`, plus the handle its window is read through.
    pub(crate) fn new(name: &str, sub: Subscriber<T>) -> (Probe<T>, Shared<T>) {
        let window = Shared(Arc::new(Mutex::new(Window::default())));
        let probe = Probe {
            name: name.to_owned(),
            sub,
            window: window.clone(),
            batch: Vec::with_capacity(64),
        };
        (probe, window)
    }
}

impl<T: Stamped> Node for Probe<T> {
    fn name(&self) -> &str {
        &self.name
    }

    fn tick(&mut self, _ctx: &TickContext<'_>) -> Result<(), NodeError> {
        let mut last = None;
        while let Some(msg) = self.sub.try_recv() {
            // The clock is read per message, right at its receive: a message
            // that waited behind another one shows that wait.
            let now = now_ns();
            self.batch.push(now.saturating_sub(msg.stamp_ns()));
            last = Some(*msg);
        }
        if let Some(last) = last {
            let mut w = self.window.lock();
            w.latencies_ns.append(&mut self.batch);
            w.last = Some(last);
        }
        Ok(())
    }
}
