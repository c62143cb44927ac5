//! Emergency stop: all nodes halt, the sink hears it once, every node enters
//! its safe state and then shuts down.

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use horus_sched::prelude::*;
use horus_sched::{EmergencyStopEvent, EmergencyStopReason};

use crate::common::{scheduler, shared};

type Log = Arc<Mutex<Vec<String>>>;

fn logged(name: &'static str, log: &Log, ticks: &Arc<AtomicU64>) -> impl Node + 'static {
    let (l1, l2, t) = (log.clone(), log.clone(), ticks.clone());
    node_fn(name, move |_| {
        t.fetch_add(1, Relaxed);
        Ok(())
    })
    .on_safe_state(move || l1.lock().unwrap().push(format!("{name}:safe")))
    .on_shutdown(move || {
        l2.lock().unwrap().push(format!("{name}:shutdown"));
        Ok(())
    })
}

#[test]
fn emergency_stop_halts_every_class_and_runs_safe_state_then_shutdown() {
    let log: Log = shared();
    let names = ["main", "compute", "rt", "event"];
    let ticks: Vec<Arc<AtomicU64>> = names.iter().map(|_| Arc::new(AtomicU64::new(0))).collect();
    let at_sink = shared::<Vec<u64>>();
    let sunk = shared::<Vec<EmergencyStopEvent>>();
    let (t2, at, sk) = (ticks.clone(), at_sink.clone(), sunk.clone());
    let (s, _) = scheduler("estop_handle");
    let mut s = s.on_emergency_stop(move |e: &EmergencyStopEvent| {
        *at.lock().unwrap() = t2.iter().map(|t| t.load(Relaxed)).collect();
        sk.lock().unwrap().push(e.clone());
    });
    let trigger = horus_sched::Trigger::new();
    s.add(
        logged("main", &log, &ticks[0]),
        NodeConfig::new().rate(200.hz()),
    )
    .unwrap();
    s.add(
        logged("compute", &log, &ticks[1]),
        NodeConfig::new().rate(100.hz()).compute(),
    )
    .unwrap();
    s.add(
        logged("rt", &log, &ticks[2]),
        NodeConfig::new().rate(200.hz()).realtime(1),
    )
    .unwrap();
    s.add(
        logged("event", &log, &ticks[3]),
        NodeConfig::new().event(trigger.clone()),
    )
    .unwrap();
    let handle = s.stop_handle();
    let presser = std::thread::spawn(move || {
        for _ in 0..20 {
            trigger.notify();
            std::thread::sleep(Duration::from_millis(10));
        }
        handle.emergency_stop("operator pressed the button");
        for _ in 0..10 {
            trigger.notify();
            std::thread::sleep(Duration::from_millis(5));
        }
    });
    let reason = s.run_for(Duration::from_secs(10)).unwrap();
    presser.join().unwrap();
    let expected = EmergencyStopReason::Requested {
        by: "application".into(),
        reason: "operator pressed the button".into(),
    };
    assert_eq!(reason, StopReason::EmergencyStop(expected.clone()));
    let sunk = sunk.lock().unwrap();
    assert_eq!(sunk.len(), 1, "the sink hears it exactly once");
    assert_eq!(sunk[0].reason, expected);
    // Halted: at most the tick already in flight finished after the stop.
    let at = at_sink.lock().unwrap();
    for (i, t) in ticks.iter().enumerate() {
        assert!(t.load(Relaxed) <= at[i] + 1, "{} kept ticking", names[i]);
        assert!(at[i] > 0, "{} never ticked", names[i]);
    }
    // Every node: safe state once, then shutdown once.
    let log = log.lock().unwrap();
    for n in names {
        let safe = log.iter().position(|l| *l == format!("{n}:safe"));
        let down = log.iter().position(|l| *l == format!("{n}:shutdown"));
        assert!(
            safe.is_some() && down.is_some() && safe < down,
            "{n}: {log:?}"
        );
        assert_eq!(
            log.iter()
                .filter(|l| l.starts_with(&format!("{n}:")))
                .count(),
            2
        );
    }
}

#[test]
fn a_node_can_trigger_the_emergency_stop() {
    let (mut s, _) = scheduler("estop_node");
    let ticks = Arc::new(AtomicU64::new(0));
    let t = ticks.clone();
    s.add(
        node_fn("lidar", move |ctx| {
            t.fetch_add(1, Relaxed);
            if ctx.tick_index() == 5 {
                ctx.emergency_stop("lidar blocked");
            }
            Ok(())
        }),
        NodeConfig::new().rate(100.hz()),
    )
    .unwrap();
    let reason = s.run_for(Duration::from_secs(10)).unwrap();
    assert_eq!(
        reason,
        StopReason::EmergencyStop(EmergencyStopReason::Requested {
            by: "lidar".into(),
            reason: "lidar blocked".into()
        })
    );
    assert_eq!(ticks.load(Relaxed), 6);
}

#[test]
fn a_clean_stop_request_shuts_down_without_safe_state() {
    let (mut s, _) = scheduler("estop_clean");
    let log: Log = shared();
    let ticks = Arc::new(AtomicU64::new(0));
    s.add(logged("n", &log, &ticks), NodeConfig::new().rate(100.hz()))
        .unwrap();
    let h = s.stop_handle();
    let t = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(100));
        h.request_stop();
    });
    assert_eq!(
        s.run_for(Duration::from_secs(10)).unwrap(),
        StopReason::Requested
    );
    t.join().unwrap();
    assert_eq!(*log.lock().unwrap(), vec!["n:shutdown".to_string()]);
}
