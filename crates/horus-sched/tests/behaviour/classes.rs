//! Execution classes: where nodes run and what they report.

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::Arc;
use std::time::Duration;

use horus_sched::prelude::*;
use horus_sched::{RtMode, Trigger};

use crate::common::{scheduler, shared};

fn thread_recorder(
    name: &'static str,
    seen: &Arc<std::sync::Mutex<Vec<String>>>,
) -> impl Node + 'static {
    let seen = seen.clone();
    node_fn(name, move |_| {
        let t = std::thread::current().name().unwrap_or("?").to_owned();
        let mut s = seen.lock().unwrap();
        if !s.contains(&t) {
            s.push(t);
        }
        Ok(())
    })
}

#[test]
fn each_class_runs_on_its_own_kind_of_thread() {
    let (mut s, _) = scheduler("classes_threads");
    let (main, compute, rt, ev) = (shared(), shared(), shared(), shared());
    let trigger = Trigger::new();
    trigger.notify();
    s.add(
        thread_recorder("m", &main),
        NodeConfig::new().rate(100.hz()),
    )
    .unwrap();
    s.add(
        thread_recorder("c", &compute),
        NodeConfig::new().rate(100.hz()).compute(),
    )
    .unwrap();
    s.add(
        thread_recorder("r", &rt),
        NodeConfig::new().rate(100.hz()).realtime(1).core(0),
    )
    .unwrap();
    s.add(thread_recorder("e", &ev), NodeConfig::new().event(trigger))
        .unwrap();
    s.run_for(Duration::from_millis(300)).unwrap();
    let one = |v: &Arc<std::sync::Mutex<Vec<String>>>| v.lock().unwrap().clone();
    assert_eq!(one(&main), vec!["horus-main"]);
    assert!(one(&compute).iter().all(|t| t.starts_with("horus-pool-")));
    assert_eq!(one(&rt), vec!["hrs-rt-r"]);
    assert_eq!(one(&ev), vec!["hrs-ev-e"]);
    let st = s.stats();
    // SCHED_FIFO is granted or refused depending on privileges: either way
    // the stats say which, never "not requested".
    assert!(matches!(
        st.nodes[2].rt_mode,
        RtMode::Fifo { priority: 1 } | RtMode::Fallback { requested: 1 }
    ));
    assert_eq!(st.nodes[2].core, Some(0));
    assert_eq!(st.nodes[0].rt_mode, RtMode::NotRequested);
}

#[test]
fn an_event_node_ticks_once_per_notification() {
    let (mut s, _) = scheduler("classes_event");
    let trigger = Trigger::new();
    let ticks = Arc::new(AtomicU64::new(0));
    let t = ticks.clone();
    s.add(
        node_fn("ev", move |_| {
            t.fetch_add(1, Relaxed);
            Ok(())
        }),
        NodeConfig::new().event(trigger.clone()),
    )
    .unwrap();
    let h = s.stop_handle();
    let (tr, tk) = (trigger.clone(), ticks.clone());
    let feeder = std::thread::spawn(move || {
        for _ in 0..5 {
            tr.notify();
            std::thread::sleep(Duration::from_millis(20));
        }
        // Wait (bounded) until all five were consumed, then stop.
        for _ in 0..500 {
            if tk.load(Relaxed) == 5 {
                break;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        h.request_stop();
    });
    s.run_for(Duration::from_secs(30)).unwrap();
    feeder.join().unwrap();
    assert_eq!(ticks.load(Relaxed), 5);
    assert_eq!(trigger.pending(), 0);
    let st = &s.stats().nodes[0];
    assert_eq!(st.ticks, 5);
    assert_eq!(st.jitter.samples, 0, "no release grid for event nodes");
}

#[test]
fn a_compute_node_slower_than_its_period_skips_releases_instead_of_piling_up() {
    let (mut s, _) = scheduler("classes_compute_busy");
    s.add(
        node_fn("slow", |_| {
            std::thread::sleep(Duration::from_millis(25));
            Ok(())
        }),
        NodeConfig::new()
            .rate(100.hz())
            .compute()
            .on_miss(MissPolicy::Warn),
    )
    .unwrap();
    s.run_for(Duration::from_millis(500)).unwrap();
    let st = &s.stats().nodes[0];
    assert!(
        st.ticks <= 25,
        "never more than one tick at a time: {}",
        st.ticks
    );
    assert!(st.skipped >= 10, "skipped {}", st.skipped);
    assert!(st.deadline_misses >= 1);
}
