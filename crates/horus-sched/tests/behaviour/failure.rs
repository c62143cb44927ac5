//! Each failure policy, with a node that panics (or errs) on its third tick.

use std::sync::atomic::{AtomicU32, Ordering::Relaxed};
use std::sync::Arc;
use std::time::Duration;

use horus_sched::prelude::*;
use horus_sched::{EmergencyStopReason, NodeState, SchedulerEvent};

use crate::common::scheduler;

#[derive(Clone, Default)]
struct Counts {
    inits: Arc<AtomicU32>,
    ticks: Arc<AtomicU32>,
    errors: Arc<AtomicU32>,
    shutdowns: Arc<AtomicU32>,
}

/// Fails on its third tick after the first `init` (or after every `init`
/// when `every_init`), by panicking or (with `err`) returning an error.
struct Flaky {
    since_init: u32,
    every_init: bool,
    err: bool,
    c: Counts,
}

impl Flaky {
    fn new(every_init: bool, err: bool) -> (Counts, Flaky) {
        let c = Counts::default();
        (
            c.clone(),
            Flaky {
                since_init: 0,
                every_init,
                err,
                c,
            },
        )
    }
}

impl Node for Flaky {
    fn name(&self) -> &str {
        "flaky"
    }
    fn init(&mut self) -> Result<(), NodeError> {
        self.since_init = 0;
        self.c.inits.fetch_add(1, Relaxed);
        Ok(())
    }
    fn tick(&mut self, _: &TickContext<'_>) -> Result<(), NodeError> {
        self.c.ticks.fetch_add(1, Relaxed);
        self.since_init += 1;
        if self.since_init == 3 && (self.every_init || self.c.inits.load(Relaxed) == 1) {
            if self.err {
                return Err(NodeError::msg("sensor unplugged"));
            }
            panic!("boom");
        }
        Ok(())
    }
    fn shutdown(&mut self) -> Result<(), NodeError> {
        self.c.shutdowns.fetch_add(1, Relaxed);
        Ok(())
    }
    fn on_error(&mut self, _: &NodeError) {
        self.c.errors.fetch_add(1, Relaxed);
    }
}

fn failed_with(reason: &StopReason, text: &str) -> bool {
    matches!(reason, StopReason::EmergencyStop(EmergencyStopReason::NodeFailed { node, error })
        if node == "flaky" && error.contains(text))
}

#[test]
fn fatal_panic_on_third_tick_stops_everything_and_shuts_all_down() {
    let (mut s, _) = scheduler("fail_fatal");
    let (c, flaky) = Flaky::new(false, false);
    let other_down = Arc::new(AtomicU32::new(0));
    let od = other_down.clone();
    s.add(
        flaky,
        NodeConfig::new()
            .rate(100.hz())
            .on_failure(FailurePolicy::Fatal),
    )
    .unwrap();
    s.add(
        node_fn("other", |_| Ok(())).on_shutdown(move || {
            od.fetch_add(1, Relaxed);
            Ok(())
        }),
        NodeConfig::new().rate(100.hz()),
    )
    .unwrap();
    let reason = s.run_for(Duration::from_secs(5)).unwrap();
    assert!(failed_with(&reason, "boom"), "{reason:?}");
    assert_eq!(c.ticks.load(Relaxed), 3);
    assert_eq!(c.errors.load(Relaxed), 1);
    assert_eq!(c.shutdowns.load(Relaxed), 1);
    assert_eq!(other_down.load(Relaxed), 1);
    let st = s.stats();
    assert_eq!(st.nodes[0].failures, 1);
    assert_eq!(st.nodes[0].state, NodeState::ShutDown);
}

#[test]
fn restart_reinitialises_up_to_max_then_is_fatal() {
    let (mut s, events) = scheduler("fail_restart_max");
    let (c, flaky) = Flaky::new(true, false);
    let policy = FailurePolicy::Restart {
        max: 2,
        backoff: Duration::from_millis(20),
    };
    s.add(flaky, NodeConfig::new().rate(100.hz()).on_failure(policy))
        .unwrap();
    let reason = s.run_for(Duration::from_secs(5)).unwrap();
    assert!(failed_with(&reason, "after 2 restarts"), "{reason:?}");
    assert_eq!(c.inits.load(Relaxed), 3);
    assert_eq!(c.ticks.load(Relaxed), 9);
    assert_eq!(
        c.shutdowns.load(Relaxed),
        3,
        "2 restarts + the final shutdown"
    );
    let st = &s.stats().nodes[0];
    assert_eq!((st.restarts, st.failures), (2, 3));
    assert_eq!(
        events.count(|e| matches!(e, SchedulerEvent::NodeRestarting { .. })),
        2
    );
}

#[test]
fn restart_recovers_from_a_single_panic() {
    let (mut s, _) = scheduler("fail_restart_once");
    let (c, flaky) = Flaky::new(false, false);
    let policy = FailurePolicy::Restart {
        max: 3,
        backoff: Duration::from_millis(10),
    };
    s.add(flaky, NodeConfig::new().rate(100.hz()).on_failure(policy))
        .unwrap();
    assert_eq!(
        s.run_for(Duration::from_millis(500)).unwrap(),
        StopReason::Elapsed
    );
    assert_eq!(c.inits.load(Relaxed), 2);
    assert!(c.ticks.load(Relaxed) > 10);
    let st = &s.stats().nodes[0];
    assert_eq!((st.restarts, st.failures), (1, 1));
}

#[test]
fn skip_suspends_for_the_cooldown_then_resumes() {
    let (mut s, events) = scheduler("fail_skip");
    let (c, flaky) = Flaky::new(false, false);
    let policy = FailurePolicy::Skip {
        max: 1,
        cooldown: Duration::from_millis(150),
    };
    s.add(flaky, NodeConfig::new().rate(100.hz()).on_failure(policy))
        .unwrap();
    assert_eq!(
        s.run_for(Duration::from_millis(600)).unwrap(),
        StopReason::Elapsed
    );
    let st = &s.stats().nodes[0];
    assert_eq!(st.failures, 1);
    assert!(st.skipped >= 5, "skipped {}", st.skipped);
    assert!(c.ticks.load(Relaxed) > 10, "resumed after the cooldown");
    assert_eq!(c.inits.load(Relaxed), 1, "no re-init under Skip");
    assert_eq!(
        events.count(|e| matches!(e, SchedulerEvent::NodeSuspended { .. })),
        1
    );
}

#[test]
fn ignore_reports_errors_and_keeps_ticking() {
    let (mut s, events) = scheduler("fail_ignore");
    let (c, flaky) = Flaky::new(false, true);
    s.add(
        flaky,
        NodeConfig::new()
            .rate(100.hz())
            .on_failure(FailurePolicy::Ignore),
    )
    .unwrap();
    assert_eq!(
        s.run_for(Duration::from_millis(300)).unwrap(),
        StopReason::Elapsed
    );
    assert!(c.ticks.load(Relaxed) > 10);
    assert_eq!(c.errors.load(Relaxed), 1);
    assert_eq!(s.stats().nodes[0].failures, 1);
    assert_eq!(
        events.count(
            |e| matches!(e, SchedulerEvent::TickFailed { error, .. } if error == "sensor unplugged")
        ),
        1
    );
}
