//! Rate accuracy over a window (counts with a wide tolerance, no latency).

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use horus_sched::prelude::*;

use crate::common::scheduler;

fn counter(name: &str) -> (Arc<AtomicU64>, impl Node + 'static) {
    let c = Arc::new(AtomicU64::new(0));
    let c2 = c.clone();
    let node = node_fn(name.to_owned(), move |_| {
        c2.fetch_add(1, Ordering::Relaxed);
        Ok(())
    });
    (c, node)
}

#[test]
fn hundred_hz_for_one_second_gives_about_a_hundred_ticks() {
    let (mut s, _) = scheduler("rate_100hz");
    let (c, n) = counter("n100");
    s.add(n, NodeConfig::new().rate(100.hz())).unwrap();
    let reason = s.run_for(Duration::from_secs(1)).unwrap();
    assert_eq!(reason, StopReason::Elapsed);
    let ticks = c.load(Ordering::Relaxed);
    assert!((80..=120).contains(&ticks), "{ticks} ticks");
    let st = &s.stats().nodes[0];
    assert_eq!(st.ticks, ticks);
    assert!(
        st.achieved_hz > 80.0 && st.achieved_hz < 120.0,
        "{}",
        st.achieved_hz
    );
    assert_eq!(st.jitter.samples, ticks);
}

#[test]
fn nodes_keep_their_own_rates_on_one_thread() {
    let (mut s, _) = scheduler("rate_mixed");
    let (fast, n1) = counter("fast");
    let (slow, n2) = counter("slow");
    s.add(n1, NodeConfig::new().rate(200.hz())).unwrap();
    s.add(n2, NodeConfig::new().rate(10.hz())).unwrap();
    s.run_for(Duration::from_secs(1)).unwrap();
    let (f, sl) = (fast.load(Ordering::Relaxed), slow.load(Ordering::Relaxed));
    assert!((160..=240).contains(&f), "fast {f}");
    assert!((8..=12).contains(&sl), "slow {sl}");
}

#[test]
fn realtime_and_compute_nodes_keep_their_rates() {
    let (mut s, _) = scheduler("rate_classes");
    let (rt, n1) = counter("rt");
    let (cp, n2) = counter("compute");
    s.add(n1, NodeConfig::new().rate(100.hz()).realtime(5))
        .unwrap();
    s.add(n2, NodeConfig::new().rate(50.hz()).compute())
        .unwrap();
    s.run_for(Duration::from_secs(1)).unwrap();
    let (r, c) = (rt.load(Ordering::Relaxed), cp.load(Ordering::Relaxed));
    assert!((80..=120).contains(&r), "rt {r}");
    assert!((40..=60).contains(&c), "compute {c}");
}

#[test]
fn the_tick_rate_is_the_default_node_rate() {
    let (s, _) = scheduler("rate_default");
    let mut s = s.tick_rate(50.hz());
    let (c, n) = counter("dflt");
    s.add(n, NodeConfig::new()).unwrap();
    s.run_for(Duration::from_secs(1)).unwrap();
    let t = c.load(Ordering::Relaxed);
    assert!((40..=60).contains(&t), "{t}");
    assert_eq!(s.stats().nodes[0].target_hz, Some(50.0));
}
