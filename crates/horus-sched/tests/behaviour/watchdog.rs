//! Watchdog detection: a node that hangs inside `tick`, a node that stops
//! being run, and no false alarm for a healthy node.

use std::sync::atomic::{AtomicBool, AtomicU32, Ordering::Relaxed};
use std::sync::Arc;
use std::time::Duration;

use horus_sched::prelude::*;
use horus_sched::{EmergencyStopReason, NodeState, SchedulerEvent};

use crate::common::scheduler;

#[test]
fn a_node_hanging_in_tick_is_detected_and_stops_the_scheduler() {
    let (s, events) = scheduler("wd_hang");
    let mut s = s.shutdown_grace(Duration::from_millis(200));
    let release = Arc::new(AtomicBool::new(false));
    let (rel, hung_down, other_down) = (
        release.clone(),
        Arc::new(AtomicU32::new(0)),
        Arc::new(AtomicU32::new(0)),
    );
    let (hd, od) = (hung_down.clone(), other_down.clone());
    s.add(
        node_fn("hang", move |ctx| {
            if ctx.tick_index() == 2 {
                while !rel.load(Relaxed) {
                    std::thread::sleep(Duration::from_millis(5));
                }
            }
            Ok(())
        })
        .on_shutdown(move || {
            hd.fetch_add(1, Relaxed);
            Ok(())
        }),
        NodeConfig::new()
            .rate(100.hz())
            .watchdog(Duration::from_millis(100), WatchdogAction::EmergencyStop),
    )
    .unwrap();
    s.add(
        node_fn("other", |_| Ok(())).on_shutdown(move || {
            od.fetch_add(1, Relaxed);
            Ok(())
        }),
        NodeConfig::new().rate(100.hz()).realtime(1),
    )
    .unwrap();
    let reason = s.run_for(Duration::from_secs(10)).unwrap();
    assert!(
        matches!(&reason, StopReason::EmergencyStop(EmergencyStopReason::Watchdog { node, .. }) if node == "hang"),
        "{reason:?}"
    );
    assert!(
        events.count(|e| matches!(e,
        SchedulerEvent::WatchdogExpired { node, in_tick: true, .. } if &**node == "hang"))
            == 1
    );
    let st = s.stats();
    assert_eq!(st.nodes[0].state, NodeState::Hung);
    assert_eq!(st.nodes[0].watchdog_expiries, 1);
    // Honest: the hung node's shutdown could not run; the other's did.
    assert_eq!(hung_down.load(Relaxed), 0);
    assert_eq!(other_down.load(Relaxed), 1);
    assert_eq!(
        events.count(|e| matches!(e, SchedulerEvent::NodeHung { .. })),
        1
    );
    release.store(true, Relaxed);
}

#[test]
fn a_node_starved_by_a_neighbour_is_detected() {
    let (mut s, events) = scheduler("wd_starved");
    s.add(
        node_fn("hog", |ctx| {
            if ctx.tick_index() == 2 {
                std::thread::sleep(Duration::from_millis(400));
            }
            Ok(())
        }),
        NodeConfig::new().rate(100.hz()),
    )
    .unwrap();
    s.add(
        node_fn("victim", |_| Ok(())),
        NodeConfig::new()
            .rate(100.hz())
            .watchdog(Duration::from_millis(100), WatchdogAction::Warn),
    )
    .unwrap();
    assert_eq!(
        s.run_for(Duration::from_secs(1)).unwrap(),
        StopReason::Elapsed
    );
    let st = s.stats();
    assert!(st.nodes[1].watchdog_expiries >= 1);
    assert!(
        events.count(|e| matches!(e,
        SchedulerEvent::WatchdogExpired { node, in_tick: false, action: WatchdogAction::Warn, .. }
            if &**node == "victim"))
            >= 1
    );
    assert!(st.nodes[1].ticks > 20, "Warn keeps it running");
}

#[test]
fn a_healthy_node_does_not_trip_its_watchdog() {
    let (mut s, _) = scheduler("wd_healthy");
    s.add(
        node_fn("fine", |_| Ok(())),
        NodeConfig::new()
            .rate(100.hz())
            .watchdog(Duration::from_millis(500), WatchdogAction::EmergencyStop),
    )
    .unwrap();
    assert_eq!(
        s.run_for(Duration::from_millis(500)).unwrap(),
        StopReason::Elapsed
    );
    assert_eq!(s.stats().nodes[0].watchdog_expiries, 0);
}
