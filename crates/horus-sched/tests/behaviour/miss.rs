//! Each deadline-miss policy. The slow tick is made deliberately late by a
//! wide margin (25 ms against a 10 ms deadline), so the miss happens however
//! noisy the machine is.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use horus_sched::prelude::*;
use horus_sched::{EmergencyStopEvent, EmergencyStopReason, SchedulerEvent};

use crate::common::{scheduler, shared};

/// A 100 Hz node whose third tick takes `slow`; records each tick's release
/// time and how often its safe state was entered.
fn late_node(
    name: &'static str,
    slow: Duration,
) -> (
    Arc<Mutex<Vec<Duration>>>,
    Arc<Mutex<u32>>,
    impl Node + 'static,
) {
    let releases = shared::<Vec<Duration>>();
    let safe = shared::<u32>();
    let (r, sf) = (releases.clone(), safe.clone());
    let node = node_fn(name, move |ctx| {
        r.lock().unwrap().push(ctx.release_time());
        if ctx.tick_index() == 2 {
            std::thread::sleep(slow);
        }
        Ok(())
    })
    .on_safe_state(move || *sf.lock().unwrap() += 1);
    (releases, safe, node)
}

#[test]
fn warn_counts_and_reports_the_miss_and_keeps_ticking() {
    let (mut s, events) = scheduler("miss_warn");
    let (releases, safe, node) = late_node("late", Duration::from_millis(25));
    s.add(
        node,
        NodeConfig::new().rate(100.hz()).on_miss(MissPolicy::Warn),
    )
    .unwrap();
    assert_eq!(
        s.run_for(Duration::from_millis(500)).unwrap(),
        StopReason::Elapsed
    );
    let st = &s.stats().nodes[0];
    assert!(st.deadline_misses >= 1);
    assert!(releases.lock().unwrap().len() > 10, "kept ticking");
    assert_eq!(*safe.lock().unwrap(), 0);
    assert!(
        events.count(|e| matches!(
            e,
            SchedulerEvent::DeadlineMiss {
                policy: MissPolicy::Warn,
                ..
            }
        )) >= 1
    );
}

#[test]
fn skip_drops_the_release_after_the_miss() {
    let (mut s, _) = scheduler("miss_skip");
    // 5 ms: late against a 3 ms deadline, but ends before the next release
    // (so the grid itself drops nothing: the skip is the policy's).
    let (releases, _, node) = late_node("late", Duration::from_millis(5));
    s.add(
        node,
        NodeConfig::new()
            .rate(100.hz())
            .deadline(Duration::from_millis(3))
            .on_miss(MissPolicy::Skip),
    )
    .unwrap();
    s.run_for(Duration::from_millis(400)).unwrap();
    let st = &s.stats().nodes[0];
    assert!(st.deadline_misses >= 1);
    assert!(st.skipped >= 1);
    let r = releases.lock().unwrap();
    // Tick 2 was the slow one; the release right after it must have been
    // skipped, so the next tick's release is at least two periods later.
    assert!(
        r[3] >= r[2] + Duration::from_millis(20),
        "{:?} then {:?}",
        r[2],
        r[3]
    );
}

#[test]
fn safe_state_calls_the_hook_on_a_budget_overrun_and_keeps_ticking() {
    let (mut s, _) = scheduler("miss_safe");
    let (releases, safe, node) = late_node("late", Duration::from_millis(25));
    s.add(
        node,
        NodeConfig::new()
            .rate(100.hz())
            .budget(Duration::from_millis(5))
            .on_miss(MissPolicy::SafeState),
    )
    .unwrap();
    assert_eq!(
        s.run_for(Duration::from_millis(500)).unwrap(),
        StopReason::Elapsed
    );
    let st = &s.stats().nodes[0];
    assert!(st.budget_overruns >= 1);
    assert!(*safe.lock().unwrap() >= 1);
    assert!(releases.lock().unwrap().len() > 10, "kept ticking");
}

#[test]
fn stop_triggers_an_emergency_stop() {
    let sunk = shared::<Vec<EmergencyStopEvent>>();
    let sk = sunk.clone();
    let (s, _) = scheduler("miss_stop");
    let mut s =
        s.on_emergency_stop(move |e: &EmergencyStopEvent| sk.lock().unwrap().push(e.clone()));
    let (releases, safe, node) = late_node("late", Duration::from_millis(25));
    s.add(
        node,
        NodeConfig::new().rate(100.hz()).on_miss(MissPolicy::Stop),
    )
    .unwrap();
    let reason = s.run_for(Duration::from_secs(5)).unwrap();
    let expected = EmergencyStopReason::DeadlineMiss {
        node: "late".into(),
    };
    assert_eq!(reason, StopReason::EmergencyStop(expected.clone()));
    let sunk = sunk.lock().unwrap();
    assert_eq!(sunk.len(), 1);
    assert_eq!(sunk[0].reason, expected);
    // The miss happened on tick 2 at the latest; no further tick started.
    assert!(releases.lock().unwrap().len() <= 3);
    // Emergency stop puts every node in its safe state.
    assert_eq!(*safe.lock().unwrap(), 1);
}
