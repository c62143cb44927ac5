//! Recording statistics costs no allocation per tick: a counting allocator
//! watches this thread while the scheduler ticks nodes of every kind inline.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::time::Duration;

use horus_sched::prelude::*;
use horus_sched::Trigger;

struct Counting;

thread_local! {
    static COUNTING: Cell<bool> = const { Cell::new(false) };
    static COUNT: Cell<u64> = const { Cell::new(0) };
}

// SAFETY: forwards every call to the system allocator unchanged; the
// bookkeeping only touches const-initialised thread-locals (no allocation).
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if COUNTING.with(|c| c.get()) {
            COUNT.with(|c| c.set(c.get() + 1));
        }
        // SAFETY: same contract as ours, passed through.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: same contract as ours, passed through.
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static ALLOC: Counting = Counting;

#[test]
fn ticking_and_recording_statistics_does_not_allocate() {
    let trigger = Trigger::new();
    let mut s = Scheduler::new()
        .publish_stats(false)
        .handle_signals(false)
        .on_event(|_| {});
    let mut x = 0_u64;
    s.add(
        node_fn("periodic", move |_| {
            x = std::hint::black_box(x + 1);
            Ok(())
        }),
        NodeConfig::new()
            .rate(20_000_u64.hz())
            .budget(Duration::from_secs(1)),
    )
    .unwrap();
    s.add(
        node_fn("compute", |_| Ok(())),
        NodeConfig::new().rate(10_000_u64.hz()).compute(),
    )
    .unwrap();
    s.add(
        node_fn("event", |_| Ok(())),
        NodeConfig::new().event(trigger.clone()),
    )
    .unwrap();
    // Warm up (init, first rounds), then count.
    for _ in 0..10 {
        s.tick_once().unwrap();
    }
    trigger.notify();
    COUNTING.with(|c| c.set(true));
    for _ in 0..2_000 {
        s.tick_once().unwrap();
    }
    COUNTING.with(|c| c.set(false));
    let allocations = COUNT.with(|c| c.get());
    let ticks: u64 = s.stats().nodes.iter().map(|n| n.ticks).sum();
    assert!(ticks > 2_000, "{ticks}");
    assert_eq!(
        allocations, 0,
        "{allocations} allocations over {ticks} ticks"
    );
}
